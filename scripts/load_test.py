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

Without ``--url`` it starts ``app.py`` itself on a free loopback port (with
``--rewriter``/``--index`` passed on) and stops it at the end. Loopback only:
the URL must be on 127.0.0.1 or localhost. Every request is bounded by
``--timeout`` seconds.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
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


def _session(url: str, questions: list[str], timeout: float, start: threading.Barrier, bar) -> dict:
    """One session's conversation; what it saw. Waits at ``start`` whatever
    happens, so that one session failing to connect never holds the others."""
    from gradio_client import Client

    latencies, errors, answered, order_ok = [], [], 0, True
    try:
        client = Client(url, verbose=False)
    except Exception as error:  # noqa: BLE001 - a session that cannot connect is reported, not fatal
        client, order_ok = None, False
        errors.append(f"connect: {type(error).__name__}: {error}")
    try:
        start.wait(timeout=600)
    except threading.BrokenBarrierError:
        client, order_ok = None, False
        errors.append("the sessions did not all start")
    for number, question in enumerate(questions if client is not None else [], 1):
        began = time.perf_counter()
        try:
            reply = client.submit(question, api_name="/chat").result(timeout=timeout)
        except Exception as error:  # noqa: BLE001 - a failed turn is counted; the session goes on
            errors.append(f"{type(error).__name__}: {error}")
            order_ok = False  # the server may or may not have added that turn
            continue
        finally:
            bar.update(1)
        latencies.append(time.perf_counter() - began)
        if "error" in reply:
            errors.append(reply["error"])
        else:
            answered += 1
            order_ok = order_ok and reply.get("turn") == number
    return {"latencies": latencies, "errors": errors, "answered": answered, "isolated": order_ok}


def run(url: str, sessions: int, turns: int, timeout: float) -> dict:
    questions = (QUESTIONS * (turns // len(QUESTIONS) + 1))[:turns]
    start = threading.Barrier(sessions + 1)
    with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar, \
            ThreadPoolExecutor(max_workers=sessions, thread_name_prefix="session") as pool:
        futures = [pool.submit(_session, url, questions, timeout, start, bar) for _ in range(sessions)]
        try:
            start.wait(timeout=600)
        except threading.BrokenBarrierError:
            pass  # the sessions say so in their errors
        began = time.perf_counter()
        results = [future.result() for future in futures]  # each turn is bounded by --timeout
        wall = time.perf_counter() - began
    latencies = [x for r in results for x in r["latencies"]]
    errors = [e for r in results for e in r["errors"]]
    requested, answered = sessions * turns, sum(r["answered"] for r in results)
    done = len(latencies)
    return {
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
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/load_test.py", description=__doc__.splitlines()[0])
    parser.add_argument("--url", help="a running app (loopback); default: start app.py on a free port")
    parser.add_argument("--sessions", type=int, default=20, help="concurrent sessions (default 20)")
    parser.add_argument("--turns", type=int, default=3, help="turns per session (default 3)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per turn (default 300)")
    parser.add_argument("--rewriter", help="passed to app.py when this script starts it")
    parser.add_argument("--index", help="passed to app.py when this script starts it")
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
        result = run(url, args.sessions, args.turns, args.timeout)
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
