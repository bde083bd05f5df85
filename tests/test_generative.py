"""The generative reader, on a tiny random GPT-2 (no weights are installable).

A random model says nothing sensible, so these tests pin the reader's
mechanics: evidence comes from the selector, decoding can only copy the
evidence's tokens, yes/no questions get exactly "yes" or "no", "not found"
passes through, and the evidence span is always returned.
"""

from __future__ import annotations

import pytest

from assistant.kernel import Answer, Passage
from assistant.readers import (
    GenerationConfig,
    GenerativeReader,
    clean_answer,
    is_yes_no_question,
)

EVIDENCE = "Cotton lived in a warm place above the barn with her mother and five sisters."
PASSAGES = [Passage("story_p0", "Once upon a time there was a kitten. " + EVIDENCE, 3.2)]


class FixedSelector:
    """Stands in for the SentenceReader: always selects EVIDENCE (or nothing)."""

    def __init__(self, found: bool = True):
        self.found = found
        self.calls = []

    def read(self, question, passages):
        self.calls.append((question, list(passages)))
        if not self.found:
            return Answer("I could not find an answer.", 0.1, found=False)
        return Answer(EVIDENCE, 0.9, evidence=EVIDENCE, source_id=passages[0].id)


@pytest.fixture
def reader(tiny_gpt2):
    model, tokenizer = tiny_gpt2
    return GenerativeReader(FixedSelector(), model, tokenizer, GenerationConfig(max_new_tokens=8))


def test_open_question_copies_only_evidence_tokens(reader):
    ids = reader.generate_ids("Where did Cotton live?", EVIDENCE)
    assert 0 < len(ids) <= 8
    assert set(ids) <= set(reader.allowed_tokens(EVIDENCE))
    # The constraint is what keeps the random model on the evidence: the
    # allowed set is a tiny part of GPT-2's 50k-token vocabulary.
    assert len(reader.allowed_tokens(EVIDENCE)) < 100


def test_read_returns_the_evidence_span_and_source(reader):
    answer = reader.read("Where did Cotton live?", PASSAGES)
    assert answer.found
    assert answer.evidence == EVIDENCE
    assert answer.source_id == "story_p0"
    assert answer.score == pytest.approx(0.9)
    assert answer.text  # generated text, or the evidence when generation is empty
    assert reader.selector.calls[0][0] == "Where did Cotton live?"


def test_yes_no_question_answers_yes_or_no(reader):
    answer = reader.read("Did Cotton live alone?", PASSAGES)
    assert answer.text in {"yes", "no"}
    assert answer.evidence == EVIDENCE
    word, probability = reader.yes_no("Did Cotton live alone?", EVIDENCE)
    assert word == answer.text and 0.5 <= probability <= 1.0


def test_not_found_passes_through_unchanged(tiny_gpt2):
    model, tokenizer = tiny_gpt2
    reader = GenerativeReader(FixedSelector(found=False), model, tokenizer)
    answer = reader.read("What is the capital of Mars?", PASSAGES)
    assert not answer.found and answer.evidence == ""


def test_empty_generation_falls_back_to_the_evidence(reader, monkeypatch):
    monkeypatch.setattr(reader, "generate", lambda question, evidence, stop=None: "")
    assert reader.read("Where did Cotton live?", PASSAGES).text == EVIDENCE


def test_prompt_is_small_and_holds_question_and_cut_evidence(tiny_gpt2):
    model, tokenizer = tiny_gpt2
    reader = GenerativeReader(FixedSelector(), model, tokenizer, GenerationConfig(max_evidence_words=5))
    prompt = reader.prompt("Where did Cotton live?", EVIDENCE)
    assert "Text: Cotton lived in a warm\nQuestion: Where did Cotton live?" in prompt
    assert "warm place" not in prompt  # the sixth word is cut
    assert prompt.endswith("Answer:")  # GPT-2 has no chat template: the plain layout


def test_yes_no_detection_and_cleaning():
    assert is_yes_no_question("Were they happy?")
    assert is_yes_no_question("Doesn't she like it?")
    assert not is_yes_no_question("Was it Monday or Tuesday?")
    assert not is_yes_no_question("Who was there?")
    assert not is_yes_no_question("   ")
    assert clean_answer("answer: above the barn.\nQuestion: next") == "above the barn"
