"""Tests for rewriting.data: exact values read from the shared files, plus
malformed files written to tmp_path. Shared-data tests skip when it is absent."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from assistant.kernel import DataFormatError  # noqa: E402
from rewriting.data import (
    CAST_HISTORY_WORDS,
    RewriteExample,
    data_dir,
    detect_format,
    load_examples,
    load_names,
    load_quretec,
    resolved_name,
    split_by_conversation,
    with_histories,
    with_swapped_names,
)

QRECC_TEST = "qrecc/qrecc_test_sample.json"
QRECC_SAMPLE = "qrecc/qrecc_train_sample_1500.json"
CANARD = "canard/dev.json"
CAST2020 = "cast2020/2020_manual_evaluation_topics_v1.0.json"
CAST2020_ANNOTATED = "cast2020/automatic_evaluation_topics_annotated_v1.1.json"
CAST2021 = "cast2021/2021_manual_evaluation_topics_v1.0.json"
CAST2022 = "cast2022/2022_evaluation_topics_flattened_duplicated_v1.0.json"

# file: (examples, examples after the first turn, conversations, source)
COUNTS = {
    QRECC_TEST: (53, 41, 12, "qrecc"),
    QRECC_SAMPLE: (1495, 1224, 943, "qrecc"),
    CANARD: (3430, 2940, 490, "canard"),
    CAST2020: (216, 191, 25, "cast2020"),
    CAST2021: (239, 213, 26, "cast2021"),
    CAST2022: (284, 234, 50, "cast2022"),
}

_cache: dict[str, list[RewriteExample]] = {}


def shared(rel: str):
    path = data_dir() / rel
    if not path.exists():
        pytest.skip(f"missing prerequisite: shared data file {path}")
    return path


def load(rel: str) -> list[RewriteExample]:
    if rel not in _cache:
        _cache[rel] = load_examples(shared(rel))
    return _cache[rel]


def by_id(rel: str) -> dict[str, RewriteExample]:
    return {ex.id: ex for ex in load(rel)}


def test_data_dir_honours_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CONVQA_DATA", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.delenv("CONVQA_DATA")
    repo = Path(__file__).resolve().parents[1]
    assert data_dir() == repo.parent / "shared" / "data"


# --- counts and exact examples ------------------------------------------------


@pytest.mark.parametrize("rel", sorted(COUNTS))
def test_counts_per_file(rel):
    total, later, conversations, source = COUNTS[rel]
    examples = load(rel)
    assert len(examples) == total
    assert sum(ex.turn > 1 for ex in examples) == later
    assert len({ex.conversation_id for ex in examples}) == conversations
    assert {ex.source for ex in examples} == {source}
    assert len({ex.id for ex in examples}) == total  # ids are unique


@pytest.mark.parametrize("rel", sorted(COUNTS))
def test_history_alternates(rel):
    """Every history is whole Q/A pairs, one per earlier turn, and its questions
    (and, where the data has them, answers) are the earlier turns' own texts."""
    examples = load(rel)
    turns = {(ex.conversation_id, ex.turn): ex for ex in examples}
    checked = 0
    for ex in examples:
        assert len(ex.history) == 2 * (ex.turn - 1), ex.id
        assert all(isinstance(t, str) for t in ex.history)
        for k in range(1, ex.turn):
            earlier = turns.get((ex.conversation_id, k))
            if earlier is None:
                continue
            # official QReCC Context holds earlier rewrites (see test below)
            asked = earlier.rewrite if rel == QRECC_TEST else earlier.question
            assert ex.history[2 * k - 2] == asked, ex.id
            if ex.source != "cast2022":  # 2022 answers are checked below
                expected = " ".join(earlier.answer.split()[:CAST_HISTORY_WORDS])
                assert ex.history[2 * k - 1] in (earlier.answer, expected), ex.id
            checked += 1
    assert checked > 0


def test_qrecc_official_example():
    ex = by_id(QRECC_TEST)["qrecc:1:2"]
    assert ex.source == "qrecc" and ex.conversation_id == "1" and ex.turn == 2
    assert ex.question == "What are the educational requirements required to become one?"
    assert ex.rewrite == "What are the educational requirements required to become a physician's assistant?"
    assert ex.history == (
        "What is a physician's assistant?",
        "physician assistants are medical providers who are licensed to diagnose and treat "
        "illness and disease and to prescribe medication for patients",
    )
    assert ex.answer.startswith("Complete your bachelor's degree")
    assert ex.title == "" and ex.systems == {}


