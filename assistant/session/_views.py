"""What the UI shows of a session, as plain values.

Every text that came from a user, a document or a model is escaped before it
is put into Markdown/HTML: a ``<script>`` in a message is shown as text and
never runs.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from ..kernel import Passage, Turn
from ._state import METRICS, Pending, Session, TurnInfo

# Messages per turn in the chat: question, rewrite step, answer.
_MESSAGES_PER_TURN = 3

_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$])")


def escape_markdown(text: str) -> str:
    """User text for a Markdown message: shown literally, never as markup.

    >>> escape_markdown("<script>alert('x')</script> *hi*")
    "&lt;script&gt;alert\\\\('x'\\\\)&lt;/script&gt; \\\\*hi\\\\*"
    """
    return html.escape(_MARKDOWN_SPECIAL.sub(r"\\\1", text), quote=False)


def _h(text: str) -> str:
    return html.escape(text, quote=True)


def _highlight(text: str, evidence: str) -> str:
    """Escaped ``text`` with ``evidence`` marked.

    >>> _highlight("Ada <b> wrote notes.", "wrote notes.")
    'Ada &lt;b&gt; <mark>wrote notes.</mark>'
    """
    at = text.find(evidence) if evidence else -1
    if at < 0:
        return _h(text)
    end = at + len(evidence)
    return f"{_h(text[:at])}<mark>{_h(text[at:end])}</mark>{_h(text[end:])}"


def _link(passage: Passage) -> str:
    title = _h(passage.title or passage.id)
    if passage.url.startswith(("https://", "http://")):
        return f'<a href="{_h(passage.url)}" target="_blank" rel="noopener noreferrer">{title}</a>'
    return title


def _source_item(passage: Passage, evidence: str) -> str:
    # A collection's short description ("English mathematician (1815–1852)")
    # follows the title, marked when the answer was read from it (a year
    # the summary itself never gives).
    described = (f' <span class="cqa-description">{_highlight(passage.description, evidence)}</span>'
                 if passage.description else "")
    return (
        f'<li><span class="cqa-title">{_link(passage)}</span>{described} <span class="cqa-score">score {passage.score:.2f}</span>'
        f'<div class="cqa-passage">{_highlight(passage.text, evidence)}</div></li>'
    )


def _answer_html(turn: Turn, info: TurnInfo) -> str:
    # One HTML block without blank lines: Markdown leaves it as it is.
    answer = turn.answer
    parts = ['<div class="cqa-answer">']
    if info.notice:
        parts.append(f'<p class="cqa-notice">⚠️ {_h(info.notice)}</p>')
    parts.append(f'<p class="cqa-text">{_h(answer.text)}</p>')
    used = next((p for p in turn.sources if answer.found and p.id == answer.source_id), None)
    if used is not None:
        parts.append(f'<ul class="cqa-sources cqa-used">{_source_item(used, answer.evidence)}</ul>')
    if turn.sources:
        label = "All sources" if used is not None else "Sources searched"
        items = "".join(_source_item(p, answer.evidence if p is used else "") for p in turn.sources)
        parts.append(
            f'<details class="cqa-more"><summary>{label} ({len(turn.sources)})</summary>'
            f'<ol class="cqa-sources">{items}</ol></details>'
        )
    timings = " · ".join(f"{stage} {ms:,.0f} ms" for stage, ms in turn.timings_ms.items())
    parts.append(f'<details class="cqa-timings"><summary>⏱ Timings</summary><p>{_h(timings)}</p></details>')
    parts.append("</div>")
    return "".join(parts)


def score_text(value: float) -> str:
    """A score as the chat's lines and the metrics table show it: two decimals.

    >>> [score_text(v) for v in (1, 0.5, 2 / 3)]
    ['1.00', '0.50', '0.67']
    """
    return f"{value:.2f}"


def _scores_line(scores: dict[str, float]) -> str:
    return " · ".join(f"{name} {score_text(value)}" for name, value in scores.items())


def _rewrite_message(turn: Turn, info: TurnInfo) -> dict:
    # The rewrite itself is in the step's title, visible while it is collapsed;
    # the step holds what explains or judges it.
    corrected = turn.rewrite.text != info.system_rewrite.text
    lines = []
    if corrected:
        lines.append(f"The system wrote: {escape_markdown(info.system_rewrite.text)}")
    if info.system_rewrite.note:
        lines.append(f"_Note: {escape_markdown(info.system_rewrite.note)}_")
        if info.system_rewrite.rejected:
            lines.append(f"_The model had said: {escape_markdown(info.system_rewrite.rejected)}_")
    if info.system_rewrite.alternatives and not corrected:
        others = "; ".join(escape_markdown(text) for text in info.system_rewrite.alternatives)
        lines.append(f"_Picked among candidates; the search also used the others: {others}_")
    if info.reference and info.reference_kind == "replay":
        lines.append(f"**Human rewrite (reference):** {escape_markdown(info.reference)}")
    if info.scores:
        lines.append(f"`{_scores_line(info.scores)}`")
    if info.judgement is not None:
        lines.append("You judged this rewrite " + ("👍 correct" if info.judgement == 1 else "👎 incorrect") + ".")
    if not lines:
        lines.append("The question the system searched with. Rate it with 👍/👎 under the answer, or correct it.")
    who = "✏️ Your rewrite" if corrected else "🔁 System rewrite"
    return {
        "role": "assistant",
        "content": "\n\n".join(lines),
        # A replayed turn's step stays open: the human rewrite shows beside ours.
        "metadata": {"title": f"{who}: {escape_markdown(turn.rewrite.text)}", **({} if info.reference_kind == "replay" else {"status": "done"})},
    }


def chat_messages(session: Session, pending: Pending | None = None) -> list[dict]:
    """The chat as Gradio "messages": per turn the question, the rewrite step
    (collapsible, marked as the system's) and the answer with its sources."""
    messages: list[dict] = []
    for entry in session.turns:
        turn, info = entry.turn, entry.info
        messages.append({"role": "user", "content": escape_markdown(turn.question)})
        messages.append(_rewrite_message(turn, info))
        messages.append({"role": "assistant", "content": _answer_html(turn, info)})
    if pending is not None:
        messages.append({"role": "user", "content": escape_markdown(pending.question)})
        if pending.rewrite is None:
            messages.append({"role": "assistant", "content": "Rewriting the question…",
                             "metadata": {"title": "🔁 Rewriting", "status": "pending"}})
        else:
            messages.append({"role": "assistant", "content": "Searching with this question…",
                             "metadata": {"title": f"🔁 System rewrite: {escape_markdown(pending.rewrite.text)}", "status": "done"}})
            messages.append({"role": "assistant", "content": "Searching and reading the sources…"})
    return messages


def turn_of_message(index: int) -> int:
    """The turn a chat message belongs to (see :func:`chat_messages`)."""
    return index // _MESSAGES_PER_TURN


def _scored(info: TurnInfo, metrics: Sequence[str]) -> bool:
    # A turn read back from the browser may carry other metrics' names.
    return bool(info.scores) and all(m in info.scores for m in metrics)


def metrics_rows(session: Session, metrics: Sequence[str] = METRICS) -> list[list]:
    """Per scored turn: turn, each metric; then the running mean row. The
    scores as text, as the chat's lines show them (:func:`score_text`): the
    table showed numbers, "1" and "0.5" beside "0.667"."""
    scores = [(number, [entry.info.scores[m] for m in metrics])
              for number, entry in enumerate(session.turns, 1) if _scored(entry.info, metrics)]
    rows = [[str(number), *map(score_text, values)] for number, values in scores]
    if scores:
        means = [sum(values[i] for _, values in scores) / len(scores) for i in range(len(metrics))]
        rows.append([f"mean of {len(scores)}", *map(score_text, means)])
    return rows


def metrics_points(session: Session, metrics: Sequence[str] = METRICS) -> list[dict]:
    """The running mean of each metric after each scored turn, for the plot."""
    points, totals, count = [], dict.fromkeys(metrics, 0.0), 0
    for number, entry in enumerate(session.turns, 1):
        info = entry.info
        if not _scored(info, metrics):
            continue
        count += 1
        for metric in metrics:
            totals[metric] += info.scores[metric]
            points.append({"turn": number, "metric": metric, "mean": round(totals[metric] / count, 3)})
    return points


def notice_html(message: str) -> str:
    """A message for an HTML panel, escaped."""
    return f'<p class="cqa-notice">⚠️ {_h(message)}</p>'


# The letters multiple-choice options are named by, in order.
OPTION_LETTERS = "ABCDEFGH"


def choice_html(choice, options: Sequence[str]) -> str:
    """The multiple-choice answer: chosen option, each option's score and evidence."""
    letters = OPTION_LETTERS
    items = []
    for i, option in enumerate(options):
        chosen = i == choice.index
        evidence = choice.evidence[i] if i < len(choice.evidence) else None
        quote = f'<div class="cqa-passage">{_h(evidence.text)}</div>' if evidence is not None else ""
        items.append(
            f'<li class="{"cqa-chosen" if chosen else ""}"><b>({letters[i]})</b> {_h(option)} '
            f'<span class="cqa-score">score {choice.scores[i]:.3f}</span>{"  ✅" if chosen else ""}'
            f'<details><summary>evidence</summary>{quote}</details></li>'
        )
    return (
        f'<div class="cqa-choice"><p>Answer: <b>({letters[choice.index]}) {_h(options[choice.index])}</b></p>'
        f'<ul>{"".join(items)}</ul></div>'
    )
