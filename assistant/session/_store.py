"""A session's conversations as plain JSON, for the browser to keep.

The app keeps this JSON in the browser (``gr.BrowserState``), so a reload or
a server restart loses no conversation, and a user can keep several and
switch between them. What comes back from a browser is untrusted: a value
that does not read back whole is refused with DataFormatError, never half
restored.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from typing import Any

from ..kernel import Answer, DataFormatError, InvalidInputError, Passage, Rewrite, Turn, counted
from ._state import COLLECTION, MAX_HISTORY_CHARS, MAX_NAME_CHARS, MAX_TURNS, Origin, Session, SessionTurn, Source, TurnInfo

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
# Characters of saved JSON read back at most: what a browser can keep for
# the app (see MAX_SAVED_CHARS); a longer value was not saved by it.
MAX_RESTORED_CHARS = 2_000_000
# What merge_saved says when another tab's save drew the conversation shown anew.
BROUGHT_UP_TO_DATE = "this conversation was brought up to date"
# Longest session or turn id read back (the app draws 12 and 8 characters).
_MAX_ID_CHARS = 32
# Removed conversations a copy remembers (Session.removed), the newest: one
# matters only until every open tab has heard of its removal, at the next
# save, so a few suffice, and the copy does not grow with every undo.
MAX_REMOVED = 50
# Characters of a source's name and of an article's title read back at most
# (the app writes shorter: a title is at most 300).
_MAX_NAME_CHARS = MAX_NAME_CHARS
# Longest uploaded source's token read back (new_token draws 22 characters).
_MAX_TOKEN_CHARS = 64
# The kinds of origin a copy may name (Origin.kind).
_ORIGIN_KINDS = ("collection", "document", "uploads")


def _turn_json(entry: SessionTurn) -> dict:
    return {"turn": dataclasses.asdict(entry.turn), "info": dataclasses.asdict(entry.info)}


class _Unreadable(Exception):
    """A saved value that is not what :func:`saved_state` writes."""


def _text(value: Any, cut: bool = True) -> str:
    # Every text of a saved turn is cut: it comes back into the rewriter's
    # history, the search and the labels file, and only the browser vouches for it.
    if not isinstance(value, str):
        raise _Unreadable
    return value[:MAX_HISTORY_CHARS] if cut else value


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _Unreadable
    return float(value)


def _flag(value: Any) -> bool:
    if not isinstance(value, bool):
        raise _Unreadable
    return value


def _object(value: Any, *required: str) -> dict:
    if not isinstance(value, dict) or any(key not in value for key in required):
        raise _Unreadable
    return value


def _listed(value: Any) -> list | tuple:
    if not isinstance(value, (list, tuple)):  # a tuple: saved_state's value before it became JSON
        raise _Unreadable
    return value


def _texts(value: Any) -> tuple[str, ...]:
    return tuple(_text(item) for item in _listed(value))


def _numbers(value: Any) -> dict[str, float]:
    return {_text(key): _number(number) for key, number in _object(value).items()}


def _rewrite(data: Any) -> Rewrite:
    data = _object(data, "text")
    return Rewrite(_text(data["text"]), _text(data.get("note", "")), _text(data.get("rejected", "")),
                   _texts(data.get("alternatives", [])))


def _passage(data: Any) -> Passage:
    data = _object(data, "id", "text", "score")
    # A passage is only shown (escaped); the size of the whole copy bounds it.
    return Passage(_text(data["id"]), _text(data["text"], cut=False), _number(data["score"]),
                   _text(data.get("title", "")), _text(data.get("url", "")), _text(data.get("description", "")))


def _turn_from_json(data: Any) -> SessionTurn:
    """A turn of :func:`_turn_json`, every field checked for its type (a
    wrong one raises _Unreadable) and every text cut to MAX_HISTORY_CHARS."""
    data = _object(data, "turn", "info")
    turn, info = _object(data["turn"], "question", "rewrite", "answer"), _object(data["info"], "system_rewrite", "history")
    answer = _object(turn["answer"], "text", "score")
    judgement = info.get("judgement")
    if judgement not in (None, 0, 1) or isinstance(judgement, bool):
        raise _Unreadable
    sources = _listed(turn.get("sources", []))
    return SessionTurn(
        Turn(
            question=_text(turn["question"]),
            rewrite=_rewrite(turn["rewrite"]),
            answer=Answer(_text(answer["text"]), _number(answer["score"]), _text(answer.get("evidence", "")),
                          _text(answer.get("source_id", "")), _flag(answer.get("found", True))),
            sources=tuple(_passage(p) for p in sources),
            timings_ms=_numbers(turn.get("timings_ms", {})),
        ),
        TurnInfo(
            system_rewrite=_rewrite(info["system_rewrite"]),
            history=_texts(info["history"]),
            reference=_text(info.get("reference", "")),
            reference_kind=_text(info.get("reference_kind", "")),
            scores=_numbers(info.get("scores", {})),
            judgement=judgement,
            awaiting_reference=_flag(info.get("awaiting_reference", False)),
            notice=_text(info.get("notice", "")),
            example_id=_text(info.get("example_id", "")),
            uid=_text(info.get("uid", ""))[:_MAX_ID_CHARS],
        ),
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
    # Each conversation's source, by its name (and an article's title, to
    # take it again): the documents themselves are not kept (restore_state
    # says so). A conversation saved before they were has none.
    # An uploaded source's token too, to read its files again (UploadedFiles):
    # this copy is sealed with the app's secret, and shown nowhere.
    origins = {key: origin.saved_json() for key in saved["conversations"]
               if (origin := origin_of(session, key)) is not None}
    saved["sources"] = origins
    current = origins.get(str(session.conversation_no), COLLECTION.json())
    if current.get("name"):
        saved["source"] = current["name"]  # the current one's, as copies before per-conversation sources read it
    # A removed conversation the copy holds again (another tab went on with
    # it, and this one took it back) is not removed: the other tabs keep it.
    held = {_opening(turns) for turns in saved["conversations"].values() if turns}
    removed = [opening for opening in session.removed if opening not in held]
    if removed:
        saved["removed"] = removed
    return _within(saved, limit)


def origin_of(session: Session, key: str) -> Origin | None:
    """What conversation ``key`` of ``session`` is answered from (None: not
    known, saved before conversations kept their source)."""
    kept = session.sources.get(key)
    if key == str(session.conversation_no) and not isinstance(kept, Origin):
        return session.source.origin if session.source is not None else COLLECTION
    return kept.origin if isinstance(kept, Source) else kept


def _within(saved: dict, limit: int) -> dict:
    """``saved`` cut to ``limit`` characters of JSON: the oldest other
    conversations go first, then the sources of the current one's oldest
    turns (its questions, rewrites and answers stay)."""
    conversations = saved["conversations"]
    current = str(saved["current"])
    size = _drop_until_within(conversations, [k for k in conversations if k != current], len(json.dumps(saved)), limit)
    for key in set(saved.get("sources", {})) - set(conversations):
        del saved["sources"][key]  # smaller still: no entry for a conversation dropped
    for turn in conversations.get(current, []):
        if size <= limit:
            break
        sources = turn["turn"]["sources"]
        size -= len(json.dumps(sources)) - 2
        turn["turn"] = {**turn["turn"], "sources": []}
    return saved


def _drop_until_within(conversations: dict, keys: list[str], size: int, limit: int) -> int:
    """Remove ``keys`` from ``conversations``, in order, until ``size`` (the
    characters of JSON holding them) is within ``limit``; the size left. An
    entry's characters are its value's, its quoted key's, ': ' and ', '."""
    for key in keys:
        if size <= limit:
            break
        size -= len(json.dumps(conversations.pop(key))) + len(json.dumps(key)) + 4
    return size


