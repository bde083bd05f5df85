"""Batch work on a Ray cluster: ``--ray`` of ``rewriting.rewrite``, ``eval.rewrites score`` and ``eval.qa``.

:func:`map_on_ray` is the one way these commands use Ray: the items are cut
into the chunks the single-process run uses, the chunks become a Ray Dataset
(one row a chunk), and ``map_batches`` runs them through a fixed pool of
actors, each of which builds its worker (rewriter, scorer, searcher,
reader) once: the load costs far more than a chunk. Each row carries its
chunk's position and the results are put back in that order, so a command
gets what its single-process loop computes, chunk for chunk: same ids,
order, text and numbers.

A worker's :class:`~assistant.kernel.AssistantError` (no index, no model on
that node) comes back as a row, not as a Ray failure, and is raised on the
driver as the same kind of error naming the node.

Only this module imports ray, and only when :func:`map_on_ray` runs
(``--ray``); :func:`add_ray_arguments` gives every such command the same flags
(:func:`check_ray_arguments` checks them).
"""

from __future__ import annotations

import argparse
import errno
import importlib.util
import json
import logging
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from assistant.kernel import AssistantError, ConfigError, Rewrite

__all__ = ["map_on_ray", "import_ray", "add_ray_arguments", "check_ray_arguments", "rewrite_with_ray"]

# The repository's packages, shipped to the workers (``py_modules``) so the
# worker classes are importable there; a caller adds its own (e.g. "eval").
_ROOT = Path(__file__).resolve().parent.parent
_PACKAGES = ("assistant", "rewriting")
# Object store of a local instance: rows are chunks of JSON text, far below
# this; the default (30% of memory) would claim shared memory other work needs.
_LOCAL_OBJECT_STORE = 256 * 2**20
# The logger of Ray's notice that a local instance uses token authentication.
_TOKEN_AUTH_LOGGER = "ray._private.authentication.authentication_token_setup"
# The packages the instance this process started ships; None: none started here.
_shipped: frozenset[str] | None = None


def import_ray():
    """The ray package, or :class:`ConfigError` saying how to get it.

    Ray's failure signal handler is left out, unless RAY_DISABLE_FAILURE_SIGNAL_HANDLER
    says otherwise: ``ray.init`` put it in place of the JVM's SIGSEGV/SIGBUS
    handlers in this process (pyserini's, started before Ray by the
    command's own searches), and ``ray.shutdown`` left SIGSEGV at its
    default. The JVM takes SIGSEGV in its normal running (its null checks),
    so a later search killed the process with "Segmentation fault" (see
    :func:`_init` for Python's own handler). Ray reads the setting when it is
    imported; a local instance's processes inherit it (their own JVMs start
    after Ray's handler and keep theirs).
    """
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    try:
        import ray
        import ray.data
    except ImportError as error:
        raise ConfigError(f"--ray needs the ray package ({error}); pip install 'ray[data]', or run without --ray") from error
    return ray


