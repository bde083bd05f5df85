"""Bad input to the commands line by line as a user gives it: a folder, a
binary file or an empty one where a file is expected, each one line naming
the file and what to do, exit status 2, before any model loads."""

from __future__ import annotations

import pytest

from assistant.kernel import DataFormatError, json_lines
from rewriting.data import load_examples
from rewriting.rewrite import main as rewrite_main


def _one_error_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: "), err
    return err.strip()


def test_a_folder_given_as_a_jsonl_file_is_named_as_a_folder(tmp_path, capsys):
    # It said "cannot read it as UTF-8 text ([Errno 21] Is a directory: 'PATH')": the path twice, and not the advice.
    with pytest.raises(DataFormatError) as info:
        list(json_lines(tmp_path))
    assert str(info.value) == f"{tmp_path} is a folder; give a file in it"
    assert rewrite_main(["--input", str(tmp_path), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert _one_error_line(capsys) == f"error: {tmp_path} is a folder; give a file in it"


def test_a_binary_jsonl_line_gets_the_advice_a_binary_text_file_gets(tmp_path, capsys):
    # It said "cannot read it as UTF-8 text ('utf-8' codec can't decode byte 0xe7 in position 0: ...)".
    binary = tmp_path / "in.jsonl"
    binary.write_bytes(b'{"id": "1", "question": "Who?"}\n\xe7\xff\x00\n')
    with pytest.raises(DataFormatError) as info:
        list(json_lines(binary))
    assert str(info.value) == f"{binary}, line 2 is not UTF-8 text; save it as UTF-8 and try again."
    assert rewrite_main(["--input", str(binary), "--output", str(tmp_path / "out.jsonl")]) == 2
    assert _one_error_line(capsys) == f"error: {binary}, line 2 is not UTF-8 text; save it as UTF-8 and try again."


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_rewriting_an_input_with_no_questions_is_refused_and_writes_nothing(tmp_path, capsys, text):
    # It wrote an empty output and "wrote 0 rewrites ...", exit status 0.
    given, output = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    given.write_text(text)
    assert rewrite_main(["--input", str(given), "--output", str(output)]) == 2
    assert _one_error_line(capsys) == (f'error: {given} holds no questions; give a JSONL of {{"id", "question", '
                                       '"history"} lines')
    assert not output.exists()


@pytest.mark.parametrize("text", ["", "  \n", "\ufeff"])
def test_an_empty_data_file_is_said_to_be_empty(tmp_path, text):
    # It said "not a UTF-8 JSON file: Expecting value: line 1 column 1 (char 0)".
    empty = tmp_path / "empty.json"
    empty.write_text(text, encoding="utf-8")
    with pytest.raises(DataFormatError) as info:
        load_examples(empty)
    assert str(info.value) == f"{empty} is empty; give a QReCC, CANARD or CAsT file (a JSON list, or JSON Lines)"
