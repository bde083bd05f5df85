"""Many users at once: ``python scripts/load_test.py [--url URL] [--sessions 20] [--turns 3]``.

Each session is its own ``gradio_client.Client`` (its own browser-like
session and server-side state), on its own thread of a pool as large as
``--sessions``, and plays the same scripted conversation through the app's
``/chat`` API; all sessions start together. The script prints the p50 / p95 /
max latency of a turn as seen by the client (queue wait included,
:func:`assistant.kernel.percentile`), the throughput (turns/s), the errors,
the lost turns (requested minus answered: an error, a timeout or a session
that never connected loses its turns) and whether every session saw only its
own turns (turn numbers 1, 2, 3 ... in every reply: a shared conversation
would number them across sessions). ``--sessions 100`` is a crowd on the free
tier's queue (at most ``app.QUEUE_SIZE`` waiting events).

Two clients. ``--client gradio`` (the default) plays each session through
``gradio_client`` on its own thread, as a Python program would. Its Jobs
poll for messages every 50 ms from a thread each, so on the 2 cores of the
benchmarks the load generator takes a large share of the CPU the server is
measured on (``client_cpu_s`` in the result says how much). ``--client lean``
plays every session on one asyncio loop with raw HTTP: the same Gradio queue
protocol a browser speaks (``queue/join``, then the session's
``queue/data`` event stream), the same conversation and checks, little CPU:
closer to a crowd whose browsers run elsewhere.

Without ``--url`` it starts ``app.py`` itself on a free loopback port (with
``--rewriter``/``--index`` passed on) and stops it at the end. Loopback only:
the URL must be on 127.0.0.1 or localhost. Every request is bounded by
``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

from tqdm import tqdm

# Run as a file (python scripts/load_test.py): the repository root is not on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.kernel import percentile  # noqa: E402

QUESTIONS = [
    "Who was Ada Lovelace?",
    "What did she write about?",
    "Who was her father?",
    "When did she die?",
    "What is the Analytical Engine?",
]
REPO = Path(__file__).resolve().parents[1]
# Most sessions (client threads) one run starts: app.STATE_SESSIONS, the
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


class _Session:
    """What one session saw: each answered turn's latency, the errors, and
    whether every reply was numbered as a turn of this session's own."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.answered, self.isolated = 0, True

    def failed(self, error: Exception) -> None:
        self.errors.append(f"{type(error).__name__}: {error}")
        self.isolated = False  # the server may or may not have added that turn

    def replied(self, number: int, reply: dict, seconds: float) -> None:
        self.latencies.append(seconds)
        if "error" in reply:
            self.errors.append(reply["error"])
        else:
            self.answered += 1
            self.isolated = self.isolated and reply.get("turn") == number

    def result(self) -> dict:
        return {"latencies": self.latencies, "errors": self.errors, "answered": self.answered, "isolated": self.isolated}


def _session(url: str, questions: list[str], timeout: float, start: threading.Barrier, bar) -> dict:
    """One session's conversation; what it saw. Waits at ``start`` whatever
    happens, so that one session failing to connect never holds the others."""
    from gradio_client import Client

    seen = _Session()
    try:
        client = Client(url, verbose=False)
    except Exception as error:  # noqa: BLE001 - a session that cannot connect is reported, not fatal
        client, seen.isolated = None, False
        seen.errors.append(f"connect: {type(error).__name__}: {error}")
    try:
        start.wait(timeout=600)
    except threading.BrokenBarrierError:
        client, seen.isolated = None, False
        seen.errors.append("the sessions did not all start")
    for number, question in enumerate(questions if client is not None else [], 1):
        began = time.perf_counter()
        try:
            reply = client.submit(question, api_name="/chat").result(timeout=timeout)
        except Exception as error:  # noqa: BLE001 - a failed turn is counted; the session goes on
            seen.failed(error)
            continue
        finally:
            bar.update(1)
        seen.replied(number, reply, time.perf_counter() - began)
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


async def _lean_run(url: str, sessions: int, questions: list[str], timeout: float, bar) -> list[dict]:
    import httpx

    endpoint = _chat_endpoint(url)
    limits = httpx.Limits(max_connections=2 * sessions + 10, max_keepalive_connections=2 * sessions + 10)

    async def session(http) -> dict:
        session_hash, seen = uuid.uuid4().hex, _Session()
        for number, question in enumerate(questions, 1):
            began = time.perf_counter()
            try:
                reply = await asyncio.wait_for(_lean_turn(http, url, endpoint, session_hash, question), timeout)
            except Exception as error:  # noqa: BLE001 - a failed turn is counted; the session goes on
                seen.failed(error)
                continue
            finally:
                bar.update(1)
            seen.replied(number, reply, time.perf_counter() - began)
        return seen.result()

    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout)) as http:
        return list(await asyncio.gather(*(session(http) for _ in range(sessions))))


def run(url: str, sessions: int, turns: int, timeout: float, client: str = "gradio") -> dict:
    """Play ``sessions`` conversations of ``turns`` turns at once against ``url``
    with the ``client`` (``"gradio"`` or ``"lean"``); the result's figures."""
    questions = (QUESTIONS * (turns // len(QUESTIONS) + 1))[:turns]
    if client == "lean":
        with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar:
            began, cpu_began = time.perf_counter(), time.process_time()
            results = asyncio.run(_lean_run(url, sessions, questions, timeout, bar))
            wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu_began
        return _summary(client, sessions, turns, results, wall, client_cpu)
    start = threading.Barrier(sessions + 1)
    with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar, \
            ThreadPoolExecutor(max_workers=sessions, thread_name_prefix="session") as pool:
        futures = [pool.submit(_session, url, questions, timeout, start, bar) for _ in range(sessions)]
        try:
            start.wait(timeout=600)
        except threading.BrokenBarrierError:
            pass  # the sessions say so in their errors
        began, cpu_began = time.perf_counter(), time.process_time()
        results = [future.result() for future in futures]  # each turn is bounded by --timeout
        wall, client_cpu = time.perf_counter() - began, time.process_time() - cpu_began
    return _summary(client, sessions, turns, results, wall, client_cpu)


def _summary(client: str, sessions: int, turns: int, results: list[dict], wall: float, client_cpu: float) -> dict:
    latencies = [x for r in results for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    requested, answered = sessions * turns, sum(r["answered"] for r in results)
    done = len(latencies)
    return {
        "client": client,
        "sessions": sessions,
        "turns_per_session": turns,
        "turns_requested": requested,
        "turns_completed": answered,
        "lost_turns": requested - answered,
        "errors": len(errors),
        "first_errors": errors[:3],
        "sessions_isolated": all(r["isolated"] for r in results),
        "p50_s": round(percentile(latencies, 0.5), 3) if done else None,
        "p95_s": round(percentile(latencies, 0.95), 3) if done else None,
        "max_s": round(max(latencies), 3) if done else None,
        "wall_s": round(wall, 1),
        "turns_per_s": round(answered / wall, 2) if wall else None,
        "client_cpu_s": round(client_cpu, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/load_test.py", description=__doc__.splitlines()[0])
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
    if not (1 <= args.sessions <= MAX_SESSIONS and args.turns >= 1 and args.timeout > 0):
        print(f"error: --sessions must be 1 to {MAX_SESSIONS}, --turns >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    process = None
    if args.url:
        if urlparse(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
            print("error: --url must be a loopback address (127.0.0.1 or localhost)", file=sys.stderr)
            return 2
        url = args.url.rstrip("/") + "/"
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