def restore_state(session: Session, data: Any) -> str:
    """Put the conversations of :func:`saved_state` back into an empty
    ``session``; returns a status. ``None`` (nothing saved) leaves it empty.

    The browser's copy is the visitor's to edit (its key is in the page), so
    it is read as untrusted input: more than a browser can keep, or any value
    of the wrong type, refuses it whole (DataFormatError); only the newest
    MAX_CONVERSATIONS are kept, and texts are cut as :func:`_turn_from_json` says.
    """
    session.restored = True  # read once, whatever it holds: a bad copy is not retried at every event
    if data is None:
        return ""
    parsed, current, saved_id, session.removed, origins = _read_copy(data)
    session.archive = {str(n): [_turn_json(t) for t in turns] for n, turns in parsed.items() if n != current}
    # The current one's too, when not the collection: held by none yet, it
    # is taken again where it can be (take_back, as a switch to it does).
    session.sources = {str(n): origin for n, origin in origins.items()
                       if n in parsed and (n != current or origin != COLLECTION)}
    session.turns, session.conversation_no, session.selected = parsed.get(current, []), current, None
    session.stored = frozenset(_prints([_turn_json(t) for t in turns]) for turns in parsed.values())
    if saved_id.isascii() and saved_id.isalnum() and len(saved_id) <= _MAX_ID_CHARS:
        session._id = saved_id  # the labels' ids stay the same across a reload
    kept = len(parsed)
    # A page never asked anything saves its one empty conversation: said to
    # be "restored", it announced conversations the chat did not show.
    status = f"Restored {counted(kept, 'conversation')} saved in this browser." if any(parsed.values()) else ""
    if current not in origins and isinstance(data.get("source"), str) and session.source is None:
        # A copy saved before each conversation kept its source.
        status += (f" Answers came from {data['source'][:200]} before: documents are not kept across a reload or a "
                   "server restart, so answers now come from the default collection until you give them again.")
    return status.strip()


