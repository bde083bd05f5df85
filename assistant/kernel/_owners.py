"""Which process made a folder, and whether it still runs.

A folder a process fills for a while (an index build's staging folder, a
session's uploads index) stays behind when the process is killed (SIGKILL, a
machine's stop, the out-of-memory killer), and its cleanup never runs. Marked
with its owner, it can be told apart by the next process: a dead owner's
folder is removed, a live one's kept, as several processes may share one
cache folder (two servers, tests). A process done with a folder it could not
remove (a rebuild's old index, its removal refused) marks it finished: it is
then a dead owner's folder, though that process runs on. A mark names
the folder it was written in, and is that folder's only: a folder renamed
before its mark was removed (a build killed between its rename into place
and the unlink) carries a mark that is not its own, which says nothing of
it (else a user's dated index, ``wiki.20240101``, read as a dead build's).
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

__all__ = ["OWNER_FILE", "owner_mark", "mark_owner", "mark_finished", "owner_finished", "owner_gone",
           "remove_moved_mark"]

# The mark's file inside a marked folder.
OWNER_FILE = "convqa-owner.json"


def owner_mark(pid: int | None = None) -> dict:
    """``{"pid", "started", "host"}`` of process ``pid`` (default: this one,
    asked each time: a forked child is another owner)."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "started": _process_start(pid) or "", "host": socket.gethostname()}


def mark_owner(folder: str | os.PathLike) -> None:
    """Write this process's mark into ``folder``, naming it."""
    (Path(folder) / OWNER_FILE).write_text(json.dumps(_mark_of(folder)), encoding="utf-8")


def _mark_of(folder: str | os.PathLike) -> dict:
    return {**owner_mark(), "folder": Path(folder).name}


def mark_finished(folder: str | os.PathLike) -> bool:
    """Mark ``folder`` as no longer in use by this process (which may live
    on): :func:`owner_gone` says True of it from now. Whether the mark was
    written; when it could not be (a full disk), the mark is removed if it
    can be, so that the folder is not taken for a live process's either."""
    path = Path(folder) / OWNER_FILE
    try:
        path.write_text(json.dumps({**_mark_of(folder), "finished": True}), encoding="utf-8")
        return True
    except OSError:
        try:
            path.unlink()
        except OSError:
            pass
        return False


def owner_gone(folder: str | os.PathLike) -> bool | None:
    """True when the process that marked ``folder`` has stopped (its pid
    runs no more, or another process has it now) or has marked it finished
    (:func:`mark_finished`); False while it runs and uses it; None
    when that cannot be told: no mark or a broken one (a folder made before
    marks, or one just being made), another host's, or no start to compare."""
    owner = _mark(folder)
    if owner is None:
        return None
    pid, started, host, finished = owner
    if finished:
        return True
    if host != socket.gethostname():
        return None  # its pids are not ours
    now = _process_start(pid)
    if now is None:
        return True
    if not now or not started:
        return None
    return now != started  # another process has the pid now


def owner_finished(folder: str | os.PathLike) -> bool:
    """Whether ``folder``'s mark says its process finished with it
    (:func:`mark_finished`), rather than that process's death making its
    owner gone: a folder left part way through its work (SIGKILL) may hold
    what no other copy holds."""
    owner = _mark(folder)
    return owner is not None and owner[3]


def remove_moved_mark(folder: str | os.PathLike) -> None:
    """Remove ``folder``'s mark when it was written in another folder (see
    above): a build's mark left in the index it renamed into place."""
    owner = _raw_mark(folder)
    if owner is not None and _read_mark(owner, folder) is None:
        try:
            (Path(folder) / OWNER_FILE).unlink()
        except OSError:  # it says nothing of the folder all the same
            pass


def _raw_mark(folder: str | os.PathLike) -> dict | None:
    try:
        owner = json.loads((Path(folder) / OWNER_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return owner if isinstance(owner, dict) else None


def _mark(folder: str | os.PathLike) -> tuple[int, str, str, bool] | None:
    """The pid, start, host and finished flag of ``folder``'s mark; None
    when it has none, a broken one, or one written in another folder (a
    mark without the folder's name, an earlier version's, is its own)."""
    owner = _raw_mark(folder)
    return None if owner is None else _read_mark(owner, folder)


def _read_mark(owner: dict, folder: str | os.PathLike) -> tuple[int, str, str, bool] | None:
    """:func:`_mark` of a mark already read (one read, one decision)."""
    if owner.get("folder", Path(folder).name) != Path(folder).name:
        return None
    try:
        return int(owner["pid"]), str(owner["started"]), str(owner["host"]), owner.get("finished") is True
    except (ValueError, TypeError, KeyError):
        return None


def _process_start(pid: int) -> str | None:
    """When process ``pid`` started, as a text to compare; None when no
    such process runs; "" when it runs but its start cannot be read."""
    if Path("/proc/self/stat").exists():  # Linux
        try:
            stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        try:
            # Field 22, starttime: clock ticks from boot, after the name in
            # parentheses (which may hold spaces); with the boot's id, as a
            # reboot counts the ticks again.
            ticks = stat.rpartition(")")[2].split()[19]
            boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="utf-8").strip()
        except (OSError, IndexError):
            return ""
        return f"{boot}:{ticks}"
    try:
        import psutil
    except ImportError:
        psutil = None
    if psutil is not None:
        try:
            return f"{psutil.Process(pid).create_time():.3f}"
        except psutil.NoSuchProcess:
            return None
        except psutil.Error:
            return ""
    if os.name == "nt":  # os.kill would end the process there
        return ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except OSError:  # it runs, as another user
        return ""
    return ""
