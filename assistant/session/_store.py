"""A session's conversations as plain JSON, for the browser to keep.

The app keeps this JSON in the browser (``gr.BrowserState``), so a reload or
a server restart loses no conversation, and a user can keep several and
switch between them. What comes back from a browser is untrusted: a value
that does not read back whole is refused with DataFormatError, never half
restored.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..kernel import Answer, DataFormatError, InvalidInputError, Passage, Rewrite, Turn
from ._state import Session, SessionTurn, TurnInfo

# Bump when the layout changes: an older value is then ignored, not misread.
STORE_VERSION = 1
# Conversations kept per browser; the oldest go first. localStorage holds a
# few MB per site, and each turn carries its sources' text.
MAX_CONVERSATIONS = 20
# Characters of saved JSON at most. A browser gives a site about 5 MB of
# localStorage, counted in UTF-16 (2.5M characters), and the copy is kept
# encrypted and base64-encoded (4/3 as long): past this, saving failed in
# the browser without a word and the turns since were lost at a reload.
MAX_SAVED_CHARS = 1_500_000


def _turn_json(entry: SessionTurn) -> dict:
    return {"turn": dataclasses.asdict(entry.turn), "info": dataclasses.asdict(entry.info)}


def _turn_from_json(data: dict) -> SessionTurn:
    turn, info = data["turn"], dict(data["info"])
    info["system_rewrite"] = Rewrite(**info["system_rewrite"])
    info["history"] = tuple(str(text) for text in info["history"])
    return SessionTurn(
        Turn(
            question=str(turn["question"]),
            rewrite=Rewrite(**turn["rewrite"]),
            answer=Answer(**turn["answer"]),
            sources=tuple(Passage(**p) for p in turn["sources"]),
            timings_ms={str(k): float(v) for k, v in turn["timings_ms"].items()},
        ),
        TurnInfo(**info),
    )


def _title(turns: list[dict]) -> str:
    return turns[0]["turn"]["question"][:60] if turns else "(empty)"


def saved_state(session: Session, limit: int = MAX_SAVED_CHARS) -> dict:
    """The session's conversations (the current one included) as JSON, at
    most ``limit`` characters of it (see :func:`_within`)."""
    conversations = dict(session.archive)
    if session.turns or not conversations:
        conversations[str(session.conversation_no)] = [_turn_json(t) for t in session.turns]
    keep = sorted(conversations, key=int)[-MAX_CONVERSATIONS:]
    saved = {
        "version": STORE_VERSION,
        "id": session.id,
        "current": session.conversation_no,
        "conversations": {key: conversations[key] for key in keep},
    }
    if session.source is not None:
        # Only its name: the documents themselves are not kept (restore_state says so).
        saved["source"] = session.source.name
    return _within(saved, limit)


def _within(saved: dict, limit: int) -> dict:
    """``saved`` cut to ``limit`` characters of JSON: the oldest other
    conversations go first, then the sources of the current one's oldest
    turns (its questions, rewrites and answers stay)."""
    size = len(json.dumps(saved))
    conversations = saved["conversations"]
    current = str(saved["current"])
    for key in [k for k in conversations if k != current]:
        if size <= limit:
            return saved
        size -= len(json.dumps(conversations.pop(key))) + len(json.dumps(key)) + 4
    for turn in conversations.get(current, []):
        if size <= limit:
            break
        sources = turn["turn"]["sources"]
        size -= len(json.dumps(sources)) - 2
        turn["turn"] = {**turn["turn"], "sources": []}
    return saved


def restore_state(session: Session, data: Any) -> str:
    """Put the conversations of :func:`saved_state` back into an empty
    ``session``; returns a status. ``None`` (nothing saved) leaves it empty."""
    session.restored = True  # read once, whatever it holds: a bad copy is not retried at every event
    if data is None:
        return ""
    try:
        if data.get("version") != STORE_VERSION:
            raise DataFormatError("saved conversations are from another version of the app")
        conversations = {str(int(key)): list(turns) for key, turns in data["conversations"].items()}
        current = str(int(data["current"]))
        turns = [_turn_from_json(t) for t in conversations.get(current, [])]
        saved_id = str(data.get("id") or "")
    except (AttributeError, KeyError, TypeError, ValueError) as error:
        raise DataFormatError(f"The conversations saved in this browser cannot be read ({type(error).__name__}).") from None
    session.archive = {key: value for key, value in conversations.items() if key != current}
    session.turns, session.conversation_no, session.selected = turns, int(current), None
    if saved_id.isalnum():
        session._id = saved_id  # the labels' ids stay the same across a reload
    kept = len(conversations)
    status = f"Restored {kept} conversation{'s' if kept != 1 else ''} saved in this browser."
    if isinstance(data.get("source"), str) and session.source is None:
        status += (f" Answers came from {data['source']} before: documents are not kept across a reload or a "
                   "server restart, so answers now come from the default collection until you give them again.")
    return status


def conversation_choices(session: Session, saved: dict | None = None) -> list[tuple[str, int]]:
    """(label, number) of every conversation, the current one included, oldest
    first; ``saved``: the session's :func:`saved_state` when the caller has it."""
    saved = (saved or saved_state(session))["conversations"]
    choices = [(f"{key}: {_title(turns)}", int(key)) for key, turns in saved.items()]
    if str(session.conversation_no) not in saved:
        # An empty current conversation is not saved, but it is the one the
        # list shows as chosen: a value outside the choices is an error in Gradio.
        choices.append((f"{session.conversation_no}: {_title([])}", session.conversation_no))
    return choices


def switch_conversation(session: Session, number: int) -> str:
    """Make conversation ``number`` the current one (the current one is kept)."""
    key = str(number)
    if number == session.conversation_no:
        return f"Conversation {number} is the current one."
    if key not in session.archive:
        raise InvalidInputError(f"There is no conversation {number} in this browser.")
    turns = [_turn_from_json(t) for t in session.archive.pop(key)]
    if session.turns:
        session.archive[str(session.conversation_no)] = [_turn_json(t) for t in session.turns]
    session.turns, session.conversation_no, session.selected = turns, number, None
    session.replay = None if session.replay is None else dataclasses.replace(session.replay, conversation_id="", position=0)
    return f"Back to conversation {number} ({len(turns)} turn{'s' if len(turns) != 1 else ''})."


def new_conversation(session: Session) -> str:
    """Start over (the session's documents stay; a replay is stopped); the
    conversation so far is kept in ``session.archive``. An empty one is
    already new: it keeps its number rather than leave a gap in the list."""
    if session.turns:
        session.archive[str(session.conversation_no)] = [_turn_json(t) for t in session.turns]
        # Only the newest are ever saved or listed (saved_state): the rest would only take memory.
        for key in sorted(session.archive, key=int)[: -(MAX_CONVERSATIONS - 1)]:
            del session.archive[key]
        session.turns = []
        session.conversation_no = max([session.conversation_no, *map(int, session.archive)]) + 1
    session.selected = None
    session.replay = None if session.replay is None else dataclasses.replace(session.replay, conversation_id="", position=0)
    return "New conversation."