def add_ray_arguments(parser, default_actors: int = 2) -> None:
    """``--ray [ADDRESS]`` and ``--actors N`` (at least 1) on ``parser``;
    the command calls :func:`check_ray_arguments` on what it parsed."""

    def actors(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, not {text!r}")
        return int(text)

    parser.add_argument("--ray", nargs="?", const="", metavar="ADDRESS",
                        help="run on a Ray cluster (ADDRESS: its head's HOST:6379, from a machine of the cluster; none: RAY_ADDRESS or a new local one)")
    parser.add_argument("--actors", type=actors,
                        help=f"with --ray: worker copies, each loading its models once (default {default_actors})")
    parser.set_defaults(ray_default_actors=default_actors)


def check_ray_arguments(args) -> None:
    """Refuse ``--actors`` without ``--ray`` (the run was then a single
    process, the flag ignored without a word), and give ``args.actors`` its
    default; before any data is read or model loaded."""
    if args.actors is not None and args.ray is None:
        raise ConfigError(f"--actors {args.actors} is for --ray: add --ray [ADDRESS] to run on Ray, or leave --actors out")
    if args.actors is None:
        args.actors = args.ray_default_actors


# How long the check of a cluster's address waits for a connection: Ray's
# own connect retries for minutes before it fails.
CONNECT_TIMEOUT_S = 5.0
_CHECKS = "is `ray start --head` running there, and is PORT its GCS port (6379 unless `ray start --port` said otherwise), open to this machine?"


def check_address(address: str, flag: str = "--ray") -> None:
    """Refuse, with :class:`ConfigError`, a cluster address Ray cannot use
    here, before ``ray.init`` meets it: a ``ray://`` one without Ray Client
    installed (requirements-ray.txt has ray[data] only), a HOST:PORT
    where nothing accepts a connection within :data:`CONNECT_TIMEOUT_S`,
    and one where something other than gRPC answers (a web server: see
    :func:`_first_words`); Ray would retry either for minutes, printing
    warnings. ``auto`` and other addresses without a port are left to Ray."""
    scheme, _, rest = address.rpartition("://")
    if scheme == "ray" and not _has_ray_client():
        raise ConfigError(f"{flag} {address}: a ray:// address needs Ray Client, which requirements-ray.txt does not install: "
                          f'pip install "ray[client]", or run on a machine of the cluster with its GCS address HOST:6379')
    host, colon, port = rest.rpartition(":")
    if not colon or not host or not port.isdigit():
        return
    host = host.strip("[]")  # [::1]:6379
    checks = _CHECKS.replace("PORT", port) if scheme != "ray" else f"is `ray start --head` running there, with its Ray Client port {port} open to this machine?"
    try:
        connection = socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_S)
    except OSError as error:
        reason = f"no answer within {CONNECT_TIMEOUT_S:g} s" if isinstance(error, TimeoutError) else (error.strerror or str(error)).lower()
        raise ConfigError(f"cannot reach the Ray cluster at {address} ({flag}): {reason}; {checks}") from None
    with connection:
        said = _first_words(connection)
    if said is not None:
        raise ConfigError(f"{flag} {address}: something other than a Ray cluster answers there (it said {said!r}); {checks}")


# HTTP/2's client preface and an empty SETTINGS frame: Ray's GCS and Ray
# Client are gRPC servers, which answer them at once with a SETTINGS frame.
_HTTP2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + b"\x00\x00\x00\x04\x00\x00\x00\x00\x00"
# The type byte of a SETTINGS frame (RFC 9113), the fourth of a frame's header.
_SETTINGS = 4
# How long the probe waits for that answer; silence is left to Ray.
PROBE_TIMEOUT_S = 2.0


def _first_words(connection: socket.socket) -> str | None:
    """The first line a server at ``connection`` answers HTTP/2's preface
    with, when that answer is text (an HTTP/1 server's status line or page,
    an SSH or mail banner): no gRPC server, so Ray would retry it for
    minutes. None when the answer is an HTTP/2 frame, binary (TLS, say, as
    Ray may be set up to use) or nothing: Ray's to judge."""
    try:
        connection.settimeout(PROBE_TIMEOUT_S)
        connection.sendall(_HTTP2_HELLO)
        answer = connection.recv(64)
    except OSError:
        return None
    if len(answer) > 3 and answer[3] == _SETTINGS:
        return None
    text = answer.decode("ascii", "replace")
    if not answer or not all(c.isprintable() or c in "\r\n\t" for c in text):
        return None
    return next((line.strip() for line in text.splitlines() if line.strip()), text)[:60]


def _has_ray_client() -> bool:
    """Whether Ray Client's dependency (grpc, what Ray's own check imports) is installed."""
    return importlib.util.find_spec("grpc") is not None


def _connection_failed(address: str, error: BaseException, version: str) -> str:
    """One line for a failed ``ray.init`` at ``address`` (Ray's own text
    names the node's IP, which may not be the address given)."""
    said = " ".join(str(error).split()).rstrip(".") or type(error).__name__
    return (f"cannot connect to the Ray cluster at {address}: {said}; check that it is the head's GCS address HOST:PORT "
            f"(6379 unless `ray start --port` said otherwise) and that the cluster runs this Ray version ({version}); "
            f"where it uses token authentication, {_token_hint()}")


