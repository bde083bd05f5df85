"""Every evaluation command's and script's ``--help``: a whole sentence to
say what it does, and a word for every flag (a new contributor reads them
before the code)."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
from pathlib import Path

import pytest

from assistant.kernel import CommandParser

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
COMMANDS = ["eval.qa", "eval.coqa", "eval.quality", "eval.labels", "eval.retrieval", "eval.rewrites"]
# The scripts of this area (bench_conversations, soak_test and load_test have tests of their own).
SCRIPT_FILES = ["bench_chat.py", "bench_index.py", "gen_collection.py", "check_space.py", "study_history.py",
                "study_nbest.py", "study_rerank.py", "study_skip_rewrite.py", "screenshots.py"]


def _script(name: str, monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))  # the study scripts import each other
    spec = importlib.util.spec_from_file_location(name.removesuffix(".py"), SCRIPTS / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _parser(main, monkeypatch) -> argparse.ArgumentParser:
    """The parser ``main`` builds, taken where it parses (nothing runs)."""
    built = []

    def take(self, args=None, namespace=None):
        built.append(self)
        raise SystemExit(0)

    for parser_class in (argparse.ArgumentParser, CommandParser):
        monkeypatch.setattr(parser_class, "parse_args", take)
    with pytest.raises(SystemExit):
        main(["--help"])
    return built[0]


def _undocumented(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += _undocumented(sub, f"{prefix}{name} ")
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            missing.append(prefix + (action.option_strings[-1] if action.option_strings else action.dest))
    return missing


@pytest.mark.parametrize("name", COMMANDS + SCRIPT_FILES)
def test_help_says_what_it_does_and_every_flag_has_a_word(name, monkeypatch):
    main = _script(name, monkeypatch).main if name.endswith(".py") else importlib.import_module(name).main
    parser = _parser(main, monkeypatch)
    assert parser.description and parser.description.rstrip("`").endswith("."), parser.description
    assert _undocumented(parser) == []


def _silent_defaults(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """Flags with a default value whose help does not say it (a switch, an
    unset value or a list to append to has none to say)."""
    silent = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                silent += _silent_defaults(sub, f"{prefix}{name} ")
        elif action.option_strings and not isinstance(action, argparse._HelpAction):
            unset = action.default is None or action.default is False or action.default in (argparse.SUPPRESS, [])
            if not unset and "default" not in (action.help or ""):
                silent.append(prefix + action.option_strings[-1])
    return silent


@pytest.mark.parametrize("name", COMMANDS + SCRIPT_FILES)
def test_every_flag_with_a_default_says_what_it_is(name, monkeypatch):
    # gen_collection's --shards, --vocab and --zipf, check_space's --timeout,
    # eval.rewrites bench --repeat and the study scripts' --batch and --seed
    # said nothing of the value they take when left out.
    main = _script(name, monkeypatch).main if name.endswith(".py") else importlib.import_module(name).main
    assert _silent_defaults(_parser(main, monkeypatch)) == []


@pytest.mark.parametrize("name", COMMANDS + ["assistant.index", "rewriting.rewrite", "rewriting.train",
                                             "rewriting.average", "assistant.chat", "app"])
def test_an_unknown_flag_is_named_before_a_missing_required_one(name, capsys):
    # argparse checked the required flags first: "python -m eval.qa --bogus"
    # said "--data is required" and nothing of the typo.
    with pytest.raises(SystemExit) as exit_:
        importlib.import_module(name).main(["--bogus"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.splitlines()[-1].endswith("error: unrecognized arguments: --bogus"), err


def test_the_parser_looks_for_unknown_flags_and_leaves_the_rest_as_argparse_says_it(capsys):
    parser = CommandParser(prog="demo")
    parser.add_argument("--data", required=True, help="a file")
    parser.add_argument("--k", type=int, help="a count")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("score").add_argument("--run", required=True, help="a run")
    for argv, said, usage in ((["--k", "x", "--bogus"], "argument --k: invalid int value: 'x'", "--data DATA [--k K]"),
                              (["--k", "1"], "the following arguments are required: --data", "--data DATA [--k K]"),
                              (["--data", "d", "score", "--bogus"], "unrecognized arguments: --bogus", "--data DATA"),
                              (["--data", "d", "score"], "the following arguments are required: --run", "] --run RUN")):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
        err = capsys.readouterr().err
        # Said once, under the usage as written (the look for unknown flags marks nothing required).
        assert err.count("error:") == 1 and err.endswith(f"error: {said}\n") and usage in err.splitlines()[0], err
    assert parser.parse_args(["--data", "d", "score", "--run", "r"]).run == "r"


def test_every_command_builds_its_parser_with_the_kernels():
    # One parser, so that each command names an unknown flag first (the
    # scripts that run without the project's packages keep argparse's own).
    root = SCRIPTS.parent
    sources = [root / "app.py", *(root / "assistant").rglob("*.py"), *(root / "eval").rglob("*.py"),
               *(root / "rewriting").rglob("*.py"), *SCRIPTS.glob("*.py")]
    own = [path.relative_to(root).as_posix() for path in sources if "argparse.ArgumentParser(" in path.read_text()]
    assert set(own) <= {"scripts/check_space.py", "scripts/screenshots.py", "scripts/soak_test.py"}, own
