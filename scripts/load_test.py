"""Many users at once: ``python scripts/load_test.py [--url URL] [--sessions 20] [--turns 3]``.

Each session is its own ``gradio_client.Client`` (its own browser-like
session and server-side state) and plays the same scripted conversation
through the app's ``/chat`` API; all sessions start together. The script
prints the p50 / p95 / max latency of a turn as seen by the client (queue
wait included), the throughput, and checks that every session saw only its
own turns (turn numbers 1, 2, 3 ... in every reply: a shared conversation
would number them across sessions).

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
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
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


def _session(url: str, questions: list[str], timeout: float, start: threading.Barrier, out: dict, bar) -> None:
    from gradio_client import Client

    latencies, errors, order_ok = [], [], True
    try:
        client = Client(url, verbose=False)
        start.wait()
        for number, question in enumerate(questions, 1):
            began = time.perf_counter()
            reply = client.submit(question, api_name="/chat").result(timeout=timeout)
            latencies.append(time.perf_counter() - began)
            if "error" in reply:
                errors.append(reply["error"])
            elif reply.get("turn") != number:
                order_ok = False
            bar.update(1)
    except Exception as error:  # noqa: BLE001 - a failed session is reported, not fatal to the others
        errors.append(f"{type(error).__name__}: {error}")
    out.update(latencies=latencies, errors=errors, isolated=order_ok)


def run(url: str, sessions: int, turns: int, timeout: float) -> dict:
    questions = (QUESTIONS * (turns // len(QUESTIONS) + 1))[:turns]
    results: list[dict] = [{} for _ in range(sessions)]
    start = threading.Barrier(sessions + 1)
    with tqdm(total=sessions * turns, desc="turns", file=sys.stderr) as bar:
        threads = [
            threading.Thread(target=_session, args=(url, questions, timeout, start, results[i], bar), daemon=True)
            for i in range(sessions)
        ]
        for thread in threads:
            thread.start()
        start.wait(timeout=120)
        began = time.perf_counter()
        for thread in threads:
            thread.join(timeout=timeout * turns + 60)
        wall = time.perf_counter() - began
    latencies = np.array([x for r in results for x in r.get("latencies", [])])
    errors = [e for r in results for e in r.get("errors", [])]
    done = len(latencies)
    return {
        "sessions": sessions,
        "turns_per_session": turns,
        "turns_completed": done,
        "errors": len(errors),
        "first_errors": errors[:3],
        "sessions_isolated": all(r.get("isolated", False) for r in results),
        "p50_s": round(percentile(latencies, 0.5), 3) if done else None,
        "p95_s": round(percentile(latencies, 0.95), 3) if done else None,
        "max_s": round(float(latencies.max()), 3) if done else None,
        "wall_s": round(wall, 1),
        "turns_per_s": round(done / wall, 2) if wall else None,
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
    if args.sessions < 1 or args.turns < 1 or args.timeout <= 0:
        print("error: --sessions and --turns must be >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    process = None
    if args.url:
        if urlparse(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
            print("error: --url must be a loopback address (127.0.0.1 or localhost)", file=sys.stderr)
            return 2
        url = args.url.rstrip("/") + "/"
    else:
        port = _free_port()
        url = f"http://127.0.0.1:{port}/"
        command = [sys.executable, str(REPO / "app.py"), "--port", str(port), "--host", "127.0.0.1"]
        command += ["--rewriter", args.rewriter] if args.rewriter else []
        command += ["--index", args.index] if args.index else []
        print(f"starting {' '.join(command[1:])}", file=sys.stderr)
        process = subprocess.Popen(command, cwd=REPO, env=dict(os.environ), stdout=subprocess.DEVNULL)
    try:
        if process is not None:
            _wait_until_up(url, process, limit_s=900)
        result = run(url, args.sessions, args.turns, args.timeout)
    finally:
        if process is not None:
            process.terminate()
            process.wait(timeout=30)
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:>18}: {value}")
    return 0 if result["errors"] == 0 and result["sessions_isolated"] else 1


if __name__ == "__main__":
    sys.exit(main())
