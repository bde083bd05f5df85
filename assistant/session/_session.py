"""One browser session of the app: its conversation and what the user does with it.

``app.py`` holds a :class:`Session` per browser tab in a ``gr.State`` (so two
users never see each other's history) and calls the plain functions here
with it and with the server-wide :class:`Services` (models and index, loaded
once). Nothing here imports gradio: every function can be tested directly.

The views (:func:`chat_messages`, :func:`metrics_rows` ...) return plain
values for the UI. Every text that came from a user, a document or a model
is escaped before it is put into Markdown/HTML: a ``<script>`` in a message
is shown as text and never runs.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..kernel import (
    ENGLISH_FUNCTION_WORDS,
    AssistantError,
    Conversation,
    DataFormatError,
    InvalidInputError,
    Passage,
    Rewrite,
    Turn,
    tokens,
)
from ..pipeline import Assistant, _ms_since, turn_to_json, validate_question
from ._labels import LabelStore
from ._uploads import SessionIndex, UploadLimits, index_uploads, read_text

__all__ = [
    "Services",
    "Session",
    "TurnInfo",
    "Pending",
    "ask",
    "ask_json",
    "correct",
    "judge",
    "select_turn",
    "target_turn",
    "undo",
    "new_conversation",
    "export_qrecc",
    "write_export",
    "load_replay",
    "shared_data_file",
    "start_replay",
    "replay_step",
    "use_uploads",
    "use_document",
    "use_document_file",
    "use_collection_document",
    "use_default_collection",
    "multiple_choice",
    "language_notice",
    "NOT_ENGLISH",
    "chat_messages",
    "turn_of_message",
    "metrics_rows",
    "metrics_points",
    "source_status",
    "choice_html",
    "notice_html",
    "escape_markdown",
    "METRICS",
]

# The live rewrite-quality metrics, as QReCC's Table 3 reports them.
METRICS = ("ROUGE-1 R", "USE", "R@10")
# Messages per turn in the chat: question, rewrite step, answer.
_MESSAGES_PER_TURN = 3


@dataclass
class Services:
    """What all sessions share: loaded once per server."""

    assistant: Assistant
    labels: LabelStore = field(default_factory=LabelStore)
    # USE for the similarity metric (eval.encoders.load_use); loaded on first use.
    similarity_encoder: object = None
    # MiniLM for multiple choice (eval.encoders.load_minilm); loaded on first use.
    choice_encoder: object = None
    limits: UploadLimits = UploadLimits()
    # Where sessions' upload indexes go (None: <cache>/sessions).
    sessions_root: Path | None = None
    # What the default index holds, for the status line.
    collection_name: str = "the Wikipedia vital-article summaries"

    def use(self):
        if self.similarity_encoder is None:
            from ..encoders import load_use

            self.similarity_encoder = load_use()
        return self.similarity_encoder

    def minilm(self):
        if self.choice_encoder is None:
            from ..encoders import load_minilm

            self.choice_encoder = load_minilm()
        return self.choice_encoder


@dataclass
class TurnInfo:
    """What the session knows about a turn beyond the :class:`Turn` itself."""

    system_rewrite: Rewrite  # the rewriter's output, kept when the user corrects it
    history: tuple[str, ...]  # the history the rewriter saw (QReCC Context layout)
    reference: str = ""  # a human rewrite: the replayed file's, or the user's correction
    reference_kind: str = ""  # "replay" | "correction" | "confirmed"
    scores: dict[str, float] = field(default_factory=dict)  # METRICS of system_rewrite vs reference
    judgement: int | None = None  # the user's last thumbs: 1 up, 0 down
    awaiting_reference: bool = False  # thumbs down before there was a reference
    notice: str = ""  # e.g. "this does not look like English"
    example_id: str = ""  # the replayed example's id


@dataclass
class Source:
    """A session's own retrieval source instead of the default index."""

    kind: str  # "uploads" | "document"
    name: str  # what the status line calls it
    retriever: object  # assistant Retriever
    text: str = ""  # the whole document (single-document mode; multiple choice reads it)
    index: SessionIndex | None = None  # on-disk index of uploads, removed on close

    def close(self) -> None:
        if self.index is not None:
            self.index.close()


@dataclass
class Replay:
    """A conversations file being replayed turn by turn."""

    name: str
    conversations: dict[str, list]  # conversation id -> its RewriteExamples, in turn order
    conversation_id: str = ""
    position: int = 0  # next turn to play

    @property
    def turns(self) -> list:
        return self.conversations.get(self.conversation_id, [])

    def remaining(self) -> int:
        return len(self.turns) - self.position