def _read_copy(data: Any) -> tuple[dict[int, list[SessionTurn]], int, str, list[str], dict[int, Origin]]:
    """The conversations (the newest MAX_CONVERSATIONS, and the current
    one), the current one's number, the browser's id, the removed
    conversations (the newest MAX_REMOVED; none in a copy saved before
    copies had them) and each conversation's source (none in a copy saved
    before conversations kept theirs) of a copy :func:`saved_state` wrote;
    anything else raises DataFormatError."""
    unreadable = "The conversations saved in this browser cannot be read"
    try:
        size = len(json.dumps(data))
    except (TypeError, ValueError, RecursionError):
        raise DataFormatError(f"{unreadable} (not the JSON this app saves).") from None
    if size > MAX_RESTORED_CHARS:
        raise DataFormatError(f"{unreadable}: {size:,} characters, more than a browser keeps for this app.")
    try:
        if not isinstance(data, dict) or data.get("version") != STORE_VERSION:
            raise DataFormatError("saved conversations are from another version of the app")
        saved = _object(data.get("conversations"))
        numbers = {_number_of(key): turns for key, turns in saved.items()}
        current = _number_of(data.get("current"))
        keep = sorted(numbers)[-MAX_CONVERSATIONS:]
        if current not in keep and current in numbers:
            keep = [current, *keep[1:]]
        parsed = {number: _turns_of(numbers[number]) for number in keep}
        saved_id = data.get("id") or ""
        if not isinstance(saved_id, str):
            raise _Unreadable
        removed = [_text(opening)[:_MAX_ID_CHARS] for opening in _listed(data.get("removed", []))][-MAX_REMOVED:]
        origins = {_number_of(key): _origin(value) for key, value in _object(data.get("sources", {})).items()}
    except _Unreadable:
        raise DataFormatError(f"{unreadable} (a value of the wrong type).") from None
    return parsed, current, saved_id, removed, origins


def _origin(data: Any) -> Origin:
    """An origin as :meth:`Origin.json` writes it (never a path on the server)."""
    data = _object(data, "kind")
    kind = _text(data["kind"])
    if kind not in _ORIGIN_KINDS:
        raise _Unreadable
    if kind == "collection":
        return COLLECTION
    token = _text(data.get("token", ""))
    if len(token) > _MAX_TOKEN_CHARS or not token.replace("-", "").replace("_", "").isalnum() or not token.isascii():
        token = ""  # not one new_token drew: nothing to read back by it
    return Origin(kind, _text(data.get("name", ""))[:_MAX_NAME_CHARS] or f"your {kind}",
                  _text(data.get("title", ""))[:_MAX_NAME_CHARS] if kind == "document" else "", token=token)