def test_qrecc_official_context_holds_rewrites():
    """The docstring's claim: official Context questions are earlier rewrites."""
    examples = load(QRECC_TEST)
    turns = {(ex.conversation_id, ex.turn): ex for ex in examples}
    pairs = [
        (ex.history[2 * k - 2], turns[ex.conversation_id, k])
        for ex in examples
        for k in range(1, ex.turn)
        if (ex.conversation_id, k) in turns
    ]
    differing = [(text, earlier) for text, earlier in pairs if earlier.question != earlier.rewrite]
    assert len(pairs) == 143 and len(differing) == 110
    assert all(text == earlier.rewrite for text, earlier in differing)


def test_qrecc_sample_variant_example():
    ex = by_id(QRECC_SAMPLE)["qrecc:1490:4"]
    assert ex.question == "What happened in 1954?"
    assert ex.rewrite == "What happened to Stan Musial in 1954?"
    assert ex.answer.startswith("Stan Musial accomplished another historical feat on May 2, 1954")
    assert len(ex.history) == 6
    assert ex.history[0] == "What happened to Stan Musial in 1950?"
    assert ex.history[2] == "What sport did he play?"
    assert ex.history[5].startswith("Stan Musial also shares the major league record")


def test_qrecc_sample_newcontext_holds_raw_questions():
    """The docstring's claim: NewContext questions are the raw questions, not rewrites."""
    examples = load(QRECC_SAMPLE)
    turns = {(ex.conversation_id, ex.turn): ex for ex in examples}
    raw = differs_from_rewrite = 0
    for ex in examples:
        for k in range(1, ex.turn):
            earlier = turns.get((ex.conversation_id, k))
            if earlier is not None:
                raw += ex.history[2 * k - 2] == earlier.question
                differs_from_rewrite += earlier.question != earlier.rewrite
    assert raw == 746 and differs_from_rewrite == 496
    # Missing answers stay as "" so the alternation holds.
    assert sum(t == "" for ex in examples for t in ex.history[1::2]) == 305


def test_canard_example_titles_and_answers():
    examples = by_id(CANARD)
    first = examples["canard:C_2d211835213b45588ad5ca868ce7fabd_0:1"]
    second = examples["canard:C_2d211835213b45588ad5ca868ce7fabd_0:2"]
    assert first.history == () and first.title == "Frank Zappa: Disbandment"
    assert second.question == "When did they disband?"
    assert second.rewrite == "When did Zappa and the Mothers of Invention disband?"
    assert second.history == ("What group disbanded?", "Zappa and the Mothers of Invention")
    # CANARD stores a turn's answer only in the next turn's history.
    assert first.answer == "Zappa and the Mothers of Invention"
    assert sum(bool(ex.answer) for ex in examples.values()) == 2940
    # The rewriter's input leads with the title; a first turn has none.
    assert second.context == ("Frank Zappa: Disbandment", "", *second.history)
    assert first.context == ()


def test_context_is_the_history_where_there_is_no_title():
    qrecc = [e for e in load_examples(data_dir() / "qrecc" / "qrecc_test_sample.json") if e.history]
    assert qrecc and all(e.context == e.history for e in qrecc)


def test_cast2020_example_and_automatic_rewrite():
    ex = by_id(CAST2020)["cast2020:81:2"]
    assert ex.question == "Now it stopped working. Why?"
    assert ex.rewrite == "Now my garage door opener stopped working. Why?"
    assert ex.history == ("How do you know when your garage door opener is going bad?", "")
    assert ex.systems == {"cast_automatic": "Why did garage door opener stop working?"}
    assert ex.answer == ""


def test_cast2021_passages_clipped_in_history_only():
    examples = by_id(CAST2021)
    first, second = examples["cast2021:107:1"], examples["cast2021:107:2"]
    assert second.question == "Which is cheaper: concrete or asphalt?"
    assert second.history[0] == "How do I build a cheap driveway?"
    assert len(first.answer.split()) > CAST_HISTORY_WORDS  # the full passage is kept
    assert second.history[1] == " ".join(first.answer.split()[:CAST_HISTORY_WORDS])
    assert second.history[1].startswith("Types of Driveways")
    assert "cast_automatic" in second.systems