@dataclass
class Session:
    """One browser tab's state. ``gr.State(Session())`` deep-copies it per tab."""

    conversation: Conversation = field(default_factory=Conversation)
    info: list[TurnInfo] = field(default_factory=list)
    conversation_no: int = 1
    source: Source | None = None
    replay: Replay | None = None
    choice_reader: object = None  # eval.quality.MultipleChoiceReader, keeps the prepared document
    selected: int | None = None  # the turn the correction box and thumbs act on (None: the last)
    _id: str = ""

    @property
    def id(self) -> str:
        """A random id, drawn on first use: each deep copy of an empty session gets its own."""
        if not self._id:
            self._id = uuid.uuid4().hex[:12]
        return self._id

    def close(self) -> None:
        """Free what the session holds on disk (its uploads' index)."""
        if self.source is not None:
            self.source.close()
            self.source = None


@dataclass(frozen=True)
class Pending:
    """A turn in progress, for streaming: the rewrite comes before the answer."""

    question: str
    rewrite: Rewrite | None = None


# ---------------------------------------------------------------- input checks

NOT_ENGLISH = (
    "This does not look like English. The collection and the models are English only, "
    "so the answer may be poor: try asking in English."
)


def language_notice(text: str) -> str:
    """A notice when ``text`` is probably not English, else "".

    >>> language_notice("Who was Ada Lovelace?")
    ''
    >>> language_notice("Wer war die Tochter von Lord Byron?") == NOT_ENGLISH
    True
    >>> language_notice("阿达·洛芙莱斯是谁？") == NOT_ENGLISH
    True
    """
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return ""
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    if latin / len(letters) < 0.5:
        return NOT_ENGLISH
    words = tokens(text, "letters")
    if len(words) >= 4 and not ENGLISH_FUNCTION_WORDS.intersection(words):
        return NOT_ENGLISH
    return ""


# ---------------------------------------------------------------- turns


def _assistant(services: Services, session: Session) -> Assistant:
    if session.source is None:
        return services.assistant
    return dataclasses.replace(services.assistant, retriever=session.source.retriever)


def _score(services: Services, session: Session, info: TurnInfo) -> None:
    from eval.metrics import embedding_similarity, r_at_k, rouge1_recall

    if not info.reference:
        info.scores = {}
        return
    reference, candidate = info.reference, info.system_rewrite.text
    retriever = _assistant(services, session).retriever
    info.scores = {
        "ROUGE-1 R": rouge1_recall(reference, candidate),
        "USE": embedding_similarity(services.use(), reference, candidate),
        "R@10": r_at_k(retriever, reference, candidate, k=10),
    }


def ask(
    services: Services,
    session: Session,
    question: str,
    *,
    history: Sequence[str] | None = None,
    reference: str = "",
    example_id: str = "",
) -> Iterator[Pending]:
    """Run one turn, yielding as it goes; the finished turn is in ``session``.

    Yields ``Pending(question)`` before rewriting and ``Pending(question,
    rewrite)`` once the rewrite is known (the UI shows it while retrieval and
    reading run). ``history`` overrides the conversation's own (replay gives
    the file's); ``reference`` is a human rewrite to score ours against.
    Raises InvalidInputError (with the message to show) for a bad question.
    """
    assistant = _assistant(services, session)
    question = validate_question(question, assistant.config.max_question_chars)
    history = assistant.history_window(session.conversation.history() if history is None else history)
    yield Pending(question)
    start = time.perf_counter()
    rewrite = assistant.rewrite(question, history)
    rewrite_ms = _ms_since(start)
    yield Pending(question, rewrite)
    turn = assistant.answer(question, rewrite, rewrite_ms)
    info = TurnInfo(
        system_rewrite=rewrite,
        history=tuple(history),
        reference=reference,
        reference_kind="replay" if reference else "",
        notice=language_notice(question),
        example_id=example_id,
    )
    _score(services, session, info)
    session.conversation.add(turn)
    session.info.append(info)
    session.selected = None


