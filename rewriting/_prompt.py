"""Building a causal LM's input (and training target) from a question and its history.

Two formats:

* ``chat``: for an instruction-tuned model used as is. The tokenizer's chat
  template, an instruction and two short worked examples (few-shot).
* ``plain``: for a fine-tuned model. The history as ``Q:``/``A:`` lines, as
  far back as a token budget allows (newest kept), then ``Question:`` and
  ``Rewrite:``; the target is the rewrite followed by eos. Plain text works
  for any causal LM (GPT-2 has no chat template).

``history`` is QReCC's ``Context``: texts of earlier turns, question and
answer alternating, oldest first. Answers may be empty or missing (an odd
number of texts): both are handled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

__all__ = [
    "PromptConfig",
    "turns",
    "chat_prompt",
    "plain_prompt_ids",
    "encode_example",
    "IGNORE_INDEX",
]

# Label value that torch's cross-entropy skips: prompt tokens carry no loss.
IGNORE_INDEX = -100

INSTRUCTION = (
    "Rewrite the user's last question so that it can be understood without the conversation. "
    "Replace pronouns and vague references with the names they refer to. Keep the question's "
    "meaning and wording otherwise. Reply with the rewritten question only."
)

# Two short worked examples: one pronoun, one ellipsis. Few enough that a
# 135M model still sees its own question near the end of the prompt.
FEW_SHOT = (
    (
        ["Who was Ada Lovelace?", "An English mathematician, the daughter of Lord Byron."],
        "What did she write about?",
        "What did Ada Lovelace write about?",
    ),
    (
        ["What is the capital of France?", "Paris.", "How many people live there?", "About 2.1 million."],
        "What about Berlin?",
        "How many people live in Berlin?",
    ),
)


@dataclass(frozen=True)
class PromptConfig:
    """Token budgets of the plain format (they bound latency and training memory)."""

    # History + question + format tokens. 160 keeps prefill short on 2 CPU
    # cores and still fits 3-5 earlier turns of QReCC/CANARD.
    max_input_tokens: int = 160
    # Longest answer kept, in tokens: the entity a rewrite needs is usually
    # near an answer's start, and long answers would crowd out earlier turns.
    max_answer_tokens: int = 24
    # Answers are kept for this many most recent turns only; older turns keep
    # just their question, which is cheap and usually names the topic.
    answer_turns: int = 2
    # Longest question (current or earlier) kept, in tokens.
    max_question_tokens: int = 48
    # Longest training target (rewrite) in tokens, eos included.
    max_target_tokens: int = 48


def turns(history: Sequence[str]) -> list[tuple[str, str]]:
    """Pair a flat history into ``(question, answer)`` turns, oldest first.

    >>> turns(["Who?", "Ada.", "When?"])
    [('Who?', 'Ada.'), ('When?', '')]
    """
    texts = [" ".join(str(t).split()) for t in history]
    return [(texts[i], texts[i + 1] if i + 1 < len(texts) else "") for i in range(0, len(texts), 2)]


def _history_block(history: Sequence[str]) -> str:
    lines = []
    for question, answer in turns(history):
        lines.append(f"Q: {question}")
        if answer:
            lines.append(f"A: {answer}")
    return "\n".join(lines)


def chat_prompt(tokenizer, question: str, history: Sequence[str], max_history_turns: int = 3) -> str:
    """The few-shot chat prompt for an instruction-tuned model, ready to tokenise.

    Only the last ``max_history_turns`` turns are shown: a 135M model loses
    track of which question to rewrite in long prompts.
    """
    messages = [{"role": "system", "content": INSTRUCTION}]
    for shot_history, shot_question, shot_rewrite in FEW_SHOT:
        messages.append({"role": "user", "content": _chat_user(shot_history, shot_question)})
        messages.append({"role": "assistant", "content": shot_rewrite})
    recent = list(history)[-2 * max_history_turns :] if max_history_turns > 0 else []
    messages.append({"role": "user", "content": _chat_user(recent, question)})
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def _chat_user(history: Sequence[str], question: str) -> str:
    return f"Conversation:\n{_history_block(history)}\n\nLast question: {' '.join(question.split())}"


def _truncate(tokenizer, text: str, max_tokens: int) -> list[int]:
    return tokenizer.encode(text, add_special_tokens=False)[:max_tokens]


def plain_prompt_ids(tokenizer, question: str, history: Sequence[str], config: PromptConfig = PromptConfig()) -> list[int]:
    """Token ids of the plain-format prompt, within ``config.max_input_tokens``.

    Turns are added newest first until the budget is spent, so the turns
    nearest the question are the ones kept; answers are shortened to
    ``max_answer_tokens`` and dropped beyond the last ``answer_turns`` turns.
    """
    encode = lambda text: tokenizer.encode(text, add_special_tokens=False)  # noqa: E731
    tail = (
        encode("Question: ")
        + _truncate(tokenizer, " ".join(question.split()), config.max_question_tokens)
        + encode("\nRewrite:")
    )
    budget = config.max_input_tokens - len(tail)
    blocks: list[list[int]] = []
    pairs = turns(history)
    for age, (past_question, answer) in enumerate(reversed(pairs)):
        block = encode("Q: ") + _truncate(tokenizer, past_question, config.max_question_tokens) + encode("\n")
        if answer and age < config.answer_turns:
            block += encode("A: ") + _truncate(tokenizer, answer, config.max_answer_tokens) + encode("\n")
        if len(block) > budget:
            break
        blocks.append(block)
        budget -= len(block)
    ids: list[int] = []
    for block in reversed(blocks):
        ids += block
    return ids + tail


def encode_example(
    tokenizer,
    question: str,
    history: Sequence[str],
    rewrite: str,
    config: PromptConfig = PromptConfig(),
) -> tuple[list[int], list[int]]:
    """``(input_ids, labels)`` for one training example in the plain format.

    The target is ``" " + rewrite`` followed by eos; labels are
    :data:`IGNORE_INDEX` on prompt tokens, so the loss falls on the rewrite
    tokens only.
    """
    prompt = plain_prompt_ids(tokenizer, question, history, config)
    target = _truncate(tokenizer, " " + " ".join(rewrite.split()), config.max_target_tokens - 1)
    target.append(tokenizer.eos_token_id)
    return prompt + target, [IGNORE_INDEX] * len(prompt) + target
