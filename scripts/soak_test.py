"""Memory under a long run: ``python scripts/soak_test.py [--turns 2000] [--clients 4]``.

Starts ``app.py`` on a free loopback port (``--rewriter``/``--index`` passed
on), drives ``--turns`` turns in all through its ``/chat`` API from
``--clients`` concurrent clients (each starts a new conversation every
``--new-every`` turns, as visitors do), then stops the server. Prints one JSON
object: the server's resident memory (RSS, MB), its open file descriptors and
its threads once it serves, after 200 turns and after all of them, the RSS's
growth between the last two, and the errors. Every cache of the server has a
bound, so after the caches fill the RSS should stay flat: a steady growth per
turn is a leak; so is a count of descriptors or threads that keeps rising.

Bounded: exactly ``--turns`` requests, each allowed ``--timeout`` seconds;
loopback only. Long: run it on an idle machine (``--turns 60`` is a smoke test).
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from pathlib import Path

from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_test import CONVERSATIONS, Conversation, start_app, stop_app  # noqa: E402 - the one way scripts start the app

# The turn count of the first memory sample: by then every cache of the tiny
# demo has seen each question, and the queue's threads exist. Later samples
# come every --sample-every turns, so that a leak shows as a slope and a
# cache filling up as a curve that flattens.
FIRST_SAMPLE = 200


def rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` in MB (psutil, else /proc)."""
    try:
        import psutil

        return round(psutil.Process(pid).memory_info().rss / 1e6, 1)
    except ImportError:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) * 1024 / 1e6, 1)
        raise RuntimeError(f"no VmRSS for process {pid}") from None


def process_figures(pid: int) -> dict[str, float]:
    """Process ``pid``'s RSS (MB), open file descriptors and threads: a
    server that runs for days must hold each flat."""
    proc = Path(f"/proc/{pid}")
    if proc.is_dir():
        fds, threads = len(list((proc / "fd").iterdir())), len(list((proc / "task").iterdir()))
    else:  # no /proc: psutil's counts
        import psutil

        process = psutil.Process(pid)
        fds, threads = process.num_fds(), process.num_threads()
    return {"rss_mb": rss_mb(pid), "fds": fds, "threads": threads}


class Tickets:
    """Hands out turn numbers 1..total to the clients; samples the server's
    RSS when the FIRST_SAMPLE-th turn is done, then every ``every`` turns."""

    def __init__(self, total: int, pid: int, bar, every: int = 0):
        self.total, self.pid, self.bar, self.every = total, pid, bar, every
        self.issued = self.done = 0
        self.samples: dict[str, dict[str, float]] = {}
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.issued >= self.total:
                return False
            self.issued += 1
            return True

    def finished(self, error: str | None) -> None:
        with self._lock:
            self.done += 1
            if error:
                self.errors.append(error)
            later = self.every and self.done > FIRST_SAMPLE and (self.done - FIRST_SAMPLE) % self.every == 0
            if (self.done == FIRST_SAMPLE or later) and self.done < self.total:
                self.samples[str(self.done)] = process_figures(self.pid)
        self.bar.update(1)


def next_turn(conversation: Conversation, asked: int, new_every: int) -> tuple[bool, str]:
    """What a client playing ``conversation`` does after ``asked`` turns:
    whether it first starts a new conversation (every ``new_every`` turns;
    0: never), and the question it asks, its conversation's questions in
    order from the first in each new conversation, cycling when more are asked.

    >>> [next_turn(CONVERSATIONS[0], asked, 2) for asked in range(3)]  # doctest: +NORMALIZE_WHITESPACE
    [(False, 'Who was Ada Lovelace?'), (False, 'What did she write about?'), (True, 'Who was Ada Lovelace?')]
    """
    within = asked % new_every if new_every else asked
    return bool(new_every and asked and within == 0), conversation.questions[within % len(conversation.questions)]


def _client(url: str, tickets: Tickets, new_every: int, timeout: float, conversation: Conversation) -> None:
    from gradio_client import Client

    try:
        client = Client(url, verbose=False)
    except Exception as error:  # noqa: BLE001 - reported; the other clients take its turns
        with tickets._lock:
            tickets.errors.append(f"connect: {type(error).__name__}: {error}")
        return
    asked = 0
    while tickets.take():
        new, question = next_turn(conversation, asked, new_every)
        asked += 1
        try:
            if new:
                client.predict(api_name="/new")
            reply = client.submit(question, api_name="/chat").result(timeout=timeout)
            tickets.finished(reply.get("error"))
        except Exception as error:  # noqa: BLE001 - a failed turn is counted; the client goes on
            tickets.finished(f"{type(error).__name__}: {error}")


def soak(url: str, pid: int, turns: int, clients: int, new_every: int, timeout: float, every: int = 0) -> dict:
    start = process_figures(pid)
    with tqdm(total=turns, desc="turns", file=sys.stderr) as bar:
        tickets = Tickets(turns, pid, bar, every)
        # Client i plays load_test's conversation i (mod their number): a
        # crowd's different subjects, not one question batched and cached.
        threads = [threading.Thread(target=_client, name=f"client-{i}",
                                    args=(url, tickets, new_every, timeout, CONVERSATIONS[i % len(CONVERSATIONS)]))
                   for i in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    end = process_figures(pid)
    first = tickets.samples.get(str(FIRST_SAMPLE))
    samples = {"start": start, **tickets.samples, str(turns): end}
    return {
        "turns": turns,
        "turns_done": tickets.done,
        "clients": clients,
        "errors": len(tickets.errors),
        "first_errors": tickets.errors[:3],
        **{figure: {when: sample[figure] for when, sample in samples.items()} for figure in ("rss_mb", "fds", "threads")},
        "growth_mb_after_first_sample": round(end["rss_mb"] - first["rss_mb"], 1) if first is not None else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/soak_test.py", description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000, help="turns in all (default 2000)")
    parser.add_argument("--clients", type=int, default=4, help="concurrent API clients (default 4)")
    parser.add_argument("--new-every", type=int, default=20,
                        help="each client starts a new conversation every N turns (default 20; 0: never)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds allowed per turn (default 300)")
    parser.add_argument("--sample-every", type=int, default=200,
                        help=f"RSS samples after turn {FIRST_SAMPLE} and then every N turns (default 200; 0: only then and at the end)")
    parser.add_argument("--rewriter", help="passed to app.py")
    parser.add_argument("--index", help="passed to app.py")
    args = parser.parse_args(argv)
    if not (1 <= args.turns <= 1_000_000 and 1 <= args.clients <= 64 and args.new_every >= 0 and args.timeout > 0
            and args.sample_every >= 0):
        print("error: --turns must be 1 to 1000000, --clients 1 to 64, --new-every >= 0, --sample-every >= 0, --timeout > 0",
              file=sys.stderr)
        return 2
    url, process = start_app(args.rewriter, args.index)
    try:
        result = soak(url, process.pid, args.turns, args.clients, args.new_every, args.timeout, args.sample_every)
    finally:
        stop_app(process)
    print(json.dumps(result))
    return 0 if result["errors"] == 0 and result["turns_done"] == args.turns else 1


if __name__ == "__main__":
    sys.exit(main())
