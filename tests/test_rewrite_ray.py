"""Tests for ``python -m rewriting.rewrite --ray``: ray is imported only with
--ray, a missing ray is one line, and (where ray is installed) the Ray run
writes the single-process run's file byte for byte."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import _free_port  # a local port where nothing listens

needs_ray = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="missing prerequisite: ray (pip install -r requirements-ray.txt)")
ROOT = Path(__file__).resolve().parent.parent
HISTORY = ["Who was Ada Lovelace?", "An English mathematician.", "What did she write?", "Notes on the Analytical Engine."]


def _requests(path: Path) -> Path:
    lines = [
        {"id": "a", "question": "Who was Ada Lovelace?", "history": []},
        {"id": "b", "question": "Who was her father?", "history": HISTORY},
        {"id": 3, "question": "Why?", "history": HISTORY[:2]},
        {"id": "d", "question": "Where did she live and what did she study at home?", "history": HISTORY[:3]},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _cli(tmp_path, *args):
    """The command in a fresh interpreter whose `import ray` finds a stand-in that refuses."""
    fake = tmp_path / "fake"
    (fake / "ray").mkdir(parents=True, exist_ok=True)
    (fake / "ray" / "__init__.py").write_text('raise ImportError("the stand-in ray was imported")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(fake), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "rewriting.rewrite", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_without_ray_flag_ray_is_never_imported_and_with_it_a_missing_ray_is_one_line(tmp_path):
    src = _requests(tmp_path / "in.jsonl")
    plain = _cli(tmp_path, "--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--model", "original")
    assert plain.returncode == 0, plain.stderr
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == 4
    with_ray = _cli(tmp_path, "--input", str(src), "--output", str(tmp_path / "ray.jsonl"), "--model", "original", "--ray")
    assert with_ray.returncode == 2
    assert with_ray.stderr.startswith("error: --ray needs the ray package (the stand-in ray was imported)")
    assert with_ray.stderr.count("\n") == 1 and not (tmp_path / "ray.jsonl").exists()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="missing prerequisite: ray (pip install -r requirements-ray.txt)")
@pytest.mark.parametrize("actors", [1, 2])
def test_the_ray_run_writes_the_single_process_file(tiny_gpt2, tmp_path, actors):
    from rewriting.rewrite import main

    model, tok = tiny_gpt2
    model_dir = tmp_path / "model"
    model.save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    src = _requests(tmp_path / "in.jsonl")
    common = ["--input", str(src), "--model", str(model_dir), "--dtype", "float32", "--batch-size", "2"]
    assert main([*common, "--output", str(tmp_path / "single.jsonl")]) == 0
    assert main([*common, "--output", str(tmp_path / "ray.jsonl"), "--ray", "--actors", str(actors)]) == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="missing prerequisite: ray (pip install -r requirements-ray.txt)")
def test_the_ray_run_passes_candidates_on_and_brings_the_alternatives_back(tmp_path):
    # A tiny GPT-2 whose end of text comes early, so that "Why?" (no content
    # word for the drift guard to miss) gets rewrites, and candidates change them.
    import torch
    from conftest import build_tiny_gpt2
    from rewriting.rewrite import main

    model, tok = build_tiny_gpt2(1)
    with torch.no_grad():
        model.transformer.wte.weight[tok.eos_token_id] *= 3.0
    model.save_pretrained(tmp_path / "model")
    tok.save_pretrained(tmp_path / "model")
    src = _requests(tmp_path / "in.jsonl")
    common = ["--input", str(src), "--model", str(tmp_path / "model"), "--dtype", "float32", "--batch-size", "2"]
    assert main([*common, "--output", str(tmp_path / "greedy.jsonl")]) == 0
    assert main([*common, "--candidates", "2", "--output", str(tmp_path / "single.jsonl")]) == 0
    assert main([*common, "--candidates", "2", "--output", str(tmp_path / "ray.jsonl"), "--ray", "--actors", "1"]) == 0
    single = [json.loads(line) for line in (tmp_path / "single.jsonl").read_text().splitlines()]
    assert single[2]["alternatives"] and (tmp_path / "single.jsonl").read_bytes() != (tmp_path / "greedy.jsonl").read_bytes()
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()


class _StandInDataset:
    """The few Ray Data calls rewriting._ray makes, done in process: rows cut
    into batches as numpy columns, batches run on a fixed set of actor objects
    and returned in reverse (a cluster finishes in any order)."""

    made: list = []
    settings: list = []  # what each run's workers were given

    def __init__(self, rows):
        self.rows = rows

    def map_batches(self, cls, fn_constructor_kwargs, batch_size, batch_format, compute):
        import numpy as np

        assert batch_format == "numpy"
        _StandInDataset.settings.append(fn_constructor_kwargs["settings"])
        actors = [cls(**fn_constructor_kwargs) for _ in range(compute.size)]
        _StandInDataset.made.append(len(actors))
        chunks = [self.rows[i : i + batch_size] for i in range(0, len(self.rows), batch_size)]
        out = []
        for n, chunk in enumerate(reversed(chunks)):
            result = actors[n % len(actors)]({key: np.array([row[key] for row in chunk]) for key in chunk[0]})
            out += [dict(zip(result, values)) for values in zip(*result.values())]
        return _StandInDataset(out)

    def iter_rows(self):
        return iter(self.rows)


def _stand_in_ray():
    import types

    fake = types.ModuleType("ray")
    fake.is_initialized = lambda: False
    fake.init = lambda **kwargs: None
    fake.util = types.SimpleNamespace(get_node_ip_address=lambda: "10.0.0.7")
    fake.get_runtime_context = lambda: types.SimpleNamespace(get_node_id=lambda: "f" * 56)
    context = types.SimpleNamespace(enable_progress_bars=True)
    fake.data = types.SimpleNamespace(from_items=lambda rows, override_num_blocks: _StandInDataset(rows), ActorPoolStrategy=lambda size: types.SimpleNamespace(size=size),
                                      DataContext=types.SimpleNamespace(get_current=lambda: context))
    return fake


def test_the_ray_path_puts_rows_back_in_input_order_with_a_stand_in_ray(tmp_path, monkeypatch):
    # Not Ray itself (see the test above for that): checks our side of the calls.
    from rewriting.rewrite import main

    fake = _stand_in_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"Question {i}?", "history": HISTORY[: i % 4]}) + "\n" for i in range(10)))
    common = ["--input", str(src), "--model", "original", "--batch-size", "1"]  # chunks of 4 requests: 3 rows
    assert main([*common, "--output", str(tmp_path / "single.jsonl")]) == 0
    assert main([*common, "--output", str(tmp_path / "ray.jsonl"), "--ray", "--actors", "3"]) == 0
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert _StandInDataset.made == [3]  # --actors is the pool size
    assert [json.loads(line)["id"] for line in (tmp_path / "ray.jsonl").read_text().splitlines()] == list(range(10))


def test_the_pool_has_no_more_actors_than_chunks(tmp_path, monkeypatch):
    # 4 requests at --batch-size 2 are one chunk (8 turns): a second actor
    # loaded its rewriter and idled, and Ray Data warned of it on every small run.
    from rewriting.rewrite import main

    fake = _stand_in_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.setattr(_StandInDataset, "made", [])
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "ray.jsonl"), "--model", "original", "--batch-size", "2"]
    assert main([*argv, "--ray", "--actors", "4"]) == 0
    assert _StandInDataset.made == [1]
    assert len((tmp_path / "ray.jsonl").read_text().splitlines()) == 4

def test_ctrl_c_stops_our_ray_instance_and_is_one_line_with_status_130(tmp_path, monkeypatch, capsys):
    # Left to Ray's exit handler with its executor running, Ctrl-C ended in
    # a traceback and exit status 1.
    from rewriting.rewrite import main

    fake = _stand_in_ray()
    shutdowns = []
    fake.shutdown = lambda: shutdowns.append(True)

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(_StandInDataset, "iter_rows", interrupted)
    monkeypatch.setattr(_StandInDataset, "made", [])
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    output = tmp_path / "out.jsonl"
    output.write_text("previous\n")
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(output), "--model", "original", "--ray"]
    assert main(argv) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"interrupted: the Ray run stopped; {output} is as it was; the same command goes on from {output}.partial"
    assert "Traceback" not in "".join(err)
    assert shutdowns == [True] and output.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.jsonl", "out.jsonl.partial"]


def test_an_interrupted_ray_run_keeps_its_rewrites_and_the_next_run_goes_on_from_them(tmp_path, monkeypatch, capsys):
    # The Ray path wrote only at its end: Ctrl-C (or a lost cluster) after
    # hours of rewriting lost every rewrite, where the single-process run
    # keeps OUTPUT.partial a chunk at a time and resumes from it.
    from rewriting.rewrite import main

    fake = _stand_in_ray()
    fake.shutdown = lambda: None
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    given = []

    def one_row_then_ctrl_c(self):
        yield self.rows[0]
        raise KeyboardInterrupt

    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"Question {i}?", "history": HISTORY[: i % 4]}) + "\n" for i in range(10)))
    common = ["--input", str(src), "--model", "original", "--batch-size", "1"]  # chunks of 4 requests: 3 rows
    assert main([*common, "--output", str(tmp_path / "single.jsonl")]) == 0
    with monkeypatch.context() as patch:
        patch.setattr(_StandInDataset, "iter_rows", one_row_then_ctrl_c)
        assert main([*common, "--output", str(tmp_path / "ray.jsonl"), "--ray"]) == 130
    partial = (tmp_path / "ray.jsonl.partial").read_text().splitlines()
    kept = [json.loads(line)["id"] for line in partial[1:]]
    assert kept == [8, 9] and not (tmp_path / "ray.jsonl").exists()  # the chunk that came back first (the last)
    capsys.readouterr()
    real_from_items = fake.data.from_items
    fake.data.from_items = lambda rows, override_num_blocks: given.append(len(rows)) or real_from_items(rows, override_num_blocks)
    assert main([*common, "--output", str(tmp_path / "ray.jsonl"), "--ray"]) == 0
    assert "resuming: 2 of 10 rewrites were made by an interrupted run (ray.jsonl.partial)" in capsys.readouterr().err
    assert given == [2]  # the 8 requests left, in chunks of 4
    assert (tmp_path / "ray.jsonl").read_bytes() == (tmp_path / "single.jsonl").read_bytes()
    assert not (tmp_path / "ray.jsonl.partial").exists()


@needs_ray
@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_an_address_ray_cannot_use_is_one_line_at_once(tmp_path, scheme):
    # Real Ray, in a fresh interpreter: with nothing listening, ray.init
    # retried for minutes; a ray:// address without ray[client] (not in
    # requirements-ray.txt) was a ValueError traceback.
    if scheme and importlib.util.find_spec("grpc") is not None:
        pytest.skip("ray[client] is installed here: a ray:// address is Ray's to refuse")
    address = f"{scheme}127.0.0.1:{_free_port()}"
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--ray", address]
    try:
        out = subprocess.run([sys.executable, "-m", "rewriting.rewrite", *argv], cwd=ROOT, env={**env, "PYTHONPATH": str(ROOT)},
                             capture_output=True, text=True, timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"--ray {address} still had no answer after 90 s")
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.count("\n") == 1, out.stderr[-2000:]
    if scheme:
        assert out.stderr.startswith(f"error: --ray {address}: a ray:// address needs Ray Client")
        assert 'pip install "ray[client]"' in out.stderr and "HOST:6379" in out.stderr
    else:
        assert out.stderr.startswith(f"error: cannot reach the Ray cluster at {address} (--ray): ")
        assert "ray start --head" in out.stderr and f"is {address.rsplit(':', 1)[1]} its GCS port" in out.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_help_gives_an_address_the_documented_install_can_use(capsys):
    from rewriting.rewrite import main

    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "ray://" not in text and "HOST:6379" in text


@pytest.fixture
def refusing_ray(monkeypatch):
    """The stand-in ray, with ray.exceptions, whose init raises what ``failure`` holds."""
    import types

    fake = _stand_in_ray()

    class RayError(Exception):
        pass

    class AuthenticationError(RayError):
        pass

    fake.exceptions = types.SimpleNamespace(RayError=RayError, AuthenticationError=AuthenticationError)
    failure = []

    def init(**kwargs):
        raise failure[0]

    fake.init = init
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.setitem(sys.modules, "ray.exceptions", fake.exceptions)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return fake, failure


@pytest.mark.parametrize("kind", ["connection", "authentication", "no instance"])
def test_a_cluster_that_refuses_the_connection_is_one_line(tmp_path, refusing_ray, capsys, kind):
    # Something listens (so the address check passes) but ray.init fails:
    # these were tracebacks with exit status 1.
    from rewriting.rewrite import main

    fake, failure = refusing_ray
    failure.append({
        "connection": ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391"),
        "authentication": fake.exceptions.AuthenticationError("Token authentication is enabled but the authentication token is\ninvalid."),
        "no instance": ConnectionError("Could not find any running Ray instance."),
    }[kind])
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original"]
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        address = "auto" if kind == "no instance" else f"127.0.0.1:{server.getsockname()[1]}"
        assert main([*argv, "--ray", address]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: cannot connect to the Ray cluster at {address}: "), err
    assert " ".join(str(failure[0]).split()).rstrip(".") in err and "~/.ray/auth_token" in err
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("setup, hint", [
    ("token here", "where it uses token authentication, run with RAY_AUTH_MODE=token (Ray sends ~/.ray/auth_token to an "
                   "address given only then)"),
    ("no token", "where it uses token authentication, copy the head's ~/.ray/auth_token to this machine and run with "
                 "RAY_AUTH_MODE=token"),
    ("token mode", "where it uses token authentication, check that this machine has the head's token (its "
                   "~/.ray/auth_token, or RAY_AUTH_TOKEN)"),
])
def test_a_refusal_says_what_token_authentication_needs_here(tmp_path, refusing_ray, monkeypatch, capsys, setup, hint):
    # Ray sends ~/.ray/auth_token to an address given only with
    # RAY_AUTH_MODE=token: a run on the head of a `ray start --head` cluster,
    # its token at hand, was refused, told to get the token it had.
    from rewriting.rewrite import main

    _, failure = refusing_ray
    failure.append(ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391"))
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH"):
        monkeypatch.delenv(name, raising=False)
    if setup == "token here":
        (tmp_path / ".ray").mkdir()
        (tmp_path / ".ray" / "auth_token").write_text("0" * 64)
    if setup == "token mode":
        monkeypatch.setenv("RAY_AUTH_MODE", "token")
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original"]
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        assert main([*argv, "--ray", f"127.0.0.1:{server.getsockname()[1]}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and hint in err, err


def test_an_unreachable_ray_address_variable_is_named(tmp_path, refusing_ray, monkeypatch, capsys):
    from rewriting.rewrite import main

    _, failure = refusing_ray
    failure.append(AssertionError("ray.init was called"))
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{_free_port()}")
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--ray"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot reach the Ray cluster at {os.environ['RAY_ADDRESS']} (RAY_ADDRESS): ") and err.count("\n") == 1


def _serving(answer: bytes | None):
    """A local server that answers every connection with ``answer`` (None: says nothing); its port."""
    import threading

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def serve():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.recv(64)
                if answer is not None:
                    connection.sendall(answer)
                connection.recv(64)

    threading.Thread(target=serve, daemon=True).start()
    return server


@pytest.mark.parametrize("answer", [b"HTTP/1.0 400 Bad request version ('HTTP/2.0')\r\n\r\n", b"SSH-2.0-OpenSSH_9.6\r\n"])
def test_an_address_where_something_else_answers_is_one_line_at_once(tmp_path, refusing_ray, capsys, answer):
    # A web server (or ssh) at the address took the connection check, and
    # Ray then retried it for minutes, printing warnings.
    import time

    from rewriting.rewrite import main

    _, failure = refusing_ray
    failure.append(AssertionError("ray.init was called"))
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original"]
    with _serving(answer) as server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        began = time.monotonic()
        assert main([*argv, "--ray", address]) == 2
        assert time.monotonic() - began < 30
    err = capsys.readouterr().err
    first = answer.decode().splitlines()[0][:60]
    assert err == (f"error: --ray {address}: something other than a Ray cluster answers there (it said {first!r}); "
                   f"is `ray start --head` running there, and is {address.rsplit(':', 1)[1]} its GCS port "
                   "(6379 unless `ray start --port` said otherwise), open to this machine?\n")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("answer", [b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x04\x00@\x00\x00", b"\x15\x03\x03\x00\x02\x02\x46", None])
def test_a_grpc_answer_or_one_that_cannot_be_told_is_left_to_ray(tmp_path, refusing_ray, capsys, answer):
    # An HTTP/2 SETTINGS frame (what Ray's GCS answers), a TLS alert (Ray set
    # up with TLS) or silence: the probe cannot refuse, ray.init is called.
    from rewriting.rewrite import main

    _, failure = refusing_ray
    failure.append(ConnectionError("the stand-in refuses"))
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original"]
    with _serving(answer) as server:
        address = f"127.0.0.1:{server.getsockname()[1]}"
        assert main([*argv, "--ray", address]) == 2
    assert capsys.readouterr().err.startswith(f"error: cannot connect to the Ray cluster at {address}: the stand-in refuses;")


_GCS_PORT_TAKEN = ("Failed to start GCS.  Last 1 lines of error files:\n[2026-12-05 19:09:09,077 C 16863 16863] (gcs_server) "
                   "grpc_server.cc:134:  An unexpected system state has occurred. You have likely discovered a bug in Ray. "
                   "Check failed: server_ Failed to start the grpc server. The specified port is 47123. This means that "
                   "Ray's core components will not be able to function correctly.\n\n.Please check "
                   "/tmp/ray/session_x/logs/gcs_server.out for details. Last connection error: None")


@pytest.mark.parametrize("failure, hint", [
    (OSError(28, "No space left on device"), "free room in /short/ray and /dev/shm, or set RAY_TMPDIR to a folder with room"),
    (NotADirectoryError(20, "Not a directory"), "Ray keeps its session in /short/ray: set RAY_TMPDIR to a folder this user can write"),
    (OSError("validate_socket_filename failed: AF_UNIX path length cannot exceed 107 bytes: /short/ray/session_1/sockets/raylet"),
     "its temporary folder /short/ray makes too long a socket path (107 bytes at most): set RAY_TMPDIR to a short folder"),
    (RuntimeError(_GCS_PORT_TAKEN), "port 47123 is taken by another program: stop it, or unset RAY_GCS_SERVER_PORT"),
    (Exception("The current node timed out during startup. This could happen because some of the raylet failed to startup."),
     "Ray's logs are in /short/ray/session_latest/logs"),
    (ValueError("The plasma directory file /dev/shm does not exist or is not a directory."), "Ray's logs are in /short/ray/"),
])
def test_a_local_ray_instance_that_cannot_start_is_one_line(tmp_path, refusing_ray, monkeypatch, capsys, failure, hint):
    # No room, a temporary folder Ray cannot use, a port taken, a raylet
    # that never came up: each ended in Ray's traceback, exit status 1,
    # where a cluster's address that failed was already one line.
    from rewriting.rewrite import main

    _, failures = refusing_ray
    failures.append(failure)
    monkeypatch.setenv("RAY_TMPDIR", "/short")
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--ray"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    said = " ".join(str(failure).split()).rstrip(".")
    assert err.count("\n") == 1 and err.startswith(f"error: cannot start a local Ray instance: {said[:200]}"), err
    assert hint in err and len(err) < 600
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("bug", [TypeError("init() got an unexpected keyword argument 'x'"), AttributeError("no attribute"), KeyError("k")])
def test_a_bug_in_a_local_ray_start_keeps_its_traceback(tmp_path, refusing_ray, bug):
    from rewriting.rewrite import main

    _, failures = refusing_ray
    failures.append(bug)
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--ray"]
    with pytest.raises(type(bug)):
        main(argv)


@needs_ray
def test_a_real_local_ray_instance_that_cannot_make_its_folder_is_one_line(tmp_path):
    # Real Ray, in a fresh interpreter: RAY_TMPDIR names a file, so Ray
    # cannot make its session folder (as with a full or read-only /tmp).
    (tmp_path / "a-file").write_text("")
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    env.update(PYTHONPATH=str(ROOT), RAY_TMPDIR=str(tmp_path / "a-file"))
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--ray"]
    out = subprocess.run([sys.executable, "-m", "rewriting.rewrite", *argv], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-2000:]
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, out.stderr[-2000:]
    assert out.stderr.startswith("error: cannot start a local Ray instance: [Errno 20] Not a directory: ")
    assert "set RAY_TMPDIR to a folder this user can write" in out.stderr
    assert not (tmp_path / "out.jsonl").exists()


def test_sigterm_during_a_ray_run_is_an_interruption_as_without_ray(tmp_path, monkeypatch, capsys):
    # ray.init (2.60: worker.py, "terminate any signal before connecting
    # driver") sets its own SIGTERM handler, sys.exit(15): a --ray run stopped
    # with SIGTERM ended with status 15 and Ray's dump of the signal, not the
    # command's "interrupted:" line and 143.
    import signal

    from rewriting.rewrite import main

    fake = _stand_in_ray()
    shutdowns = []
    fake.shutdown = lambda: shutdowns.append(True)
    fake.init = lambda **kwargs: signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))

    def terminated(self):
        os.kill(os.getpid(), signal.SIGTERM)
        yield from self.rows

    monkeypatch.setattr(_StandInDataset, "iter_rows", terminated)
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    output = tmp_path / "out.jsonl"
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(output), "--model", "original", "--ray"]
    assert main(argv) == 143
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("interrupted: the Ray run stopped; ") and shutdowns == [True]
    assert not output.exists()


@pytest.fixture
def sigint_as_set():
    """Factory: SIGINT's handler set to one given (put back after the test).

    A Python started where SIGINT is ignored (a script's background job,
    nohup: the way a CI run is often started) keeps it ignored, so a test of
    Ctrl-C sets the handler it means rather than take the one it finds."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield lambda handler: signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGINT, before)


