"""Linear weights laid out once for oneDNN: same outputs, only faster."""

from __future__ import annotations

import pytest
import torch

from rewriting import (TRAINED_ADAPTER, CausalLMRewriter, Int8Linear, PackedLinear, RewriterConfig, can_pack, can_quantize, load_rewriter,
                       pack_linears)

needs_int8 = pytest.mark.skipif(not can_quantize(), reason="this torch build has no FBGEMM int8 linear kernel (x86 wheels have it)")
needs_bf16 = pytest.mark.skipif(
    not can_pack(torch.bfloat16), reason="this CPU or torch build has no oneDNN bfloat16 linear kernel: nothing is packed here"
)

HISTORY = ["Who was Ada Lovelace?", "An English mathematician, the daughter of Lord Byron."]


def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=96, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    return LlamaForCausalLM(config).eval()


def test_float32_models_are_left_alone():
    model = _tiny_llama()
    assert pack_linears(model) == 0
    assert not any(isinstance(module, PackedLinear) for module in model.modules())
    assert not can_pack(torch.float32)


@needs_bf16
def test_packed_layers_give_the_plain_layers_outputs():
    model = _tiny_llama().to(torch.bfloat16)
    ids = torch.randint(0, 96, (3, 11))
    with torch.inference_mode():
        before = model(input_ids=ids).logits
        # 7 projections per layer and the LM head, which stays tied to the embedding's weight
        assert pack_linears(model) == 2 * 7 + 1
        after = model(input_ids=ids).logits
        one_row = model(input_ids=ids[:1, -1:]).logits  # a decoding step's shape
        sliced = model.lm_head(torch.randn(2, 5, 64, dtype=torch.bfloat16)[:, -1:])  # logits_to_keep's strided view
    assert isinstance(model.lm_head, PackedLinear) and model.model.embed_tokens.weight.dtype == torch.bfloat16
    torch.testing.assert_close(after, before, rtol=0.02, atol=0.02)
    assert torch.equal(after.argmax(-1), before.argmax(-1))
    assert one_row.shape == (1, 1, 96) and sliced.shape == (2, 1, 96)


@needs_bf16
def test_packed_layers_keep_the_bias():
    linear = torch.nn.Linear(8, 4).to(torch.bfloat16)
    torch.nn.init.normal_(linear.bias)
    x = torch.randn(5, 8, dtype=torch.bfloat16)
    with torch.inference_mode():
        torch.testing.assert_close(PackedLinear(linear)(x), linear(x), rtol=0.02, atol=0.02)


@needs_bf16
def test_the_rewriter_packs_bf16_weights_unless_asked_not_to(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    config = RewriterConfig(dtype="bfloat16", max_new_tokens=6)
    packed = CausalLMRewriter.from_pretrained(str(tmp_path), config=config)
    plain = CausalLMRewriter.from_pretrained(str(tmp_path), config=RewriterConfig(dtype="bfloat16", max_new_tokens=6, pack_weights=False))
    assert isinstance(packed.model.lm_head, PackedLinear)  # GPT-2's blocks are Conv1D; its head is a Linear
    assert type(plain.model.lm_head) is torch.nn.Linear
    questions = [("What did she write?", HISTORY), ("And her father?", HISTORY), ("When?", HISTORY)]
    assert packed.rewrite_batch(questions) == plain.rewrite_batch(questions)
    assert [packed.rewrite(q, h) for q, h in questions] == [plain.rewrite(q, h) for q, h in questions]


@needs_bf16
@pytest.mark.skipif(not (TRAINED_ADAPTER / "adapter_config.json").is_file(), reason="missing prerequisite: the trained adapter (restore rewriting/adapters/ from git)")
def test_the_trained_rewriter_rewrites_the_same_packed_or_not():
    packed = load_rewriter("trained", dtype="bfloat16")
    plain = load_rewriter("trained", dtype="bfloat16", pack_weights=False)
    assert sum(isinstance(m, PackedLinear) for m in packed.model.modules()) == 30 * 7 + 1
    history = HISTORY + ["What did she write about?", "The first algorithm meant for a machine, in her notes."]
    questions = [("What did she write about?", HISTORY), ("Who was her father?", HISTORY), ("When were they published?", history)]
    assert packed.rewrite_batch(questions) == plain.rewrite_batch(questions)
    assert [packed.rewrite(q, h) for q, h in questions] == [plain.rewrite(q, h) for q, h in questions]


@needs_int8
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_an_int8_layer_gives_the_float_layers_outputs_within_its_rounding(dtype):
    torch.manual_seed(0)
    linear = torch.nn.Linear(64, 48).to(dtype)
    with torch.no_grad():
        linear.weight[5] = 0  # a row of zeros has no scale of its own
    x = torch.randn(2, 7, 64).to(dtype)
    with torch.inference_mode():
        expected, got = linear(x).float(), Int8Linear(linear)(x)
    assert got.shape == (2, 7, 48) and got.dtype == dtype
    # int8 weights and rows: a few hundredths of the largest output, never more
    error = (got.float() - expected).abs().max() / expected.abs().max()
    assert 0 < error < 0.03
    torch.testing.assert_close(got.float()[..., 5], linear.bias[5].float().expand(2, 7), rtol=0.01, atol=0.01)  # the bias is kept


def test_int8_is_said_unavailable_when_torch_lacks_its_quantized_tensors(monkeypatch):
    monkeypatch.delattr(torch, "quantize_per_channel")
    assert not can_quantize()
