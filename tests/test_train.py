"""Tests for rewriting.train: a few steps of a tiny GPT-2 lower the loss, the
copy head trains, an interrupted run resumes to the same weights, the CLI
writes the split and a loadable adapter, and bad input exits with status 2.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

from assistant.kernel import ConfigError, ModelNotFoundError
from rewriting import CausalLMRewriter, PromptConfig, encode_example
from rewriting import train as train_module
from rewriting.data import RewriteExample
from rewriting.train import (
    TrainConfig,
    batch_loss,
    collate,
    encode_examples,
    make_batches,
    train,
)

# A memorisable toy task: each conversation asks about one person, then
# "Where was he born?" must become "Where was <person> born?".
PEOPLE = ["Alan Turing", "Ada Lovelace", "Charles Babbage", "Grace Hopper", "John von Neumann", "Kurt Godel"]


def _examples(people=PEOPLE):
    return [
        RewriteExample(
            id=f"qrecc:{i}:2",
            source="qrecc",
            conversation_id=str(i),
            turn=2,
            question="Where was he born?",
            history=(f"Who was {name}?", f"{name} was a scientist."),
            rewrite=f"Where was {name} born?",
        )
        for i, name in enumerate(people)
    ]


def _config(**overrides):
    settings = dict(steps=8, batch_size=3, lr=1e-2, warmup=1, lora_r=4, lora_alpha=8, lora_dropout=0.0, eval_every=0, save_every=2, seed=0)
    settings.update(overrides)
    return TrainConfig(**settings)


def _loss(model, tok, examples):
    batch = collate([encode_example(tok, e.question, e.history, e.rewrite) for e in examples], tok.pad_token_id)
    with torch.no_grad():
        return float(batch_loss(model, batch))


def test_make_batches_is_seeded_and_covers_every_example_each_epoch():
    batches = make_batches(6, 3, 4, seed=1)
    assert batches == make_batches(6, 3, 4, seed=1)
    assert batches != make_batches(6, 3, 4, seed=2)
    assert sorted(batches[0] + batches[1]) == list(range(6))
    assert sorted(batches[2] + batches[3]) == list(range(6))


def test_batch_loss_ignores_prompt_tokens(tiny_gpt2):
    model, tok = tiny_gpt2
    ids, labels = encode_example(tok, "Where was he born?", ("Who was Alan Turing?", ""), "Where was Alan Turing born?")
    batch = collate([(ids, labels)], tok.pad_token_id)
    with torch.no_grad():
        logits = model(input_ids=batch.input_ids).logits
        expected = torch.nn.functional.cross_entropy(logits[0, :-1], batch.labels[0, 1:], ignore_index=-100)
        assert float(batch_loss(model, batch)) == pytest.approx(float(expected), rel=1e-5)


def test_a_few_steps_lower_the_loss(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    before = _loss(model, tok, _examples())
    summary = train(_examples(), _examples()[:2], tmp_path, _config(steps=12, lr=1e-2), model=model, tokenizer=tok, progress=False)
    after = _loss(model, tok, _examples())
    assert after < before - 1.0  # measured 11.18 -> 9.28
    assert summary["steps"] == 12 and summary["train_examples"] == 6 and summary["dev_examples"] == 2
    log = [json.loads(line) for line in (tmp_path / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 13))
    assert {"adapter_config.json", "adapter_model.safetensors", "rewriter.json", "summary.json"} <= {p.name for p in tmp_path.iterdir()}


def test_a_run_logs_its_losses_without_a_requires_grad_warning(tiny_gpt2, tmp_path):
    import warnings

    model, tok = tiny_gpt2
    with warnings.catch_warnings():
        # Every run printed it: the step's loss was turned into a float with its graph attached.
        warnings.filterwarnings("error", message="Converting a tensor with requires_grad=True")
        train(_examples(), [], tmp_path, _config(steps=2), model=model, tokenizer=tok, progress=False)
    assert [json.loads(line)["step"] for line in (tmp_path / "train_log.jsonl").read_text().splitlines()] == [1, 2]


def test_a_run_writes_every_file_readable_by_all(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    umask = os.umask(0o022)  # the usual one; the run's files must not be more private than it asks
    try:
        train(_examples(), [], tmp_path, _config(steps=2, copy=True), model=model, tokenizer=tok, progress=False)
    finally:
        os.umask(umask)
    modes = {p.name: oct(p.stat().st_mode & 0o777) for p in tmp_path.iterdir() if p.is_file()}
    # safetensors writes 0600: the adapter and copy head were unreadable to anyone else.
    assert {"adapter_model.safetensors", "copy_head.safetensors", "checkpoint.pt"} <= modes.keys()
    assert set(modes.values()) == {"0o644"}, modes


def test_first_turns_are_not_trained_on(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    first = RewriteExample("qrecc:9:1", "qrecc", "9", 1, "Who was Alan Turing?", (), "Who was Alan Turing?")
    summary = train(_examples() + [first], [], tmp_path, _config(steps=1), model=model, tokenizer=tok, progress=False)
    assert summary["train_examples"] == 6 and summary["dev_loss"] is None


def test_training_input_leads_with_the_title_unless_told_not_to(tiny_gpt2):
    _, tok = tiny_gpt2
    turn = RewriteExample("canard:d:2", "canard", "d", 2, "When did they disband?", ("What group disbanded?", "The Mothers"),
                          "When did Zappa and the Mothers disband?", title="Frank Zappa: Disbandment")
    first = RewriteExample("canard:d:1", "canard", "d", 1, "What group disbanded?", (), "What group disbanded?", title="Frank Zappa: Disbandment")
    shown = lambda config: [tok.decode(ids) for ids, _ in encode_examples(tok, [first, turn], config)]  # noqa: E731
    with_titles, without = shown(_config()), shown(_config(titles=False))
    assert len(with_titles) == len(without) == 1  # the first turn is not trained on either way
    assert with_titles[0].startswith("Q: Frank Zappa: Disbandment\nQ: What group disbanded?\nA: The Mothers\n")
    assert without[0].startswith("Q: What group disbanded?\nA: The Mothers\n")


def test_copy_head_run_lowers_the_loss_and_saves_the_head(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    summary = train(_examples(), _examples(), tmp_path, _config(copy=True, steps=1, lr=1e-9), model=model, tokenizer=tok, progress=False)
    first_dev = summary["dev_loss"]
    model2, tok2 = _fresh_tiny()
    summary = train(_examples(), _examples(), tmp_path / "longer", _config(copy=True, steps=12), model=model2, tokenizer=tok2, progress=False)
    assert summary["dev_loss"] < first_dev - 1.0
    assert (tmp_path / "longer" / "copy_head.safetensors").is_file()
    assert json.loads((tmp_path / "longer" / "rewriter.json").read_text())["copy"] is True


def _fresh_tiny():
    from conftest import build_tiny_gpt2

    return build_tiny_gpt2()


def _saved_base(tmp_path):
    """A fresh tiny GPT-2 saved as a --base folder, and its tokenizer."""
    model, tok = _fresh_tiny()
    base = tmp_path / "base"
    model.save_pretrained(base)
    tok.save_pretrained(base)
    return base, tok


def test_interrupted_run_resumes_to_the_same_weights(tmp_path, monkeypatch):
    from peft import get_peft_model_state_dict

    # Uninterrupted reference run.
    model, tok = _fresh_tiny()
    train(_examples(), [], tmp_path / "straight", _config(lora_dropout=0.1), model=model, tokenizer=tok, progress=False)
    reference = {k: v.clone() for k, v in get_peft_model_state_dict(model).items()}

    # Same run, killed during step 6 (the last checkpoint is after step 4):
    # a crash, not Ctrl-C, so nothing is saved on the way out.
    calls = {"n": 0}
    real_loss = train_module.batch_loss

    def dying_loss(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 6:
            raise RuntimeError("killed")
        return real_loss(*args, **kwargs)

    monkeypatch.setattr(train_module, "batch_loss", dying_loss)
    model, tok = _fresh_tiny()
    with pytest.raises(RuntimeError, match="killed"):
        train(_examples(), [], tmp_path / "resumed", _config(lora_dropout=0.1), model=model, tokenizer=tok, progress=False)
    assert torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=False)["step"] == 4
    monkeypatch.setattr(train_module, "batch_loss", real_loss)

    # Resumed, stopped early at step 6 (--stop-after), then resumed to the end.
    model, tok = _fresh_tiny()
    summary = train(_examples(), [], tmp_path / "resumed", _config(lora_dropout=0.1, stop_after=6), model=model, tokenizer=tok, progress=False)
    assert summary["steps"] == 6 and summary["schedule_steps"] == 8
    model, tok = _fresh_tiny()
    train(_examples(), [], tmp_path / "resumed", _config(lora_dropout=0.1), model=model, tokenizer=tok, progress=False)
    resumed = get_peft_model_state_dict(model)
    assert reference.keys() == resumed.keys()
    for key in reference:
        assert torch.allclose(reference[key], resumed[key], atol=1e-6), key
    steps = [json.loads(line)["step"] for line in (tmp_path / "resumed" / "train_log.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 5, 6, 7, 8]  # step 5 ran, was lost, and ran again


def test_resume_with_other_settings_is_refused(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    train(_examples(), [], tmp_path, _config(steps=2), model=model, tokenizer=tok, progress=False)
    model, tok = _fresh_tiny()
    with pytest.raises(ConfigError, match="other settings") as refused:
        train(_examples(), [], tmp_path, _config(steps=3, lr=2e-2, prompt=PromptConfig(max_answer_tokens=7)), model=model, tokenizer=tok, progress=False)
    # Each setting that differs, named with both values, and only those.
    budget = PromptConfig().max_answer_tokens
    assert f": lr 0.01 vs 0.02, prompt.max_answer_tokens {budget} vs 7, steps 2 vs 3);" in str(refused.value)


def test_a_checkpoint_from_before_a_setting_existed_resumes_as_that_run_behaved(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    train(_examples(), [], tmp_path, _config(steps=2, seed=1, split_seed=1), model=model, tokenizer=tok, progress=False)
    path = tmp_path / "checkpoint.pt"
    state = torch.load(path, weights_only=False)
    del state["config"]["split_seed"], state["config"]["swap_names"]  # as written before they existed
    torch.save(state, path)
    # Such a run split by its seed and had no swapped copies: the same settings now resume it.
    model, tok = _fresh_tiny()
    train(_examples(), [], tmp_path, _config(steps=2, seed=1, split_seed=1), model=model, tokenizer=tok, progress=False)
    model, tok = _fresh_tiny()
    with pytest.raises(ConfigError, match="other settings"):
        train(_examples(), [], tmp_path, _config(steps=2, seed=1, split_seed=0), model=model, tokenizer=tok, progress=False)


def _qrecc_file(path, people):
    records = []
    for i, name in enumerate(people):
        records.append({"Context": [], "Question": f"Who was {name}?", "Rewrite": f"Who was {name}?", "Answer": f"{name} was a scientist.", "Conversation_no": i + 1, "Turn_no": 1})
        records.append({"Context": [f"Who was {name}?", f"{name} was a scientist."], "Question": "Where was he born?", "Rewrite": f"Where was {name} born?", "Answer": "", "Conversation_no": i + 1, "Turn_no": 2})
    path.write_text(json.dumps(records))
    return path


def test_cli_trains_writes_split_and_a_loadable_rewriter(tmp_path, capsys):
    from rewriting.data import load_examples

    base, tok = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    out = tmp_path / "run"
    argv = ["--train", str(data), "--output", str(out), "--base", str(base), "--steps", "10", "--batch-size", "4",
            "--lr", "1e-2", "--lora-r", "8", "--lora-dropout", "0", "--dev-fraction", "0.25", "--eval-every", "0", "--copy",
            "--max-answer-tokens", "12"]
    assert train_module.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    split = json.loads((out / "split.json").read_text())
    train_ids, dev_ids = split["train"]["train.json"], split["dev"]["train.json"]
    assert len(train_ids) + len(dev_ids) == 24 and train_ids and dev_ids
    conversations = lambda ids: {i.split(":")[1] for i in ids}  # noqa: E731
    assert not conversations(train_ids) & conversations(dev_ids)
    assert summary["train_examples"] == len(train_ids) // 2  # first turns are not trained on
    card = (out / "README.md").read_text()
    assert "python -m rewriting.train --train" in card and "Steps: 10" in card
    assert json.loads((out / "rewriter.json").read_text())["end_token"] == tok.eos_token  # what the targets ended with

    # Loaded back (adapter merged, copy head, recipe), the model scores the dev
    # turns as the run did, and better than the untrained base.
    rewriter = CausalLMRewriter.from_pretrained(str(base), adapter=out)
    assert rewriter.config.prompt_format == "plain" and rewriter.copy_head is not None
    # The prompt budgets given as flags are the ones inference uses.
    assert rewriter.config.prompt == PromptConfig(max_answer_tokens=12)
    dev = [e for e in load_examples(data) if e.id in set(dev_ids) and e.history]
    batch = collate([encode_example(tok, e.question, e.history, e.rewrite, rewriter.config.prompt) for e in dev], tok.pad_token_id)
    with torch.no_grad():
        reloaded = float(batch_loss(rewriter.model, batch, rewriter.copy_head))
    assert reloaded == pytest.approx(summary["dev_loss"], abs=0.02)
    assert reloaded < _loss(_fresh_tiny()[0], tok, dev) - 1.0

    # A run whose tokenizer called another token eos ends its rewrites with
    # that one: the saved recipe makes inference stop there too.
    recipe = json.loads((out / "rewriter.json").read_text())
    (out / "rewriter.json").write_text(json.dumps({**recipe, "end_token": "!"}))
    assert tok.convert_tokens_to_ids("!") in CausalLMRewriter.from_pretrained(str(base), adapter=out).eos_ids
    (out / "rewriter.json").write_text(json.dumps({**recipe, "end_token": "<|no such token|>"}))
    with pytest.raises(ModelNotFoundError, match="end_token in rewriter.json"):
        CausalLMRewriter.from_pretrained(str(base), adapter=out)


def test_cli_ctrl_c_saves_the_step_reached_and_the_same_command_resumes_it(tmp_path, capsys, monkeypatch):
    from safetensors.torch import load_file

    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    # Dropout on, and no periodic checkpoint before the end: only the Ctrl-C save can keep steps 1-2.
    argv = lambda out: ["--train", str(data), "--output", str(out), "--base", str(base), "--steps", "4", "--batch-size", "2",  # noqa: E731
                        "--lr", "1e-2", "--lora-r", "4", "--lora-dropout", "0.1", "--dev-fraction", "0.25", "--eval-every", "0", "--save-every", "100"]
    assert train_module.main(argv(tmp_path / "straight")) == 0
    capsys.readouterr()

    calls = {"n": 0}
    real_loss = train_module.batch_loss

    def ctrl_c_in_step_3(*args, **kwargs):
        calls["n"] += 1
        loss = real_loss(*args, **kwargs)  # step 3's forward pass has drawn its dropout masks
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return loss

    monkeypatch.setattr(train_module, "batch_loss", ctrl_c_in_step_3)
    out = tmp_path / "stopped"
    assert train_module.main(argv(out)) == 130
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("stopped at step 2 of 4") and "run the same command again to resume" in err
    assert torch.load(out / "checkpoint.pt", weights_only=False)["step"] == 2
    monkeypatch.setattr(train_module, "batch_loss", real_loss)

    assert train_module.main(argv(out)) == 0
    assert "resuming from step 2 of 4" in capsys.readouterr().err
    steps = [json.loads(line)["step"] for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4]  # nothing lost, nothing run twice
    # Steps 3-4 drew the dropout masks the uninterrupted run drew: the same adapter.
    straight, resumed = load_file(str(tmp_path / "straight" / "adapter_model.safetensors")), load_file(str(out / "adapter_model.safetensors"))
    assert straight.keys() == resumed.keys()
    for key in straight:
        torch.testing.assert_close(resumed[key], straight[key], atol=1e-3, rtol=1e-3)


def test_cli_eval_examples_0_reports_the_dev_loss_as_not_measured(tmp_path, capsys):
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    out = tmp_path / "run"
    argv = ["--train", str(data), "--output", str(out), "--base", str(base), "--steps", "2", "--batch-size", "2", "--lora-r", "4",
            "--dev-fraction", "0.25", "--eval-every", "1", "--eval-examples", "0"]
    assert train_module.main(argv) == 0
    # Not 0.0, which reads as a perfect score: null, and the card says so.
    assert json.loads(capsys.readouterr().out)["dev_loss"] is None
    assert json.loads((out / "summary.json").read_text())["dev_loss"] is None
    assert "dev turns): not measured." in (out / "README.md").read_text()
    assert all("dev_loss" not in json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines())


def _one_step_runs(tmp_path, capsys, data, base, runs: dict[str, list[str]]) -> dict[str, dict]:
    """One tiny training step per run (name: extra flags); each run's printed
    summary with its split.json text under "split" (copies of training turns
    are made after the split, so it must not move)."""
    counts = {}
    for name, extra in runs.items():
        argv = ["--train", str(data), "--output", str(tmp_path / name), "--base", str(base), "--steps", "1", "--batch-size", "2",
                "--lora-r", "4", "--dev-fraction", "0.25", "--eval-every", "0", *extra]
        assert train_module.main(argv) == 0
        counts[name] = json.loads(capsys.readouterr().out)
        counts[name]["split"] = (tmp_path / name / "split.json").read_text()
    return counts


def test_cli_histories_both_trains_each_follow_up_with_either_history(tmp_path, capsys):
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    # Official QReCC Context holds raw questions here; the first turn's
    # rewrite differs from its question, so each follow-up gets a copy.
    records = json.loads(data.read_text())
    for r in records[0::2]:
        r["Rewrite"] = r["Question"].replace("Who was", "Who is")
    data.write_text(json.dumps(records))
    counts = _one_step_runs(tmp_path, capsys, data, base, {h: ["--histories", h] for h in ("asked", "both")})
    assert counts["both"]["train_examples"] == 2 * counts["asked"]["train_examples"]
    assert counts["both"]["split"] == counts["asked"]["split"]
    assert counts["both"]["dev_examples"] == counts["asked"]["dev_examples"]
    with pytest.raises(SystemExit):
        train_module.main(["--train", str(data), "--output", str(tmp_path / "x"), "--histories", "rewrites"])
    assert "invalid choice" in capsys.readouterr().err


def test_cli_repeat_weights_a_source_after_the_split(tmp_path, capsys):
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    counts = _one_step_runs(tmp_path, capsys, data, base, {"once": [], "thrice": ["--repeat", "qrecc=3"]})
    assert counts["thrice"]["train_examples"] == 3 * counts["once"]["train_examples"]
    assert counts["thrice"]["split"] == counts["once"]["split"] and counts["thrice"]["dev_examples"] == counts["once"]["dev_examples"]
    for value, message in [("qrecc=0", "at least 1"), ("qrecc", "SOURCE=N"), ("canard=2", "no training turns from 'canard'; the files hold qrecc")]:
        assert train_module.main(["--train", str(data), "--output", str(tmp_path / "bad"), "--base", str(base), "--repeat", value]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1


def test_cli_swap_names_adds_a_copy_of_each_follow_up_with_another_name(tmp_path, capsys):
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    names = tmp_path / "names.txt"
    names.write_text("Ada Lovelace\tperson\nMarie Curie\tperson\n")
    counts = _one_step_runs(tmp_path, capsys, data, base, {"plain": [], "swap": ["--swap-names", str(names)]})
    # Every follow-up names its person from the first turn, so each gets one copy.
    assert counts["swap"]["train_examples"] == 2 * counts["plain"]["train_examples"]
    assert counts["swap"]["split"] == counts["plain"]["split"]
    assert counts["swap"]["dev_examples"] == counts["plain"]["dev_examples"]
    assert f"name-swapped copies from `{names}`" in (tmp_path / "swap" / "README.md").read_text()
    assert train_module.main(["--train", str(data), "--output", str(tmp_path / "x"), "--swap-names", str(tmp_path / "none.txt")]) == 2
    assert "cannot read the names file" in capsys.readouterr().err


def test_cli_another_seed_holds_out_the_same_turns_unless_the_split_seed_moves(tmp_path, capsys):
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 4)
    counts = _one_step_runs(tmp_path, capsys, data, base, {
        "seed0": [], "seed1": ["--seed", "1"], "split1": ["--split-seed", "1"]})
    assert counts["seed1"]["split"] == counts["seed0"]["split"]
    assert counts["split1"]["split"] != counts["seed0"]["split"]
    card = (tmp_path / "seed1" / "README.md").read_text()
    assert "dev fraction 0.25, seed 0)" in card and "seed 1." in card


def test_cli_unreadable_file_exits_2_naming_it(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert train_module.main(["--train", str(bad), "--output", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and err.startswith("error: ")


def test_cli_unwritable_output_exits_2_in_one_line(tmp_path, capsys):
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert train_module.main(["--train", str(data), "--output", str(blocker / "run")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write the output folder") and str(blocker / "run") in err and err.count("\n") == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders, so there is nothing to refuse")
def test_cli_read_only_output_exits_2_in_one_line(tmp_path, capsys):
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert train_module.main(["--train", str(data), "--output", str(locked)]) == 2
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write the output folder") and err.count("\n") == 1


@pytest.mark.parametrize("flag, value, message", [("--steps", "0", "--steps must be at least 1"), ("--dev-fraction", "1.5", "--dev-fraction must be within [0, 1)"),
                                                  ("--lr", "0", "--lr must be above 0"), ("--lr", "inf", "--lr must be a finite number"),
                                                  ("--clip", "-1", "--clip must be above 0"), ("--clip", "0", "--clip must be above 0"),
                                                  ("--clip", "nan", "--clip must be above 0"), ("--save-every", "0", "--save-every must be at least 1"),
                                                  ("--batch-size", "0", "--batch-size must be at least 1"), ("--lora-r", "0", "--lora-r must be at least 1"),
                                                  ("--lora-alpha", "-2", "--lora-alpha must be at least 1"), ("--warmup", "-1", "--warmup must be at least 0"),
                                                  ("--eval-examples", "-1", "--eval-examples must be at least 0"),
                                                  ("--lora-dropout", "1", "--lora-dropout must be within [0, 1)")])
def test_cli_flag_out_of_range_exits_2_in_one_line(tmp_path, capsys, flag, value, message):
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    assert train_module.main(["--train", str(data), "--output", str(tmp_path / "run"), flag, value]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_cli_help_explains_every_flag_and_its_default(capsys):
    with pytest.raises(SystemExit) as done:
        train_module.main(["--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    # Each numeric setting says what it is and its default (most said nothing).
    for flag, default in [("--clip X", "1.0"), ("--steps N", "400"), ("--eval-examples N", "128"), ("--lr X", "0.0004"),
                          ("--max-input-tokens N", "160"), ("--base BASE", "smollm2")]:
        assert f"{flag} " in text and f"(default: {default})" in text, flag
    assert "gradient-norm clip, above 0 (default: 1.0)" in text
    assert "dev turns the dev loss is measured on (0: not measured) (default: 128)" in text


@pytest.mark.parametrize("device, message", [("tpu", "is not a torch device"), ("mps", "training runs on cpu or cuda"),
                                             ("cuda", "sees no CUDA GPU on this machine; use --device cpu")])
def test_cli_device_it_cannot_train_on_exits_2_in_one_line(tmp_path, capsys, monkeypatch, device, message):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # as on a machine without a GPU
    data = _qrecc_file(tmp_path / "train.json", PEOPLE)
    assert train_module.main(["--train", str(data), "--output", str(tmp_path / "run"), "--device", device]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: torch sees none on this machine")
def test_a_run_started_on_a_gpu_resumes_on_the_cpu_and_learns_as_a_cpu_run(tmp_path):
    # Not weight for weight: Adam turns the devices' last-bit differences in
    # near-zero gradients into whole lr-sized steps, so the runs compare by loss.
    model, tok = _fresh_tiny()
    before = _loss(model, tok, _examples())
    train(_examples(), [], tmp_path / "cpu", _config(), model=model, tokenizer=tok, progress=False)
    on_cpu = _loss(model, tok, _examples())
    model, tok = _fresh_tiny()
    summary = train(_examples(), _examples()[:2], tmp_path / "moved", _config(device="cuda", stop_after=4), model=model, tokenizer=tok, progress=False)
    assert summary["steps"] == 4 and summary["dev_loss"] < before
    model, tok = _fresh_tiny()
    train(_examples(), [], tmp_path / "moved", _config(), model=model, tokenizer=tok, progress=False)  # resumed on the CPU
    moved = _loss(model, tok, _examples())
    steps = [json.loads(line)["step"] for line in (tmp_path / "moved" / "train_log.jsonl").read_text().splitlines()]
    assert steps == list(range(1, 9))
    assert moved < before - 1.0 and moved == pytest.approx(on_cpu, rel=0.25, abs=0.1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU: torch sees none on this machine")
def test_cli_on_a_gpu_writes_an_adapter_that_scores_alike_on_the_cpu(tmp_path, capsys):
    base, tok = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    out = tmp_path / "run"
    argv = ["--train", str(data), "--output", str(out), "--base", str(base), "--steps", "10", "--batch-size", "4", "--lr", "1e-2",
            "--lora-r", "8", "--lora-dropout", "0", "--dev-fraction", "0.25", "--eval-every", "0", "--device", "cuda", "--bf16"]
    assert train_module.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert "GPU" in (out / "README.md").read_text()
    from rewriting.data import load_examples

    rewriter = CausalLMRewriter.from_pretrained(str(base), adapter=out)  # on the CPU
    dev_ids = set(json.loads((out / "split.json").read_text())["dev"]["train.json"])
    dev = [e for e in load_examples(data) if e.id in dev_ids and e.history]
    batch = collate([encode_example(tok, e.question, e.history, e.rewrite, rewriter.config.prompt) for e in dev], tok.pad_token_id)
    with torch.no_grad():
        reloaded = float(batch_loss(rewriter.model, batch))
    assert reloaded == pytest.approx(summary["dev_loss"], abs=0.05)  # bf16 on the GPU, float32 here
    assert reloaded < _loss(_fresh_tiny()[0], tok, dev) - 1.0


def test_no_example_with_a_history_is_a_data_error(tiny_gpt2, tmp_path):
    from assistant.kernel import DataFormatError

    model, tok = tiny_gpt2
    first = RewriteExample("qrecc:9:1", "qrecc", "9", 1, "Who was Alan Turing?", (), "Who was Alan Turing?")
    with pytest.raises(DataFormatError, match="no training examples with a history"):
        train([first], [], tmp_path, _config(steps=1), model=model, tokenizer=tok, progress=False)
