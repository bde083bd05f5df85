"""Tests for an adapter directory's files: the typed recipe (rewriter.json)
and the one-line errors for damaged files, on copies of the committed adapter.

The damaged files are found before the base model is read, so these tests
load no model.
"""

from __future__ import annotations

import json
import shutil

import pytest

from assistant.kernel import ModelNotFoundError
from rewriting import RECIPE_FILE, TRAINED_ADAPTER, PromptConfig, Recipe, load_rewriter

pytestmark = pytest.mark.skipif(not (TRAINED_ADAPTER / "adapter_config.json").is_file(), reason="missing prerequisite: the trained adapter (restore rewriting/adapters/ from git)")


@pytest.fixture
def adapter_copy(tmp_path):
    copy = tmp_path / "adapter"
    shutil.copytree(TRAINED_ADAPTER, copy)
    return copy


def test_the_committed_recipe_loads_and_is_written_back_byte_for_byte(tmp_path):
    recipe = Recipe.read(TRAINED_ADAPTER)
    assert recipe == Recipe(base="smollm2", prompt_format="plain", prompt=PromptConfig(max_input_tokens=256), copy=False, end_token="<|im_start|>")
    recipe.write(tmp_path)
    assert (tmp_path / RECIPE_FILE).read_bytes() == (TRAINED_ADAPTER / RECIPE_FILE).read_bytes()


def test_a_recipe_with_a_copy_head_round_trips(tmp_path):
    recipe = Recipe(base="some/model", prompt=PromptConfig(max_answer_tokens=12), copy=True, copy_dim=64)
    recipe.write(tmp_path)
    assert json.loads((tmp_path / RECIPE_FILE).read_text())["copy_head"] == {"copy_dim": 64}
    assert Recipe.read(tmp_path) == recipe


def test_a_recipe_names_its_end_token_only_when_known(tmp_path):
    Recipe(end_token="<|im_end|>").write(tmp_path)
    assert json.loads((tmp_path / RECIPE_FILE).read_text())["end_token"] == "<|im_end|>"
    assert Recipe.read(tmp_path) == Recipe(end_token="<|im_end|>")
    assert "end_token" not in Recipe().to_json()  # files from before it was saved are written back as they were


def test_no_recipe_file_reads_as_none(tmp_path):
    assert Recipe.read(tmp_path) is None


def test_an_older_recipe_without_optional_keys_loads(tmp_path):
    (tmp_path / RECIPE_FILE).write_text('{"base": "smollm2", "copy": true}')
    assert Recipe.read(tmp_path) == Recipe(copy=True, copy_dim=128)


def _damage_message(directory) -> str:
    with pytest.raises(ModelNotFoundError) as caught:
        load_rewriter(str(directory))
    message = str(caught.value)
    assert "\n" not in message
    assert "restore it from git" in message and "retrain" in message and "--rewriter prompted" in message
    return message


@pytest.mark.parametrize(
    "text, what",
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"base": "smollm2", "prompt": {"max_input_tokens": "many"}}', "'prompt' budgets"),
        ('{"base": "smollm2", "copy": "yes"}', "'copy' must be true or false"),
        ('{"base": "smollm2", "temperature": 0.5}', "unknown key(s) temperature"),
    ],
)
def test_a_damaged_recipe_is_one_line_naming_it(adapter_copy, text, what):
    (adapter_copy / RECIPE_FILE).write_text(text)
    message = _damage_message(adapter_copy)
    assert str(adapter_copy / RECIPE_FILE) in message and what in message


@pytest.mark.parametrize(
    "text, what",
    [
        ('{"peft_type": "LORA", "r": 16', "not JSON"),
        ('"LORA"', "expected a JSON object"),
        ('{"peft_type": "LORA"}', "missing key(s) r, target_modules"),
    ],
)
def test_a_damaged_adapter_config_is_one_line_naming_it(adapter_copy, text, what):
    (adapter_copy / "adapter_config.json").write_text(text)
    message = _damage_message(adapter_copy)
    assert str(adapter_copy / "adapter_config.json") in message and what in message


@pytest.mark.parametrize("keep", [0.5, 0.0001])
def test_truncated_adapter_weights_are_one_line_naming_them(adapter_copy, keep):
    weights = adapter_copy / "adapter_model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[: int(len(data) * keep)])
    message = _damage_message(adapter_copy)
    assert str(weights) in message and "not a whole safetensors file" in message


def test_a_missing_copy_head_is_one_line_naming_it(adapter_copy):
    Recipe(copy=True).write(adapter_copy)
    message = _damage_message(adapter_copy)
    assert str(adapter_copy / "copy_head.safetensors") in message and "missing" in message


def test_the_cli_ends_a_damaged_adapter_in_one_line_exit_2(adapter_copy, tmp_path, capsys):
    from rewriting.rewrite import main

    weights = adapter_copy / "adapter_model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "question": "Why?", "history": ["Who?", "Ada."]}) + "\n")
    assert main(["--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--model", str(adapter_copy)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and str(weights) in err
    assert not (tmp_path / "out.jsonl").exists()