def _token_hint() -> str:
    """What a connection to a cluster with token authentication needs here.
    Ray sends a token to an address given (--ray ADDRESS, RAY_ADDRESS) only
    with RAY_AUTH_MODE=token, even where ~/.ray/auth_token is the head's own:
    a `ray start --head` cluster refused a run from its own head."""
    if os.environ.get("RAY_AUTH_MODE", "").lower() == "token":
        return "check that this machine has the head's token (its ~/.ray/auth_token, or RAY_AUTH_TOKEN)"
    has_token = (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
                 or (Path.home() / ".ray" / "auth_token").is_file())
    copy = "" if has_token else "copy the head's ~/.ray/auth_token to this machine and "
    return f"{copy}run with RAY_AUTH_MODE=token (Ray sends ~/.ray/auth_token to an address given only then)"


def _ray_temp_folder() -> str:
    """The folder a local Ray instance keeps its session in (sockets, logs,
    spilled objects), as Ray chooses it: RAY_TMPDIR, else TMPDIR, else /tmp."""
    return os.path.join(os.environ.get("RAY_TMPDIR") or os.environ.get("TMPDIR") or "/tmp", "ray")


# Ray's own text when a socket path under its temporary folder is too long.
_SOCKET_PATH_TOO_LONG = "AF_UNIX path length"
# The ways a local instance fails to start that the user can act on (no room,
# a folder it cannot write, a port taken, a process of Ray's that died):
# raised by Ray as these; anything else (TypeError, AttributeError ...) is a bug and keeps its traceback.
_START_ERRORS = (OSError, RuntimeError, ValueError)


def _start_failed(error: BaseException) -> str:
    """One line for a local ``ray.init`` that failed: Ray's own words (its
    first lines: a failed GCS quotes pages of its log) and what to do."""
    said = " ".join(str(error).split()).rstrip(".") or type(error).__name__
    if len(said) > 240:
        said = said[:239] + "…"
    folder = _ray_temp_folder()
    port = re.search(r"[Tt]he specified port is (\d+)|port (\d+) is already in use", str(error))
    if _SOCKET_PATH_TOO_LONG in str(error):
        hint = f"its temporary folder {folder} makes too long a socket path (107 bytes at most): set RAY_TMPDIR to a short folder, e.g. /tmp"
    elif getattr(error, "errno", None) in (errno.ENOSPC, errno.EDQUOT):
        hint = f"free room in {folder} and /dev/shm, or set RAY_TMPDIR to a folder with room"
    elif isinstance(error, OSError):
        hint = f"Ray keeps its session in {folder}: set RAY_TMPDIR to a folder this user can write, with room"
    elif port:
        hint = f"port {port.group(1) or port.group(2)} is taken by another program: stop it, or unset RAY_GCS_SERVER_PORT (Ray then picks a free port)"
    else:
        hint = (f"Ray's logs are in {folder}/session_latest/logs; check for room in {folder} and /dev/shm, "
                f"or run on a cluster with --ray ADDRESS")
    return f"cannot start a local Ray instance: {said}; {hint}"