def test_cast2022_paths_have_unique_ids():
    examples = load(CAST2022)
    tree = [ex for ex in examples if ex.conversation_id.startswith("133:")]
    assert [ex.id for ex in tree][:5] == [
        "cast2022:133:1-7:1-1",
        "cast2022:133:1-7:1-3",
        "cast2022:133:1-7:1-5",
        "cast2022:133:1-7:1-7",
        "cast2022:133:3-8:1-1",
    ]
    a, b = by_id(CAST2022)["cast2022:133:1-7:1-5"], by_id(CAST2022)["cast2022:133:3-8:1-5"]
    assert a.question == b.question and a.turn == b.turn == 3
    # The same turn got a passage in one branch and a clarifying question in the other.
    assert a.answer.startswith("Well there are a lot of recipes")
    assert b.answer == "What beauty product would you like to make?"
    after = by_id(CAST2022)["cast2022:133:3-8:3-2"]
    assert after.history[-1] == "What beauty product would you like to make?"
    assert Counter(ex.turn == 1 for ex in examples)[True] == 50
    assert sum(ex.answer == "" for ex in examples) == 6


def test_annotated_cast_file_warns_about_turns_without_rewrite():
    with pytest.warns(UserWarning, match="skipped 5 of 217 turns"):
        examples = load_examples(shared(CAST2020_ANNOTATED))
    assert len(examples) == 212
    # a skipped first turn still opens the next turn's history
    ex = next(e for e in examples if e.conversation_id == "94")
    assert ex.turn == 2 and ex.history == ("How did snowboarding begin?", "")


def test_quretec_ids_map_to_cast2020_turns():
    turns = by_id(CAST2020)
    quretec = load_quretec(shared("cast2020/quretec/QuReTeC_QnA.tsv"))
    human = load_quretec(shared("cast2020/quretec/Human.tsv"))
    assert set(quretec) == set(human) == set(turns)
    assert quretec["cast2020:81:2"] == "Now it stopped working. Why? door garage light opener"
    # Human.tsv CSV-quotes one query; read right, all 216 equal the manual rewrites.
    assert all(human[k] == turns[k].rewrite for k in turns)
    assert sum(quretec[k] == turns[k].rewrite for k in turns) == 26


# --- detection ----------------------------------------------------------------


@pytest.mark.parametrize(
    "rel, fmt",
    [(QRECC_TEST, "qrecc"), (QRECC_SAMPLE, "qrecc"), (CANARD, "canard"), (CAST2020, "cast"),
     (CAST2021, "cast"), (CAST2022, "cast")],
)
def test_detect_format(rel, fmt):
    assert detect_format(shared(rel)) == fmt


def test_multiple_refs_is_rejected():
    path = shared("canard/multiple_refs.json")
    with pytest.raises(DataFormatError, match="multiple_refs.json.*record 0.*not a turn"):
        detect_format(path)
    with pytest.raises(DataFormatError, match="multiple_refs"):
        load_examples(path)


def test_automatic_cast_topics_are_rejected():
    with pytest.raises(DataFormatError, match="no turn has a 'manual_rewritten_utterance'"):
        load_examples(shared("cast2020/2020_automatic_evaluation_topics_v1.0.json"))


# --- splitting ----------------------------------------------------------------


def test_split_is_deterministic_and_disjoint():
    examples = load(CANARD)
    train, dev = split_by_conversation(examples)
    assert (train, dev) == split_by_conversation(list(examples))
    assert {e.conversation_id for e in train}.isdisjoint({e.conversation_id for e in dev})
    assert sorted(e.id for e in train + dev) == sorted(e.id for e in examples)
    # sha256-based, so these hold on every machine and Python run
    assert (len(train), len(dev), len({e.conversation_id for e in dev})) == (2777, 653, 91)
    other_train, _ = split_by_conversation(examples, seed=1)
    assert other_train != train
    # a conversation's side does not depend on the other examples
    assert split_by_conversation(dev)[1] == dev


