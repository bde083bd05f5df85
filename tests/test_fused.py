"""The lean forward of one sequence (rewriting._fused): transformers' logits, and the same rewrites."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
import torch

from rewriting import (TRAINED_ADAPTER, CausalLMRewriter, Decoding, FusedCache, FusedLlama, FusedPrompts, RewriterConfig, can_pack, can_quantize,
                       load_rewriter, pack_linears)

HISTORY = ["Who was Ada Lovelace?", "An English mathematician, the daughter of Lord Byron."]


def _tiny_llama(vocab: int = 96, seed: int = 0, **overrides):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    settings = dict(vocab_size=vocab, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                    num_key_value_heads=2, tie_word_embeddings=True) | overrides
    return LlamaForCausalLM(LlamaConfig(**settings)).eval()


def _fused_and_ids(count: int, **overrides):
    """A tiny Llama, its fused forward and ``count`` random token ids."""
    model = _tiny_llama(**overrides)
    return model, FusedLlama.from_model(model), torch.randint(0, 96, (count,)).tolist()


def _reference(model, ids: list[int]) -> torch.Tensor:
    """transformers' logits of the whole sequence, one pass."""
    with torch.inference_mode():
        return model(input_ids=torch.tensor([ids])).logits[0]


def test_a_prompt_and_then_drafts_give_transformers_logits():
    model, fused, ids = _fused_and_ids(30)
    expected = _reference(model, ids)
    cache = fused.new_cache(64)
    prompt = fused.forward(ids[:20], cache, keep=3)  # the prompt's pass, its last 3 rows
    torch.testing.assert_close(prompt, expected[17:20], rtol=1e-4, atol=1e-4)
    one = fused.forward(ids[20:21], cache)  # a one-row step
    torch.testing.assert_close(one, expected[20:21], rtol=1e-4, atol=1e-4)
    draft = fused.forward(ids[21:30], cache, keep=9)  # a 9-row draft check
    torch.testing.assert_close(draft, expected[21:30], rtol=1e-4, atol=1e-4)
    assert cache.length == 30


def test_cropping_forgets_rejected_draft_tokens():
    model, fused, ids = _fused_and_ids(16)
    cache = fused.new_cache(32)
    fused.forward(ids[:10], cache)
    fused.forward([5, 6, 7, 8], cache, keep=4)  # a draft the model rejects
    cache.crop(10)
    after = fused.forward(ids[10:16], cache, keep=6)
    torch.testing.assert_close(after, _reference(model, ids)[10:16], rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="cannot crop a cache of 16 positions to 17"):
        cache.crop(17)


def test_a_cache_grows_past_its_capacity_and_keeps_what_it_held():
    model, fused, ids = _fused_and_ids(40)
    cache = fused.new_cache(8)
    fused.forward(ids[:6], cache)
    last = fused.forward(ids[6:40], cache, keep=34)
    assert cache.capacity >= 40
    torch.testing.assert_close(last, _reference(model, ids)[6:40], rtol=1e-4, atol=1e-4)


def test_grouped_and_plain_heads_both_match():
    model, fused, ids = _fused_and_ids(12, num_key_value_heads=4)  # as many key/value heads as query heads
    torch.testing.assert_close(fused.forward(ids, fused.new_cache(12), keep=12), _reference(model, ids), rtol=1e-4, atol=1e-4)


def test_only_llama_models_with_plain_projections_are_taken(tiny_gpt2):
    assert FusedLlama.supports(_tiny_llama())
    assert not FusedLlama.supports(tiny_gpt2[0])
    assert not FusedLlama.supports(_tiny_llama(attention_bias=True))
    with pytest.raises(ValueError, match="Llama models only, not GPT2LMHeadModel"):
        FusedLlama.from_model(tiny_gpt2[0])
    if can_pack(torch.bfloat16):  # packed projections have no plain weights left to stack
        packed = _tiny_llama().to(torch.bfloat16)
        pack_linears(packed)
        assert not FusedLlama.supports(packed)


@pytest.mark.skipif(not can_pack(torch.bfloat16), reason="this CPU or torch build has no oneDNN bfloat16 linear kernel: nothing is packed here")
def test_packed_bf16_weights_give_the_packed_models_logits():
    model = _tiny_llama().to(torch.bfloat16)
    fused = FusedLlama.from_model(model, pack=True)
    pack_linears(model)  # as from_pretrained does: the model's own layers packed after stacking
    ids = torch.randint(0, 96, (20,)).tolist()
    expected = _reference(model, ids)
    cache = fused.new_cache(20)
    got = torch.cat([fused.forward(ids[:11], cache, keep=11), fused.forward(ids[11:], cache, keep=9)])
    torch.testing.assert_close(got, expected, rtol=0.02, atol=0.02)
    assert torch.equal(got.argmax(-1), expected.argmax(-1))