def _init(ray, **kwargs) -> None:
    """``ray.init(**kwargs)``, with the process's Ctrl-C and SIGTERM as they were.

    ray.init replaces the SIGTERM handler with its own ``sys.exit``, which
    undid the command's (:func:`assistant.kernel.sigterm_as_ctrl_c`): a run
    stopped with SIGTERM ended with status 15 and Ray's dump of the signal,
    without its ``interrupted:`` line. It is put back.

    Ctrl-C or SIGTERM while a local instance starts is held until it has
    started, then Ray is shut down and the signal delivered: raised inside
    ray.init, it left the half-started instance's agents running on their
    own for a minute. Ray's own processes block SIGINT, so only this one
    waits; a second signal is not held. A signal the process ignores (as
    under nohup, or in a script's background job) stays ignored: it was
    announced as stopping the run, which then went on. Outside the main
    thread, where signals are not ours to take, ray.init is called as it is.

    ray.init also turns on Python's fault handler where it is off, in place
    of the JVM's handlers of SIGSEGV and SIGBUS when pyserini's JVM runs
    here already: it is turned off again, which puts back what it replaced
    (see :func:`import_ray` for Ray's own handler).
    """
    import faulthandler
    import signal

    fault_handler_was_on = faulthandler.is_enabled()

    def start():
        try:
            ray.init(**kwargs)
        finally:
            if not fault_handler_was_on:
                faulthandler.disable()

    held: list[int] = []
    stops = (signal.SIGINT, signal.SIGTERM)

    def hold(signum, frame):
        held.append(signum)
        if len(held) > 1:  # asked again: at once
            restore()
            signal.raise_signal(signum)
            return
        print("stopping: Ray is starting; it is stopped as soon as it has (again to stop at once)", file=sys.stderr, flush=True)

    def restore():
        for stop, handler in before.items():
            signal.signal(stop, handler if handler is not None else signal.SIG_DFL)

    try:
        before = {stop: handler for stop in stops if (handler := signal.getsignal(stop)) is not signal.SIG_IGN}
        for stop in before:
            signal.signal(stop, hold)
    except ValueError:  # not the main thread
        start()
        return
    try:
        start()
    finally:
        restore()
        if len(held) == 1:
            if ray.is_initialized():
                ray.shutdown()
            signal.raise_signal(held[0])


def _connect(ray, address: str | None, actors: int, packages: Sequence[str]) -> None:
    """Connect to ``address`` (None: ``RAY_ADDRESS``, else a new local instance)."""
    global _shipped
    wanted = frozenset((*_PACKAGES, *packages))
    if ray.is_initialized():
        if _shipped is None or wanted <= _shipped:
            return  # the caller's own session, or ours with every package needed
        ray.shutdown()  # ours, started for a command that shipped fewer packages
    runtime_env = {
        "py_modules": [str(_ROOT / name) for name in sorted(wanted)],
        "env_vars": {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"},
    }
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if address or os.environ.get("RAY_ADDRESS"):
        given = address or os.environ["RAY_ADDRESS"]
        check_address(given, "--ray" if address else "RAY_ADDRESS")
        try:
            _init(ray, address=address, runtime_env=runtime_env, **quiet)
        except (ConnectionError, TimeoutError, RuntimeError, ValueError, ray.exceptions.RayError) as error:
            raise ConfigError(_connection_failed(given, error, getattr(ray, "__version__", "?"))) from error
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # a local run reports nothing anywhere
        # Ray starts a local instance with token authentication (its token
        # made in ~/.ray/auth_token when there is none), the setting wanted
        # here, and unless RAY_AUTH_MODE is set it warned on every run that it
        # had: nothing for the user to act on. (Setting RAY_AUTH_MODE here is
        # too late: ray, imported, has read it, and its GCS then refused us.)
        logging.getLogger(_TOKEN_AUTH_LOGGER).setLevel(logging.ERROR)
        # One CPU slot an actor: the pool is all the work (the rows are made
        # here), and Ray gives each actor one BLAS/torch thread to match.
        # "local": a new instance of our own, even where a `ray start` one runs.
        # (Not on the loopback address: Ray turns a node IP of 127.0.0.1 into
        # the machine's own and its servers listen on every interface; its
        # token authentication is what keeps others out.)
        try:
            _init(ray, address="local", num_cpus=actors, include_dashboard=False, object_store_memory=_LOCAL_OBJECT_STORE,
                  runtime_env=runtime_env, **quiet)
        except _START_ERRORS as error:
            raise ConfigError(_start_failed(error)) from error
        except Exception as error:
            # Ray raises a bare Exception when its raylet does not come up
            # ("The current node timed out during startup"); a subclass is not its.
            if type(error) is not Exception:
                raise
            raise ConfigError(_start_failed(error)) from error
    _shipped = wanted
    # Our own bar counts items; Ray Data's would count chunks. Its one-off
    # notice that its bars are off is not the user's concern.
    ray.data.DataContext.get_current().enable_progress_bars = False
    logging.getLogger("ray.data").setLevel(logging.WARNING)
    logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)


