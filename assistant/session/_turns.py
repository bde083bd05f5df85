"""A session's turns: ask, correct, judge, select, undo, start over, export."""

from __future__ import annotations

import dataclasses
import json
import threading
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..kernel import (NO_STOP, AssistantError, InvalidInputError, Rewrite, StopSignal, Stopped, check_history, counted,
                      do_nothing, echoed_question, with_stop)
from ..pipeline import topic_rewrite, turn_to_json, validate_question
from ._language import language_notice
from ._sources import assistant_for, await_source, search_notice, waiting_for
from ._storage import server_storage
from ._store import note_removed, origin_of
from ._state import MAX_HISTORY_CHARS, MAX_JUDGEMENTS, MAX_TURNS, MAX_WAITING, Pending, Services, Session, SessionTurn, TurnInfo
from ._views import turn_of_message

# Stop and a turn's end decide under this lock: a turn that ended before Stop
# is kept, one that ends after it is not added, and Stop knows which to say.
# A turn takes the session's stop signal under it, and Stop puts a fresh one
# in its place and sets the old one under it, so a turn is stopped (its
# signal set) exactly by the Stops that came after it began.
# (Gradio's cancel does not stop the thread of a turn under way: Stop said
# "not added" while the turn was added after it.)
_ENDING = threading.Lock()


def _score(services: Services, session: Session, info: TurnInfo, stop: StopSignal = NO_STOP) -> None:
    """The live metrics of a turn with a reference; ``stop`` is handed to a
    scorer that takes one (the app's checks it between its metrics), which
    raises :class:`~assistant.kernel.Stopped` for a turn stopped meanwhile."""
    if not info.reference or services.scorer is None:
        info.scores = {}
        return
    retriever = assistant_for(services, session).retriever
    info.scores = dict(with_stop(services.scorer, stop)(info.reference, info.system_rewrite.text, retriever))


def _turn_index(session: Session, index: int, message: str) -> int:
    if not 0 <= index < len(session.turns):
        raise InvalidInputError(message)
    return index


def _check_room(session: Session, waiting: int = 0) -> None:
    """Refuse a turn the conversation has no room for (MAX_TURNS, counting
    the ``waiting`` questions to be asked before it)."""
    if len(session.turns) + waiting >= MAX_TURNS:
        raise InvalidInputError(f"This conversation has reached {MAX_TURNS} turns, the most one holds: "
                                "start a new conversation (🆕 New conversation, or /new through the API).")


def turn_notice(services: Services, session: Session, question: str) -> str:
    """What a turn asked now carries as its warning ("" when nothing): the
    question not looking like English, the search lacking its rescoring
    while the passages (the collection's, or the uploads') are encoded."""
    return " ".join(filter(None, [language_notice(question or ""), search_notice(services, session)]))


