"""Many users at once: ``python scripts/load_test.py [--url URL] [--sessions 20] [--turns 3]``.

Each session is its own client (its own browser-like session and
server-side state) and plays a scripted conversation through the app's
``/chat`` API; all sessions start together. The conversations differ:
:data:`CONVERSATIONS` holds several, each about its own subject of the
default collection (Ada Lovelace, Marie Curie, Isaac Newton, the Eiffel
Tower, Julius Caesar, Mount Everest), a first question naming the subject
and follow-ups that only say "she", "it", "his". Session *i* (from 0) plays
conversation *i* mod their number, ``--turns`` of its questions (cycling
through its own conversation when more are asked than it has). So the
sessions' rewrites, searches and readings are not one question asked many
times, which the server would batch and cache better than a crowd's.

The script prints the p50 / p95 / max latency of a turn as seen by the
client (queue wait included, :func:`assistant.kernel.percentile`), the
throughput (turns/s), the errors, the lost turns (requested minus answered:
an error, a timeout or a session that never connected loses its turns), how
many subjects the sessions asked about, and whether every session saw only
its own conversation (``sessions_isolated``; ``leaked_replies`` counts the
replies that show otherwise, ``leak_example`` describes the first).

What the isolation check proves. Each reply a session gets
(:func:`isolation_problems`) must

- echo as ``"question"`` the question this session sent for that turn;
- be numbered as the next turn of this session's own conversation
  (``"turn"``: one more than its last reply's; after a turn that failed
  without a reply, which the server may or may not have added, up to one
  more per such failure), in one unchanging ``"conversation"``;
- carry a ``"rewrite"`` that, like each of its ``"alternatives"``, does not
  name the subject of another session of the run whose subject differs from
  its own (a name of :attr:`Conversation.names`, as a whole word, any case),
  unless that name is already in this session's own text: the questions it
  sent and the answers it got, which the rewriter reads as history.

A rewrite is made from the question and the session's own history only, so a
foreign subject in it means another session's turns or history reached this
one: a shared or swapped session state, or rows of a batch handed to the
wrong caller. A rewriter that fails to name its own subject ("When did she
die?" left as is, or a wrong name from its own history) is a poor rewrite,
not a leak, and is not counted. What the check does not prove: a leak with
no foreign name in it (another session's subject left unnamed, or a leak
between sessions playing the same conversation: with ``--sessions 1``, or
all sessions on one subject, only the question echo and turn numbers are
checked), and anything about the answers and sources, which come from the
collection all sessions share and may name any subject. Turns that failed
are not leaks either: ``errors`` and ``lost_turns`` count them.
``sessions_isolated`` is None when no reply came back to check.

``--sessions 100`` is a crowd on the free tier's queue (at most
``app.QUEUE_SIZE`` waiting events).

Two clients. ``--client gradio`` (the default) plays each session through
``gradio_client`` on its own thread, as a Python program would. Its Jobs
poll for messages every 50 ms from a thread each, so on the 2 cores of the
benchmarks the load generator takes a large share of the CPU the server is
measured on (``client_cpu_s`` in the result says how much). ``--client lean``
plays every session on one asyncio loop with raw HTTP: the same Gradio queue
protocol a browser speaks (``queue/join``, then the session's
``queue/data`` event stream), the same conversations and checks, little CPU:
closer to a crowd whose browsers run elsewhere.

Without ``--url`` it starts ``app.py`` itself on a free loopback port (with
``--rewriter``/``--index`` passed on) and stops it at the end. Loopback only:
the URL must be on 127.0.0.1 or localhost. Every request is bounded by
``--timeout`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple
from urllib.parse import urlparse

from tqdm import tqdm

# Run as a file (python scripts/load_test.py): the repository root is not on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.kernel import CommandParser, percentile  # noqa: E402



class Conversation(NamedTuple):
    """A scripted conversation: its ``subject``, the ``names`` that name it
    (whole words, any case: what a rewrite resolving "she" or "it" would
    write) and its ``questions``, the first naming the subject."""

    subject: str
    names: tuple[str, ...]
    questions: tuple[str, ...]


# Subjects of the default collection (Wikipedia vital-article summaries),
# none of whose names is likely in another's questions or answers.
CONVERSATIONS = (
    Conversation("Ada Lovelace", ("Ada", "Lovelace"), (
        "Who was Ada Lovelace?", "What did she write about?", "Who was her father?", "When did she die?",
        "What is the Analytical Engine?")),
    Conversation("Marie Curie", ("Marie", "Curie"), (
        "Who was Marie Curie?", "What did she discover?", "Who was her husband?", "Which prizes did she win?")),
    Conversation("Isaac Newton", ("Isaac", "Newton"), (
        "Who was Isaac Newton?", "What book did he publish?", "Who shares credit with him for calculus?",
        "When did he die?")),
    Conversation("the Eiffel Tower", ("Eiffel",), (
        "Where is the Eiffel Tower?", "Who is it named after?", "When was it built?", "How tall is it?")),
    Conversation("Julius Caesar", ("Julius", "Caesar"), (
        "Who was Julius Caesar?", "Which wars did he lead?", "Who was his political rival?",
        "When was he assassinated?")),
    Conversation("Mount Everest", ("Everest",), (
        "How high is Mount Everest?", "Where does it lie?", "Which border does it mark?", "Who first climbed it?")),
)
REPO = Path(__file__).resolve().parents[1]
# Most sessions (client threads) one run starts: server.STATE_SESSIONS, the
# sessions the server keeps; beyond it the oldest states would be dropped.
MAX_SESSIONS = 1000


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, process: subprocess.Popen, limit_s: float) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"error: app.py exited with status {process.returncode} before serving")
        try:
            with urllib.request.urlopen(url + "config", timeout=5):
                return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"error: app.py did not serve {url} within {limit_s:.0f} s")


def not_serving(url: str) -> str | None:
    """Why ``url`` is no running app, as one ``error:`` line for a ``--url``
    given by hand, or None when it serves Gradio's config: a mistyped or
    stopped app's URL ended in a connection traceback (or, here, a table of
    failed turns) instead of saying so."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/config", timeout=10) as response:
            json.load(response)
    except (OSError, ValueError) as error:
        # A refused connection, a timeout, an HTTP error, a page that is no Gradio's config.
        reason = getattr(error, "reason", None) or error
        return (f"error: no app answers at {url} ({reason}); start one (python app.py --port N) "
                "and give its URL, or leave --url out")
    return None