def ask_json(services: Services, session: Session, question: str) -> dict:
    """One turn for API clients: the terminal chat's JSON, or ``{"error"}``."""
    try:
        for _ in ask(services, session, question):
            pass
    except AssistantError as error:
        # The question is echoed shortened: a refused 20,000-character one need not come back whole.
        return {"question": question[:200], "error": str(error)}
    turn, info = session.conversation.turns[-1], session.info[-1]
    result = turn_to_json(turn)
    result.update(turn=len(session.conversation.turns), conversation=session.conversation_no)
    if info.notice:
        result["notice"] = info.notice
    return result


def correct(services: Services, session: Session, index: int, corrected: str) -> str:
    """Re-run turn ``index`` with the user's corrected rewrite; returns a status.

    The correction becomes the turn's reference rewrite (unless a replayed
    file gave one), so the metrics score the system's rewrite against it, and
    a thumbs-down given before it is recorded now with it as the reference.
    """
    if not session.info:
        raise InvalidInputError("There is no turn to correct yet: ask a question first.")
    if not -len(session.info) <= index < len(session.info):
        raise InvalidInputError(f"There is no turn {index + 1}.")
    index %= len(session.info)
    assistant = _assistant(services, session)
    corrected = validate_question(corrected, assistant.config.max_question_chars)
    old, info = session.conversation.turns[index], session.info[index]
    rewrite = Rewrite(corrected, note="Corrected by you; the answer was searched with your rewrite.")
    session.conversation.turns[index] = assistant.answer(old.question, rewrite)
    if not info.reference or info.reference_kind in ("correction", "confirmed"):
        info.reference, info.reference_kind = corrected, "correction"
    _score(services, session, info)
    status = f"Turn {index + 1} re-run with your rewrite."
    if info.awaiting_reference:
        info.awaiting_reference = False
        info.judgement = None
        status += " " + judge(services, session, index, 0)
    return status


def judge(services: Services, session: Session, index: int, label: int) -> str:
    """Record a thumbs up (1) / down (0) on turn ``index``'s rewrite; returns a status.

    The labels file needs a reference rewrite on every line. Replayed turns
    and corrected turns have one. Without one, a thumbs up records the
    rewrite as its own reference (``reference_kind`` "confirmed": the user
    accepted it as what they would write), and a thumbs down waits for the
    user's correction, which is then recorded as the reference.
    """
    if not 0 <= index < len(session.info):
        raise InvalidInputError("That message is not part of a turn that can be judged.")
    info, turn = session.info[index], session.conversation.turns[index]
    verdict = "👍 correct" if label == 1 else "👎 incorrect"
    if info.judgement == label:
        return f"Turn {index + 1}: already recorded as {verdict}."
    reference, kind = info.reference, info.reference_kind
    if not reference:
        if label == 0:
            info.judgement, info.awaiting_reference = 0, True
            return (
                f"Turn {index + 1}: 👎 noted. Type the correct rewrite under 'Correct the rewrite' and "
                "press Re-run: your correction is recorded as the reference with this judgement."
            )
        reference, kind = info.system_rewrite.text, "confirmed"
    services.labels.append(
        id=f"app:{session.id}:{session.conversation_no}:{index + 1}",
        history=info.history,
        question=turn.question,
        rewrite=info.system_rewrite.text,
        reference=reference,
        label=label,
        reference_kind=kind,
    )
    info.judgement, info.awaiting_reference = label, False
    return f"Turn {index + 1}: recorded {verdict} in {services.labels.path.name}."


def select_turn(session: Session, message_index: int) -> int:
    """Point the correction box and the thumbs at the turn of a clicked chat
    message; returns the turn's index."""
    index = turn_of_message(message_index)
    if not 0 <= index < len(session.info):
        raise InvalidInputError("That message is not part of a finished turn.")
    session.selected = index
    return index


def target_turn(session: Session) -> int:
    """The selected turn, else the last one (-1 when there is none)."""
    if session.selected is not None and session.selected < len(session.info):
        return session.selected
    return len(session.info) - 1


def undo(session: Session) -> str:
    """Drop the last turn (a replayed one is played again next)."""
    turn = session.conversation.undo()
    if turn is None:
        return "Nothing to undo."
    info = session.info.pop()
    session.selected = None
    if info.example_id and session.replay is not None and session.replay.position > 0:
        session.replay.position -= 1
    return f"Removed the turn “{turn.question[:60]}”."


def new_conversation(session: Session) -> str:
    """Start over (the session's documents stay; a replay is stopped)."""
    session.conversation = Conversation()
    session.info = []
    session.conversation_no += 1
    session.selected = None
    session.replay = None if session.replay is None else dataclasses.replace(session.replay, conversation_id="", position=0)
    return "New conversation."