def ask(
    services: Services,
    session: Session,
    question: str,
    *,
    history: Sequence[str] | None = None,
    reference: str = "",
    example_id: str = "",
    client: str | None = None,
    cancelled: StopSignal = NO_STOP,
) -> Iterator[Pending]:
    """Run one turn, yielding as it goes; the finished turn is in ``session``.

    Yields ``Pending(question)`` before rewriting and ``Pending(question,
    rewrite)`` once the rewrite is known (the UI shows it while retrieval and
    reading run). ``history`` overrides the conversation's own (replay gives
    the file's); ``reference`` is a human rewrite to score ours against.
    Raises InvalidInputError (with the message to show) for a bad question.
    A source the conversation is being read again from is waited for first
    (:func:`await_source`; ``client`` is counted for it), as part of the
    turn: a Stop meanwhile leaves the question unasked. ``cancelled`` is a
    Stop of the caller's own (an API request's cancel): once set, at any
    time from the call on, it is the session's Stop (:func:`stop_turns`) for
    this turn, which takes the session's signal only as it begins.
    """
    question = validate_question(question, services.assistant.config.max_question_chars)
    conversation = session.turns  # new_conversation and switch_conversation put another list in its place
    with _ENDING:
        stop = session.stop_signal
        session.asking += 1
    under_way = True
    not_added = f"Stopped before “{echoed_question(question)}” was answered: it was not added."
    forget = do_nothing
    try:
        # Hooked once the turn has its signal (called at once if the caller's
        # cancel came before): a cancel that stopped the session's turns
        # before this one took the signal had stopped the turns before it,
        # and this turn, taking the fresh signal, was added all the same.
        forget = cancelled.on_set(lambda: _stop_turn(session, stop))
        _await_source(services, session, client, stop, f"Stopped before “{echoed_question(question)}” was asked "
                                                        "(it waited for its source to be read again): it was not added.",
                      asking=True)
        assistant = assistant_for(services, session)
        _check_room(session)
        if history is None:
            history = session.history(rewritten=assistant.config.history_rewrites)
        # Each text cut as the /rewrite API bounds it: a replayed file's Context
        # may hold megabytes, which the rewriter tokenised whole at every turn.
        history = [text[:MAX_HISTORY_CHARS] for text in assistant.history_window(history)]
        # The turn before, as this session rewrote it (a replay asks its file's
        # turns in order), past an "ok" that asked nothing (topic_rewrite);
        # steps() ignores it on a turn with no history.
        previous = topic_rewrite([entry.turn.rewrite for entry in session.turns])
        notice = turn_notice(services, session, question)  # before the search it describes
        yield Pending(question)
        turn = None
        try:
            for step in assistant.steps(question, history, previous, stop):
                if isinstance(step, Rewrite):
                    yield Pending(question, step)
                else:
                    turn = step
        except Stopped:  # Stop pressed during a stage, which ended at its next step
            raise InvalidInputError(not_added) from None
        if session.turns is not conversation:
            # Started over (or switched) while this turn ran: its answer, to the
            # conversation left, had been added to the next one.
            raise InvalidInputError(f"“{echoed_question(question)}” was answered after its conversation was left "
                                    "(a new one started, or another chosen), so it was not added: ask it again here.")
        if not turn.answer.found and session.source is not None:
            # The reader's "not found" names the collection, which this session
            # was not searching.
            missing = f"I could not find an answer to that in {session.source.name}."
            turn = dataclasses.replace(turn, answer=dataclasses.replace(turn.answer, text=missing))
        info = TurnInfo(
            system_rewrite=turn.rewrite,
            history=tuple(history),
            reference=reference,
            reference_kind="replay" if reference else "",
            notice=notice,
            example_id=example_id,
            uid=uuid.uuid4().hex[:8],
        )
        try:
            stop.check()  # stopped after its reading: nor are its metrics computed (a search, an encoding)
            _score(services, session, info, stop)
        except Stopped:  # before or while its metrics were computed
            raise InvalidInputError(not_added) from None
        with _ENDING:
            session.asking -= 1
            under_way = False
            if stop.is_set():
                raise InvalidInputError(not_added)
            session.turns.append(SessionTurn(turn, info))
            session.selected = None
    finally:
        forget()
        if under_way:  # failed, or closed (its stream cancelled) before its end
            with _ENDING:
                session.asking -= 1


def _await_source(services: Services, session: Session, client: str | None, stop: StopSignal, stopped: str, *,
                  asking: bool = False) -> None:
    """:func:`await_source` for a turn (a question, a re-run) registered under
    way with the signal ``stop``, ended with ``stopped`` (InvalidInputError)
    if a Stop came meanwhile, before any model runs: the Stop's setting of
    the signal ends the wait too. A question's (``asking``) is counted in
    ``session.awaiting`` while it waits: Stop then says what it waited for."""
    waiting = asking and waiting_for(session) is not None
    if waiting:
        with _ENDING:
            session.awaiting += 1
    try:
        await_source(services, session, client, stop)
    finally:
        if waiting:
            with _ENDING:
                session.awaiting -= 1
    if stop.is_set():
        raise InvalidInputError(stopped)


def take_question(services: Services, session: Session, question: str) -> str:
    """Check ``question`` and put it in line after the questions already
    waiting; returns the status to show until it is asked. A bad question
    raises InvalidInputError and waits for nothing, so the UI can leave it
    where the user typed it."""
    question = validate_question(question, assistant_for(services, session).config.max_question_chars)
    if len(session.waiting) >= MAX_WAITING:
        raise InvalidInputError(f"{len(session.waiting)} questions are already waiting, the most a page may have: "
                                "send this one once they are answered, or press Stop to drop them.")
    _check_room(session, waiting=len(session.waiting) + session.running)
    session.waiting.append(question)
    ahead = len(session.waiting) - 1
    if not ahead:
        # Shown until the turn's rewrite comes, whether it waits in the
        # server's queue (Gradio's indicator shows the place) or already runs.
        return "⏳ Asking…"
    return f"⏳ Queued after {counted(ahead, 'other question')}."


def next_question(session: Session) -> str | None:
    """The oldest question waiting, taken out of the line (None: none waits)."""
    try:
        return session.waiting.popleft()
    except IndexError:
        return None


def waiting_notice(session: Session) -> str:
    """What a running turn's status says about the questions after it ("" when none)."""
    count = len(session.waiting)
    return f"⏳ {counted(count, 'more question')} waiting." if count else ""


