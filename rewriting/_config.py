"""The settings of :class:`rewriting.CausalLMRewriter`, one reason on each default."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._prompt import PromptConfig

__all__ = ["RewriterConfig"]


@dataclass(frozen=True)
class RewriterConfig:
    """Decoding, prompting and drift-guard settings of :class:`CausalLMRewriter`."""

    # "chat" (few-shot prompt for an instruct model), "plain" (the fine-tuned
    # format) or "auto": the recipe saved with trained weights, else "chat"
    # when the tokenizer has a chat template, else "plain".
    prompt_format: str = "auto"
    # Token budgets of the plain format; the questions' and answers' must match
    # those used in training (from_pretrained reads them from the saved recipe).
    prompt: PromptConfig = field(default_factory=PromptConfig)
    # Whole plain prompt in tokens at inference; None: prompt.max_input_tokens,
    # the training budget. A longer one keeps earlier turns that training's
    # budget cut off, for more prefill time (BENCHMARKS.md §10 measures both).
    max_input_tokens: int | None = None
    # Earlier turns shown in the chat format: a 135M model loses track of
    # which question to rewrite when shown more.
    chat_history_turns: int = 3
    # Longest rewrite in tokens: human rewrites are under 40 tokens, and a
    # bound caps latency when a model fails to stop.
    max_new_tokens: int = 40
    # Questions rewritten in one forward pass by rewrite_batch. A decoding
    # step reads every weight whatever the rows, so more rows share that cost;
    # prompts are sorted by length, so padding stays small (BENCHMARKS.md §8).
    batch_size: int = 32
    # Prompt-lookup drafting for a single question (0: off). A rewrite mostly
    # copies the question and a name from the history, so the tokens after the
    # latest match of the last few generated tokens in the prompt are proposed
    # and checked in one forward pass. Greedy output stays the model's own. A
    # 9-token pass costs little more than one step with bf16 weights (much more
    # in float32), so drafts pay off with bf16 (figures: BENCHMARKS.md §3).
    draft_tokens: int = 8
    # Longest n-gram of generated tokens looked up in the prompt; shorter ones
    # are tried when it is not found.
    draft_ngram: int = 3
    # Rows one pass of a batch may feed, drafts included (0: no drafts in
    # batches). Rows that end leave the batch, and once few are left each
    # gets a draft of up to batch_draft_rows // rows - 1 tokens (none while 9
    # or more are left). A pass of a few rows costs about one row's, but a
    # batch's long tail of one or two rows would otherwise take a pass per
    # token; 16, 32 and 64 measured alike (BENCHMARKS.md §8, session 10).
    batch_draft_rows: int = 16
    # Beams of an N-best search run after the greedy rewrite (0: none). The
    # rewrite is then the consensus of the greedy one and the beams'
    # (rewriting._consensus), and the others widen the search
    # (Rewrite.alternatives): more often the human rewrite's words, at the
    # cost of a beam search per question, so it is off where a person waits
    # on 2 CPU cores and a choice for batch rewriting (BENCHMARKS.md §10).
    candidates: int = 0
    # Beams searched again for a follow-up whose greedy rewrite has the
    # question's words (0: never), when ``candidates`` is 0: the rewrite is
    # then their consensus with it, as with ``candidates``. A follow-up left
    # as asked mostly still lacks its subject ("when was he attacked?"), and
    # few turns are left so, so the search costs little beyond them
    # (BENCHMARKS.md §10, session 23).
    second_look: int = 4
    # With second_look, a follow-up whose greedy rewrite changed the question
    # is searched again too when the model was unsure of it: one of its tokens
    # had less than this probability (0: only those left as asked). An unsure
    # rewrite is more often a wrong referent, and the beams' other candidates
    # widen the search for it (Rewrite.alternatives); chosen on training turns
    # for retrieval (BENCHMARKS.md §10, session 25).
    second_look_below: float = 0.3
    # Weights' dtype when loaded by from_pretrained: "auto" is bfloat16 where
    # the CPU multiplies it natively (AVX512-BF16/AMX; the adapter was trained
    # under bf16 autocast): prompts and drafts read faster (BENCHMARKS.md §3);
    # single-token steps gain little. Elsewhere float32: emulated bf16 is slower.
    dtype: str = "auto"
    # Lay bfloat16 linear weights out once for oneDNN (rewriting._packing):
    # otherwise every call re-lays them, which costs as much as a decoding
    # step's product. Same outputs bit for bit; False only to compare.
    pack_weights: bool = True
    # One question's passes through rewriting._fused (q/k/v and gate/up as
    # one product each, a preallocated cache) for Llama models without a copy
    # head: the same logits with less work around the products, which a
    # draft pass on 2 cores is mostly made of (BENCHMARKS.md §10, session 22).
    # False only to compare; batches keep transformers' forward.
    fused_forward: bool = True
    # One question's prompt and draft passes through the fused forward read
    # int8 copies of every weight but the down projection's
    # (rewriting._fused): half the bytes a pass reads, the rewrites close to
    # bfloat16's but not equal, about as good. Off: on two threads it gains
    # little (0.97x); on one it takes 0.86x the time (BENCHMARKS.md §10, session 49).
    int8_weights: bool = False
    # Drift guard: share of the question's content words the rewrite must
    # keep. 0.5 lets the model replace a vague word but not the whole question.
    min_content_overlap: float = 0.5
    # Drift guard: words a rewrite may add to the question. Resolving a
    # reference adds a name or a phrase, rarely more than ~12 words.
    max_added_words: int = 20
