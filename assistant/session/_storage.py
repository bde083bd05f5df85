"""The server's disk as sessions write to it: what a visitor is told when it
is full or cannot be written (a full volume, a read-only cache folder).

A write that failed so raised the bare OSError, which the app showed as
"Something went wrong (OSError)" for an upload, a judgement or an export,
and an index build that filled the disk failed with Lucene's "no segments
file found". These say what happened; the conversation is kept.
"""

from __future__ import annotations

import errno
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..kernel import InvalidInputError

__all__ = ["disk_free", "server_storage", "storage_refusal"]

# What each error says of the server's storage.
_CAUSES = {
    errno.ENOSPC: "is full",
    errno.EDQUOT: "is over its quota",
    errno.EFBIG: "takes no file that large",
    errno.EROFS: "is read-only",
    errno.EACCES: "may not be written by the server",
    errno.EPERM: "may not be written by the server",
}


def storage_refusal(what: str, cause: str) -> InvalidInputError:
    """The error telling a visitor that ``what`` failed because the server's storage ``cause``."""
    return InvalidInputError(f"{what}: the server's storage {cause}. Nothing else is lost (your conversation is "
                             "kept); try again later, or tell the server's owner if this goes on.")


@contextmanager
def server_storage(what: str) -> Iterator[None]:
    """Write to the server's disk: an OSError that says its storage is full
    or cannot be written becomes :func:`storage_refusal` of ``what`` (e.g.
    "This judgement was not recorded"); any other error goes on as it is."""
    try:
        yield
    except OSError as error:
        cause = _CAUSES.get(error.errno)
        if cause is None:
            raise
        raise storage_refusal(what, cause) from None


def disk_free(folder: Path) -> int:
    """Bytes free on the disk of ``folder`` (its nearest existing parent's)."""
    folder = Path(folder)
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return shutil.disk_usage(folder).free