@dataclasses.dataclass(frozen=True)
class StoppedTurns:
    """What a Stop (:func:`stop_turns`) found under way and stopped."""

    asked: bool  # a turn being asked: it is not added
    corrected: tuple[int, ...]  # the numbers (from 1) of turns being re-run with a correction: each stays as it was
    # The source a turn stopped waited for, being read again from its files
    # ("" when none): its question was not asked.
    awaited: str = ""


def stop_turns(session: Session) -> StoppedTurns:
    """Stop pressed: a turn under way now is not added, and a turn being
    re-run with the user's rewrite (:func:`correct`) is left as it was; each
    ends at its next stop check (its stop signal is set): in a model's loop,
    between two stages, or, waiting for its source to be read again, at
    once (the signal wakes that wait). Returns what was under way; a turn
    or a re-run that ended before this call is kept."""
    return _stop_turn(session)


def _stop_turn(session: Session, signal: StopSignal | None = None) -> StoppedTurns | None:
    """:func:`stop_turns`; given the ``signal`` a turn took, only while it
    is still the session's (None otherwise): a turn a Stop already stopped
    leaves the turns begun after that Stop to run on."""
    wake = do_nothing
    try:
        with _ENDING:
            if signal is not None and session.stop_signal is not signal:
                return None
            session.stops += 1
            # Swapped and set under the lock: a turn takes its signal under it,
            # so one begun after this Stop gets the fresh one and runs on, and a
            # turn's end, deciding under it, sees the old one set. Swapped
            # first: a signal set is never left in the session for the turns
            # after. Its on_set wakes (a batcher's wait, the tab lock's) run
            # after the lock is released: a wake that took it, or blocked, would
            # stall every session's turns, which take it to begin and to end.
            stopping, session.stop_signal = session.stop_signal, StopSignal()
            wake = stopping.set_deferred()
            waiting = waiting_for(session) if session.awaiting else None
            stopped = StoppedTurns(session.asking > 0, tuple(sorted(index + 1 for index in session.correcting)),
                                   waiting.name if waiting is not None else "")
    finally:
        wake()
    return stopped


def drop_waiting(session: Session) -> int:
    """Forget the questions waiting (the user stopped the turns); returns how many there were."""
    count = len(session.waiting)
    session.waiting.clear()
    return count


def ask_json(services: Services, session: Session, question: str, cancelled: StopSignal = NO_STOP) -> dict:
    """One turn for API clients: the terminal chat's JSON, or ``{"error"}``;
    ``cancelled`` is the request's Stop (:func:`ask`'s)."""
    try:
        for _ in ask(services, session, question, cancelled=cancelled):
            pass
    except AssistantError as error:
        return {"question": echoed_question(question), "error": str(error)}
    last = session.turns[-1]
    result = turn_to_json(last.turn)
    result.update(turn=len(session.turns), conversation=session.conversation_no)
    if last.info.notice:
        result["notice"] = last.info.notice
    return result


# Longest history the /rewrite API takes, in texts: QReCC's longest Context
# is far shorter, and the rewriter reads only the last few turns anyway.
MAX_HISTORY_TEXTS = 200


def rewrite_json(services: Services, question: str, history, stop: StopSignal = NO_STOP) -> dict:
    """The rewrite of ``question`` after ``history`` (QReCC's Context: earlier
    questions and answers, oldest first), for API clients, with no session:
    ``{"rewrite", "note"}``, or ``{"question", "error"}`` for bad input, and
    for a rewrite ``stop`` stopped (its decoding ends at its next step, as a
    turn's does)."""
    assistant = services.assistant
    try:
        question = validate_question(question, assistant.config.max_question_chars)
        try:
            history = check_history([] if history is None else history)
        except TypeError:  # an API client's input: told as such, not as a programming error
            raise InvalidInputError("The history must be a list of texts: earlier questions and answers, oldest first.") from None
        if len(history) > MAX_HISTORY_TEXTS:
            # Refused, not cut ("at most 200 are taken" read as if the rest were dropped and the rewrite made).
            raise InvalidInputError(f"The history has {len(history):,} texts; send at most {MAX_HISTORY_TEXTS}, "
                                    "the most recent.")
        for text in history:
            if len(text) > MAX_HISTORY_CHARS:
                raise InvalidInputError(f"A text of the history is {len(text):,} characters long; send at most "
                                        f"{MAX_HISTORY_CHARS:,} characters a text.")
        rewrite = assistant.rewrite(question, history, stop)
    except AssistantError as error:
        return {"question": echoed_question(question), "error": str(error)}
    return {"rewrite": rewrite.text, "note": rewrite.note}


