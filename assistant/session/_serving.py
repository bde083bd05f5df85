"""Serving the app to strangers: the most a request may carry."""

from __future__ import annotations

from ._store import MAX_RESTORED_CHARS
from ._uploads import UploadLimits

__all__ = ["request_limit", "BodyLimit"]


def request_limit(limits: UploadLimits) -> int:
    """The most bytes one request's body may hold: a pasted document (as an
    upload, ``limits.max_file_bytes``) beside the browser's saved copy (up to
    ``MAX_RESTORED_CHARS`` characters, 3 bytes each at most in UTF-8) and a
    little more for the other inputs. Gradio's upload route has its own."""
    return limits.max_file_bytes + 3 * MAX_RESTORED_CHARS + 2**20


class BodyLimit:
    """ASGI middleware: a request whose body is over ``limit`` bytes is
    answered 413 before the app reads it. Gradio took any body (and kept an
    event's data in its queue until the event ran): a few 100 MB posts to
    the queue from a script grew the server's memory by gigabytes."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["path"].rstrip("/").endswith("/upload"):  # checked by max_file_size
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None:
            if declared.isdigit() and int(declared) > self.limit:
                return await self._refuse(send)
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
                return await self._refuse(send)
            if not message.get("more_body", False):
                break

        async def replay():
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send):
        body = f"Request too large: at most {self.limit:,} bytes.".encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