def test_rewritten_histories_hold_the_earlier_turns_rewrites_and_the_same_answers():
    examples = load(CANARD)
    rewrites = {(e.conversation_id, e.turn): e.rewrite for e in examples}
    rewritten = with_histories(examples, "rewritten")
    assert [e.id for e in rewritten] == [e.id for e in examples]
    changed = 0
    for asked, new in zip(examples, rewritten):
        assert (new.question, new.rewrite, new.title) == (asked.question, asked.rewrite, asked.title)
        assert new.history[1::2] == asked.history[1::2]  # answers as they were
        assert new.history[0::2] == tuple(rewrites[(asked.conversation_id, k + 1)] for k in range(len(asked.history) // 2))
        changed += new.history != asked.history
    assert changed > len(examples) // 2  # CANARD's follow-ups are mostly rewritten
    both = with_histories(examples, "both")
    assert both[: len(examples)] == examples and both[len(examples) :] == [r for e, r in zip(examples, rewritten) if r != e]
    assert with_histories(examples, "asked") == examples
    with pytest.raises(ValueError, match="asked, rewritten, both"):
        with_histories(examples, "rewrites")


def test_a_turn_missing_from_the_file_keeps_its_question_in_histories():
    ex = by_id(QRECC_SAMPLE)
    # The sample holds some turns of each conversation only: a history
    # question whose turn is absent stays as asked.
    kept = [e for e in with_histories(load(QRECC_SAMPLE), "rewritten") if e.history and (e.source, e.conversation_id, 1) not in
            {(x.source, x.conversation_id, x.turn) for x in ex.values()}]
    assert kept and all(e.history[0] == ex[e.id].history[0] for e in kept)


def test_split_fraction_bounds():
    examples = load(QRECC_TEST)
    assert split_by_conversation(examples, dev_fraction=0.0) == (examples, [])
    assert split_by_conversation(examples, dev_fraction=1.0) == ([], examples)
    with pytest.raises(ValueError):
        split_by_conversation(examples, dev_fraction=1.5)


def test_split_keeps_cast2022_trees_whole():
    train, dev = split_by_conversation(load(CAST2022))
    topic = lambda e: e.conversation_id.split(":")[0]  # noqa: E731
    assert dev and {topic(e) for e in train}.isdisjoint({topic(e) for e in dev})


# --- malformed files ----------------------------------------------------------


def write(tmp_path, content, name="data.json"):
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


def qrecc_record(turn=1, **changes):
    record = {
        "Context": ["q", "a"] * (turn - 1),
        "Question": "What is it?",
        "Rewrite": "What is a cat?",
        "Answer": "An animal.",
        "Conversation_no": 7,
        "Turn_no": turn,
    }
    record.update(changes)
    return record


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not a UTF-8 JSON file"),
        ({"Question": "x"}, "expected a JSON list of records, found an object"),
        ([], "the list of records is empty"),
        ([42], "record 0 is a number"),  # it said "a int"
        ([None], "record 0 is null, expected an object"),
        ([{"foo": 1}], r"record 0 has keys \['foo'\], which match no known format"),
    ],
)
def test_malformed_files(tmp_path, content, message):
    path = write(tmp_path, content)
    with pytest.raises(DataFormatError, match=message) as info:
        load_examples(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"Rewrite": None}, r"record 2: 'Rewrite' should be a str"),
        ({"Turn_no": True}, r"record 2: 'Turn_no' should be a int"),
        ({"Context": ["q", "a", "q"]}, r"record 2: 'Context' has 3 texts"),
        ({"Context": ["q", 3]}, r"record 2: 'Context' should be a list of strings"),
    ],
)
def test_malformed_qrecc_record_is_named(tmp_path, bad, message):
    records = [qrecc_record(1), qrecc_record(2), qrecc_record(3, **bad)]
    with pytest.raises(DataFormatError, match=message):
        load_examples(write(tmp_path, records))


def test_missing_key_is_named(tmp_path):
    records = [qrecc_record(1), qrecc_record(2)]
    del records[1]["Rewrite"]
    with pytest.raises(DataFormatError, match=r"record 1: missing key 'Rewrite'"):
        load_examples(write(tmp_path, records))