def _number_of(key: Any) -> int:
    """A conversation's number: a whole number from 1 (as text in the keys)."""
    if isinstance(key, str) and key.isascii() and key.isdigit() and len(key) <= 9:
        key = int(key)
    if isinstance(key, bool) or not isinstance(key, int) or not 0 < key < 10**9:
        raise _Unreadable
    return key


def _turns_of(turns: Any) -> list[SessionTurn]:
    if len(_listed(turns)) > MAX_TURNS:
        raise _Unreadable
    return [_turn_from_json(t) for t in turns]


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


def enter_conversation(session: Session, number: int) -> str:
    """Make conversation ``number`` the current one (the current one is
    kept, with its source); returns a status. What it was answered from
    stays in ``session.sources`` under its number, for the caller to take
    again (the session layer's switch_conversation); ``session.source`` is
    still the conversation left's."""
    key = str(number)
    if number == session.conversation_no:
        return f"Conversation {number} is the current one."
    if key not in session.archive:
        raise InvalidInputError(f"There is no conversation {number} in this browser.")
    turns = [_turn_from_json(t) for t in session.archive.pop(key)]
    kept = session.sources.pop(key, None)  # out of the archive, it is no longer the archive's to forget
    _leave_current(session)
    session.turns, session.conversation_no = turns, number
    if kept is not None:
        session.sources[key] = kept
    return f"Back to conversation {number} ({counted(len(turns), 'turn')})."


def _trim_archive(session: Session, limit: int = MAX_SAVED_CHARS) -> None:
    """Only the newest conversations that fit in the browser's copy are ever
    saved or listed (saved_state): the rest would only take memory, which a
    script asking through the API and starting over in a loop grew by its
    whole history (sources included) each time."""
    keys = sorted(session.archive, key=int)
    for key in keys[: -(MAX_CONVERSATIONS - 1)]:
        del session.archive[key]
    # The newest stays, as saved_state keeps the current one.
    _drop_until_within(session.archive, keys[-(MAX_CONVERSATIONS - 1):][:-1], len(json.dumps(session.archive)), limit)
    session.forget_sources()  # what only the conversations dropped held goes with them


def _leave_current(session: Session) -> None:
    """Keep the current conversation in ``session.archive`` (an empty one is
    not kept), with no turn selected and a replay stopped: what starting
    over and switching to another conversation both do first."""
    key = str(session.conversation_no)
    if session.turns:
        session.archive[key] = [_turn_json(t) for t in session.turns]
        # It keeps its source (the one it still waits to take again, if any).
        wanted = session.sources.get(key)
        session.sources[key] = wanted if isinstance(wanted, Origin) else session.source or COLLECTION
        _trim_archive(session)
    else:
        session.sources.pop(key, None)
    session.selected = None
    session.replay = None if session.replay is None else dataclasses.replace(session.replay, conversation_id="", position=0)


def new_conversation(session: Session) -> str:
    """Start over (a replay is stopped); the conversation so far is kept in
    ``session.archive``, with its source. The new one is answered from the
    source of the one left: a visitor who gave a document starts over to
    ask about it afresh (the default collection is a press of “Back to the
    default collection” away, a document given again a new upload or
    paste). An empty one is already new: it keeps its number rather than
    leave a gap in the list. One left while its source is read again from
    its files (after a reload) leaves the new one waiting for it too: it
    was answered from the default collection meanwhile, though the visitor
    had given that source."""
    kept = session.sources.get(str(session.conversation_no))
    waited = kept if isinstance(kept, Origin) and kept != COLLECTION else None
    under_way = bool(session.turns)
    _leave_current(session)
    if under_way:
        session.turns = []
        session.conversation_no = max([session.conversation_no, *map(int, session.archive)]) + 1
    if waited is None:
        return "New conversation."
    session.sources[str(session.conversation_no)] = waited
    where = " from the files on the server" if waited.files or waited.token else ""  # an upload
    return (f"New conversation. Its answers come from {waited.name} once it is read again{where} (a question asked "
            "meanwhile waits for it).")