def _ctrl_c_inside_ray_init(presses: int, monkeypatch) -> list[str]:
    """A stand-in ray whose init is interrupted ``presses`` times; the events (started, shutdown) it sees."""
    import signal

    fake = _stand_in_ray()
    events = []
    fake.shutdown = lambda: events.append("shutdown")
    fake.is_initialized = lambda: "started" in events

    def init(**kwargs):
        for _ in range(presses):
            signal.raise_signal(signal.SIGINT)
            sum(range(1000))  # Python runs the handler between bytecodes
        events.append("started")

    fake.init = init
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    return events


@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_while_a_local_ray_instance_starts_stops_it_once_started(tmp_path, monkeypatch, capsys, sigint_as_set, presses):
    # Ctrl-C raised inside ray.init left the half-started instance's agents
    # (ray::DashboardAgent, ray::RuntimeEnvAgent) running for a minute after
    # the command ended. It is held until ray.init returns, then Ray is shut
    # down; pressed again, it is not held.
    import signal

    from rewriting.rewrite import main

    sigint_as_set(signal.default_int_handler)  # as in a terminal
    events = _ctrl_c_inside_ray_init(presses, monkeypatch)
    output = tmp_path / "out.jsonl"
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(output), "--model", "original", "--ray"]
    handler = signal.getsignal(signal.SIGINT)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert events == (["started", "shutdown"] if presses == 1 else [])
    assert "stopping: Ray is starting; it is stopped as soon as it has (again to stop at once)" in err
    assert err.strip().splitlines()[-1].startswith("interrupted: ") and "Traceback" not in err
    assert signal.getsignal(signal.SIGINT) is handler and not output.exists()