def correct(services: Services, session: Session, index: int, corrected: str, client: str | None = None) -> str:
    """Re-run turn ``index`` with the user's corrected rewrite; returns a status.

    The correction becomes the turn's reference rewrite (unless a replayed
    file gave one), so the metrics score the system's rewrite against it, and
    a thumbs-down given before it is recorded now with it as the reference.
    """
    if not session.turns:
        raise InvalidInputError("There is no turn to correct yet: ask a question first.")
    if not -len(session.turns) <= index < len(session.turns):
        raise InvalidInputError(f"There is no turn {index + 1}.")
    index %= len(session.turns)
    corrected = validate_question(corrected, services.assistant.config.max_question_chars)
    entry = session.turns[index]
    info = entry.info
    if info.awaiting_reference and " ".join(corrected.split()) == " ".join(info.system_rewrite.text.split()):
        # A 👎 line whose reference is the rewrite judged wrong would teach
        # eval.rewrites validate that a perfect score means "incorrect".
        raise InvalidInputError(
            f"That is turn {index + 1}'s rewrite as the system wrote it, which your 👎 says is wrong: type the "
            "rewrite you would have written, or press 👍 if it is right after all."
        )
    rewrite = Rewrite(corrected, note="Corrected by you; the answer was searched with your rewrite.")
    # As steps() does: no expansion for a turn the rewriter saw no history for.
    window = services.assistant.history_window(session.history(index))
    previous = topic_rewrite([entry.turn.rewrite for entry in session.turns[:index]]) if window else ""
    with _ENDING:  # as ask(): Stop and this re-run's end decide under one lock
        stop = session.stop_signal
        session.correcting.append(index)
    under_way = True
    not_rerun = f"Stopped before turn {index + 1} was re-run with your rewrite: it is as it was."
    try:
        # As ask() does, the source being read again waited for as part of the re-run.
        _await_source(services, session, client, stop, f"Stopped before turn {index + 1} was re-run with your "
                                                        "rewrite (it waited for its source to be read again): it is "
                                                        "as it was.")
        try:
            answered = assistant_for(services, session).answer(entry.turn.question, rewrite, previous=previous, stop=stop)
        except Stopped:
            raise InvalidInputError(not_rerun) from None
        # Scored before the end is decided (the score compares the system's
        # rewrite, which a correction leaves, with the reference), so that
        # what Stop draws after a kept re-run is the whole of it.
        scored = dataclasses.replace(info)
        if not info.reference or info.reference_kind in ("correction", "confirmed"):
            scored.reference, scored.reference_kind = corrected, "correction"
        try:
            stop.check()  # as ask(): a stopped re-run's metrics are not computed
            _score(services, session, scored, stop)
        except Stopped:
            raise InvalidInputError(not_rerun) from None
        with _ENDING:
            session.correcting.remove(index)
            under_way = False
            if stop.is_set():
                raise InvalidInputError(not_rerun)
            if index >= len(session.turns) or session.turns[index] is not entry:
                # Undone, or its conversation left, while it re-ran: kept, the
                # correction (and a 👎 waiting for it) went to a turn no longer shown,
                # and the judgement to whatever turn now had its number.
                raise InvalidInputError(f"Turn {index + 1} was undone, or its conversation left, while it re-ran "
                                        "with your rewrite, so the correction was not kept.")
            entry.turn = answered
            info.reference, info.reference_kind, info.scores = scored.reference, scored.reference_kind, scored.scores
    finally:
        if under_way:  # failed, or closed before its end
            with _ENDING:
                session.correcting.remove(index)
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
    if not session.turns:
        raise InvalidInputError("There is no rewrite to judge yet: ask a question first.")
    _turn_index(session, index, "That message is not part of a turn that can be judged.")
    info, turn = session.turns[index].info, session.turns[index].turn
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
    if session.judgements >= MAX_JUDGEMENTS:
        raise InvalidInputError(f"This page has recorded {MAX_JUDGEMENTS} judgements, the most one may: thank you! "
                                "Reload the page to judge more.")
    services.labels.append(
        # The turn's number and its uid: judging it again supersedes the line
        # (eval.rewrites keeps the last), but a turn asked in its place after
        # an undo is another turn, and its judgement another line.
        id=f"app:{session.id}:{session.conversation_no}:{index + 1}" + (f":{info.uid}" if info.uid else ""),
        # What the rewriter saw: a turn read back from the browser may carry any history.
        history=assistant_for(services, session).history_window(info.history),
        question=turn.question,
        rewrite=info.system_rewrite.text,
        reference=reference,
        label=label,
        reference_kind=kind,
    )
    session.judgements += 1
    info.judgement, info.awaiting_reference = label, False
    return f"Turn {index + 1}: recorded {verdict} in {services.labels.path.name}."