def test_duplicate_turn_is_an_error(tmp_path):
    with pytest.raises(DataFormatError, match=r"'qrecc:7:1' occurs twice \(examples 0 and 1\)"):
        load_examples(write(tmp_path, [qrecc_record(1), qrecc_record(1)]))


def test_empty_rewrite_is_skipped_with_a_count(tmp_path):
    records = [qrecc_record(1), qrecc_record(2, Rewrite="  "), qrecc_record(3)]
    with pytest.warns(UserWarning, match="skipped 1 of 3 turns"):
        examples = load_examples(write(tmp_path, records))
    assert [e.id for e in examples] == ["qrecc:7:1", "qrecc:7:3"]


def test_turn_number_mismatch_warns_and_keeps_history(tmp_path):
    with pytest.warns(UserWarning, match="in 1 records the history"):
        (ex,) = load_examples(write(tmp_path, [qrecc_record(3, Context=["q", "a"])]))
    assert ex.history == ("q", "a") and ex.turn == 3


def test_explicit_format_mismatch_and_unknown_format(tmp_path):
    path = write(tmp_path, [qrecc_record(1)])
    assert detect_format(path) == "qrecc"
    with pytest.raises(DataFormatError, match="read as 'canard' but record 0 is in the 'qrecc' format"):
        load_examples(path, fmt="canard")
    with pytest.raises(ValueError):
        load_examples(path, fmt="coqa")


def test_missing_file_or_a_folder_is_named_plainly(tmp_path):
    # It said "cannot read the file: [Errno 2] No such file or directory: 'PATH'" (the path twice, errno jargon).
    absent = tmp_path / "absent.json"
    with pytest.raises(DataFormatError) as info:
        load_examples(absent)
    assert str(info.value) == f"{absent}: no such file"
    with pytest.raises(DataFormatError) as info:
        load_examples(tmp_path)
    assert str(info.value) == f"{tmp_path} is a folder; give a file in it"


def test_json_lines_are_read_as_records(tmp_path):
    # One record a line was refused: "not a UTF-8 JSON file: Extra data: line 2 column 1".
    lines = [qrecc_record(1), qrecc_record(2, Question="Where does it live?")]
    path = write(tmp_path, "".join(json.dumps(r) + "\n" for r in lines), "turns.jsonl")
    assert [e.question for e in load_examples(path)] == ["What is it?", "Where does it live?"]
    one = write(tmp_path, json.dumps(lines[0]) + "\n", "one.jsonl")
    assert [e.question for e in load_examples(one)] == ["What is it?"]
    bad = write(tmp_path, json.dumps(lines[0]) + "\n{not json\n", "bad.jsonl")
    with pytest.raises(DataFormatError, match=r"bad\.jsonl, line 2: not valid JSON"):
        load_examples(bad)
    # Named .json, a record a line is JSON Lines still; a pretty-printed list
    # with a stray "]" keeps the decoder's line and column (was "line 1: not valid JSON").
    named = write(tmp_path, "".join(json.dumps(r) + "\n" for r in lines), "turns.json")
    assert len(load_examples(named)) == 2
    stray = write(tmp_path, json.dumps(lines, indent=2) + "\n]\n", "stray.json")
    with pytest.raises(DataFormatError) as info:
        load_examples(stray)
    last = json.dumps(lines, indent=2).count("\n") + 2
    assert str(info.value) == f"{stray}: not a UTF-8 JSON file: Extra data: line {last} column 1 (char {len(json.dumps(lines, indent=2)) + 1})"


def test_cast_malformed(tmp_path):
    turn = {"number": 1, "raw_utterance": "Hi?", "manual_rewritten_utterance": "Hi?"}
    with pytest.raises(DataFormatError, match="topic number 12 is not a TREC CAsT 2020-2022 topic"):
        load_examples(write(tmp_path, [{"number": 12, "turn": [turn]}]))
    broken = {"number": 2, "manual_rewritten_utterance": "x"}
    with pytest.raises(DataFormatError, match=r"topic record 1, turn 1: missing key 'raw_utterance'"):
        load_examples(write(tmp_path, [{"number": 81, "turn": [turn]}, {"number": 82, "turn": [turn, broken]}]))
    with pytest.raises(DataFormatError, match="topic 83 has no turns"):
        load_examples(write(tmp_path, [{"number": 83, "turn": []}]))


