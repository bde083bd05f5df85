"""Serving the app to strangers: the most a request may carry."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ._storage import disk_free
from ._store import MAX_RESTORED_CHARS
from ._uploads import UploadLimits

__all__ = ["request_limit", "BodyLimit"]


def request_limit(limits: UploadLimits) -> int:
    """The most bytes one request's body may hold: a pasted document (as an
    upload, ``limits.max_file_bytes``) beside the browser's saved copy (up to
    ``MAX_RESTORED_CHARS`` characters, 3 bytes each at most in UTF-8) and a
    little more for the other inputs. Gradio's upload route has its own."""
    return limits.max_file_bytes + 3 * MAX_RESTORED_CHARS + 2**20


def gradio_upload_dir() -> Path:
    """Where Gradio keeps the files uploaded to it (``GRADIO_TEMP_DIR``, else ``<tmp>/gradio``)."""
    return Path(os.environ.get("GRADIO_TEMP_DIR") or Path(tempfile.gettempdir()) / "gradio")


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes is
    answered 413 before the app reads it. Gradio took any body (and kept an
    event's data in its queue until the event ran): a few 100 MB posts to
    the queue from a script grew the server's memory by gigabytes.

    Gradio's upload route (whose files' size ``max_file_size`` checks) is
    answered 507 while the disk of ``upload_dir`` would keep less than
    ``min_free`` bytes free: it keeps any number of files a day, so a script
    posting in a loop filled the disk, and then the labels, the exports and
    every session's index failed too."""

    def __init__(self, app, limit: int, upload_dir: str | os.PathLike | None = None,
                 min_free: int = UploadLimits().min_free_bytes):
        self.app, self.limit, self.min_free = app, limit, min_free
        self.upload_dir = Path(upload_dir) if upload_dir is not None else gradio_upload_dir()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"].rstrip("/").endswith("/upload"):
            declared = dict(scope["headers"]).get(b"content-length", b"0")
            coming = int(declared) if declared.isdigit() else 0
            if disk_free(self.upload_dir) < self.min_free + coming:
                return await self._refuse(send, 507, "The server's storage is nearly full: uploads are refused for "
                                                     "now. Try again later; questions are still answered.")
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await self._refuse(send, 413, self._too_large())
            return await self.app(scope, receive, send)  # the server reads no more than it declares
        # Chunked, length unknown: read up to the limit here, then hand it on.
        messages, size = [], 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.limit:
                return await self._refuse(send, 413, self._too_large())
            if not message.get("more_body", False):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    def _too_large(self) -> str:
        return f"Request too large: at most {self.limit:,} bytes."

    @staticmethod
    async def _refuse(send, status: int, message: str):
        body = message.encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
