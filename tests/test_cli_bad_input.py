"""The commands as a user meets them: bad input (a folder, a binary file or
an empty one where a file is expected) is one line naming the file and what
to do, exit status 2, before any model loads; the terminal chat typed at a
terminal says it is ready and prompts."""

from __future__ import annotations

import io
import json

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


def test_a_jsonl_line_that_is_no_text_gets_the_check_a_text_file_gets(tmp_path):
    # A NUL was "line 2: not valid JSON (Invalid control character at)", and
    # an 8-bit file read by a UTF-16 mark it never had was read as characters
    # no text holds: an uploaded .txt was refused for both.
    nul = tmp_path / "nul.jsonl"
    nul.write_bytes(b'{"id": "1"}\n{"id": "2", "q": "a\x00b"}\n')
    with pytest.raises(DataFormatError) as info:
        list(json_lines(nul))
    assert str(info.value) == (f"{nul}, line 2 looks like a binary file (it holds a NUL character), not text "
                               "(JSON holds a NUL only written as \\u0000).")
    # The ASCII after "ÿþ" (UTF-16's mark, FF FE) pairs into ideographs, two
    # unassigned among eighteen, too few to tell: its ASCII words tell it.
    latin1 = tmp_path / "latin1.jsonl"
    latin1.write_bytes('ÿþ{"id": "1", "q": "Who grows teas"}\r\n'.encode("latin-1"))
    assert len(latin1.read_bytes()) % 2 == 0  # an odd length no UTF-16 decoder reads: refused before
    with pytest.raises(DataFormatError, match=r"latin1.jsonl begins as UTF-16 text but is not \(line 1 reads as no text\)"):
        list(json_lines(latin1))


def test_a_utf16_jsonl_with_a_private_use_character_on_a_later_line_is_read(tmp_path):
    # Each line was checked for the file's encoding: PowerShell's UTF-16 of a
    # list with Word's Symbol-font bullet (U+F0B7), a Nerd Font glyph
    # (U+E0A0) or a letter newer than Python's tables (U+0CF3) on its second
    # line was refused as "begins as UTF-16 text but is not (line 2 ...)".
    for odd in ("\uf0b7", "\ue0a0", "\u0cf3", "\ue000\ue001"):
        records = [{"id": "1", "contents": "plain"}, {"id": "2", "contents": f"{odd} first item of the list"}]
        wide = tmp_path / "wide.jsonl"
        wide.write_bytes("\r\n".join(json.dumps(r, ensure_ascii=False) for r in records).encode("utf-16"))
        assert [record for _, record in json_lines(wide)] == records, ascii(odd)
    # What is text still reads: JSON's escaped NUL, UTF-16 in any script.
    kept = tmp_path / "kept.jsonl"
    records = [{"id": "1", "q": "a\u0000b"}, {"id": "2", "q": "北京是中国的首都，人口众多。"}, {"id": "3", "q": "Привет"}]
    kept.write_bytes("".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in records).encode("utf-16"))
    assert [record for _, record in json_lines(kept)] == records


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


class _Typed(io.StringIO):
    """Lines typed at a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("typed", [True, False])
def test_the_terminal_chat_says_it_is_ready_and_prompts_only_at_a_terminal(tiny_index, monkeypatch, capsys, typed):
    # At a terminal it said nothing once loaded: no sign it waited for a question, nor how to end it.
    from assistant import chat

    lines = "Who was Ada Lovelace?\n\n"
    monkeypatch.setattr("sys.stdin", _Typed(lines) if typed else io.StringIO(lines))
    assert chat.main(["--json", "--rewriter", "original", "--index", str(tiny_index)]) == 0
    out, err = capsys.readouterr()
    first, empty = [json.loads(line) for line in out.splitlines()]  # stdout: the turns alone, either way
    assert first["sources"][0]["id"] == "ada" and empty == {"question": "", "error": "Please type a question."}
    ready = "Ready: type a question and press Enter; Ctrl-D (Ctrl-Z, Enter on Windows) ends the chat.\n"
    if typed:
        assert err.endswith(ready + "> > > \n")  # a prompt before each line and before the end
    else:
        assert "Ready" not in err and "> " not in err


def test_coqa_names_an_empty_file_a_folder_and_text_that_is_no_json(tmp_path, capsys):
    # They said "cannot read CoQA file X: Expecting value: line 1 column 1 (char 0)" and "...: Is a directory".
    from eval.coqa import main as coqa_main

    empty, garbage = tmp_path / "empty.json", tmp_path / "notes.json"
    empty.write_text("\n")
    garbage.write_text("not json\n")
    layout = 'coqa-dev-v1.0.json: {"data": [stories]}'
    for data, said in [(empty, f"{empty} is empty; give the CoQA file ({layout})"),
                       (tmp_path, f"{tmp_path} is a folder; give the CoQA file in it"),
                       (garbage, f"{garbage} is not JSON (Expecting value: line 1 column 1 (char 0)); give the "
                                 f"CoQA file ({layout})")]:
        assert coqa_main(["--data", str(data), "--pred", str(empty)]) == 2
        assert _one_error_line(capsys) == f"error: {said}"


def test_a_folder_given_as_a_split_or_a_run_is_named_as_a_folder(tmp_path, capsys):
    # They said "X: cannot read it (Is a directory)" and "cannot read the run X: Is a directory".
    from eval.retrieval import main as retrieval_main
    from eval.rewrites import main as rewrites_main

    assert rewrites_main(["export", "--split", str(tmp_path), "--dir", str(tmp_path / "out")]) == 2
    assert _one_error_line(capsys) == f"error: {tmp_path} is a folder; give the split.json in it"
    data = tmp_path / "2021_manual_evaluation_topics_v1.0.json"  # one CAsT 2021 topic of one judged turn
    data.write_text(json.dumps([{"number": 106, "turn": [
        {"number": 1, "raw_utterance": "What is a quokka?", "manual_rewritten_utterance": "What is a quokka?",
         "passage": "The quokka is a small wallaby."}]}]))
    assert retrieval_main(["--data", str(data), "--score-run", str(tmp_path)]) == 2
    assert _one_error_line(capsys) == f"error: {tmp_path} is a folder; give the run file in it"


def test_a_labels_setting_that_names_a_folder_is_refused_not_taken_for_no_labels(tmp_path, monkeypatch, capsys):
    # `python -m eval.rewrites` said "No labels collected yet", exit 0: the app cannot append to a folder either.
    from eval.rewrites import main as rewrites_main

    monkeypatch.setenv("CONVQA_LABELS", str(tmp_path))
    assert rewrites_main([]) == 2
    assert _one_error_line(capsys) == (f"error: the labels file {tmp_path} is a folder; set CONVQA_LABELS to a file "
                                       "path (the app appends each judgement to it)")
    monkeypatch.setenv("CONVQA_LABELS", str(tmp_path / "labels.jsonl"))  # not there yet: the advice, exit 0
    assert rewrites_main([]) == 0 and "No labels collected yet" in capsys.readouterr().out