def test_canard_small_file(tmp_path):
    records = [
        {"History": ["Ada", "Life"], "QuAC_dialog_id": "D", "Question": "Who was she?",
         "Question_no": 1, "Rewrite": "Who was Ada?"},
        {"History": ["Ada", ""], "QuAC_dialog_id": "D", "Question": "And then?",
         "Question_no": 2, "Rewrite": "What did Ada do then?"},
    ]
    with pytest.raises(DataFormatError, match=r"record 1: 'History' has 1 texts"):
        load_examples(write(tmp_path, [records[0], {**records[1], "History": ["Ada", "", "q"]}]))
    records[1]["History"] += ["Who was she?", "A poet's daughter."]
    first, second = load_examples(write(tmp_path, records))
    assert first.answer == "A poet's daughter." and second.answer == ""
    assert second.title == "Ada" and second.history == ("Who was she?", "A poet's daughter.")


def test_quretec_malformed(tmp_path):
    with pytest.raises(DataFormatError, match="expected a TSV header"):
        load_quretec(write(tmp_path, "a\tb\n1\t2\n", "x.tsv"))
    header = "conversation_id\tturn_id\tid\tquery\toriginal\n"
    with pytest.raises(DataFormatError, match="line 2: 3 fields"):
        load_quretec(write(tmp_path, header + "81\t1\t81_1\n", "x.tsv"))
    with pytest.raises(DataFormatError, match="no rows after the header"):
        load_quretec(write(tmp_path, header, "x.tsv"))
    ok = load_quretec(write(tmp_path, header + "106\t2\t106_2\tq two\tq\n", "x.tsv"))
    assert ok == {"cast2021:106:2": "q two"}


def test_examples_are_hashable_and_comparable():
    a = RewriteExample("i", "qrecc", "1", 1, "q", (), "r", systems={"x": "y"})
    b = RewriteExample("i", "qrecc", "1", 1, "q", (), "r", systems={"x": "y"})
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != RewriteExample("i", "qrecc", "1", 1, "q", (), "r")


# --- swapped names ------------------------------------------------------------

NAMES = {"Ada Lovelace": True, "Marie Curie": True, "Great Wall": False, "Mount Everest": False, "Zebra": False}


def test_resolved_name_is_the_one_the_rewrite_brings_in_from_the_conversation():
    e = RewriteExample("q:c:3", "q", "c", 3, "Did he win a Nobel Prize?",
                       ("Who was Niels Bohr?", "Niels Bohr was a Danish physicist.", "What did Bohr study?", "Atoms."),
                       "Did Niels Bohr win a Nobel Prize?")
    # "Nobel Prize" is in the question; "Did" opens the sentence, it names nothing.
    assert resolved_name(e) == "Niels Bohr"
    # A surname in the history counts for the full name the rewrite gives.
    only_surname = RewriteExample("q:c:2", "q", "c", 2, "Where did he work?", ("What did Bohr study?", "Atoms."), "Where did Niels Bohr work?")
    assert resolved_name(only_surname) == "Niels Bohr"
    # A name the conversation never gave (the rewriter would be inventing it) is not a resolved one.
    invented = RewriteExample("q:c:2", "q", "c", 2, "Where did he work?", ("What is an atom?", "A particle."), "Where did Niels Bohr work?")
    assert resolved_name(invented) is None
    # Possessives are the name too.
    possessive = RewriteExample("q:c:2", "q", "c", 2, "Who were his parents?", ("Who was Walter Scott?", "A novelist."), "Who were Walter Scott's parents?")
    assert resolved_name(possessive) == "Walter Scott"