def start_app(rewriter: str | None = None, index: str | None = None, limit_s: float = 900) -> tuple[str, subprocess.Popen]:
    """``app.py`` on a free loopback port, serving: its URL and process
    (stop it with :func:`stop_app`). ``rewriter``/``index``: its flags."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/"
    command = [sys.executable, str(REPO / "app.py"), "--port", str(port), "--host", "127.0.0.1"]
    command += ["--rewriter", rewriter] if rewriter else []
    command += ["--index", index] if index else []
    print(f"starting {' '.join(command[1:])}", file=sys.stderr)
    process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ), stdout=subprocess.DEVNULL)
    try:
        _wait_until_up(url, process, limit_s)
    except BaseException:
        stop_app(process)
        raise
    return url, process


def stop_app(process: subprocess.Popen) -> None:
    """Stop a server :func:`start_app` started (killed if it does not stop)."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=30)


def questions_for(conversation: Conversation, turns: int) -> list[str]:
    """The ``turns`` questions a session playing ``conversation`` asks: its
    own, from the first, cycling through them when more are asked."""
    return [conversation.questions[k % len(conversation.questions)] for k in range(turns)]


def plan(sessions: int) -> list[tuple[Conversation, tuple[Conversation, ...]]]:
    """For each of ``sessions`` sessions: the conversation it plays (session
    *i* plays :data:`CONVERSATIONS` [*i* mod their number]) and the other
    sessions' conversations whose subject differs from its own, the subjects
    its rewrites must not name."""
    played = [CONVERSATIONS[i % len(CONVERSATIONS)] for i in range(sessions)]
    subjects = list(dict.fromkeys(played))  # in order, once each
    return [(own, tuple(c for c in subjects if c.subject != own.subject)) for own in played]


def _named(name: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(name)}\b", text, re.IGNORECASE) is not None


