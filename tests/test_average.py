"""Tests for rewriting.average: the averaged adapter's merged weights are the
mean of its members' merged weights, it loads as a rewriter, and members
that cannot be averaged exactly are refused with a one-line error."""

from __future__ import annotations

import json
import shutil
import warnings

import pytest
import torch

from rewriting import CausalLMRewriter, RewriterConfig
from rewriting import average as average_module
from rewriting import train as train_module
from test_train import PEOPLE, _qrecc_file, _saved_base

EXACT = RewriterConfig(dtype="float32", pack_weights=False)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The tiny base and two adapters trained on it with other seeds (one of
    rank 4, one of rank 2 and another alpha) and the same split."""
    tmp_path = tmp_path_factory.mktemp("average")
    base, _ = _saved_base(tmp_path)
    data = _qrecc_file(tmp_path / "train.json", PEOPLE * 2)
    made = {}
    for name, extra in {"a": ["--seed", "0", "--lora-r", "4", "--lora-alpha", "8"],
                        "b": ["--seed", "1", "--lora-r", "2", "--lora-alpha", "6"]}.items():
        argv = ["--train", str(data), "--output", str(tmp_path / name), "--base", str(base), "--steps", "3",
                "--batch-size", "2", "--lr", "5e-2", "--lora-dropout", "0", "--dev-fraction", "0.25", "--eval-every", "0", *extra]
        assert train_module.main(argv) == 0
        made[name] = tmp_path / name
    return base, made, tmp_path


def _weights(base, adapter=None) -> dict[str, torch.Tensor]:
    model = CausalLMRewriter.from_pretrained(str(base), adapter=adapter, config=EXACT).model
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_the_average_is_the_mean_of_the_members_merged_weights(runs, capsys):
    base, made, tmp_path = runs
    out = tmp_path / "mean"
    assert average_module.main([str(made["a"]), str(made["b"]), "--output", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["rank"] == 6
    plain, a, b, mean = _weights(base), _weights(base, made["a"]), _weights(base, made["b"]), _weights(base, out)
    moved = [k for k in plain if not torch.equal(a[k], plain[k])]
    assert moved  # the members did train
    for key in plain:
        torch.testing.assert_close(mean[key], (a[key] + b[key]) / 2, atol=1e-5, rtol=1e-4)
    assert (out / "split.json").read_bytes() == (made["a"] / "split.json").read_bytes()
    assert (out / "adapter_model.safetensors").stat().st_mode & 0o777 == 0o644  # as safetensors would not (0600)
    assert "python -m rewriting.average" in (out / "README.md").read_text()
    rewrite = CausalLMRewriter.from_pretrained(str(base), adapter=out, config=EXACT).rewrite("Where was he born?", ["Who was Ada Lovelace?"])
    assert isinstance(rewrite.text, str)


def test_loading_an_adapter_prints_no_deprecation_of_transformers(runs):
    # peft's wrapping printed transformers' "is_gradient_checkpointing is
    # deprecated" FutureWarning at every start of the app and the chat.
    base, made, _ = runs
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CausalLMRewriter.from_pretrained(str(base), adapter=made["a"], config=EXACT)
    assert [str(w.message) for w in caught if "is_gradient_checkpointing" in str(w.message)] == []


def test_an_adapter_averaged_with_itself_is_itself(runs):
    base, made, tmp_path = runs
    out = tmp_path / "self"
    average_module.average_adapters([made["a"], made["a"]], out)
    a, mean = _weights(base, made["a"]), _weights(base, out)
    for key in a:
        torch.testing.assert_close(mean[key], a[key], atol=1e-5, rtol=1e-4)


def test_an_interrupted_write_leaves_no_half_adapter_and_a_rerun_finishes(runs, monkeypatch):
    import safetensors.torch

    _, made, tmp_path = runs
    out = tmp_path / "again"

    def dies_writing(tensors, filename, *args, **kwargs):
        with open(filename, "wb") as handle:
            handle.write(b"half a file")
        raise OSError("No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(safetensors.torch, "save_file", dies_writing)
        with pytest.raises(OSError, match="No space left"):
            average_module.average_adapters([made["a"], made["a"]], out)
    # The half file never took the weights' name, so the folder is no adapter and the same command runs again.
    assert not (out / "adapter_model.safetensors").exists()
    average_module.average_adapters([made["a"], made["a"]], out)
    assert (out / "adapter_model.safetensors").is_file()


def test_an_output_that_is_a_member_or_holds_an_adapter_is_refused_before_any_work(runs, capsys):
    _, made, tmp_path = runs
    before = {p.name: p.read_bytes() for p in made["a"].iterdir() if p.is_file()}
    assert average_module.main(["--output", str(made["a"]), str(made["a"]), str(made["b"])]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "is one of the adapters being averaged" in err and "new folder" in err and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in made["a"].iterdir() if p.is_file()} == before  # the member is untouched
    # Another run's folder, not a member: refused too, naming what it holds.
    assert average_module.main(["--output", str(made["b"]), str(made["a"]), str(made["a"])]) == 2
    err = capsys.readouterr().err
    assert "already holds an adapter or a training run" in err and "checkpoint.pt" in err and err.count("\n") == 1
    # A file where the folder should go: output_path's one line.
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert average_module.main(["--output", str(blocker), str(made["a"]), str(made["b"])]) == 2
    assert "cannot write --output" in capsys.readouterr().err


def test_a_rank_cut_is_the_exact_mean_at_full_rank_and_low_rank_below(runs, capsys):
    base, made, tmp_path = runs
    exact, full, one = tmp_path / "exact", tmp_path / "full", tmp_path / "one"
    average_module.average_adapters([made["a"], made["b"]], exact)
    assert average_module.average_adapters([made["a"], made["b"]], full, rank=6)["rank"] == 6
    average_module.average_adapters([made["a"], made["b"]], one, rank=1)
    assert json.loads((one / "adapter_config.json").read_text())["r"] == 1
    plain, mean, cut_full, cut_one = _weights(base), _weights(base, exact), _weights(base, full), _weights(base, one)
    changed = [k for k in plain if not torch.equal(mean[k], plain[k]) and mean[k].dim() == 2]
    assert changed
    for key in changed:
        torch.testing.assert_close(cut_full[key], mean[key], atol=1e-5, rtol=1e-4)
        assert torch.linalg.matrix_rank(cut_one[key] - plain[key], atol=1e-5) == 1
    assert any(not torch.allclose(cut_one[k], mean[k], atol=1e-5) for k in changed)
    assert average_module.main([str(made["a"]), str(made["b"]), "--output", str(tmp_path / "seven"), "--rank", "7"]) == 2
    assert "between 1 and the members' summed rank 6" in capsys.readouterr().err


def test_a_rank_out_of_range_is_refused_before_any_weights_are_read_or_folder_made(runs, capsys, monkeypatch):
    import safetensors.torch

    def no_reading(*_args, **_kwargs):
        raise AssertionError("weights read before --rank was checked")

    monkeypatch.setattr(safetensors.torch, "load_file", no_reading)
    _, made, tmp_path = runs
    for rank, said in (("0", "--rank must be at least 1, not 0"), ("7", "between 1 and the members' summed rank 6")):
        out = tmp_path / f"refused-{rank}"
        assert average_module.main([str(made["a"]), str(made["b"]), "--output", str(out), "--rank", rank]) == 2
        assert said in capsys.readouterr().err
    assert not (tmp_path / "refused-0").exists()


def _copy(source, target, edit=None):
    shutil.copytree(source, target)
    if edit:
        edit(target)
    return target


def test_members_that_cannot_be_averaged_are_refused_in_one_line(runs, capsys):
    base, made, tmp_path = runs

    def other_split(d):
        (d / "split.json").write_text("{}")

    def other_budget(d):
        recipe = json.loads((d / "rewriter.json").read_text())
        recipe["prompt"]["max_input_tokens"] = 99
        (d / "rewriter.json").write_text(json.dumps(recipe))

    def rslora(d):
        config = json.loads((d / "adapter_config.json").read_text())
        config["use_rslora"] = True
        (d / "adapter_config.json").write_text(json.dumps(config))

    cases = {
        "split": (_copy(made["b"], tmp_path / "x-split", other_split), "holds out other turns"),
        "recipe": (_copy(made["b"], tmp_path / "x-recipe", other_budget), "another recipe (rewriter.json) than "),
        "rslora": (_copy(made["b"], tmp_path / "x-rslora", rslora), "use_rslora"),
        "missing": (tmp_path / "nowhere", "not an adapter"),
    }
    errors = {}
    for name, (other, message) in cases.items():
        assert average_module.main([str(made["a"]), str(other), "--output", str(tmp_path / f"out-{name}")]) == 2, name
        errors[name] = err = capsys.readouterr().err
        assert err.startswith("error: ") and message in err and err.count("\n") == 1, (name, err)
    # A recipe refusal names the setting that differs, and both values.
    budget = json.loads((made["a"] / "rewriter.json").read_text())["prompt"]["max_input_tokens"]
    assert f"prompt.max_input_tokens {budget!r} vs 99;" in errors["recipe"]
    assert average_module.main([str(made["a"]), "--output", str(tmp_path / "out-one")]) == 2
    assert "at least two" in capsys.readouterr().err
