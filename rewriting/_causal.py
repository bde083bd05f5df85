"""A question rewriter driven by a causal language model.

The model is either an instruction-tuned one prompted with two examples
(``chat`` format) or one fine-tuned by :mod:`rewriting.train` (``plain``
format, optionally a LoRA adapter and a copy head). Decoding is greedy and
bounded, optionally followed by a beam search whose consensus with the greedy
rewrite is the rewrite (``RewriterConfig.candidates``), and by default by one
for the follow-ups the greedy rewrite leaves as asked or was unsure of
(``RewriterConfig.second_look``, ``second_look_below``). What is decided
from the text alone (turns kept as asked, "the two" named, the history a
follow-up is shown, the drift guard) is in :mod:`rewriting._rules`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path
from typing import Callable, NamedTuple, Sequence

import torch

from assistant.kernel import NO_STOP, ModelNotFoundError, Rewrite, StopSignal
from assistant.kernel import native_bf16 as cpu_has_native_bf16  # a name of its own: the argument below shadows it

from ._adapter import ADAPTER_CONFIG, check_adapter, check_weights
from ._beam import BeamState
from ._config import RewriterConfig
from ._consensus import consensus
from ._copy import COPY_HEAD_FILE, CopyHead
from ._fused import FusedCache, FusedLlama, FusedPrompts
from ._models import load_causal_lm
from ._packing import pack_linears
from ._people import warm_people
from ._prompt import chat_prompt, plain_prompt_ids
from ._recipe import Recipe
from ._rules import (asks_nothing, clean_output, drift_reason, for_the_new_name, kin_for_pronoun, name_damage, names_new_subject, names_only,
                     previous_subject, refuse_non_text, same_words, since_new_person, strays_from, the_two_named, with_name_swapped,
                     with_subject, without_emoji, without_invented_exclusion)

__all__ = ["CausalLMRewriter", "Decoding", "inference_dtype", "lookup_draft"]


def _token_id(tokenizer, token: str) -> int:
    """The id of ``token``; :class:`ModelNotFoundError` when the tokenizer lacks it."""
    token_id = tokenizer.convert_tokens_to_ids(token)
    if token_id is None or (token_id == tokenizer.unk_token_id and token != tokenizer.unk_token):
        raise ModelNotFoundError(
            f"the adapter's rewrites end with the token {token!r} (end_token in rewriter.json), which this base "
            "model's tokenizer does not have; load the adapter on the base it was trained on"
        )
    return token_id


class CausalLMRewriter:
    """Rewrites with a causal LM; see :meth:`from_pretrained`.

    ``__init__`` takes a ready model and tokenizer (tests pass a tiny GPT-2).
    """

    def __init__(self, model, tokenizer, config: RewriterConfig = RewriterConfig(), copy_head: CopyHead | None = None,
                 end_token: str = "", fused: FusedLlama | None = None):
        if config.prompt_format == "auto":
            config = replace(config, prompt_format="chat" if getattr(tokenizer, "chat_template", None) else "plain")
        if config.prompt_format not in {"chat", "plain"}:
            raise ValueError(f"prompt_format must be 'chat', 'plain' or 'auto', not {config.prompt_format!r}")
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.config = config
        self.copy_head = copy_head.eval() if copy_head is not None else None
        # The lean forward of one question (see from_pretrained); the copy head needs the model's hidden states.
        self._fused = fused if copy_head is None else None
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        eos = {tokenizer.eos_token_id}
        generation_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        eos |= set(generation_eos) if isinstance(generation_eos, (list, tuple)) else {generation_eos}
        if end_token:  # the trained end token (Recipe.end_token), whatever this tokenizer calls eos
            eos.add(_token_id(tokenizer, end_token))
        self._eos_ids = frozenset(i for i in eos if i is not None)
        head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
        if head is not None:
            head.register_forward_pre_hook(_plain_strides)

    @classmethod
    def from_pretrained(cls, name_or_path: str, adapter: str | Path | None = None, config: RewriterConfig = RewriterConfig()):
        """Load a model (``"smollm2"``, a path or a cached hub name) and, optionally,
        a LoRA adapter directory written by :mod:`rewriting.train`.

        The adapter is merged into the weights: the same speed as the base model.
        """
        recipe_dir = Path(adapter) if adapter is not None else Path(name_or_path)
        recipe = Recipe.read(recipe_dir)
        if adapter is not None:
            if not (Path(adapter) / ADAPTER_CONFIG).is_file():
                raise ModelNotFoundError(f"no LoRA adapter in '{adapter}' ({ADAPTER_CONFIG} missing)")
            check_adapter(Path(adapter), recipe)  # before the base model is read
        elif recipe is not None and recipe.copy:
            check_weights(recipe_dir / COPY_HEAD_FILE)
        model, tokenizer = load_causal_lm(name_or_path)
        if adapter is not None:
            from peft import PeftModel

            # peft reads transformers' deprecated is_gradient_checkpointing
            # while wrapping the model, and the FutureWarning it raises was
            # printed at every start of the app and the chat: nothing a user
            # can act on. That one warning only; any other still shows.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
                model = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        if recipe is not None and config.prompt_format == "auto":
            config = replace(config, prompt_format=recipe.prompt_format, prompt=recipe.prompt)
        copy_head = None
        if recipe is not None and recipe.copy:
            from safetensors.torch import load_file

            copy_head = CopyHead(model.config.hidden_size, recipe.copy_dim)
            copy_head.load_state_dict(load_file(str(recipe_dir / COPY_HEAD_FILE)))
        dtype = inference_dtype(config.dtype)
        model.to(dtype)  # after the merge: LoRA deltas are added in float32
        fused = None
        if config.fused_forward and copy_head is None and FusedLlama.supports(model):
            # before packing: it stacks and quantizes the plain weights
            fused = FusedLlama.from_model(model, pack=config.pack_weights, int8=config.int8_weights)
        if config.pack_weights:
            pack_linears(model)  # after the merge and the cast: packed layers are final
        if copy_head is not None:
            copy_head.to(dtype)
        rewriter = cls(model, tokenizer, config, copy_head, recipe.end_token if recipe is not None else "", fused)
        rewriter.warm()
        return rewriter

    def warm(self) -> None:
        """Read now what the rules read once: the people of the default
        collection and what its other names are (a city, a land, ...), by
        which "And Aristotle?" after "When was Plato born?" is asked of him. The first read takes seconds, spent here rather than inside
        the first batch of questions that needs it."""
        warm_people()

    def rewrite(self, question: str, history: Sequence[str], stop: StopSignal = NO_STOP) -> Rewrite:
        return self.rewrite_batch([(question, history)], stop=stop)[0]

    def rewrite_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                      ready: Callable[[int, Rewrite], None] | None = None, stop: StopSignal = NO_STOP) -> list[Rewrite]:
        """Rewrite many ``(question, history)`` pairs, batching the model calls.

        Greedy decoding; with ``config.candidates`` beams, a beam search too
        (the greedy decoding then rides along in its passes), and each
        rewrite is then the consensus of its greedy rewrite and its beams'
        (:func:`~rewriting.consensus`, the greedy one on ties). Without them,
        ``config.second_look`` beams for the follow-ups left as asked,
        those whose greedy rewrite had a token under
        ``config.second_look_below`` (:attr:`Decoding.confidence`) and those
        whose rewrite put another name than the previous question's subject
        in for their pronoun (:func:`~rewriting._rules.strays_from`) only;
        one still off that subject at the end may get the subject put in
        for its pronoun (:func:`_on_subject`).
        The turns to search again are searched ``config.batch_size`` at a
        time as the greedy chunks give them, so a call of any length holds
        at most that many prompts' reads. ``ready(index, rewrite)``, when
        given, is called for each rewrite as soon as it is final (before the
        call returns), so that a batch's callers need not all wait for the
        slowest (:class:`~rewriting.BatchingRewriter`).
        :class:`InvalidInputError` when any text is not valid Unicode (checked
        before any model call); :class:`~assistant.kernel.Stopped` once
        ``stop`` is set, at the next decoding step (the rewrites not yet
        handed to ``ready`` are dropped: no half-decoded one is returned).
        """
        results, todo, items = self._without_model(items)
        unsure: set[int] = set()  # follow-ups whose greedy rewrite the model was unsure of
        looking = self.config.candidates == 0 and self.config.second_look > 0
        done = ready or (lambda index, rewrite: None)
        for index, result in enumerate(results):
            if result is not None:  # no model needed: final already
                done(index, result)

        def looks_again(index: int) -> bool:  # left as asked (or kept by the drift guard), unsure, or off the subject
            return index in unsure or same_words(results[index].text, items[index][0])

        # The prompts the second look will search wait here, each with the
        # greedy pass's read of it when it has one, and are searched a full
        # chunk at a time as they gather: a call holds at most a chunk's reads
        # whatever its length, and the searches are the same chunks of the
        # same prompts as searching them all at the end would make.
        waiting: list[tuple[int, list[int]]] = []
        reads: dict[int, _Read] = {}
        size = max(1, self.config.batch_size)

        def final(index: int) -> None:
            results[index] = _on_subject(results[index], *items[index])
            done(index, results[index])

        def search(chunk: list[tuple[int, list[int]]]) -> None:
            self._look_again(items, chunk, results, [reads.pop(index, None) for index, _ in chunk], stop)
            for index, _ in chunk:
                final(index)

        for chunk in self._chunks(todo):
            stop.check()  # before the chunk's prompts are read, the longest pass
            prompts = [ids for _, ids in chunk]
            kept: list[_Read] | None = [] if looking else None
            if self.config.candidates > 0:  # the greedy rewrite rides along in the beam search's passes
                found = self._beam_batch(prompts, self.config.candidates, greedy=True, stop=stop)
                outputs, searched = [hypotheses[0] for hypotheses in found], [hypotheses[1:] for hypotheses in found]
            else:
                opening = self._opening_draft(items[chunk[0][0]][0]) if len(chunk) == 1 else []
                outputs, searched = self._generate(prompts, opening, kept, stop=stop), [[] for _ in chunk]
                unsure.update(index for (index, _), decoding in zip(chunk, outputs) if decoding.confidence < self.config.second_look_below)
            for (index, _), (ids, stopped), beams in zip(chunk, outputs, searched):
                question, history = items[index]
                pool = [self._finish(question, history, ids, stopped)] + [self._finish(question, history, *beam) for beam in beams]
                results[index] = _agreed(pool, question, history)
                if strays_from(previous_subject(question, history), question, results[index].text):
                    unsure.add(index)  # the beams may name the previous question's subject
            for position, (index, ids) in enumerate(chunk):
                if looking and looks_again(index):
                    waiting.append((index, ids))
                    if kept:  # one read a prompt, or none (one question alone)
                        reads[index] = kept[position]
                else:
                    final(index)
            while len(waiting) >= size:
                search(waiting[:size])
                del waiting[:size]
        if waiting:
            search(waiting)
        return results  # type: ignore[return-value]

    def _look_again(self, items: Sequence[tuple[str, Sequence[str]]], chunk: list[tuple[int, list[int]]],
                    results: list[Rewrite | None], reads: Sequence[_Read | None], stop: StopSignal = NO_STOP) -> None:
        """``config.second_look`` beams for each ``(index into items, prompt
        ids)`` of ``chunk`` (at most ``config.batch_size``: the search holds
        their keys and values together); its rewrite in ``results`` becomes
        the consensus of that one and the beams' (:func:`_agreed`), in place.
        Searched through the lean forward (:meth:`_beam_lean`), which is
        faster than transformers' batched search for any number of prompts
        (BENCHMARKS.md §10, session 26), from the greedy pass's read of each
        prompt where ``reads`` has one; without the lean forward (a copy head,
        not a Llama) through transformers'."""
        prompts = [ids for _, ids in chunk]
        if self._fused is None:
            found = self._beam_batch(prompts, self.config.second_look, stop=stop)
        else:
            found = self._beam_lean(prompts, self.config.second_look, reads, stop=stop)
        for (index, _), beams in zip(chunk, found):
            question, history = items[index]
            results[index] = _agreed([results[index]] + [self._finish(question, history, *beam) for beam in beams], question, history)

    def nbest_batch(self, items: Sequence[tuple[str, Sequence[str]]], beams: int,
                    stop: StopSignal = NO_STOP) -> list[list[Rewrite]]:
        """Each ``(question, history)``'s ``beams`` best rewrites by beam search
        (:meth:`_beam_batch`), best first, each finished as :meth:`finish`
        finishes greedy output; ``[]`` for a question :meth:`rewrite_batch`
        does not give the model (a first turn, one too long).
        :class:`~assistant.kernel.Stopped` once ``stop`` is set, at the next
        decoding step, as :meth:`rewrite_batch` (nothing is returned)."""
        if beams < 1:
            raise ValueError(f"beams must be at least 1, not {beams}")
        _, todo, items = self._without_model(items)
        found: list[list[Rewrite]] = [[] for _ in items]
        for chunk in self._chunks(todo):
            stop.check()  # before the chunk's prompts are read, as rewrite_batch
            for (index, _), hypotheses in zip(chunk, self._beam_batch([ids for _, ids in chunk], beams, stop=stop)):
                question, history = items[index]
                found[index] = [self._finish(question, history, ids, stopped) for ids, stopped in hypotheses]
        return found

    def _without_model(self, items: Sequence[tuple[str, Sequence[str]]]
                       ) -> tuple[list[Rewrite | None], list[tuple[int, list[int]]], list[tuple[str, list[str]]]]:
        """Every text checked (:class:`InvalidInputError` before any model
        call); the rewrites that need no model (a first turn, a question too
        long), ``None`` elsewhere; ``(index, prompt ids)`` of the rest,
        shortest first; and each pair as the rewriter reads it, its
        question's spaces closed up and no text with emoji (:func:`_read`).
        The one place the rewriter's own calls drop them: the prompts, the
        guards and the consensus then read the pairs the model read."""
        for question, history in items:
            refuse_non_text(question, history)
        read = [_read(question, history) for question, history in items]
        results: list[Rewrite | None] = [None] * len(items)
        todo: list[tuple[int, list[int]]] = []
        for index, (question, history) in enumerate(read):
            typed = " ".join(items[index][0].split())
            if typed != question and not any(character.isalnum() for character in question):
                # Emoji alone (or with punctuation): kept as typed, as asking
                # nothing; without them it would be an empty rewrite.
                results[index] = Rewrite(typed, note=_ASKS_NOTHING)
            elif not history or not question:
                # A first turn has nothing to resolve; an empty question nothing
                # to rewrite (the model would make one up from the history).
                results[index] = Rewrite(question)
            elif asks_nothing(question):
                # "ok", "a": no more to rewrite than an empty question.
                results[index] = Rewrite(question, note=_ASKS_NOTHING)
            elif compared := the_two_named(question, history):
                results[index] = Rewrite(compared)
            elif swapped := with_name_swapped(question, history):
                results[index] = Rewrite(swapped)
            elif names_new_subject(question):
                # Self-contained: a rewrite could only bring the earlier topic back.
                results[index] = Rewrite(question)
            elif len(self.tokenizer.encode(question, add_special_tokens=False)) > self.config.prompt.max_question_tokens:
                results[index] = Rewrite(question, note="kept the original question: too long to rewrite")
            else:
                todo.append((index, self._prompt_ids(question, history)))
        todo.sort(key=lambda item: len(item[1]))  # similar lengths together: less padding
        return results, todo, read

    def _chunks(self, todo: list) -> list[list]:
        size = max(1, self.config.batch_size)
        return [todo[start : start + size] for start in range(0, len(todo), size)]

    @property
    def eos_ids(self) -> frozenset[int]:
        """The token ids that end a rewrite."""
        return self._eos_ids

    def finish(self, question: str, history: Sequence[str], ids: Sequence[int], ended: bool) -> Rewrite:
        """The :class:`Rewrite` of generated token ids (up to an end of text,
        not including it; ``ended``: whether one came): decoded, cut to its
        first line (emoji dropped: :func:`~rewriting._rules.clean_output`),
        an exclusion it added of a name from nowhere cut
        (:func:`~rewriting._rules.without_invented_exclusion`), and the
        user's own question kept when the output did not end or drifted
        (:func:`drift_reason`). What :meth:`rewrite_batch`
        does with its greedy output, and with each beam's (:meth:`nbest_batch`).
        A pronoun put in as a name of the other gender becomes the kin the
        history asked about, by the name its answer gave where it clearly gave
        one (:func:`~rewriting._rules.kin_for_pronoun`). The question and
        the history are read as :meth:`rewrite_batch` reads them (:func:`_read`)."""
        return self._finish(*_read(question, history), ids, ended)

    def _finish(self, question: str, history: Sequence[str], ids: Sequence[int], ended: bool) -> Rewrite:
        """:meth:`finish` of a pair as read (:func:`_read`)."""
        text = self.tokenizer.decode(list(ids), skip_special_tokens=True)
        # A finished first line counts as an end too: _clean keeps only it.
        ended = ended or "\n" in text.strip()
        candidate = clean_output(text)
        candidate = without_invented_exclusion(question, history, candidate) or candidate
        reason = "" if ended else "the rewrite did not end"
        reason = reason or drift_reason(question, history, candidate, self.config)
        if reason:
            return Rewrite(question, f"kept the original question: {reason}", candidate)
        return Rewrite(kin_for_pronoun(question, history, candidate) or for_the_new_name(question, history, candidate) or candidate)

    def prompt_ids(self, question: str, history: Sequence[str]) -> list[int]:
        """The token ids the model reads to rewrite ``question`` after
        ``history``: the turns since the conversation last moved to a new
        subject (:func:`since_new_person`), without emoji (:func:`_read`)."""
        return self._prompt_ids(*_read(question, history))

    def _prompt_ids(self, question: str, history: Sequence[str]) -> list[int]:
        """:meth:`prompt_ids` of a pair as read (:func:`_read`)."""
        history = since_new_person(history)
        if self.config.prompt_format == "chat":
            text = chat_prompt(self.tokenizer, question, history, self.config.chat_history_turns)
            return self.tokenizer.encode(text, add_special_tokens=False)
        prompt = self.config.prompt
        if self.config.max_input_tokens is not None:
            prompt = replace(prompt, max_input_tokens=self.config.max_input_tokens)
        return plain_prompt_ids(self.tokenizer, question, history, prompt)

    def _opening_draft(self, question: str) -> list[int]:
        """The first tokens of ``question`` (as read, :func:`_read`), as the
        rewrite would start with them: a rewrite mostly begins by copying the
        question, so these are checked in the prompt's own pass (see
        :meth:`_generate_drafted`)."""
        if self.config.draft_tokens <= 0:
            return []
        # The plain format's target starts with a space ("Rewrite: ..."); the
        # chat format's answer starts a message.
        text = " " + question if self.config.prompt_format == "plain" else question
        return self.tokenizer.encode(text, add_special_tokens=False)[: min(self.config.draft_tokens, self.config.max_new_tokens)]

    @torch.inference_mode()
    def _generate(self, prompts: list[list[int]], opening: Sequence[int] = (), reads: list[_Read] | None = None,
                  stop: StopSignal = NO_STOP) -> list[Decoding]:
        """Greedy decoding; a :class:`Decoding` (``(token ids, ended_with_eos)``
        and its confidence) per prompt.

        One prompt goes through :meth:`_generate_drafted` when drafting is on;
        several are decoded together: through the lean forward without
        padding when the model has one (:meth:`_generate_lean`), otherwise as
        a left-padded batch. ``reads``, when given, gets the lean path's read
        of each prompt (:class:`_Read`), for a second look to start from.
        Each loop checks ``stop`` before each pass after the prompt's
        (:class:`~assistant.kernel.Stopped`).

        Written out (not ``model.generate``) because the copy head needs the
        hidden states at every step.
        """
        if len(prompts) == 1 and self.config.draft_tokens > 0:
            return [self._generate_drafted(prompts[0], opening, stop)]
        if self._fused is not None:
            return self._generate_lean(prompts, reads, stop)
        return self._generate_batch(prompts, stop)

    def _generate_lean(self, prompts: list[list[int]], reads: list[_Read] | None = None,
                       stop: StopSignal = NO_STOP) -> list[Decoding]:
        """Greedy decoding of several prompts through the lean forward: the
        prompts are read without padding (a left-padded batch pads most of
        them, and its prompt pass is most of a batch's time; BENCHMARKS.md
        §10, session 26), then every step feeds each prompt's one row in one
        pass (:meth:`~rewriting._fused.FusedLlama.forward_groups`).

        A prompt whose rewrite has ended is fed its last token again, its
        output unused, until half the rows have ended: taking it out of the
        stacked prompts copies the stack, and a step's few more rows cost
        little beside reading the weights. The prompts' caches stay as read
        (the steps write rows of their own); ``reads`` gets them."""
        fused, limit = self._fused, self.config.max_new_tokens
        caches = [fused.new_cache(len(prompt)) for prompt in prompts]
        logits = fused.forward_prompts(prompts, caches)
        if reads is not None:
            reads.extend(_Read(cache, row) for cache, row in zip(caches, logits))
        stacked = FusedPrompts(caches)
        rows = [fused.new_rows(1, limit) for _ in prompts]
        generated: list[list[int]] = [[] for _ in prompts]
        sureness: list[list[float]] = [[] for _ in prompts]
        fed = list(range(len(prompts)))  # the prompts in the pass, one row each, in this order
        going = set(fed)  # those still decoding
        while True:
            choices, chances = _greedy(logits)
            for prompt, token, chance in zip(fed, choices, chances):
                if prompt in going:
                    generated[prompt].append(token)
                    sureness[prompt].append(chance)
                    if token in self._eos_ids or len(generated[prompt]) >= limit:
                        going.discard(prompt)
            if not going:
                break
            if 2 * len(going) <= len(fed):
                stacked.select([slot for slot, prompt in enumerate(fed) if prompt in going])
                fed = [prompt for prompt in fed if prompt in going]
            stop.check()
            logits = fused.forward_groups([[generated[prompt][-1]] for prompt in fed], stacked, [rows[prompt] for prompt in fed])
        return [self._decoding(row, row_chances) for row, row_chances in zip(generated, sureness)]

    def _generate_batch(self, prompts: list[list[int]], stop: StopSignal = NO_STOP) -> list[Decoding]:
        """Greedy decoding of a left-padded batch.

        A row leaves the batch as soon as it ends, so the steps after the
        median rewrite's end run on the few long ones only. Once the rows left
        are few enough that ``batch_draft_rows`` has room, each carries a
        prompt-lookup draft (:func:`lookup_draft`), as one prompt alone does:
        rows accept different numbers of draft tokens, so a rejected token
        stays in the cache, masked out, and each row keeps its own positions.
        """
        batch = len(prompts)
        pad = self.tokenizer.pad_token_id
        want_hidden = self.copy_head is not None
        out, mask, positions, (source_keys, source_ids, source_mask) = self._read_prompts(prompts)
        generated: list[list[int]] = [[] for _ in prompts]
        sureness: list[list[float]] = [[] for _ in prompts]  # each generated token's probability
        ended = [False] * batch
        rows = list(range(batch))  # the prompts still decoding, in cache order
        choices, chances = _greedy(self._scores(out, source_keys, source_ids, source_mask, last=1)[:, 0])
        accepted = [[(token, chance)] for token, chance in zip(choices, chances)]
        next_position = positions[:, -1] + 1  # each row's position for its next fed token
        cache = out.cache

        def decoding(row: int) -> bool:
            return not ended[row] and len(generated[row]) < self.config.max_new_tokens

        while True:
            for slot, row in enumerate(rows):
                for token, chance in accepted[slot]:
                    if decoding(row):
                        generated[row].append(token)
                        sureness[row].append(chance)
                        ended[row] = token in self._eos_ids
            keep = [slot for slot, row in enumerate(rows) if decoding(row)]
            if not keep:
                break  # no forward pass for tokens that will not be used
            if len(keep) < len(rows):  # finished rows leave the batch and the cache
                index = torch.tensor(keep)
                cache.batch_select_indices(index)
                mask, next_position = mask[index], next_position[index]
                if want_hidden:
                    source_keys, source_ids, source_mask = source_keys[index], source_ids[index], source_mask[index]
                rows = [rows[slot] for slot in keep]
            drafts = self._batch_drafts(rows, prompts, generated)
            feed_width = 1 + max(len(draft) for draft in drafts)
            feed = torch.full((len(rows), feed_width), pad, dtype=torch.long)
            fed = torch.zeros((len(rows), feed_width), dtype=mask.dtype)
            for slot, (row, draft) in enumerate(zip(rows, drafts)):
                feed[slot, : 1 + len(draft)] = torch.tensor([generated[row][-1], *draft])
                fed[slot, : 1 + len(draft)] = 1
            mask = torch.cat([mask, fed], dim=1)
            stop.check()
            out = self.model(input_ids=feed, attention_mask=mask, position_ids=next_position[:, None] + torch.arange(feed_width),
                             cache=cache, use_cache=True, output_hidden_states=want_hidden)
            cache = out.cache
            choices, chances = _greedy(self._scores(out, source_keys, source_ids, source_mask))
            accepted = []
            for slot, draft in enumerate(drafts):
                kept = self._kept(draft, choices[slot])
                accepted.append(list(zip(draft[:kept] + [choices[slot][kept]], chances[slot])))
                mask[slot, mask.shape[1] - feed_width + 1 + kept :] = 0  # rejected draft tokens: never attended to
                next_position[slot] += 1 + kept
        return [self._decoding(row, row_chances) for row, row_chances in zip(generated, sureness)]

    def _read_prompts(self, prompts: list[list[int]]):
        """One forward pass over the prompts as a left-padded batch (every
        row's next token then goes in the same last column), scoring only each
        row's last position: ``(out, attention_mask, positions, (copy keys,
        input ids, input mask))``, the copy keys None without a copy head."""
        width = max(len(p) for p in prompts)
        input_ids = torch.full((len(prompts), width), self.tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            input_ids[row, width - len(ids) :] = torch.tensor(ids)
            mask[row, width - len(ids) :] = 1
        positions = (mask.cumsum(-1) - 1).clamp_min(0)
        want_hidden = self.copy_head is not None
        # logits_to_keep=1: only the last position's scores are read, and the
        # LM head over every prompt position is a large share of a prompt's cost.
        out = self.model(input_ids=input_ids, attention_mask=mask, position_ids=positions, use_cache=True,
                         output_hidden_states=want_hidden, logits_to_keep=1)
        source_keys = self.copy_head.keys(out.hidden_states[-1]) if want_hidden else None
        return out, mask, positions, (source_keys, input_ids, mask.bool())

    @torch.inference_mode()
    def _beam_batch(self, prompts: list[list[int]], beams: int, greedy: bool = False,
                    stop: StopSignal = NO_STOP) -> list[list[tuple[list[int], bool]]]:
        """Beam search: each prompt's ``beams`` best ``(token ids, ended)``,
        best first; with ``greedy``, preceded by the prompt's greedy decoding
        (what :meth:`_generate_batch` gives).

        The search is ``model.generate(num_beams=beams, early_stopping=True)``'s
        (tests pin the same hypotheses; :class:`BeamState` keeps each prompt's
        beams and ended hypotheses). Written out, as greedy decoding is, so
        that a copy head takes part; a done prompt's rows leave the batch and
        the cache. A greedy row is one more row of the same passes, after the
        beams' rows: a pass over a few more rows costs about the same on a
        CPU, and the prompt is read once for both.
        """
        count = len(prompts)
        want_hidden = self.copy_head is not None
        out, mask, positions, (source_keys, source_ids, source_mask) = self._read_prompts(prompts)
        log_probs = self._scores(out, source_keys, source_ids, source_mask, last=1)[:, 0].float().log_softmax(-1)
        walking = list(range(count)) if greedy else []  # prompts whose greedy row still decodes, in row order
        # Each prompt's beams start from its own state, its greedy row too.
        rows = torch.cat([torch.arange(count).repeat_interleave(beams), torch.tensor(walking, dtype=torch.long)])
        cache = out.cache
        cache.batch_select_indices(rows)
        log_probs, mask, next_position = log_probs[rows], mask[rows], positions[rows, -1] + 1
        if want_hidden:
            source_keys, source_ids, source_mask = source_keys[rows], source_ids[rows], source_mask[rows]
        running = torch.full((count, beams), -1e9)
        running[:, 0] = 0.0  # one seed per prompt: its beams are the same until they branch
        states = [BeamState(beams) for _ in prompts]
        decoded: list[list[int]] = [[] for _ in prompts]  # the greedy rows' tokens
        live = list(range(count))  # prompts still searching, ``beams`` cache rows each, in this order
        for step in range(self.config.max_new_tokens):
            last = step + 1 == self.config.max_new_tokens
            width = len(live) * beams  # the beams' rows; the greedy rows follow
            going, sources, feed, scores = [], [], [], []
            if live:
                for slot, (prompt, continuations) in enumerate(zip(live, self._continuations(log_probs[:width], running))):
                    kept = states[prompt].advance(continuations, step + 1, last, self._eos_ids)
                    if kept:
                        going.append(slot)
                        sources += [slot * beams + beam for _, beam, _ in kept]
                        feed += [token for _, _, token in kept]
                        scores.append([score for score, _, _ in kept])
            still = []
            for slot, (prompt, token) in enumerate(zip(walking, log_probs[width:].argmax(-1).tolist())):
                decoded[prompt].append(token)
                if token not in self._eos_ids and not last:
                    still.append(prompt)
                    sources.append(width + slot)
                    feed.append(token)
            walking = still
            if not sources:
                break
            live = [live[slot] for slot in going]
            chosen = torch.tensor(sources)
            cache.batch_select_indices(chosen)
            mask = torch.cat([mask[chosen], torch.ones((len(sources), 1), dtype=mask.dtype)], dim=1)
            next_position = next_position[chosen]
            if want_hidden:
                source_keys, source_ids, source_mask = source_keys[chosen], source_ids[chosen], source_mask[chosen]
            running = torch.tensor(scores).view(len(live), beams)
            stop.check()
            out = self.model(input_ids=torch.tensor(feed)[:, None], attention_mask=mask, position_ids=next_position[:, None],
                             cache=cache, use_cache=True, output_hidden_states=want_hidden)
            cache, next_position = out.cache, next_position + 1
            log_probs = self._scores(out, source_keys, source_ids, source_mask)[:, -1].float().log_softmax(-1)
        found = [[self._until_eos(ids) for _, ids in state.ended] for state in states]
        return [[self._until_eos(ids)] + hypotheses for ids, hypotheses in zip(decoded, found)] if greedy else found

    @torch.inference_mode()
    def _beam_lean(self, prompts: list[list[int]], beams: int,
                   reads: Sequence[_Read | None] | None = None, stop: StopSignal = NO_STOP) -> list[list[tuple[list[int], bool]]]:
        """:meth:`_beam_batch` through the lean forward: each prompt's keys and
        values are read once and shared by its beams, and one pass feeds every
        prompt's beams (:meth:`~rewriting._fused.FusedLlama.forward_groups`).
        The same search and :class:`BeamState`, so the same hypotheses (tested).

        A prompt with a read in ``reads`` (a batch's greedy pass read it the
        same way) starts from it; the others are read here. One question's
        greedy pass read its prompt with its opening draft, whose rounding in
        bfloat16 changed some near-tied beams (BENCHMARKS.md §10, sessions 24
        and 26), so it is read again."""
        fused = self._fused
        given = list(reads) if reads is not None else [None] * len(prompts)
        missing = [slot for slot, read in enumerate(given) if read is None]
        if missing:
            fresh = [fused.new_cache(len(prompts[slot])) for slot in missing]
            for slot, cache, row in zip(missing, fresh, fused.forward_prompts([prompts[slot] for slot in missing], fresh)):
                given[slot] = _Read(cache, row)
        log_probs = torch.stack([read.logits for read in given]).float().log_softmax(-1).repeat_interleave(beams, dim=0)
        stacked = FusedPrompts([read.cache for read in given])
        running = torch.full((len(prompts), beams), -1e9)
        running[:, 0] = 0.0  # one seed per prompt: its beams are the same until they branch
        states = [BeamState(beams) for _ in prompts]
        rows = [fused.new_rows(beams, self.config.max_new_tokens) for _ in prompts]
        live = list(range(len(prompts)))  # prompts still searching, ``beams`` rows each, in this order
        for step in range(self.config.max_new_tokens):
            last = step + 1 == self.config.max_new_tokens
            going, feed, scores = [], [], []
            for prompt, continuations in zip(live, self._continuations(log_probs, running)):
                kept = states[prompt].advance(continuations, step + 1, last, self._eos_ids)
                if kept:
                    going.append(prompt)
                    rows[prompt].select([beam for _, beam, _ in kept])
                    feed.append([token for _, _, token in kept])
                    scores.append([score for score, _, _ in kept])
            if not going:
                break
            if going != live:  # done prompts leave the stack
                stacked.select([live.index(prompt) for prompt in going])
            live = going
            running = torch.tensor(scores)
            stop.check()
            log_probs = fused.forward_groups(feed, stacked, [rows[prompt] for prompt in live]).float().log_softmax(-1)
        return [[self._until_eos(ids) for _, ids in state.ended] for state in states]

    def _continuations(self, log_probs: torch.Tensor, running: torch.Tensor) -> list[list[tuple[float, int, int]]]:
        """Each prompt's best ``(summed log-probability, beam, token)``, best
        first, for :meth:`BeamState.advance`: ``log_probs`` are the beams'
        rows, prompt by prompt (``(prompts * beams, vocab)``), ``running``
        their summed scores so far (``(prompts, beams)``). Enough of them that
        ``beams`` go on even when some of the best end."""
        prompts, beams = running.shape
        vocab = log_probs.shape[-1]
        total = (log_probs.reshape(prompts, beams, vocab) + running[:, :, None]).view(prompts, -1)
        top, index = total.topk(max(2, 1 + len(self._eos_ids)) * beams, dim=-1)
        return [[(score, *divmod(flat, vocab)) for score, flat in zip(scores, flats)]
                for scores, flats in zip(top.tolist(), index.tolist())]

    def _batch_drafts(self, rows: list[int], prompts: list[list[int]], generated: list[list[int]]) -> list[list[int]]:
        """Each row's prompt-lookup draft, as long as ``batch_draft_rows`` lets
        a pass over these rows be (none while the batch is large)."""
        size = min(self.config.draft_tokens, self.config.batch_draft_rows // len(rows) - 1)
        if size <= 0:
            return [[] for _ in rows]
        return [
            lookup_draft(prompts[row] + generated[row], min(size, self.config.max_new_tokens - len(generated[row])), self.config.draft_ngram)
            for row in rows
        ]

    def _until_eos(self, row: list[int]) -> tuple[list[int], bool]:
        cut = next((i for i, token_id in enumerate(row) if token_id in self._eos_ids), None)
        return (row, False) if cut is None else (row[:cut], True)

    def _decoding(self, row: list[int], chances: list[float]) -> Decoding:
        """``row`` up to its end, with the lowest of its tokens' ``chances``
        (the end's own not counted: how sure the model was to stop says
        nothing of the rewrite's words)."""
        ids, ended = self._until_eos(row)
        return Decoding(ids, ended, min(chances[: len(ids)], default=1.0))

    def _scores(self, out, source_keys, source_ids, source_mask, last: int | None = None) -> torch.Tensor:
        """Next-token scores ``(B, T, V)`` at the ``last`` positions of a forward
        pass (all when None): the LM's logits, mixed with the copy head's
        distribution when there is one. After reading a prompt only the last
        position counts, and the copy mixture over every prompt position would
        cost a vocabulary-wide softmax each."""
        logits = out.logits if last is None else out.logits[:, -last:]
        if self.copy_head is None:
            return logits
        hidden = out.hidden_states[-1][:, -logits.shape[1] :]
        return self.copy_head.log_probs(hidden, logits, source_keys, source_ids, source_mask)

    def _generate_drafted(self, prompt: list[int], opening: Sequence[int] = (), stop: StopSignal = NO_STOP) -> Decoding:
        """Greedy decoding of one prompt with prompt-lookup drafts.

        Each pass feeds the last chosen token plus a draft (see
        :func:`lookup_draft`); the model's own greedy choice at every position
        says how much of the draft stands, and the cache drops the rest. The
        prompt's own pass checks ``opening`` the same way: a few more rows in
        a pass of a hundred cost little, and each token kept saves a step. The
        output is what step-by-step greedy decoding gives, up to float rounding
        in near-ties. The passes are :class:`~rewriting._fused.FusedLlama`'s
        where the rewriter has one, else the model's own.
        """
        opening = list(opening)
        passes = _FusedPasses(self._fused, len(prompt) + self.config.max_new_tokens + self.config.draft_tokens) \
            if self._fused is not None else _ModelPasses(self, prompt)
        choices, chances = passes.run(prompt + opening, len(opening) + 1)
        kept = self._kept(opening, choices)
        generated, sureness = opening[:kept] + [choices[kept]], chances[: kept + 1]
        passes.drop(len(opening) - kept)
        while len(generated) < self.config.max_new_tokens and generated[-1] not in self._eos_ids:
            room = self.config.max_new_tokens - len(generated)
            draft = lookup_draft(prompt + generated, min(self.config.draft_tokens, room), self.config.draft_ngram)
            stop.check()
            choices, chances = passes.run([generated[-1], *draft], len(draft) + 1)
            kept = self._kept(draft, choices)
            generated += draft[:kept] + [choices[kept]]
            sureness += chances[: kept + 1]
            passes.drop(len(draft) - kept)  # forget the rejected draft tokens
        return self._decoding(generated[: self.config.max_new_tokens], sureness)

    def _kept(self, draft: Sequence[int], choices: Sequence[int]) -> int:
        """How many of the draft's tokens the model's own greedy choices confirm
        (an end of text ends the rewrite, so nothing after one stands)."""
        kept = 0
        while kept < len(draft) and draft[kept] == choices[kept] and draft[kept] not in self._eos_ids:
            kept += 1
        return kept


class _ModelPasses:
    """One sequence's passes through the model's own forward (and its copy
    head, when there is one), for :meth:`CausalLMRewriter._generate_drafted`."""

    def __init__(self, rewriter: CausalLMRewriter, prompt: list[int]):
        self.rewriter, self.prompt = rewriter, prompt
        self.source_ids = torch.tensor([prompt])
        self.source_mask = torch.ones_like(self.source_ids, dtype=torch.bool)
        self.source_keys = self.cache = None
        self.seen = 0  # positions whose keys/values are cached

    def run(self, feed: list[int], keep: int) -> tuple[list[int], list[float]]:
        """Feed ``feed`` after what is cached; the greedy choice at each of its
        last ``keep`` positions, and the probability given to each (:func:`_greedy`)."""
        rewriter = self.rewriter
        want_hidden = rewriter.copy_head is not None
        ids = torch.tensor([feed])
        if self.cache is None:  # the prompt's own pass
            out = rewriter.model(input_ids=ids, use_cache=True, output_hidden_states=want_hidden, logits_to_keep=keep)
            if want_hidden:
                self.source_keys = rewriter.copy_head.keys(out.hidden_states[-1][:, : len(self.prompt)])
        else:
            positions = torch.arange(self.seen, self.seen + len(feed))[None]
            out = rewriter.model(input_ids=ids, position_ids=positions, cache=self.cache, use_cache=True,
                                 output_hidden_states=want_hidden)
        self.cache, self.seen = out.cache, self.seen + len(feed)
        return _greedy(rewriter._scores(out, self.source_keys, self.source_ids, self.source_mask, last=keep)[0])

    def drop(self, count: int) -> None:
        """Forget the last ``count`` positions."""
        if count > 0:
            self.cache.crop(-count)
            self.seen -= count


class _FusedPasses:
    """The same passes through a :class:`~rewriting._fused.FusedLlama`."""

    def __init__(self, fused: FusedLlama, capacity: int):
        self.fused, self.cache = fused, fused.new_cache(capacity)

    def run(self, feed: list[int], keep: int) -> tuple[list[int], list[float]]:
        return _greedy(self.fused.forward(feed, self.cache, keep))

    def drop(self, count: int) -> None:
        self.cache.crop(self.cache.length - count)


class _Read(NamedTuple):
    """A prompt as the lean forward read it: its keys and values, and the
    logits after its last token."""

    cache: FusedCache
    logits: torch.Tensor


class Decoding(tuple):
    """A greedy decoding. It unpacks and compares as ``(token ids, ended)``,
    as a beam's hypothesis does, and carries ``confidence``: the lowest
    probability the model gave one of its tokens (1.0 when it has none),
    which ``RewriterConfig.second_look_below`` reads."""

    confidence: float

    def __new__(cls, ids: list[int], ended: bool, confidence: float = 1.0):
        decoding = super().__new__(cls, (ids, ended))
        decoding.confidence = confidence
        return decoding


def _greedy(scores: torch.Tensor) -> tuple[list, list]:
    """The greedy choice at each position of ``scores`` (``(..., vocabulary)``
    logits or log-probabilities) and the probability the model gave it."""
    return scores.argmax(-1).tolist(), scores.float().softmax(-1).amax(-1).tolist()


_ASKS_NOTHING = "kept the original question: it asks nothing to rewrite"


def _read(question: str, history: Sequence[str]) -> tuple[str, list[str]]:
    """A question and its history as the rewriter reads them: the question's
    spaces closed up, and no text with emoji
    (:func:`~rewriting._rules.without_emoji`), so that "Who was Hemingway?
    \U0001F60A" is the same question as "Who was Hemingway?". Read once, where
    a pair comes in (:meth:`CausalLMRewriter.rewrite_batch`,
    :meth:`~CausalLMRewriter.nbest_batch`, :meth:`~CausalLMRewriter.finish`,
    :meth:`~CausalLMRewriter.prompt_ids`); what they hand on is read already."""
    return without_emoji(" ".join(str(question).split())), [without_emoji(text) for text in history]


def _agreed(pool: Sequence[Rewrite], question: str, history: Sequence[str]) -> Rewrite:
    """The rewrite the pool's distinct texts agree on (:func:`consensus`);
    the first, the greedy one, on ties and when it is alone. The other
    distinct texts go with it as its ``alternatives``, for the search.

    A candidate the drift guard rejected for a name the user typed that it
    damaged (:func:`~rewriting._rules.name_damage`) is not picked, nor an
    alternative, but what it wrote still votes: the rest of it is the
    model's reading of the question, and without its vote the pick moved
    among the others where the damaged one would not have been picked.
    When every candidate damaged a name, the first (the question as asked,
    with the guard's note). Where the first or the pick put in for the
    question's pronoun another name than the previous question's subject
    (:func:`~rewriting._rules.previous_subject`), the consensus of the
    candidates naming that subject alone, when there are any."""
    damaged = [rewrite for rewrite in pool if rewrite.rejected and _for_a_name(rewrite, question, history)]
    distinct: dict[str, Rewrite] = {}
    for rewrite in pool:  # the first of a text gives its note: the greedy one's, the reason the turn was looked at again
        distinct.setdefault(rewrite.text, rewrite)
    texts = list(dict.fromkeys(rewrite.text for rewrite in pool if rewrite not in damaged)) or [pool[0].text]
    voters = list(dict.fromkeys(rewrite.rejected for rewrite in damaged))
    picked = texts[consensus(texts, voters)]
    subject = previous_subject(question, history)
    if strays_from(subject, question, pool[0].text) or strays_from(subject, question, picked):
        # The model (its first candidate, the greedy one) or the pick put
        # someone else in for the pronoun: the consensus of the candidates
        # naming the previous question's subject alone, the rest voting (a
        # mix, "Michelangelo da Vinci", is no such one). The others go on as
        # alternatives (searched beside it) only where they name no one else.
        keeping = [text for text in texts if names_only(subject, question, text)]
        if keeping and picked not in keeping:
            picked = keeping[consensus(keeping, voters + [text for text in texts if text not in keeping])]
            texts = [text for text in texts if not strays_from(subject, question, text)]
            return replace(distinct[picked], note=f"picked a candidate naming {subject}: the model's rewrite named someone else",
                           alternatives=tuple(text for text in texts if text != picked))
    return replace(distinct[picked], alternatives=tuple(text for text in texts if text != picked))


def _on_subject(rewrite: Rewrite, question: str, history: Sequence[str]) -> Rewrite:
    """``rewrite`` as final: where it still put another name than the
    previous question's subject in for the question's pronoun
    (:func:`~rewriting._rules.strays_from`), the question with the subject
    put in for it (:func:`~rewriting._rules.with_subject`), the model's
    rewrite kept as ``rejected``; the pair as read (:func:`_read`). Not
    where every candidate (the rewrite and its alternatives) named the same
    other name, nor for an it/its or a he/she of unknown gender."""
    subject = previous_subject(question, history)
    if not strays_from(subject, question, rewrite.text):
        return rewrite
    put = with_subject(subject, question, history, [rewrite.text, *rewrite.alternatives])
    if not put:
        return rewrite
    return Rewrite(put, f"put in {subject} for the pronoun, the previous question's subject", rewrite.text)


def _for_a_name(rewrite: Rewrite, question: str, history: Sequence[str]) -> bool:
    """Whether the guard kept the question for ``rewrite`` because its
    candidate damaged a typed name, not for an earlier reason (an output
    that did not end lacks the name's words too)."""
    reason = name_damage(question, history, rewrite.rejected)
    return bool(reason) and rewrite.note.endswith(reason)


def _plain_strides(_module, args):
    """The LM head's input with the strides of a fresh tensor. Scoring only the
    last position (``logits_to_keep=1``) hands it a slice that keeps the whole
    sequence's row stride, and a CPU bfloat16 product takes a far slower path
    on it than on the same values laid out afresh (BENCHMARKS.md §8).

    >>> hidden = torch.zeros(2, 5, 4)[:, -1:]
    >>> hidden.stride(), _plain_strides(None, (hidden,))[0].stride()
    ((20, 4, 1), (4, 4, 1))
    >>> _plain_strides(None, (torch.zeros(2, 1, 4),)) is None
    True
    """
    hidden = args[0]
    return (hidden.clone(memory_format=torch.contiguous_format), *args[1:]) if hidden.stride() != _fresh_strides(hidden.shape) else None


def _fresh_strides(shape) -> tuple[int, ...]:
    strides, step = [], 1
    for size in reversed(shape):
        strides.append(step)
        step *= size
    return tuple(reversed(strides))


def inference_dtype(name: str, native_bf16: bool | None = None) -> torch.dtype:
    """The torch dtype for a :attr:`RewriterConfig.dtype` setting.

    ``native_bf16`` says whether the CPU multiplies bfloat16 natively
    (default: ask oneDNN).

    >>> inference_dtype("auto", native_bf16=False)
    torch.float32
    >>> inference_dtype("auto", native_bf16=True)
    torch.bfloat16
    """
    if name == "auto":
        if native_bf16 is None:
            native_bf16 = cpu_has_native_bf16()
        return torch.bfloat16 if native_bf16 else torch.float32
    if name not in {"float32", "bfloat16"}:
        raise ValueError(f"dtype must be 'auto', 'float32' or 'bfloat16', not {name!r}")
    return getattr(torch, name)


def lookup_draft(tokens: Sequence[int], size: int, max_ngram: int = 3) -> list[int]:
    """Up to ``size`` tokens that followed the latest earlier occurrence of
    the last ``n`` tokens (``n`` from ``max_ngram`` down to 1); ``[]`` if none.

    >>> lookup_draft([5, 6, 7, 8, 9, 1, 6, 7], 3)
    [8, 9, 1]
    >>> lookup_draft([5, 6, 7, 4], 3)
    []
    """
    if size <= 0:
        return []
    for n in range(min(max_ngram, len(tokens) - 1), 0, -1):
        tail = list(tokens[-n:])
        for start in range(len(tokens) - n - 1, -1, -1):
            if list(tokens[start : start + n]) == tail:
                return list(tokens[start + n : start + n + size])
    return []

