"""Replaying a QReCC / CANARD / CAsT conversations file turn by turn."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

from rewriting.data import data_dir, load_examples

from ..kernel import DataFormatError, InvalidInputError, counted
from ._sources import hold_text
from ._state import Pending, Replay, Services, Session
from ._store import new_conversation
from ._turns import ask


def load_replay(session: Session, path: str | Path, name: str | None = None, services: Services | None = None,
                client: str | None = None) -> list[str]:
    """Read a QReCC, CANARD or CAsT file; returns its conversation ids.
    With ``services`` (the app's), the file's size counts in the text its
    sessions, and those of ``client``, hold in memory (:func:`hold_text`):
    each session keeps the whole file read, about twice its size, and one
    uploaded file loaded in many sessions (a script, a new session hash
    each time) held that many copies."""

    path = Path(path)
    if path.is_dir():  # a folder of the data folder ("qrecc") was called "no such file", though it is there
        raise InvalidInputError(f"{name or path.name} is a folder; give a file in it.")
    if not path.is_file():
        raise InvalidInputError(f"{name or path.name}: no such file.")
    held = mine = None
    if services is not None:
        held, mine = hold_text(services, session.replay, path.stat().st_size, client, "file")
    try:
        examples = load_examples(path)
        if not examples:
            raise DataFormatError(f"{name or path.name} holds no question with a human rewrite.")
    except BaseException as error:
        for share in (held, mine):
            if share is not None:
                share.give_back()
        if isinstance(error, DataFormatError):
            raise DataFormatError(str(error).replace(str(path), name or path.name)) from None
        if isinstance(error, UnicodeDecodeError):
            raise DataFormatError(f"{name or path.name} is not UTF-8 JSON.") from None
        raise
    conversations: dict[str, list] = {}
    for example in examples:
        conversations.setdefault(example.conversation_id, []).append(example)
    for turns in conversations.values():
        turns.sort(key=lambda e: e.turn)
    if session.replay is not None:
        session.replay.close()
    session.replay = Replay(name or path.name, conversations, held=held, client_share=mine)
    return list(conversations)


def replay_choices(session: Session, width: int = 60) -> list[tuple[str, str]]:
    """(label, conversation id) of each conversation of the loaded file, for
    the app's "Conversation" list: the id, the first question (cut at a
    word within ``width`` characters) and the turn count, as bare ids
    (1, 2, 856, ...) said nothing of what a conversation is about.

    >>> from types import SimpleNamespace
    >>> session = Session()
    >>> session.replay = Replay("q.json", {"856": [SimpleNamespace(question="What is a physician's assistant?")] * 12})
    >>> replay_choices(session)
    [("856: What is a physician's assistant? (12 turns)", '856')]
    """
    if session.replay is None:
        return []
    choices = []
    for conversation_id, turns in session.replay.conversations.items():
        question = " ".join(turns[0].question.split())
        if len(question) > width:
            question = question[:width].rsplit(" ", 1)[0].rstrip(",;:") + "…"
        choices.append((f"{conversation_id}: {question} ({counted(len(turns), 'turn')})", conversation_id))
    return choices


def shared_data_file(path: str) -> Path:
    """A replay file named by path, which must lie in the shared data folder
    (``$CONVQA_DATA``): a hosted app must not open any file on the server.
    A relative path is taken inside that folder, not the server's working
    folder (which the user cannot see)."""

    root = data_dir().resolve()
    refused = InvalidInputError("Only files in the data folder can be opened by path (e.g. "
                                "qrecc/qrecc_test_sample.json); upload other files instead.")
    try:
        resolved = (root / Path(path.strip()).expanduser()).resolve()
        resolved.is_file()  # a NUL byte or a name longer than the system takes raise here
    except (ValueError, OSError):
        raise refused from None
    if not resolved.is_relative_to(root):
        # The folder's place on the server is no visitor's business.
        raise refused
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
    return f"Replaying conversation {conversation_id} ({counted(len(session.replay.turns), 'turn')})."


def replay_step(services: Services, session: Session, client: str | None = None) -> Iterator[Pending]:
    """Play the replay's next question (rewritten with the file's history);
    ``client`` as :func:`ask` counts it for the source it waits for."""
    replay = session.replay
    if replay is None:
        raise InvalidInputError("Load a conversations file and pick a conversation first.")
    if not replay.conversation_id:  # loaded (and perhaps picked), not started
        raise InvalidInputError(f"Press Start to replay the conversation picked from {replay.name}.")
    if replay.remaining() <= 0:
        raise InvalidInputError(f"Conversation {replay.conversation_id} is finished: pick another one.")
    example = replay.turns[replay.position]
    yield from ask(services, session, example.question, history=example.history, reference=example.rewrite,
                   example_id=example.id, client=client)
    replay.position += 1


def replay_rest(services: Services, session: Session, client: str | None = None) -> Iterator[Pending]:
    """Play the replay's remaining turns, each as :func:`replay_step` does;
    with nothing loaded, picked or left it refuses as that does."""
    yield from replay_step(services, session, client)
    while session.replay is not None and session.replay.conversation_id and session.replay.remaining() > 0:
        yield from replay_step(services, session, client)