def foreign_names(text: str, foreign: tuple[Conversation, ...], own_text: list[str]) -> list[str]:
    """The subjects of ``foreign`` that ``text`` names, a name counting only
    when it is in none of ``own_text`` (what this session sent and got, from
    which its rewriter may have taken it)."""
    return [c.subject for c in foreign
            if any(_named(name, text) and not any(_named(name, mine) for mine in own_text) for name in c.names)]


def isolation_problems(reply: dict, question: str, turns: tuple[int, int], conversation: object,
                       foreign: tuple[Conversation, ...], own_text: list[str]) -> list[str]:
    """Why ``reply``, to ``question``, cannot be this session's own (``[]``:
    nothing says so). ``turns``: the lowest and highest turn number this
    session's conversation may have reached with it; ``conversation``: the
    conversation number its earlier replies had (None: none yet);
    ``foreign``: the other sessions' subjects; ``own_text``: the questions
    this session sent before and the answers it got."""
    problems = []
    if reply.get("question") != question:
        problems.append(f"echoes the question {reply.get('question')!r}")
    if "error" in reply:
        return problems
    turn, (low, high) = reply.get("turn"), turns
    if not (isinstance(turn, int) and low <= turn <= high):
        problems.append(f"is turn {turn!r} where this session is at turn {low}" + (f" to {high}" if high > low else ""))
    if conversation is not None and reply.get("conversation") != conversation:
        problems.append(f"is in conversation {reply.get('conversation')!r}, not {conversation!r}")
    alternatives = reply.get("alternatives") or []
    rewrites = [reply.get("rewrite")] + (list(alternatives) if isinstance(alternatives, list) else [alternatives])
    if not all(isinstance(r, str) for r in rewrites):
        problems.append("has no rewrite to check")
    for rewrite in filter(lambda r: isinstance(r, str), rewrites):
        for subject in foreign_names(rewrite, foreign, own_text + [question]):
            problems.append(f"rewrite {rewrite!r} names {subject}, another session's subject")
    return problems


class _Session:
    """What one session saw: each answered turn's latency, the errors, and
    the replies that show another session's conversation
    (:func:`isolation_problems`)."""

    def __init__(self, number: int, conversation: Conversation, foreign: tuple[Conversation, ...]) -> None:
        self.number, self.conversation, self.foreign = number, conversation, foreign
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.leaks: list[str] = []
        self.answered = 0
        self.own_text: list[str] = []  # what this session sent and got: its rewriter's history
        self.last_turn, self.unsure = 0, 0  # the last reply's turn; turns failed since, maybe added
        self.conversation_no = None
        self.asked = 0

    @contextlib.contextmanager
    def asking(self, question: str, bar):
        """One turn of ``question``, timed from here: the block puts the
        server's reply in the yielded dict as ``"reply"``. Both clients count
        a turn so: one that raises is :meth:`failed` and the session goes on,
        else :meth:`replied`; the bar moves either way."""
        began, asked = time.perf_counter(), {}
        try:
            yield asked
        except Exception as error:  # noqa: BLE001 - a failed turn is counted; the session goes on
            self.failed(question, error)
            return
        finally:
            bar.update(1)
        self.replied(question, asked["reply"], time.perf_counter() - began)

    def failed(self, question: str, error: Exception) -> None:
        self.asked += 1
        self.errors.append(f"{type(error).__name__}: {error}")
        self.own_text.append(question)
        self.unsure += 1  # the server may or may not have added that turn

    def replied(self, question: str, reply: dict, seconds: float) -> None:
        self.asked += 1
        self.latencies.append(seconds)
        if not isinstance(reply, dict):
            reply = {"error": f"not a JSON object: {reply!r}"[:200]}
        turns = (self.last_turn + 1, self.last_turn + 1 + self.unsure)
        problems = isolation_problems(reply, question, turns, self.conversation_no, self.foreign, self.own_text)
        if problems:
            self.leaks.append(f"session {self.number} ({self.conversation.subject}), question {self.asked} "
                              f"{question!r}: the reply " + "; ".join(problems))
        self.own_text.append(question)
        if "error" in reply:
            self.errors.append(str(reply["error"]))
            return
        self.answered += 1
        if isinstance(reply.get("turn"), int):
            self.last_turn, self.unsure = reply["turn"], 0
        if self.conversation_no is None:
            self.conversation_no = reply.get("conversation")
        if isinstance(reply.get("answer"), str):
            self.own_text.append(reply["answer"])

    def result(self) -> dict:
        return {"latencies": self.latencies, "errors": self.errors, "answered": self.answered, "leaks": self.leaks,
                "subject": self.conversation.subject}


