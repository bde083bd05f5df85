"""The generative reader: point to the evidence, then phrase the answer.

CoQA's strongest baseline (DrQA + PGNet) first selects a rationale in the
story and then lets a generator phrase a short free-form answer from it. We
do the same with the parts we have: the extractive :class:`SentenceReader`
picks the evidence sentence(s), and SmolLM2-135M-Instruct turns the evidence
and the (rewritten) question into a short answer.

* yes/no questions ("Is ...", "Did ...", not "Is it X or Y?") are answered
  "yes" or "no" by comparing the model's next-token scores for the two words
  after the prompt: one forward pass, no free decoding to go astray;
* when the sentence reader finds no relevant evidence the answer is the
  sentence reader's "not found" answer (``found=False``; CoQA's "unknown");
* otherwise the model decodes greedily a few tokens; if it produces nothing
  usable, the evidence sentence itself is the answer.

The returned :class:`Answer` always carries the evidence span used, so the
UI highlights it as it does for the extractive reader. The prompt holds only
the evidence (at most ``max_evidence_words`` words) and the question: a
small prompt keeps a turn well under 2 s on two CPU cores.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..kernel import AUXILIARY_VERBS, NO_STOP, Answer, Passage, ReaderConfig, StopSignal, with_stop

__all__ = ["GenerationConfig", "GenerativeReader", "is_yes_no_question", "clean_answer"]

_SYSTEM = "Answer the question in a few words, using the text."
# One worked example: a 135M model copies the answer's form (a short phrase,
# no "The answer is ...") far better from one example than from instructions.
_EXAMPLE = ("Text: The dog ran to the red barn to hide from the rain.\nQuestion: Where did the dog go?", "to the red barn")


@dataclass(frozen=True)
class GenerationConfig:
    # Decoded tokens at most: CoQA's answers average 2.7 words, and every
    # decoded token costs one more forward pass of the model.
    max_new_tokens: int = 20
    # Evidence words put in the prompt: the selected sentences, cut to this
    # length, so the prompt (and the prefill time) stays small.
    max_evidence_words: int = 80
    # CPU threads for torch; the deployment target has 2 cores.
    threads: int = 2


def is_yes_no_question(question: str) -> bool:
    """Does the question start with an auxiliary verb (and offer no "or")?

    >>> is_yes_no_question("Did she go to school?"), is_yes_no_question("was it red?")
    (True, True)
    >>> is_yes_no_question("Is it red or blue?"), is_yes_no_question("What did she do?")
    (False, False)
    """
    words = question.strip().lower().split()
    if not words:
        return False
    return words[0] in AUXILIARY_VERBS and " or " not in f" {question.lower()} "


def clean_answer(text: str) -> str:
    """The first line of the generation, without a leading "Answer:" and
    without trailing punctuation.

    >>> clean_answer(" Answer: In the barn.\\nQuestion: why?")
    'In the barn'
    """
    line = text.strip().split("\n", 1)[0].strip()
    line = re.sub(r"^(answer|a)\s*:\s*", "", line, flags=re.IGNORECASE)
    return line.strip().rstrip(".!,;: ").strip()


class GenerativeReader:
    """Reader protocol: ``read(question, passages) -> Answer``.

    ``selector`` is a ready :class:`SentenceReader` (or any reader whose
    ``Answer.evidence`` is the span to phrase); ``model``/``tokenizer`` a
    causal LM in eval mode (``rewriting._models.load_causal_lm``).
    """

    def __init__(self, selector, model, tokenizer, config: GenerationConfig = GenerationConfig()) -> None:
        self.selector = selector
        self.model = model
        self.tokenizer = tokenizer
        self.config = config
        self._yes_no_ids = (self._first_token("yes"), self._first_token("no"))

    @classmethod
    def from_pretrained(
        cls,
        model: str = "smollm2",
        config: ReaderConfig = ReaderConfig(),
        generation: GenerationConfig = GenerationConfig(),
        encoder_path: str | None = None,
    ) -> "GenerativeReader":
        """Load the sentence reader's encoder and the language model once."""
        import torch

        from rewriting import load_causal_lm

        from ._sentence import SentenceReader

        torch.set_num_threads(generation.threads)
        lm, tokenizer = load_causal_lm(model)
        return cls(SentenceReader.from_pretrained(encoder_path, config), lm, tokenizer, generation)

    def _first_token(self, word: str) -> list[int]:
        # After a chat template the answer starts a line ("Yes"); after
        # "Answer:" it follows a space (" yes"): score every spelling.
        ids: list[int] = []
        for form in (word, word.capitalize(), " " + word, " " + word.capitalize()):
            tokens = self.tokenizer.encode(form, add_special_tokens=False)
            if tokens and tokens[0] not in ids:
                ids.append(tokens[0])
        return ids

    def prompt(self, question: str, evidence: str) -> str:
        """The model's input: the chat template when the tokenizer has one."""
        evidence = self._evidence(evidence)
        user = f"Text: {evidence}\nQuestion: {question}"
        if getattr(self.tokenizer, "chat_template", None):
            messages = [
                {"role": "system", "content": _SYSTEM},
                {"role": "user", "content": _EXAMPLE[0]},
                {"role": "assistant", "content": _EXAMPLE[1]},
                {"role": "user", "content": user},
            ]
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return f"{_SYSTEM}\n{_EXAMPLE[0]}\nAnswer: {_EXAMPLE[1]}\n{user}\nAnswer:"

    def _encode(self, prompt: str):
        return self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)

    def yes_no(self, question: str, evidence: str) -> tuple[str, float]:
        """("yes" | "no", probability of that word among the two)."""
        import torch

        inputs = self._encode(self.prompt(question, evidence))
        with torch.no_grad():
            logits = self.model(**inputs).logits[0, -1]
        yes = torch.logsumexp(logits[self._yes_no_ids[0]], dim=0)
        no = torch.logsumexp(logits[self._yes_no_ids[1]], dim=0)
        p_yes = float(torch.sigmoid(yes - no))
        return ("yes", p_yes) if p_yes >= 0.5 else ("no", 1.0 - p_yes)

    def allowed_tokens(self, evidence: str) -> list[int]:
        """Token ids the answer may use: those of the evidence (as it is
        tokenised in running text and word by word, with and without a
        leading space), the end-of-text and newline tokens."""
        ids = set(self.tokenizer.encode(evidence, add_special_tokens=False))
        for word in set(evidence.split()):
            for form in (word, " " + word, word.lower(), " " + word.lower()):
                ids.update(self.tokenizer.encode(form, add_special_tokens=False))
        ids.update(self._stop_ids())
        return sorted(ids)

    def _stop_ids(self) -> list[int]:
        # Decoding ends at end-of-text or at a line break (the answer's line).
        ids = {self.tokenizer.eos_token_id, *self.tokenizer.encode("\n", add_special_tokens=False)[:1]}
        return sorted(i for i in ids if isinstance(i, int))

    def _evidence(self, evidence: str) -> str:
        return " ".join(evidence.split()[: self.config.max_evidence_words])

    def generate(self, question: str, evidence: str, stop: StopSignal = NO_STOP) -> str:
        """A short answer that copies from the evidence (cleaned; may be empty)."""
        tokens = self.generate_ids(question, evidence, stop)
        return clean_answer(self.tokenizer.decode(tokens, skip_special_tokens=True))

    def generate_ids(self, question: str, evidence: str, stop: StopSignal = NO_STOP) -> list[int]:
        """Greedy decoding restricted to the evidence's tokens; the new token
        ids. :class:`~assistant.kernel.Stopped` at the step after ``stop`` is set.

        The restriction makes the generator copy, as PGNet copies from
        the rationale: a 135M model left free drifts into fluent inventions
        ("a shade of blue"), while a copy can only be more or less apt.
        """
        import torch
        from transformers import LogitsProcessor, LogitsProcessorList

        allowed = torch.tensor(self.allowed_tokens(self._evidence(evidence)))

        class CopyOnly(LogitsProcessor):
            def __call__(self, input_ids, scores):
                # Called at every decoding step, before a token is chosen: the
                # step where a Stop ends the generation (the error leaves generate).
                stop.check()
                mask = torch.full_like(scores, float("-inf"))
                mask[:, allowed] = 0.0
                return scores + mask

        inputs = self._encode(self.prompt(question, evidence))
        ends = self._stop_ids()
        with torch.no_grad():
            output = self.model.generate(
                **inputs,
                max_new_tokens=self.config.max_new_tokens,
                do_sample=False,
                no_repeat_ngram_size=3,  # copying invites loops ("the barn, the barn, ...")
                logits_processor=LogitsProcessorList([CopyOnly()]),
                eos_token_id=ends or None,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
            )
        return output[0, inputs["input_ids"].shape[1] :].tolist()

    def read(self, question: str, passages: Sequence[Passage], stop: StopSignal = NO_STOP) -> Answer:
        """The answer phrased from the selector's evidence; :class:`~assistant.kernel.Stopped`
        once ``stop`` is set (checked before the model runs and at each of its steps)."""
        selected = with_stop(self.selector.read, stop)(question, passages)  # the sentence reader's encoding too
        if not selected.found or not selected.evidence:
            return selected
        stop.check()
        if is_yes_no_question(question):
            text, _ = self.yes_no(question, selected.evidence)
        else:
            text = self.generate(question, selected.evidence, stop) or selected.evidence
        return Answer(text, selected.score, evidence=selected.evidence, source_id=selected.source_id)