def test_an_ignored_ctrl_c_while_a_local_ray_instance_starts_stays_ignored(tmp_path, monkeypatch, capsys, sigint_as_set):
    # Under nohup (SIGINT ignored) a SIGINT while Ray started was announced
    # as stopping the run, which then went on to the end.
    import signal

    from rewriting.rewrite import main

    sigint_as_set(signal.SIG_IGN)
    events = _ctrl_c_inside_ray_init(1, monkeypatch)
    output = tmp_path / "out.jsonl"
    argv = ["--input", str(_requests(tmp_path / "in.jsonl")), "--output", str(output), "--model", "original", "--ray"]
    assert main(argv) == 0
    assert events == ["started"] and "stopping" not in capsys.readouterr().err and output.exists()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN


def test_actors_without_ray_is_refused_before_any_work(tmp_path, capsys):
    # --actors without --ray was ignored without a word: the run was one
    # process, which the user learnt only from how long it took.
    from eval import qa, rewrites
    from rewriting.rewrite import main

    src = _requests(tmp_path / "in.jsonl")
    assert main(["--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--model", "original", "--actors", "3"]) == 2
    assert capsys.readouterr().err == "error: --actors 3 is for --ray: add --ray [ADDRESS] to run on Ray, or leave --actors out\n"
    assert not (tmp_path / "out.jsonl").exists()
    missing = str(tmp_path / "no-such-file.json")  # refused before the data is read
    assert qa.main(["--data", missing, "--index", "x", "--actors", "2"]) == 2
    assert capsys.readouterr().err == "error: --actors 2 is for --ray: add --ray [ADDRESS] to run on Ray, or leave --actors out\n"
    assert rewrites.main(["score", "--data", missing, "--rewriter", "original", "--actors", "1"]) == 2
    assert capsys.readouterr().err == "error: --actors 1 is for --ray: add --ray [ADDRESS] to run on Ray, or leave --actors out\n"
    # With --ray, --actors still defaults to 2 and is at least 1.
    with pytest.raises(SystemExit):
        main(["--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--ray", "--actors", "0"])
    assert "argument --actors: must be a whole number of at least 1, not '0'" in capsys.readouterr().err


