"""The study scripts' command lines: --help, and missing inputs refused in
one line before any model loads."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def _bench_conversations():
    """scripts/bench_conversations.py as a module, to call its functions in-process."""
    spec = importlib.util.spec_from_file_location("bench_conversations", SCRIPTS / "bench_conversations.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # From another working directory: the scripts must not read paths relative to it.
    return subprocess.run([sys.executable, str(SCRIPTS / script), *args], cwd=cwd, capture_output=True, text=True,
                          check=False, timeout=300)


def test_study_skip_rewrite_help_prints_usage_and_runs_nothing(tmp_path):
    out = _run("study_skip_rewrite.py", "--help", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage:") and "--split" in out.stdout


@pytest.mark.parametrize("script, extra", [
    ("study_skip_rewrite.py", []),
    # A model that does not exist: were it loaded before the folder is checked, that would be the error.
    ("study_history.py", ["--model", "/no/such/model"]),
    ("study_nbest.py", ["--greedy", "x", "--model", "/no/such/model"]),
    ("study_rerank.py", ["--greedy", "x", "--model", "/no/such/model"]),
])
def test_a_missing_folder_is_one_line_before_any_model_loads(tmp_path, script, extra):
    missing = tmp_path / "missing"
    out = _run(script, str(missing), *extra, cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert out.stderr.startswith("error: ") and str(missing) in out.stderr and out.stderr.count("\n") == 1


def test_study_history_names_the_files_it_keeps_and_loads_no_model_when_all_are_there(tmp_path):
    # Kept without a word: re-run after a change of code, the old rewrites
    # were scored as the new ones.
    (tmp_path / "qrecc.jsonl").write_text("")
    kept = tmp_path / "qrecc.base.jsonl"
    kept.write_text("earlier\n")
    # A model that does not exist: were it loaded for nothing to do, that would be the error.
    out = _run("study_history.py", str(tmp_path), "--groups", "qrecc", "--variants", "base", "--model", "/no/such/model",
               cwd=tmp_path)
    assert (out.returncode, out.stderr) == (0, f"note: {kept} exists and is kept, not made again (remove it to rewrite "
                                               "its turns)\n")
    assert kept.read_text() == "earlier\n"


@pytest.mark.parametrize("script, flag, value", [
    # --batch 0 loaded SmolLM2, then ended in a traceback (a range of step 0).
    ("study_nbest.py", "--batch", "0"), ("study_nbest.py", "--beams", "0"), ("study_rerank.py", "--budget", "0"),
    ("study_rerank.py", "--train-turns", "-5"),
])
def test_the_n_best_scripts_check_their_counts_before_anything_is_read(tmp_path, script, flag, value):
    out = _run(script, str(tmp_path / "missing"), "--greedy", "x", "--model", "/no/such/model", flag, value, cwd=tmp_path)
    assert (out.returncode, out.stderr) == (2, f"error: {flag} must be at least 1, not {value}\n")


def test_study_nbest_needs_the_greedy_rewrites_before_the_model_loads(tmp_path):
    (tmp_path / "qrecc.jsonl").write_text("")
    out = _run("study_nbest.py", str(tmp_path), "--greedy", "x", "--groups", "qrecc", "--model", "/no/such/model",
               cwd=tmp_path)
    assert out.returncode == 2 and out.stderr == f"error: {tmp_path / 'qrecc.x.jsonl'} is missing; write it first (see --help)\n"


@pytest.mark.parametrize("args, message", [
    # The bad value was refused naming CONVQA_DEFINITIONS, a variable the user never set.
    (["--set", "definitions=maybe"], "error: --set 'definitions=maybe': definitions must be true or false\n"),
    (["--set", "mu=2"], "error: --set 'mu=2': mu must be a number from 0 to 1, got 2.0\n"),
    # A --compare pair was refused as "--set", and its value only once the models had loaded.
    (["--compare", "definitions=true,read_k=0"], "error: --compare 'read_k=0': read_k must be a whole number >= 1, got 0\n"),
    (["--compare", "k=3"], "error: --compare 'k=3': give FIELD=VALUE with FIELD one of "),
])
def test_bench_conversations_refuses_a_bad_setting_by_its_flag_before_loading(tmp_path, args, message):
    out = _run("bench_conversations.py", *args, cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith(message) and "CONVQA_" not in out.stderr, out.stderr


@pytest.mark.parametrize("lines, message", [
    (['{"title": "Nile", "name": "Nile", "turns": [["What is the Nile?"]]}'],
     'line 1: give {"title": ARTICLE, "name": NAME, "turns": [[QUESTION, FACT], ...]}'),
    (['{"title": "Nile", "name": "Nile", "turns": [["What is the Nile?", "glacier"]]}'],
     "'Nile': the fact 'glacier' for 'What is the Nile?' is not in its article"),
    ([""], "no conversations in it"),
])
def test_bench_conversations_reads_a_set_from_a_file_and_checks_it_before_loading(tmp_path, lines, message):
    # --conversations asks a set other than the twelve; its shape and facts are checked first.
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = _run("bench_conversations.py", "--conversations", str(path), cwd=tmp_path)
    assert out.returncode == 2 and out.stderr.startswith("error: ") and message in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize("stop, status", [(KeyboardInterrupt, 130), ("Terminated", 143)])
def test_bench_conversations_interrupted_is_one_line(monkeypatch, capsys, stop, status):
    # Ctrl-C (or SIGTERM) while the models load or the conversations run ended in a traceback.
    from assistant.kernel import Terminated

    script = _bench_conversations()
    stop = Terminated if stop == "Terminated" else stop

    def interrupted(*args, **kwargs):
        raise stop

    monkeypatch.setattr(script, "check_facts", interrupted)
    assert script.main([]) == status
    assert capsys.readouterr().err == "interrupted: nothing was scored\n"


@pytest.mark.parametrize("name", ["dev.jsonl", "heldout.jsonl"])
def test_the_committed_conversation_sets_are_readable_and_their_facts_in_their_articles(name):
    script = _bench_conversations()
    conversations = script.read_conversations(SCRIPTS / "conversations" / name)
    assert len(conversations) == 10 and all(len(turns) == 3 for _, _, turns in conversations)
    script.check_facts(conversations)  # raises naming a fact its article lacks


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), SCRIPTS / name)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


@pytest.mark.parametrize("flags, variables, message", [
    (["--reader", "nope"], {}, "reader must be one of sentence, generative, got 'nope'"),
    ([], {"CONVQA_DENSE_WEIGHT": "abc"}, "CONVQA_DENSE_WEIGHT='abc': dense_weight must be a number from 0 to 1"),
])
def test_bench_chat_refuses_a_bad_setting_in_one_line_before_indexing(monkeypatch, capsys, flags, variables, message):
    # It indexed the whole default collection first (minutes), then ended in a traceback.
    bench_chat = _script("bench_chat.py")

    def no_indexing(*args, **kwargs):
        raise AssertionError("the collection was read before the settings were checked")

    monkeypatch.setattr(bench_chat, "read_collection", no_indexing)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert bench_chat.main(flags) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1


@pytest.mark.parametrize("name", ["long_dev.jsonl", "long_heldout.jsonl"])
def test_the_long_conversation_sets_name_each_turns_subject_and_their_facts_are_in_its_article(name):
    # Long conversations move to other subjects and back: a turn may name its
    # own article and the name(s) its rewrite must hold.
    script = _bench_conversations()
    conversations = script.read_conversations(SCRIPTS / "conversations" / name)
    assert len(conversations) == 5 and all(6 <= len(turns) <= 10 for _, _, turns in conversations)
    script.check_facts(conversations)
    assert script.turn_subject("Marie Curie", "Curie", ()) == ("Marie Curie", ["Curie"])
    assert script.turn_subject("Marie Curie", "Curie", ("Albert Einstein", ["Curie", "Einstein"])) == \
        ("Albert Einstein", ["Curie", "Einstein"])


def test_split_examples_reads_the_files_a_split_names_and_keeps_the_side_asked_for(tmp_path, qrecc_conversations):
    # The study scripts' one reader of a split.json (rerank's training turns,
    # skip_rewrite's train and dev rows, the exported turns read back).
    spec = importlib.util.spec_from_file_location("study_history", SCRIPTS / "study_history.py")
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    name = qrecc_conversations.name
    split = tmp_path / "split.json"
    split.write_text(json.dumps({"files": [str(qrecc_conversations)],  # absolute: taken as it is, not under the checkout
                                 "train": {name: ["qrecc:7:1", "qrecc:9:1"]}, "dev": {name: ["qrecc:7:2"]}}))
    ids = lambda side: [(file, ex.id) for file, ex in study.split_examples(split, side)]  # noqa: E731
    assert ids("train") == [(name, "qrecc:7:1"), (name, "qrecc:9:1")]
    assert ids("dev") == [(name, "qrecc:7:2")]
    assert ids(None) == [(name, "qrecc:7:1"), (name, "qrecc:7:2"), (name, "qrecc:9:1")]
