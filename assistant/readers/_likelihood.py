"""Multiple choice by a causal LM's likelihood of each option (QuALITY's LM baselines).

QuALITY's baselines extract the passages nearest the question and let a
model score each option given them. Without a trained multiple-choice head,
a causal LM can still score: the option whose tokens are most likely after
"<passages> Question: <q> Answer:" is chosen. Any causal LM loads by name or
path (:func:`rewriting.load_causal_lm`); the score is the mean log-probability
per option token by default, so that long options are not punished for
their length.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..kernel import NO_STOP, InvalidInputError, StopSignal
from ..retrieval import ChunkRetriever, split_passages
from ._choice import Choice

__all__ = ["LikelihoodConfig", "LikelihoodChoiceReader"]


@dataclass(frozen=True)
class LikelihoodConfig:
    # Words per article passage and passages extracted per question: as the
    # embedding reader (QualityConfig), so the two read the same evidence.
    passage_words: int = 60
    k: int = 4
    # Context tokens at most (the passages, cut from the front when longer):
    # a small LM's window, and the cost of a forward pass, bound it.
    max_context_tokens: int = 768
    # Mean log-probability per option token (True) or the sum (False): the
    # sum prefers short options whatever they say.
    mean: bool = True
    # CPU threads for torch; the deployment target has 2 cores.
    threads: int = 2


class LikelihoodChoiceReader:
    """``answer(document, question, options) -> Choice`` scored by a causal LM.

    ``model``/``tokenizer``: a causal LM in eval mode and its tokenizer; use
    :meth:`from_pretrained` to load one by name or path.
    """

    def __init__(self, model, tokenizer, config: LikelihoodConfig = LikelihoodConfig()) -> None:
        self.model = model
        self.tokenizer = tokenizer
        self.config = config

    @classmethod
    def from_pretrained(cls, model: str = "smollm2", config: LikelihoodConfig = LikelihoodConfig()) -> "LikelihoodChoiceReader":
        import torch

        from rewriting import load_causal_lm

        torch.set_num_threads(config.threads)
        lm, tokenizer = load_causal_lm(model)
        return cls(lm, tokenizer, config)

    def _window(self) -> int:
        # GPT-2 calls it n_positions, most others max_position_embeddings.
        config = self.model.config
        return int(getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None) or 2048)

    def option_scores(self, context: str, options: Sequence[str], stop: StopSignal = NO_STOP) -> list[float]:
        """Each option's log-likelihood after ``context`` (mean per token, or
        sum); :class:`~assistant.kernel.Stopped` before the next pass once
        ``stop`` is set.

        The context is read once and a copy of its key/value cache extends
        it for each option (a copy: a cache grows in place, and a cut-back API
        differs between transformers versions): the context is hundreds
        of tokens, an option a few, so this costs about one forward pass per
        question instead of one per option. Every option therefore sees the
        same context, cut from the front to leave room for the longest.
        """
        import torch

        prefix = self.tokenizer.encode(context, add_special_tokens=False)
        targets = [self.tokenizer.encode(" " + option.strip(), add_special_tokens=False) for option in options]
        if not all(targets):
            raise InvalidInputError("an option is empty")
        room = min(self.config.max_context_tokens, self._window() - max(len(t) for t in targets))
        if room < 1:
            raise InvalidInputError("an option is longer than the language model's window")
        ids = prefix[-room:] if prefix else [self.tokenizer.eos_token_id]
        scores = []
        with torch.no_grad():
            stop.check()
            out = self.model(torch.tensor([ids]), use_cache=True)
            cache = out.past_key_values
            # The context's last position predicts each option's first token.
            first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)
            for target in targets:
                picked = first[target[:1]]
                if len(target) > 1:
                    stop.check()
                    past = copy.deepcopy(cache)
                    logits = self.model(torch.tensor([target[:-1]]), past_key_values=past, use_cache=True).logits[0]
                    logprobs = torch.log_softmax(logits.float(), dim=-1)
                    picked = torch.cat([picked, logprobs[torch.arange(len(target) - 1), torch.tensor(target[1:])]])
                scores.append(float(picked.mean() if self.config.mean else picked.sum()))
        return scores

    def answer(self, document: str, question: str, options: Sequence[str], doc_id: str = "doc",
               stop: StopSignal = NO_STOP) -> Choice:
        if len(options) < 2:
            raise InvalidInputError("a multiple-choice question needs at least two options")
        passages = split_passages(document, doc_id, max_words=self.config.passage_words)
        if not passages:
            raise InvalidInputError("the document has no text to answer from")
        # The k passages BM25 ranks highest for the question (stable, so an
        # all-zero ranking keeps the document's start), read in document order.
        ranked = np.argsort(-np.asarray(ChunkRetriever(passages).scores(question)), kind="stable")[: self.config.k]
        context = "\n".join(passages[int(r)].text for r in sorted(ranked))
        scores = self.option_scores(f"{context}\nQuestion: {question.strip()}\nAnswer:", options, stop)
        # Every option rests on the same evidence: the passage BM25 ranked first.
        top = passages[int(ranked[0])]
        return Choice(index=int(np.argmax(scores)), scores=tuple(scores), evidence=tuple(top for _ in options))