def _rewriters(tmp_path, tiny_gpt2, **overrides):
    """A tiny random Llama with the GPT-2 tokenizer, loaded with the fused forward and without."""
    _, tokenizer = tiny_gpt2
    model = _tiny_llama(vocab=len(tokenizer), hidden_size=32, intermediate_size=64,
                        bos_token_id=tokenizer.eos_token_id, eos_token_id=tokenizer.eos_token_id, **overrides)
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    config = RewriterConfig(dtype="float32", max_new_tokens=8)
    return (CausalLMRewriter.from_pretrained(str(tmp_path), config=config),
            CausalLMRewriter.from_pretrained(str(tmp_path), config=RewriterConfig(dtype="float32", max_new_tokens=8, fused_forward=False)))


def test_the_rewriter_takes_the_fused_forward_for_one_question_and_rewrites_the_same(tmp_path, tiny_gpt2):
    fused, plain = _rewriters(tmp_path, tiny_gpt2)
    assert isinstance(fused._fused, FusedLlama) and plain._fused is None
    questions = [("What did she write?", HISTORY), ("And her father?", HISTORY), ("When was she born?", HISTORY)]
    assert [fused.rewrite(q, h) for q, h in questions] == [plain.rewrite(q, h) for q, h in questions]
    assert fused.rewrite_batch(questions) == plain.rewrite_batch(questions)  # and a batch through it
    prompts = [fused.prompt_ids(q, h) for q, h in questions]  # and each rewrite's confidence is the same
    assert [fused._generate([p])[0].confidence for p in prompts] == pytest.approx([plain._generate([p])[0].confidence for p in prompts], abs=1e-5)


def test_models_it_cannot_reproduce_keep_their_own_forward(tiny_gpt2, tmp_path):
    model, tokenizer = tiny_gpt2
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    assert CausalLMRewriter.from_pretrained(str(tmp_path), config=RewriterConfig(dtype="float32"))._fused is None


@pytest.mark.skipif(not (TRAINED_ADAPTER / "adapter_config.json").is_file(), reason="missing prerequisite: the trained adapter (restore rewriting/adapters/ from git)")
def test_the_trained_rewriter_rewrites_the_same_with_the_fused_forward():
    fused = load_rewriter("trained")
    plain = load_rewriter("trained", fused_forward=False)
    assert isinstance(fused._fused, FusedLlama) and plain._fused is None
    history = HISTORY + ["What did she write about?", "The first algorithm meant for a machine, in her notes."]
    questions = [("What did she write about?", HISTORY), ("Who was her father?", HISTORY), ("When were they published?", history)]
    assert [fused.rewrite(q, h) for q, h in questions] == [plain.rewrite(q, h) for q, h in questions]


def test_a_cache_is_per_call_so_threads_can_share_the_weights():
    model, fused, ids = _fused_and_ids(10)
    first, second = fused.new_cache(16), fused.new_cache(16)
    assert isinstance(first, FusedCache) and first.keys.data_ptr() != second.keys.data_ptr()
    fused.forward(ids[:4], first)
    alone = fused.forward(ids, second, keep=10)  # the other cache is untouched by the first's positions
    torch.testing.assert_close(alone, _reference(model, ids), rtol=1e-4, atol=1e-4)


def test_rows_after_a_shared_prompt_give_each_rows_own_logits_and_follow_their_sources():
    model, fused, ids = _fused_and_ids(10)
    prompt = fused.new_cache(10)
    fused.forward(ids, prompt)
    rows = fused.new_rows(3, 1)  # grows past its capacity
    tails = [[5], [6], [7]]
    stacked = FusedPrompts([prompt])
    got = fused.forward_groups([[5, 6, 7]], stacked, [rows])
    for row, tail in enumerate(tails):
        torch.testing.assert_close(got[row], _reference(model, ids + tail)[-1], rtol=1e-4, atol=1e-4)
    # Beams go on from their sources: row 0 from row 2 twice over, row 2 from row 0.
    rows.select([2, 2, 0])
    tails = [tails[2] + [8], tails[2] + [9], tails[0] + [10]]
    got = fused.forward_groups([[8, 9, 10]], stacked, [rows])
    for row, tail in enumerate(tails):
        torch.testing.assert_close(got[row], _reference(model, ids + tail)[-1], rtol=1e-4, atol=1e-4)
    assert (rows.length, prompt.length) == (2, 10)  # the prompt's cache is only read
    with pytest.raises(ValueError, match="2 rows chosen for a cache of 3"):
        rows.select([0, 1])
    with pytest.raises(ValueError, match="2 tokens for 3 rows"):
        fused.forward_groups([[1, 2]], stacked, [rows])