def _session(url: str, number: int, conversation: Conversation, foreign: tuple[Conversation, ...], turns: int,
             timeout: float, start: threading.Barrier, bar) -> dict:
    """One session's conversation; what it saw. Waits at ``start`` whatever
    happens, so that one session failing to connect never holds the others."""
    from gradio_client import Client

    seen = _Session(number, conversation, foreign)
    try:
        client = Client(url, verbose=False)
    except Exception as error:  # noqa: BLE001 - a session that cannot connect is reported, not fatal
        client = None
        seen.errors.append(f"connect: {type(error).__name__}: {error}")
    try:
        start.wait(timeout=600)
    except threading.BrokenBarrierError:
        client = None
        seen.errors.append("the sessions did not all start")
    for question in questions_for(conversation, turns) if client is not None else []:
        with seen.asking(question, bar) as asked:
            asked["reply"] = client.submit(question, api_name="/chat").result(timeout=timeout)
    return seen.result()


def _chat_endpoint(url: str) -> tuple[int, list[bool]]:
    """The ``/chat`` event's index and, for each of its inputs, whether it is
    session state (which a client sends as null: the server holds it)."""
    with urllib.request.urlopen(url + "config", timeout=30) as response:
        config = json.load(response)
    kinds = {component["id"]: component["type"] for component in config["components"]}
    for index, dependency in enumerate(config["dependencies"]):
        if dependency.get("api_name") == "chat":
            return index, [kinds[i] == "state" for i in dependency["inputs"]]
    raise SystemExit(f"error: {url} has no /chat endpoint")


async def _lean_turn(http, url: str, endpoint: tuple[int, list[bool]], session_hash: str, question: str) -> dict:
    """One ``/chat`` call over Gradio's queue protocol (sse_v3): join the
    queue, then read the session's event stream until this event completes."""
    fn_index, state = endpoint
    data = [None if is_state else question for is_state in state]
    payload = {"data": data, "fn_index": fn_index, "session_hash": session_hash, "event_data": None, "trigger_id": None}
    joined = await http.post(url + "gradio_api/queue/join", json=payload)
    joined.raise_for_status()
    event_id = joined.json()["event_id"]
    async with http.stream("GET", url + "gradio_api/queue/data", params={"session_hash": session_hash}) as stream:
        stream.raise_for_status()
        async for line in stream.aiter_lines():
            if not line.startswith("data:"):
                continue
            message = json.loads(line[5:])
            if message.get("event_id") != event_id or message.get("msg") != "process_completed":
                continue
            if not message.get("success"):
                raise RuntimeError(f"the server failed the turn: {message.get('output')}")
            return message["output"]["data"][0]
    raise RuntimeError("the event stream ended before the turn completed")


async def _lean_run(url: str, sessions: int, turns: int, timeout: float, bar) -> list[dict]:
    import httpx

    endpoint = _chat_endpoint(url)
    limits = httpx.Limits(max_connections=2 * sessions + 10, max_keepalive_connections=2 * sessions + 10)

    async def session(http, number: int, conversation: Conversation, foreign: tuple[Conversation, ...]) -> dict:
        session_hash, seen = uuid.uuid4().hex, _Session(number, conversation, foreign)
        for question in questions_for(conversation, turns):
            with seen.asking(question, bar) as asked:
                asked["reply"] = await asyncio.wait_for(_lean_turn(http, url, endpoint, session_hash, question), timeout)
        return seen.result()

    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout)) as http:
        played = enumerate(plan(sessions))
        return list(await asyncio.gather(*(session(http, i, own, foreign) for i, (own, foreign) in played)))