def _prints(turns: list[dict]) -> tuple[str, ...]:
    """What two tabs compare of a conversation (turns as :func:`_turn_json`
    writes them): each turn read back as a browser's copy is (texts cut),
    without its sources. The sources are what :func:`_within` strips from a
    copy near its size limit, so a turn is the same turn with or without them."""
    prints = []
    for turn in turns:
        data = _turn_json(_turn_from_json(turn))
        data["turn"].pop("sources")
        prints.append(hashlib.blake2b(json.dumps(data, sort_keys=True).encode(), digest_size=8).hexdigest())
    return tuple(prints)


def _goes_on_from(longer: tuple[str, ...], shorter: tuple[str, ...]) -> bool:
    return len(longer) > len(shorter) and longer[:len(shorter)] == shorter


def merge_saved(session: Session, data: Any) -> str:
    """Fold into ``session`` the copy another tab of this browser saved
    (``data``, as :func:`saved_state` writes it); returns a status, "" when
    nothing changed (nothing to save).

    Two tabs share the browser's copy and each saves all of its own
    conversations over it: without this, the last to save dropped the
    other's new turns. A conversation of theirs is matched with one of this
    tab's by its first turn (its uid). Where this tab has not changed its
    own since it last read the copy (``session.stored``), theirs is taken
    (their turns, thumbs, corrections and undos); where theirs goes on from
    this tab's, theirs is taken; where this tab's goes on from theirs, or
    theirs is a version this tab has read before, this tab's stays; where
    both changed it, both are kept, theirs as a conversation of its own. So
    is a conversation this tab does not have. A conversation their copy
    says was removed (every turn undone, :func:`note_removed`) goes from
    this tab too where this tab has not changed it since it last read the
    copy; merging only added, so a removed conversation came back from the
    tab that still held it. The current conversation is not replaced or
    removed while a turn of this tab runs or waits (theirs is then kept
    beside it). A conversation this tab does not have, numbered as the
    empty one it shows, answered from the same source, is taken in its
    place: a tab opened empty took another's first conversation as a
    second one beside its empty first. A conversation added keeps its
    source's name (the tab that gave it holds it); one removed lets go of
    what only it held. The size limits are those of :func:`saved_state`:
    the oldest conversations go first.
    """
    parsed, _, _, their_removed, origins = _read_copy(data)
    current = str(session.conversation_no)
    mine = dict(session.archive)
    if session.turns:
        mine[current] = [_turn_json(t) for t in session.turns]
    prints = {key: _prints(turns) for key, turns in mine.items()}
    theirs = {number: [_turn_json(t) for t in turns] for number, turns in parsed.items() if turns}
    their_prints = {number: _prints(turns) for number, turns in theirs.items()}
    busy = session.running > 0 or bool(session.waiting)
    gone = set(their_removed) - {_opening(turns) for turns in theirs.values()}
    removed = [key for key, turns in mine.items() if turns and _opening(turns) in gone and prints[key] in session.stored
               and not (key == current and busy)]
    for key in removed:
        _remove(session, key)
        del mine[key], prints[key]
    _remember_removed(session, their_removed)  # carried on, for a tab that hears only this tab's save
    held, both = set(prints.values()), set(their_prints.values())
    taken, added = [], []
    for number in sorted(theirs):
        turns, print_ = theirs[number], their_prints[number]
        if print_ in held or print_ in session.stored:
            continue  # here already, or a version this tab read and has changed since (or dropped)
        key = _counterpart(mine, prints, both, turns, print_)
        if key is not None:
            ours = prints[key]
            if (ours in session.stored or _goes_on_from(print_, ours)) and not (key == current and busy):
                _replace(session, key, turns)
                mine[key], prints[key] = turns, print_
                taken.append(key)
                continue
            if _goes_on_from(ours, print_):
                continue
        if str(number) == current and current not in mine and not busy and _same_origin(session, origins.get(number)):
            _replace(session, current, turns)
            mine[current], prints[current] = turns, print_
            taken.append(current)
            continue
        key = str(max(map(int, [current, *mine])) + 1)
        session.archive[key] = mine[key] = turns
        prints[key] = print_
        if number in origins:
            session.sources[key] = origins[number]
        added.append(key)
    session.stored = frozenset(both)
    if added:
        _trim_archive(session)  # which forgets the sources of what it drops too
    else:
        session.forget_sources()
    return _merged_status(session, taken, added, removed)