def test_a_lone_second_look_searches_through_the_fused_forward_and_finds_the_same_beams(tmp_path, tiny_gpt2):
    # Large random weights: peaked scores, so beams branch from one another
    # and a beam's cache must follow its source.
    fused, plain = _rewriters(tmp_path, tiny_gpt2, initializer_range=1.0)
    questions = [("What did she write?", HISTORY), ("And her father?", HISTORY), ("When was she born?", HISTORY)]
    for question, history in questions:
        prompt = fused.prompt_ids(question, history)
        expected = plain._beam_batch([prompt], 4)[0]
        assert len(expected) == 4 and fused._beam_lean([prompt], 4) == [expected]


def test_several_prompts_search_together_through_the_fused_forward_and_find_each_ones_beams(tmp_path, tiny_gpt2):
    # Prompts of different lengths in one pass per step, each attending to its
    # own prompt only; some end their search before the others.
    fused, plain = _rewriters(tmp_path, tiny_gpt2, initializer_range=1.0)
    questions = [("What did she write?", HISTORY), ("And her father?", HISTORY[:2]), ("When?", ["Hi", ""]),
                 ("When was she born and where did she live?", HISTORY)]
    prompts = [fused.prompt_ids(question, history) for question, history in questions]
    assert len({len(prompt) for prompt in prompts}) == 4
    written = Counter(token for hypotheses in plain._beam_batch(prompts, 4) for ids, _ in hypotheses for token in ids)
    for rewriter in (fused, plain):  # many of the tokens they write end a text: the searches end at different steps
        rewriter._eos_ids = frozenset(token for token, _ in written.most_common(80))
    alone = [plain._beam_batch([prompt], 4)[0] for prompt in prompts]
    assert fused._beam_lean(prompts, 4) == alone == plain._beam_batch(prompts, 4)
    longest = [max(len(ids) for ids, _ in hypotheses) for hypotheses in alone]
    assert any(ended for hypotheses in alone for _, ended in hypotheses) and len(set(longest)) > 1, longest


def test_groups_give_each_groups_own_rows_logits():
    # Two prompts of different lengths (the shorter one padded) and different
    # numbers of beams in one pass give what each prompt's pass alone gives.
    model, fused, ids = _fused_and_ids(14)
    first, second = ids[:9], ids[9:]
    caches = [fused.new_cache(8), fused.new_cache(8)]
    fused.forward(first, caches[0])
    fused.forward(second, caches[1])
    stacked, rows = FusedPrompts(caches), [fused.new_rows(2, 4), fused.new_rows(3, 4)]
    together = fused.forward_groups([[1, 2], [3, 4, 5]], stacked, rows)
    alone = [fused.forward_groups([[1, 2]], FusedPrompts(caches[:1]), [fused.new_rows(2, 4)]),
             fused.forward_groups([[3, 4, 5]], FusedPrompts(caches[1:]), [fused.new_rows(3, 4)])]
    torch.testing.assert_close(together, torch.cat(alone), atol=1e-5, rtol=1e-4)
    for prompt, tokens, logits in [(first, [1, 2], together[:2]), (second, [3, 4, 5], together[2:])]:
        for token, row in zip(tokens, logits):
            torch.testing.assert_close(row, _reference(model, prompt + [token])[-1], atol=1e-4, rtol=1e-4)
    assert [r.length for r in rows] == [1, 1] and [c.length for c in caches] == [9, 5]
    # The first prompt done: the second goes on alone, from its own positions.
    stacked.select([1])
    assert stacked.lengths == [5] and stacked.keys.shape[-2] == 5
    rows[1].select([2, 0, 0])
    on = fused.forward_groups([[6, 7, 8]], stacked, rows[1:])
    for tail, row in zip([[5, 6], [3, 7], [3, 8]], on):
        torch.testing.assert_close(row, _reference(model, second + tail)[-1], atol=1e-4, rtol=1e-4)
    with pytest.raises(ValueError, match="tokens for 1 groups, 2 rows' caches and 1 prompts given"):
        fused.forward_groups([[1, 2, 3]], stacked, rows)
    with pytest.raises(ValueError, match=r"rows hold \[1, 2\] positions: they must advance together"):
        fused.forward_groups([[1, 2], [3, 4, 5]], FusedPrompts(caches), rows)
    with pytest.raises(ValueError, match=r"cannot keep prompts \[1\] of 1"):
        stacked.select([1])
    with pytest.raises(ValueError, match="no prompts given"):
        FusedPrompts([])


