"""Long conversations: which follow-ups the causal rewriter keeps as asked
without its model, because they name their own subject.

A tiny random GPT-2's tokenizer (tests/conftest.py) with a model that must
not run: what is checked is whether the question reaches the model at all.
"""

from __future__ import annotations

import pytest
import torch

from assistant.kernel import Rewrite
from rewriting import CausalLMRewriter, RewriterConfig


class _Called(Exception):
    """The model was asked to rewrite the question."""


class _Refusing(torch.nn.Module):
    def forward(self, *args, **kwargs):
        raise _Called


# The Leonardo conversation of scripts/conversations/long_dev.jsonl, as far as its fourth turn.
LEONARDO = [
    "Who was Leonardo da Vinci?", "Leonardo da Vinci was an Italian polymath of the High Renaissance.",
    "What is he known for besides painting?", "His notebooks.",
    "Who was his younger contemporary?", "Michelangelo.",
]


@pytest.fixture
def rewriter(tiny_gpt2):
    _, tokenizer = tiny_gpt2
    return CausalLMRewriter(_Refusing(), tokenizer, RewriterConfig(prompt_format="plain"))


@pytest.mark.parametrize("question", [
    "Where was Michelangelo born?",  # was "Where was Michelangelo Leonardo da Vinci born?"
    "Who called Twain the father of American literature?",  # was "Who called Ernest Hemingway the father ...?"
    "Which region is  Athens the capital of?",  # was "Which region of Athens is Plato's Academy the capital of?"
    "In what year was the honorific Mahatma first applied to Gandhi?",
])
def test_a_follow_up_naming_its_own_subject_is_kept_as_asked(rewriter, question):
    assert rewriter.rewrite(question, LEONARDO) == Rewrite(" ".join(question.split()))


@pytest.mark.parametrize("question", [
    "Where was he mostly active?",
    "Which of his paintings is in the Louvre?",  # a name, and a word pointing back
    "What about in Milan?",  # a name, and an opening that carries on
    "And Raphael?",
    "Interesting. Where was it painted?",  # a capital that opens a sentence names nothing
    "When did the High Renaissance end there?",
])
def test_a_follow_up_that_points_back_still_goes_to_the_model(rewriter, question):
    with pytest.raises(_Called):
        rewriter.rewrite(question, LEONARDO)