def test_a_relative_model_path_reaches_the_workers_whole(tiny_gpt2, tmp_path, monkeypatch):
    # A worker resolves a relative path against its own folder (on a
    # cluster: where its node's `ray start` ran): --model runs/adapter (or
    # eval's --index runs/index) was not found on the very machine that has it.
    from rewriting.rewrite import main

    model, tok = tiny_gpt2
    model.save_pretrained(tmp_path / "model")
    tok.save_pretrained(tmp_path / "model")
    fake = _stand_in_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.setattr(_StandInDataset, "settings", [])
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.chdir(tmp_path)
    src = _requests(tmp_path / "in.jsonl")
    for given in ("model", "original"):
        assert main(["--input", str(src), "--output", f"{given}.jsonl", "--model", given, "--dtype", "float32", "--ray"]) == 0
    assert [s["model"] for s in _StandInDataset.settings] == [str(tmp_path / "model"), "original"]


def test_eval_s_ray_runs_send_their_index_and_rewriter_paths_whole_and_count_their_units(tmp_path, monkeypatch, capsys):
    import rewriting
    from eval import qa, rewrites

    sent = []

    class Sent(Exception):
        pass

    def spy(items, worker, settings, **kwargs):
        sent.append((kwargs["paths"], kwargs["unit"]))
        raise Sent

    monkeypatch.setattr(rewriting, "map_on_ray", spy)
    monkeypatch.setenv("CONVQA_DENSE_WEIGHT", "0")
    data = tmp_path / "qrecc.json"
    data.write_text(json.dumps([{"Context": [], "Question": "Who was Ada?", "Rewrite": "Who was Ada?", "Answer": "a mathematician",
                                 "Conversation_no": 1, "Turn_no": 1}]))
    with pytest.raises(Sent):
        qa.main(["--data", str(data), "--index", "idx", "--setting", "human-rewrite", "--ray"])
    with pytest.raises(Sent):
        rewrites.main(["score", "--data", str(data), "--rewriter", "original", "--metrics", "bleu", "--ray"])
    # and their progress counts what the single-process run's does (it said "item")
    assert sent == [(("index", "rewriter"), "turn"), (("index", "rewriter"), "pair")]


def test_the_ray_progress_counts_what_the_single_process_run_counts(tmp_path, monkeypatch, capsys):
    import re

    from rewriting.rewrite import main

    fake = _stand_in_ray()
    monkeypatch.setitem(sys.modules, "ray", fake)
    monkeypatch.setitem(sys.modules, "ray.data", fake.data)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    src = _requests(tmp_path / "in.jsonl")
    units = []
    for extra in ([], ["--ray"]):
        assert main(["--input", str(src), "--output", str(tmp_path / f"out{len(extra)}.jsonl"), "--model", "original", *extra]) == 0
        units.append(re.findall(r"([a-z]+)/s\]", capsys.readouterr().err)[-1])
    assert units == ["q", "q"]