def _for_the_nodes(value: str) -> str:
    """``value`` made absolute where it is a relative path to a file or
    folder here: a worker resolves a relative path against its own folder
    (on a cluster, where its node's `ray start` ran), so an index given as
    runs/index was "not found" on the very machine that has it. A
    rewriter's name (trained ...), a hub model's name and a path only the
    nodes have are left as given."""
    from rewriting import REWRITERS

    if value in REWRITERS or os.path.isabs(value) or not os.path.exists(value):
        return value
    return os.path.abspath(value)


class _Actor:
    """One worker per actor, built once; called with a batch of chunk rows."""

    def __init__(self, worker: Callable[[dict], Any], settings: dict):
        import ray

        self.node = f"Ray node {ray.util.get_node_ip_address()} (id {ray.get_runtime_context().get_node_id()[:12]})"
        self.error: AssistantError | None = None
        try:
            self.worker = worker(settings)
        except AssistantError as error:  # reported per row: a constructor failure would be an opaque ActorDiedError
            self.error = error

    def __call__(self, batch: dict) -> dict:
        out: dict[str, list] = {"index": [], "result": [], "error": [], "kind": []}
        for index, chunk in zip(batch["index"], batch["chunk"]):
            result, error = "", self.error
            if error is None:
                try:
                    result = json.dumps(self.worker(json.loads(str(chunk))), ensure_ascii=False)
                except AssistantError as failure:
                    error = failure
            out["index"].append(int(index))
            out["result"].append(result)
            out["error"].append(f"on {self.node}: {error}" if error is not None else "")
            out["kind"].append(type(error).__name__ if error is not None else "")
        return out


def _raise(kind: str, message: str) -> None:
    import assistant.kernel as kernel

    cls = getattr(kernel, kind, None)
    if not (isinstance(cls, type) and issubclass(cls, AssistantError)):
        cls = AssistantError
    raise cls(message)


def map_on_ray(
    items: Sequence,
    worker: Callable[[dict], Any],
    settings: dict,
    *,
    chunk: int,
    address: str | None,
    actors: int,
    packages: Sequence[str] = (),
    desc: str = "working",
    unit: str = "item",
    on_chunk: Callable[[int, list], None] | None = None,
    paths: Sequence[str] = (),
) -> list:
    """``worker(settings)(items[i:i + chunk])`` for every chunk, on ``actors``
    actors of the cluster at ``address`` (None: ``RAY_ADDRESS`` or a new
    local instance); the results, one per item, in item order.

    ``worker`` is a class importable on the workers (from ``assistant``,
    ``rewriting`` or one of ``packages``, which are shipped); called with a
    list of items it returns one result per item. Items, settings and
    results are JSON values. The Python dependencies must be installed on
    the workers already. Progress (items, counted as ``unit``: the
    single-process run's word) goes to stderr. ``on_chunk(i,
    results)`` is called as each chunk's results come back (in any order),
    so that a caller can keep them before the run ends. ``paths``: the
    settings that may be paths (an index, a model), made absolute where
    they name a file or folder here (:func:`_for_the_nodes`).
    """
    from tqdm import tqdm

    settings = {**settings, **{key: _for_the_nodes(settings[key]) for key in paths if isinstance(settings.get(key), str)}}
    ray = import_ray()
    _connect(ray, address, actors, packages)
    chunks = [list(items[start : start + chunk]) for start in range(0, len(items), chunk)]
    # Chunks as JSON text: a column of ragged nested values would not survive every batch format.
    rows = [{"index": i, "chunk": json.dumps(part, ensure_ascii=False)} for i, part in enumerate(chunks)]
    if not rows:
        return []
    # A block a row: a block goes to one actor whole, so fewer blocks would idle the pool.
    # No more actors than blocks: one more would load its models for nothing
    # (and Ray Data warns that its pool got fewer inputs than actors).
    dataset = ray.data.from_items(rows, override_num_blocks=len(rows)).map_batches(
        _Actor,
        fn_constructor_kwargs={"worker": worker, "settings": settings},
        batch_size=1,  # a row is already a chunk of the single-process run
        batch_format="numpy",
        compute=ray.data.ActorPoolStrategy(size=min(actors, len(rows))),
    )
    done: dict[int, list] = {}
    try:
        with tqdm(total=len(items), desc=desc, unit=unit, file=sys.stderr) as bar:
            for row in dataset.iter_rows():
                if row["error"]:
                    _raise(str(row["kind"]), str(row["error"]))
                index = int(row["index"])
                done[index] = json.loads(str(row["result"]))
                if on_chunk is not None:
                    on_chunk(index, done[index])
                bar.update(len(chunks[index]))
    except KeyboardInterrupt:
        # Ctrl-C: stop our own instance here. Left to Ray's exit handler with
        # the streaming executor still running, the process exited with
        # status 1 rather than Ctrl-C's 130.
        if _shipped is not None:
            ray.shutdown()
        raise
    if sorted(done) != list(range(len(chunks))) or any(len(done[i]) != len(chunks[i]) for i in done):
        raise RuntimeError("the Ray run lost or repeated rows")  # a bug, not a user's error
    return [result for i in range(len(chunks)) for result in done[i]]