def test_follow_ups_left_as_asked_get_their_second_looks_together_through_the_fused_forward(tmp_path, tiny_gpt2):
    fused, plain = _rewriters(tmp_path, tiny_gpt2)
    tokenizer = tiny_gpt2[1]
    lean_calls, batch_calls = [], []
    for rewriter in (fused, plain):  # greedy decoding leaves every question as asked
        rewriter._generate = lambda prompts, opening=(), reads=None, stop=None: [
            Decoding(tokenizer.encode(" " + tokenizer.decode(p).split("Question:")[-1].split("Rewrite:")[0].strip(),
                                      add_special_tokens=False), True) for p in prompts]
    search_lean, search_batch = fused._beam_lean, fused._beam_batch
    fused._beam_lean = lambda prompts, beams, reads=None, stop=None: lean_calls.append((len(prompts), beams)) or search_lean(prompts, beams, reads)
    fused._beam_batch = lambda prompts, beams, greedy=False, stop=None: batch_calls.append(len(prompts)) or search_batch(prompts, beams, greedy)
    one = [("And her father?", HISTORY)]
    assert fused.rewrite_batch(one) == plain.rewrite_batch(one)
    assert (lean_calls, batch_calls) == ([(1, 4)], [])
    three = [("And her father?", HISTORY), ("When was she born?", HISTORY), ("What did she write?", HISTORY)]
    assert fused.rewrite_batch(three) == plain.rewrite_batch(three)  # any number: one lean search
    assert (lean_calls, batch_calls) == ([(1, 4), (3, 4)], [])
    # batch_size at a time: a search holds its prompts' keys and values.
    fused.config = replace(fused.config, batch_size=2)
    assert fused.rewrite_batch(three) == plain.rewrite_batch(three)
    assert (lean_calls[2:], batch_calls) == ([(2, 4), (1, 4)], [])


