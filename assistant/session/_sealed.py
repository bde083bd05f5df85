"""The browser's saved copy as the browser keeps it: sealed with the server's key.

Gradio's BrowserState encrypts the conversations it keeps in the browser's
localStorage (CryptoJS's AES with a passphrase). Another tab's save reaches
the server in that form (the page over plain http cannot decrypt it: a
browser gives WebCrypto only to https and local pages), and the server opens
it with the key it sealed it with.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from ..kernel import DataFormatError, cache_dir
from ._store import MAX_RESTORED_CHARS

__all__ = ["browser_secret", "open_browser_copy"]


def open_browser_copy(stored: str, secret: str):
    """The conversations a browser keeps (the JSON value), from the string
    in its localStorage: what Gradio's BrowserState writes there (CryptoJS's
    AES-256-CBC with a passphrase, the SHA-256 hex of ``secret``, in
    OpenSSL's "Salted__" layout, whose key and iv are MD5s of passphrase
    and salt; after "iv:", an iv that layout does not use). The server can
    open it: the key is its own, and the page sends it this copy decrypted
    at every event anyway. Anything else raises DataFormatError."""
    unreadable = "not a copy this app saved with this server's key"
    if not isinstance(stored, str) or len(stored) > 4 * MAX_RESTORED_CHARS:  # base64 of 3 UTF-8 bytes a character
        raise DataFormatError(f"{unreadable} (or more than a browser keeps for this app)")
    try:
        sealed = base64.b64decode(stored.partition(":")[2], validate=True)
    except ValueError:
        raise DataFormatError(unreadable) from None
    if len(sealed) < 32 or len(sealed) % 16 or not sealed.startswith(b"Salted__"):
        raise DataFormatError(unreadable)
    passphrase, salt = hashlib.sha256(secret.encode()).hexdigest().encode(), sealed[8:16]
    derived, block = b"", b""
    while len(derived) < 48:  # OpenSSL's EVP_BytesToKey with MD5
        block = hashlib.md5(block + passphrase + salt).digest()
        derived += block
    decryptor = Cipher(algorithms.AES(derived[:32]), modes.CBC(derived[32:48])).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        plain = unpadder.update(decryptor.update(sealed[16:]) + decryptor.finalize()) + unpadder.finalize()
        return json.loads(plain.decode("utf-8"))
    except (ValueError, RecursionError):  # another key's padding, not UTF-8, not JSON
        raise DataFormatError(unreadable) from None


def browser_secret(path: Path | None = None) -> str:
    """The key the browsers' saved conversations are encrypted with, kept in
    ``<cache>/app-secret`` (made on first start, readable by its owner only)."""
    path = path or cache_dir() / "app-secret"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(32), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()