def test_swapped_copies_replace_the_name_everywhere_and_keep_the_rest():
    e = RewriteExample("q:c:3", "q", "c", 3, "Did he win a Nobel Prize?",
                       ("Who was Niels Bohr?", "Niels Bohr was a Danish physicist.", "What did Bohr study?", "Atoms."),
                       "Did Niels Bohr win a Nobel Prize?", answer="Bohr won it in 1922.")
    plain = RewriteExample("q:d:2", "q", "d", 2, "What else?", ("What is an atom?", "A particle."), "What else is an atom?")
    out = with_swapped_names([e, plain], NAMES)
    assert out[:2] == [e, plain] and len(out) == 3  # the one without a resolved name gets no copy
    copy = out[2]
    # "he": a person of two words.
    assert copy.rewrite in ("Did Ada Lovelace win a Nobel Prize?", "Did Marie Curie win a Nobel Prize?")
    new = copy.rewrite[4:-19]
    surname = new.split()[-1]
    assert copy.history == (f"Who was {new}?", f"{new} was a Danish physicist.", f"What did {surname} study?", "Atoms.")
    assert copy.answer == f"{surname} won it in 1922." and copy.question == e.question
    assert copy.id == "q:c:3~swap" and (copy.source, copy.conversation_id, copy.turn) == ("q", "c", 3)
    # Seeded: the same copies every time, others with another seed somewhere.
    assert with_swapped_names([e, plain], NAMES) == out
    seeds = {with_swapped_names([e], NAMES, seed)[1].rewrite for seed in range(20)}
    assert len(seeds) == 2
    with pytest.raises(ValueError, match="at least one name"):
        with_swapped_names([e], {})


def test_a_question_without_he_or_she_gets_a_name_that_is_not_a_person():
    e = RewriteExample("q:c:2", "q", "c", 2, "How tall is it?", ("Where is Mont Blanc?", "In the Alps."), "How tall is Mont Blanc?")
    (copy,) = with_swapped_names([e], NAMES)[1:]
    assert copy.rewrite in ("How tall is Great Wall?", "How tall is Mount Everest?")


def test_swapped_names_on_the_real_canard_turns():
    examples = [e for e in load(CANARD) if e.history]
    out = with_swapped_names(examples, NAMES)
    copies = {c.id.removesuffix("~swap"): c for c in out[len(examples):]}
    # Most CANARD rewrites resolve a name of the conversation.
    assert len(copies) > len(examples) / 2
    for e in examples:
        copy = copies.get(e.id)
        if copy is None:
            continue
        old = resolved_name(e)
        assert old in e.rewrite and old not in copy.rewrite
        assert any(n in copy.rewrite for n in NAMES)


def test_load_names_from_a_collection_and_from_a_text_file(tmp_path):
    collection = tmp_path / "c.json"
    collection.write_text(json.dumps({
        "Ada Lovelace": {"extract": "Ada Lovelace was a mathematician. She wrote the first program; her notes survive."},
        "Great Wall": {"extract": "The Great Wall is a series of fortifications. It is long."},
        "1984 (novel)": {"extract": "A novel."},
        "bread": {"extract": "A food."},
    }))
    assert load_names(collection) == {"Ada Lovelace": True, "Great Wall": False}
    listed = tmp_path / "names.txt"
    listed.write_text("Marie Curie\tperson\nMount Everest\n\n")
    assert load_names(listed) == {"Marie Curie": True, "Mount Everest": False}
    for path, text, message in ((tmp_path / "x.json", "[1]", "keyed by article title"), (tmp_path / "y.json", "{", "not JSON"),
                                (tmp_path / "z.txt", "lower case only\n", "no names")):
        path.write_text(text)
        with pytest.raises(DataFormatError, match=message):
            load_names(path)
    with pytest.raises(DataFormatError, match="cannot read"):
        load_names(tmp_path / "missing.txt")


def test_rewriting_data_is_not_a_command():
    # A library module: run as one, it says so in one line instead of printing nothing, exit 0.
    import subprocess
    import sys
    from pathlib import Path

    out = subprocess.run([sys.executable, "-m", "rewriting.data", "--help"], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, check=False, timeout=120)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.strip().splitlines() == [
        "error: rewriting.data reads the rewriting datasets for other code, not a command; "
        "train with python -m rewriting.train, export turns with python -m eval.rewrites export"]


def test_a_file_saved_with_a_byte_order_mark_loads(tmp_path):
    # "not a UTF-8 JSON file: Unexpected UTF-8 BOM": a QReCC file saved by Notepad was refused.
    path = tmp_path / "qrecc.json"
    path.write_bytes("\ufeff".encode() + json.dumps([qrecc_record(1)]).encode())
    assert [example.rewrite for example in load_examples(path)] == ["What is a cat?"]