def test_prompts_read_in_one_pass_give_each_prompts_own_read():
    # Three prompts of different lengths, one a single token: one pass, no
    # padding, and each cache holds what the prompt's own pass would hold.
    model, fused, ids = _fused_and_ids(21)
    prompts = [ids[:9], ids[9:10], ids[10:]]
    together = [fused.new_cache(16) for _ in prompts]
    logits = fused.forward_prompts(prompts, together)
    for prompt, cache, row in zip(prompts, together, logits):
        alone = fused.new_cache(16)
        torch.testing.assert_close(row, fused.forward(prompt, alone)[-1], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(row, _reference(model, prompt)[-1], atol=1e-4, rtol=1e-4)
        assert cache.length == alone.length == len(prompt)
        torch.testing.assert_close(cache.keys[:, :, : len(prompt)], alone.keys[:, :, : len(prompt)], atol=1e-5, rtol=1e-4)
        torch.testing.assert_close(cache.values[:, :, : len(prompt)], alone.values[:, :, : len(prompt)], atol=1e-5, rtol=1e-4)
    with pytest.raises(ValueError, match="2 prompts and 1 caches given"):
        fused.forward_prompts(prompts[:2], [fused.new_cache(4)])
    with pytest.raises(ValueError, match="into empty caches"):
        fused.forward_prompts(prompts[:1], together[:1])


def test_a_batch_decodes_greedily_through_the_fused_forward_with_transformers_rewrites(tmp_path, tiny_gpt2):
    # Prompts of different lengths, rewrites ending at different steps (many
    # of the tokens written end a text): two end at once, one after four
    # tokens, and then the last two go on alone in a smaller pass.
    fused, plain = _rewriters(tmp_path, tiny_gpt2, initializer_range=1.0)
    questions = [("What did she write?", HISTORY), ("And her father?", HISTORY[:1]), ("When?", ["Hi", ""]),
                 ("When was she born and where did she live?", HISTORY), ("Why?", HISTORY)]
    prompts = [fused.prompt_ids(question, history) for question, history in questions]
    written = Counter(token for decoding in plain._generate_batch(prompts) for token in decoding[0])
    for rewriter in (fused, plain):
        rewriter._eos_ids = frozenset(token for token, _ in written.most_common(10))
    lean_calls = []
    lean = fused._generate_lean
    fused._generate_lean = lambda prompts, reads=None, stop=None: lean_calls.append(len(prompts)) or lean(prompts, reads)
    expected = plain._generate(prompts)
    got = fused._generate(prompts)
    assert lean_calls == [5]
    assert [tuple(d) for d in got] == [tuple(d) for d in expected]
    assert [d.confidence for d in got] == pytest.approx([d.confidence for d in expected], abs=1e-5)
    assert [(len(d[0]), d[1]) for d in expected] == [(0, True), (0, True), (8, False), (8, False), (4, True)]


def test_a_batchs_second_looks_start_from_its_greedy_pass_read_of_each_prompt(tmp_path, tiny_gpt2):
    # Every rewrite is searched again (any confidence is "unsure" under 1.01).
    # The batch's greedy pass read its prompts once; the search reads only
    # the prompt that went through the one-question path (its own chunk).
    fused, plain = _rewriters(tmp_path, tiny_gpt2, initializer_range=1.0)
    for rewriter in (fused, plain):
        rewriter.config = replace(rewriter.config, second_look_below=1.01, batch_size=2)
    read = fused._fused.forward_prompts
    reads = []
    fused._fused.forward_prompts = lambda prompts, caches: reads.append(len(prompts)) or read(prompts, caches)
    searched = []
    search = fused._beam_lean
    fused._beam_lean = lambda prompts, beams, given=None, stop=None: searched.append([r is not None for r in given]) or search(prompts, beams, given)
    three = [("What did she write?", HISTORY), ("And her father?", HISTORY), ("When was she born?", HISTORY)]
    assert fused.rewrite_batch(three) == plain.rewrite_batch(three)
    assert searched == [[True, True], [False]]
    assert reads == [2, 1]  # the first chunk's greedy pass, then the lone prompt's search
    # Each prompt's search starts from its own read: the same hypotheses as
    # transformers' search of each prompt.
    prompts = [fused.prompt_ids(question, history) for question, history in three]
    kept = []
    fused._generate_lean(prompts, kept)
    assert [len(read.cache.keys[0, 0]) for read in kept] == [len(prompt) for prompt in prompts]
    expected = plain._beam_batch(prompts, 4)
    assert search(prompts, 4, kept) == expected and len({str(hypotheses) for hypotheses in expected}) == 3


def test_the_rewriter_reads_int8_weights_only_when_asked(tmp_path, tiny_gpt2):
    fused, _ = _rewriters(tmp_path, tiny_gpt2)
    assert not fused._fused.int8
    if can_quantize():
        lean = CausalLMRewriter.from_pretrained(str(tmp_path), config=RewriterConfig(dtype="float32", max_new_tokens=8, int8_weights=True))
        assert lean._fused.int8


@pytest.mark.skipif(not can_quantize(), reason="this torch build has no FBGEMM int8 linear kernel (x86 wheels have it)")
def test_int8_passes_of_one_sequence_stay_close_to_transformers_and_beams_keep_the_models_weights():
    model = _tiny_llama()
    lean, plain = FusedLlama.from_model(model, int8=True), FusedLlama.from_model(model)
    assert lean.int8 and not plain.int8
    ids = torch.randint(0, 96, (24,)).tolist()
    expected = _reference(model, ids)
    cache = lean.new_cache(24)
    got = torch.cat([lean.forward(ids[:16], cache, keep=16), lean.forward(ids[16:], cache, keep=8)])
    assert not torch.equal(got, expected)  # int8 products, not the float ones
    assert (got - expected).abs().max() < 0.05 * expected.abs().max()
    assert (got.argmax(-1) == expected.argmax(-1)).float().mean() >= 0.9
    # several prompts in one call keep the model's weights: bit for bit the plain forward's
    prompts = [ids[:9], ids[3:20]]
    read = lean.forward_prompts(prompts, [lean.new_cache(20) for _ in prompts])
    assert torch.equal(read, plain.forward_prompts(prompts, [plain.new_cache(20) for _ in prompts]))


def test_int8_falls_back_to_the_models_weights_where_torch_cannot_quantize(monkeypatch):
    monkeypatch.delattr(torch, "quantize_per_channel")
    model = _tiny_llama()
    fused = FusedLlama.from_model(model, int8=True)
    ids = torch.randint(0, 96, (10,)).tolist()
    assert not fused.int8
    torch.testing.assert_close(fused.forward(ids, fused.new_cache(10), keep=10), _reference(model, ids), rtol=1e-4, atol=1e-4)
