"""The server's upkeep while it serves, and its stop.

Jobs a served app runs now and then on threads of its own (handing free
memory back, forgetting Gradio's records of deleted files), and the wait for
the turns under way before it stops. No gradio here: the served Blocks and
the app's handlers come in as arguments.
"""

from __future__ import annotations

import os
import threading
import time

from assistant.kernel import release_free_memory

__all__ = ["drain", "forget_deleted_files", "release_free_memory", "while_serving"]


def while_serving(server, name: str, job, every_s: float, first_s: float) -> None:
    """Run ``job`` on a thread of its own, ``first_s`` seconds after this
    call and every ``every_s`` seconds after, while ``server`` (Gradio's
    Blocks) serves, as its ``is_running`` says; a job that returns False is
    not run again."""

    def loop():
        time.sleep(first_s)
        while server.is_running and job() is not False:
            time.sleep(every_s)

    threading.Thread(target=loop, name=name, daemon=True).start()


def forget_deleted_files(blocks) -> int:
    """Drop from Gradio's records of its temporary files (``blocks.temp_file_sets``,
    which its ``delete_cache`` walks) the paths of files no longer on disk; returns
    how many. A session's uploads and export are deleted when it ends, and
    Gradio kept each one's path for good (its own deletion skips a file
    already gone without forgetting it): a record that grew with every
    upload on a server left running."""
    forgotten = 0
    for paths in blocks.temp_file_sets:
        gone = {path for path in list(paths) if not os.path.lexists(path)}  # list(): a copy taken at once
        paths.difference_update(gone)
        forgotten += len(gone)
    return forgotten


def drain(work, limit_s: float) -> None:
    """Wait until ``work`` (the app's handlers) has no turn under way, as its
    ``running`` count says, or ``limit_s`` seconds: what a SIGTERM does
    before the server stops as on Ctrl-C (the process used to die at once,
    cutting every running turn, and Gradio's shutdown, which deletes the
    uploads it keeps, never ran)."""
    deadline = time.monotonic() + limit_s
    while work.running and time.monotonic() < deadline:
        time.sleep(0.05)