def select_turn(session: Session, message_index: int) -> int:
    """Point the correction box and the thumbs at the turn of a clicked chat
    message; returns the turn's index."""
    index = _turn_index(session, turn_of_message(message_index), "That message is not part of a finished turn.")
    session.selected = index
    return index


def target_turn(session: Session) -> int:
    """The selected turn, else the last one (-1 when there is none)."""
    if session.selected is not None and session.selected < len(session.turns):
        return session.selected
    return len(session.turns) - 1


def undo(session: Session) -> str:
    """Drop the last turn (a replayed one is played again next)."""
    if not session.turns:
        return "Nothing to undo."
    last = session.turns.pop()
    turn, info = last.turn, last.info
    session.selected = None
    if not session.turns:
        # The conversation is gone (an empty one is not saved): the other tabs are told to drop it too.
        note_removed(session, last)
    if info.example_id and session.replay is not None and session.replay.position > 0:
        session.replay.position -= 1
    return f"Removed the turn “{turn.question[:60]}”."


def export_qrecc(session: Session) -> list[dict]:
    """The conversation in QReCC's layout (rewriting.data reads it back).

    ``Context`` holds the earlier questions and answers, oldest first.
    ``Rewrite``, QReCC's human rewrite, is the turn's reference when it has
    one (the replayed file's, the user's correction, or a rewrite confirmed
    with 👍), else the rewrite it was answered with; ``Rewrite_kind`` says
    which ("replay", "correction", "confirmed" or "system": a replay of the
    export scores those against themselves). ``System_rewrite`` is the
    rewriter's own. A replayed CANARD turn's export had lost the human
    rewrite for the system's. ``Source`` is what the conversation was
    answered from, as the browser's copy names it ({"kind": "collection"},
    or a document's or the uploads' kind and name, an article's title).
    """
    origin = origin_of(session, str(session.conversation_no))
    records = []
    for number, entry in enumerate(session.turns, 1):
        turn, info = entry.turn, entry.info
        records.append(
            {
                "Context": session.history(number - 1),
                "Question": turn.question,
                "Rewrite": info.reference or turn.rewrite.text,
                "Rewrite_kind": info.reference_kind if info.reference else "system",
                "System_rewrite": info.system_rewrite.text,
                "Answer": turn.answer.text,
                "Conversation_no": session.conversation_no,
                "Turn_no": number,
                **({"Source": origin.json()} if origin is not None else {}),
            }
        )
    return records


# Characters of questions and answers an export may hold, each turn's Context
# (every earlier turn) counted: a conversation read back from an edited
# browser copy, 2 MB of it, made an export of 86 MB, on the server's disk.
MAX_EXPORT_CHARS = 5_000_000


def _export_chars(session: Session) -> int:
    """The characters of questions and answers :func:`export_qrecc` writes, without writing them."""
    total, before = 0, 0
    for entry in session.turns:
        turn, info = entry.turn, entry.info
        own = len(turn.question) + len(turn.answer.text)
        total += before + own + len(info.reference or turn.rewrite.text) + len(info.system_rewrite.text)
        before += own
    return total


def write_export(session: Session, folder: str | Path) -> Path:
    """Write :func:`export_qrecc` to a JSON file in ``folder`` and return its
    path. The session keeps its last export only, deleted when it ends."""
    if not session.turns:
        raise InvalidInputError("The conversation is empty: nothing to export yet.")
    size = _export_chars(session)
    if size > MAX_EXPORT_CHARS:
        raise InvalidInputError(f"This conversation's export would hold {size:,} characters (each turn repeats the "
                                f"ones before it), more than the {MAX_EXPORT_CHARS:,} the server writes: undo some "
                                "turns, or export a shorter conversation.")
    folder = Path(folder)
    path = folder / f"conversation-{session.id}-{session.conversation_no}.json"
    text = json.dumps(export_qrecc(session), ensure_ascii=False, indent=1)
    try:
        with server_storage("The conversation could not be exported"):
            folder.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except InvalidInputError:
        # A full disk left the file cut short, and no session recorded it to delete.
        path.unlink(missing_ok=True)
        raise
    files = session.on_disk()
    if files.export and files.export != str(path):
        Path(files.export).unlink(missing_ok=True)  # one export a session: clicks in a loop fill no disk
    files.export = str(path)
    return path