class _RewriteWorker:
    """A rewriter, loaded once; rewrites a chunk as ``rewriting.rewrite`` does."""

    def __init__(self, settings: dict):
        from rewriting import load_rewriter
        from rewriting.rewrite import configure

        rewriter = load_rewriter(settings["model"], dtype=settings["dtype"], pack_weights=settings.get("pack_weights", True),
                                 fused_forward=settings.get("fused_forward", True), int8_weights=settings.get("int8_weights", False))
        self.rewriter = configure(rewriter, settings["batch_size"], settings["draft_tokens"], settings.get("max_input_tokens"),
                                  settings.get("candidates"), settings.get("second_look"), settings.get("second_look_below"))

    def __call__(self, chunk: list) -> list:
        items = [(item["question"], item["history"]) for item in chunk]
        many = getattr(self.rewriter, "rewrite_batch", None)
        results = many(items) if many else [self.rewriter.rewrite(q, h) for q, h in items]
        return [[r.text, r.note, r.rejected, list(r.alternatives)] for r in results]


def rewrite_with_ray(requests: Sequence[dict], settings: dict, address: str | None, actors: int,
                     chunk_done: Callable[[Sequence[dict], list[Rewrite]], None] | None = None) -> list[Rewrite]:
    """Rewrite ``requests`` (as read by :func:`rewriting.rewrite.read_requests`)
    on the cluster at ``address`` with ``actors`` rewriter copies; one Rewrite
    per request, in order, each chunk the single-process run's (``batch_size * 4``).
    ``chunk_done(chunk, rewrites)`` gets each chunk's requests and rewrites
    as they come back (what :func:`rewriting.rewrite.resume_rewrites` keeps).

    ``settings``: model, dtype, batch_size, draft_tokens, max_input_tokens,
    candidates, second_look, second_look_below, as the command line gives them.
    """
    size = settings["batch_size"] * 4
    items = [{"question": r["question"], "history": r["history"]} for r in requests]

    def arrived(index: int, results: list) -> None:
        if chunk_done is not None:
            chunk_done(requests[index * size : (index + 1) * size], _rewrites(results))

    results = map_on_ray(items, _RewriteWorker, settings, chunk=size, address=address, actors=actors, desc="rewriting", unit="q",
                         on_chunk=arrived, paths=("model",))
    return _rewrites(results)


def _rewrites(results: list) -> list[Rewrite]:
    return [Rewrite(text, note, rejected, tuple(alternatives)) for text, note, rejected, alternatives in results]