def export_qrecc(session: Session) -> list[dict]:
    """The conversation in QReCC's layout (rewriting.data reads it back).

    ``Context`` holds the earlier questions and answers, oldest first;
    ``Rewrite`` is the rewrite the turn was answered with.
    """
    records = []
    for number, turn in enumerate(session.conversation.turns, 1):
        context = Conversation(session.conversation.turns[: number - 1]).history()
        records.append(
            {
                "Context": context,
                "Question": turn.question,
                "Rewrite": turn.rewrite.text,
                "Answer": turn.answer.text,
                "Conversation_no": session.conversation_no,
                "Turn_no": number,
            }
        )
    return records


def write_export(session: Session, folder: str | Path) -> Path:
    """Write :func:`export_qrecc` to a JSON file in ``folder`` and return its path."""
    if not session.conversation.turns:
        raise InvalidInputError("The conversation is empty: nothing to export yet.")
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"conversation-{session.id}-{session.conversation_no}.json"
    path.write_text(json.dumps(export_qrecc(session), ensure_ascii=False, indent=1), encoding="utf-8")
    return path


# ---------------------------------------------------------------- replay


def load_replay(session: Session, path: str | Path, name: str | None = None) -> list[str]:
    """Read a QReCC, CANARD or CAsT file; returns its conversation ids."""
    from rewriting.data import load_examples

    path = Path(path)
    if not path.is_file():
        raise InvalidInputError(f"{path}: no such file.")
    try:
        examples = load_examples(path)
    except DataFormatError as error:
        raise DataFormatError(str(error).replace(str(path), name or path.name)) from None
    except UnicodeDecodeError:
        raise DataFormatError(f"{name or path.name} is not UTF-8 JSON.") from None
    if not examples:
        raise DataFormatError(f"{name or path.name} holds no question with a human rewrite.")
    conversations: dict[str, list] = {}
    for example in examples:
        conversations.setdefault(example.conversation_id, []).append(example)
    for turns in conversations.values():
        turns.sort(key=lambda e: e.turn)
    session.replay = Replay(name or path.name, conversations)
    return list(conversations)


def shared_data_file(path: str) -> Path:
    """A replay file named by path, which must lie in the shared data folder
    (``$CONVQA_DATA``): a hosted app must not open any file on the server."""
    from rewriting.data import data_dir

    root = data_dir().resolve()
    resolved = Path(path.strip()).expanduser().resolve()
    if not resolved.is_relative_to(root):
        raise InvalidInputError(f"Only files under {root} can be opened by path; upload other files instead.")
    return resolved


def start_replay(session: Session, conversation_id: str) -> str:
    """Begin a new conversation that replays ``conversation_id``."""
    if session.replay is None:
        raise InvalidInputError("Load a conversations file first.")
    if conversation_id not in session.replay.conversations:
        raise InvalidInputError(f"No conversation {conversation_id!r} in {session.replay.name}.")
    replay = session.replay
    new_conversation(session)
    session.replay = dataclasses.replace(replay, conversation_id=conversation_id, position=0)
    return f"Replaying conversation {conversation_id} ({len(session.replay.turns)} turns)."


def replay_step(services: Services, session: Session) -> Iterator[Pending]:
    """Play the replay's next question (rewritten with the file's history)."""
    replay = session.replay
    if replay is None or not replay.conversation_id:
        raise InvalidInputError("Load a conversations file and pick a conversation first.")
    if replay.remaining() <= 0:
        raise InvalidInputError(f"Conversation {replay.conversation_id} is finished: pick another one.")
    example = replay.turns[replay.position]
    yield from ask(services, session, example.question, history=example.history, reference=example.rewrite, example_id=example.id)
    replay.position += 1


# ---------------------------------------------------------------- sources


def _set_source(session: Session, source: Source | None) -> None:
    if session.source is not None and session.source is not source:
        session.source.close()
    session.source = source


def use_uploads(services: Services, session: Session, paths: Sequence[str | Path]) -> str:
    """Index the uploads for this session and answer from them from now on."""
    index = index_uploads(paths, services.limits, services.assistant.retriever_config, services.sessions_root)
    _set_source(session, Source("uploads", index.describe(), index.retriever, index=index))
    return f"Answering from {session.source.name}."