def _same_origin(session: Session, theirs: Origin | None) -> bool:
    """Whether the conversation ``session`` shows is answered from
    ``theirs`` (None, not known, is taken as the same: a copy saved before
    conversations kept their source)."""
    ours = origin_of(session, str(session.conversation_no))
    return theirs is None or ours is None or ours.json() == theirs.json()


def _counterpart(mine: dict, prints: dict, theirs: set, turns: list[dict], print_: tuple[str, ...]) -> str | None:
    """This tab's conversation that theirs (``turns``, ``print_``) is a
    version of: the one that opens with the same turn (:func:`_opening`)
    and is not itself in their copy, the one with the most turns in common
    first; None if none."""
    def common(key):
        return next((i for i, (a, b) in enumerate(zip(prints[key], print_)) if a != b), min(len(prints[key]), len(print_)))

    opening = _opening(turns)
    same = [key for key, ours in mine.items() if ours and prints[key] not in theirs and _opening(ours) == opening]
    return max(same, key=common, default=None)


def _opening(turns: list[dict]) -> str:
    """What tells one conversation (turns as :func:`_turn_json` writes them,
    at least one) from another: its first turn's uid, or for a turn saved
    before turns had one, the turn itself (its print)."""
    return turns[0]["info"].get("uid") or _prints(turns[:1])[0]


def note_removed(session: Session, first: SessionTurn) -> None:
    """Remember that the conversation that opened with ``first`` was
    removed, so that the copy this tab saves tells the other tabs
    (:func:`merge_saved`)."""
    _remember_removed(session, [_opening([_turn_json(first)])])


def _remember_removed(session: Session, openings: list[str]) -> None:
    """Add ``openings`` to the conversations removed (again: as the newest); the newest MAX_REMOVED are kept."""
    session.removed = [*(o for o in session.removed if o not in openings), *openings][-MAX_REMOVED:]


def _remove(session: Session, key: str) -> None:
    if key == str(session.conversation_no):
        session.turns, session.selected = [], None
    else:
        del session.archive[key]


def _replace(session: Session, key: str, turns: list[dict]) -> None:
    from ._turns import target_turn  # _turns imports _sources, which imports this module

    if key != str(session.conversation_no):
        session.archive[key] = turns
        return
    # The turn the correction box and thumbs act on stays that turn (by its
    # uid) where theirs still has it: a correction being typed for it stays
    # meant for it, not for a turn the other tab added after it.
    target = session.turns[target_turn(session)].info.uid if session.turns else ""
    session.turns = [_turn_from_json(t) for t in turns]
    session.selected = next((i for i, t in enumerate(session.turns) if target and t.info.uid == target), None)


def _merged_status(session: Session, taken: list[str], added: list[str], removed: list[str]) -> str:
    kept = set(session.archive) | {str(session.conversation_no)}
    taken, added = [key for key in taken if key in kept], [key for key in added if key in kept]
    if not taken and not added and not removed:
        return ""
    parts = []
    current = str(session.conversation_no)
    if current in taken or current in removed:
        # Emptied is brought up to date too: the page reads the chat, drawn anew, as the one phrase.
        parts.append(BROUGHT_UP_TO_DATE)
        taken, removed = [key for key in taken if key != current], [key for key in removed if key != current]
    for keys, done in ((taken, "brought up to date"), (added, "added to Your conversations"),
                       (removed, "removed, as in that tab")):
        if keys:
            parts.append(f"conversation{'s' if len(keys) > 1 else ''} {', '.join(keys)} {done}")
    return "Another tab of this browser saved: " + "; ".join(parts) + "."