def run(url: str, sessions: int, turns: int, timeout: float, client: str = "gradio") -> dict:
    """Play ``sessions`` conversations of ``turns`` turns at once against ``url``
    with the ``client`` (``"gradio"`` or ``"lean"``); the result's figures."""
    if client == "lean":
        with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar:
            began, cpu_began = time.perf_counter(), time.process_time()
            results = asyncio.run(_lean_run(url, sessions, turns, timeout, bar))
            wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu_began
        return summary(client, sessions, turns, results, wall, client_cpu)
    start = threading.Barrier(sessions + 1)
    with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar, \
            ThreadPoolExecutor(max_workers=sessions, thread_name_prefix="session") as pool:
        futures = [pool.submit(_session, url, i, own, foreign, turns, timeout, start, bar)
                   for i, (own, foreign) in enumerate(plan(sessions))]
        try:
            start.wait(timeout=600)
        except threading.BrokenBarrierError:
            pass  # the sessions say so in their errors
        began, cpu_began = time.perf_counter(), time.process_time()
        results = [future.result() for future in futures]  # each turn is bounded by --timeout
        wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu_began
    return summary(client, sessions, turns, results, wall, client_cpu)


def summary(client: str, sessions: int, turns: int, results: list[dict], wall: float, client_cpu: float) -> dict:
    """The figures of a run from what each session saw (:meth:`_Session.result`)."""
    latencies = [x for r in results for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    leaks = [leak for r in results for leak in r["leaks"]]
    requested, answered = sessions * turns, sum(r["answered"] for r in results)
    done = len(latencies)
    return {
        "client": client,
        "sessions": sessions,
        "turns_per_session": turns,
        "subjects": len({r["subject"] for r in results}),
        "turns_requested": requested,
        "turns_completed": answered,
        "lost_turns": requested - answered,
        "errors": len(errors),
        "first_errors": errors[:3],
        "sessions_isolated": not leaks if done else None,
        "leaked_replies": len(leaks),
        "leak_example": leaks[0] if leaks else None,
        "p50_s": round(percentile(latencies, 0.5), 3) if done else None,
        "p95_s": round(percentile(latencies, 0.95), 3) if done else None,
        "max_s": round(max(latencies), 3) if done else None,
        "wall_s": round(wall, 1),
        "turns_per_s": round(answered / wall, 2) if wall else None,
        "client_cpu_s": round(client_cpu, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = CommandParser(prog="python scripts/load_test.py", description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running app (loopback); default: start app.py on a free port")
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    parser.add_argument("--turns", type=int, default=3, help="turns per session (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per turn (default 300)")
    parser.add_argument("--rewriter", help="passed to app.py when this script starts it")
    parser.add_argument("--index", help="passed to app.py when this script starts it")
    parser.add_argument("--client", choices=("gradio", "lean"), default="gradio",
                        help="gradio_client on a thread per session (default), or raw HTTP on one asyncio loop")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    args = parser.parse_args(argv)
    # Each flag named with the value given: one line listed all three whichever was wrong.
    wrong = [message for bad, message in (
        (not 1 <= args.sessions <= MAX_SESSIONS, f"--sessions must be 1 to {MAX_SESSIONS}, not {args.sessions}"),
        (args.turns < 1, f"--turns must be at least 1, not {args.turns}"),
        (not args.timeout > 0, f"--timeout must be above 0 seconds, not {args.timeout:g}")) if bad]
    if wrong:
        print(f"error: {wrong[0]}", file=sys.stderr)
        return 2
    process = None
    if args.url:
        if urlparse(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
            print("error: --url must be a loopback address (127.0.0.1 or localhost)", file=sys.stderr)
            return 2
        url = args.url.rstrip("/") + "/"
        if problem := not_serving(url):
            print(problem, file=sys.stderr)
            return 2
    else:
        url, process = start_app(args.rewriter, args.index)
    try:
        result = run(url, args.sessions, args.turns, args.timeout, args.client)
    finally:
        if process is not None:
            stop_app(process)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")
    return 0 if result["errors"] == 0 and result["lost_turns"] == 0 and result["sessions_isolated"] else 1


if __name__ == "__main__":
    sys.exit(main())