def use_document(session: Session, text: str, name: str = "your document") -> str:
    """Converse about one document: retrieval runs inside it (CoQA's setting)."""
    from ..retrieval import ChunkRetriever, split_passages

    text = (text or "").strip()
    if not text:
        raise InvalidInputError("Paste a document, upload one, or give the title of an article first.")
    passages = split_passages(text, re.sub(r"\W+", "-", name).strip("-") or "doc", title=name)
    _set_source(session, Source("document", f"the document “{name}” ({len(passages)} passage{'s' if len(passages) != 1 else ''})",
                                ChunkRetriever(passages), text=text))
    return f"Answering from {session.source.name}."


def use_document_file(session: Session, path: str | Path) -> str:
    """Single-document mode over one uploaded .txt/.md/.html/.pdf file."""
    path = Path(path)
    return use_document(session, read_text(path), path.stem)


def use_collection_document(services: Services, session: Session, title: str) -> str:
    """Single-document mode over one article of the default collection,
    named by its title (any case); a wrong title gets the closest ones."""
    title = " ".join((title or "").split())
    if not title:
        raise InvalidInputError("Type the title of an article of the collection.")
    retriever = services.assistant.retriever
    found = retriever.documents([title]) if hasattr(retriever, "documents") else []
    if not found:
        hits = retriever.search(title, 5)
        found = [p for p in hits if (p.title or p.id).casefold() == title.casefold()]
        if not found:
            close = ", ".join(f"“{p.title or p.id}”" for p in hits)
            raise InvalidInputError(f"No article is titled “{title}”." + (f" Close titles: {close}." if close else ""))
    passage = found[0]
    return use_document(session, passage.text, passage.title or passage.id)


def use_default_collection(services: Services, session: Session) -> str:
    _set_source(session, None)
    return f"Answering from {services.collection_name}."


def source_status(services: Services, session: Session) -> str:
    return f"Answering from {services.collection_name}." if session.source is None else f"Answering from {session.source.name}."


# ---------------------------------------------------------------- multiple choice


def multiple_choice(services: Services, session: Session, document: str, question: str, options: Sequence[str]):
    """Answer a multiple-choice question about ``document`` (or the session's
    single document when empty). Returns (choice, options used)."""
    from ..readers import MultipleChoiceReader, answer_multiple_choice

    document = (document or "").strip() or (session.source.text if session.source else "")
    if not document:
        raise InvalidInputError("Paste the document (or choose one under 'Your documents') first.")
    question = validate_question(question, services.assistant.config.max_question_chars)
    options = [o.strip() for o in options if o and o.strip()]
    if len(options) < 2:
        raise InvalidInputError("Give at least two options.")
    if session.choice_reader is None:
        session.choice_reader = MultipleChoiceReader(services.minilm())
    return answer_multiple_choice(document, question, options, reader=session.choice_reader), options


# ---------------------------------------------------------------- views


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
    return (
        f'<li><span class="cqa-title">{_link(passage)}</span> <span class="cqa-score">BM25 {passage.score:.2f}</span>'
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


def _scores_line(scores: dict[str, float]) -> str:
    return " · ".join(f"{name} {value:.2f}" for name, value in scores.items())


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
    for turn, info in zip(session.conversation.turns, session.info):
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


def metrics_rows(session: Session) -> list[list]:
    """Per scored turn: turn, the three metrics; then the running mean row."""
    rows = [
        [str(number), *(round(info.scores[m], 3) for m in METRICS)]
        for number, info in enumerate(session.info, 1)
        if info.scores
    ]
    if rows:
        means = [round(sum(row[1 + i] for row in rows) / len(rows), 3) for i in range(len(METRICS))]
        rows.append([f"mean of {len(rows)}", *means])
    return rows


def metrics_points(session: Session) -> list[dict]:
    """The running mean of each metric after each scored turn, for the plot."""
    points, totals, count = [], dict.fromkeys(METRICS, 0.0), 0
    for number, info in enumerate(session.info, 1):
        if not info.scores:
            continue
        count += 1
        for metric in METRICS:
            totals[metric] += info.scores[metric]
            points.append({"turn": number, "metric": metric, "mean": round(totals[metric] / count, 3)})
    return points


def notice_html(message: str) -> str:
    """A message for an HTML panel, escaped."""
    return f'<p class="cqa-notice">⚠️ {_h(message)}</p>'


def choice_html(choice, options: Sequence[str]) -> str:
    """The multiple-choice answer: chosen option, each option's score and evidence."""
    letters = "ABCDEFGH"
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
