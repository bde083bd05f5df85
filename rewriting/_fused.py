"""One sequence's forward pass through a Llama-architecture model, lean.

A rewrite asked by one person is a prompt's pass and a few draft passes of
one sequence (``CausalLMRewriter._generate_drafted``). On a laptop's two
cores the products of such a pass are bound by reading the weights, and
transformers' general forward (masks for any batch, a cache object, seven
products a layer) adds much work of its own around them (BENCHMARKS.md §10,
session 22, has the profile). This forward does the same arithmetic with
less around it:

* q, k and v are one product, and gate and up are one (their weights are
  stacked once at load time): five products a layer instead of seven;
* the keys and values go into one preallocated tensor per call
  (:class:`FusedCache`), and dropping rejected draft tokens is moving its end;
* the mask is built once a pass, not per layer.

Beam searches (:meth:`FusedLlama.forward_groups`) share each step's
linear products across every prompt's beams. A prompt's keys and values
are kept once for all its beams (:class:`FusedPrompts`), and each beam
adds only its own tokens' (:class:`FusedRows`), where transformers copies
the prompt's cache into every beam and reorders it at each step. Attention
reads each prompt once per layer with its beams' queries side by side, so
no prompt is copied per beam and several prompts of different lengths take
one product, padded.

Each step is the one transformers' Llama does, in the same dtypes, so the
logits equal its logits (tested, and byte-identical rewrites on the
held-out turns: BENCHMARKS.md §10, session 22). The beams' attention is
computed in float32 (PyTorch's CPU attention also accumulates bfloat16 in
float32) and rounds apart from PyTorch's call: near-tied beams can swap
(session 26). The output projection, the
down projection, the norms and the LM head are the model's own modules,
called as they are (packed or not), so only the stacked weights add memory.
Batches of prompts keep transformers' forward for their greedy decoding:
it needs padding masks.

With ``int8=True`` (:meth:`FusedLlama.from_model`), one sequence's passes
(:meth:`FusedLlama.forward`: a question's prompt and its drafts) multiply
int8 copies of the q/k/v, output, gate/up and LM-head weights
(:class:`~rewriting.Int8Linear`): half the bytes to read, outputs close to
but not equal to bfloat16's. The down projection stays as it is: on a few
tokens its inputs are thousands of times the rest, which one int8 scale a
call cannot hold. Several prompts or beams in one call
(:meth:`FusedLlama.forward_prompts`, :meth:`FusedLlama.forward_groups`)
keep the model's weights, so no sequence's rounding depends on another's.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import torch
import torch.nn.functional as F

from ._packing import Int8Linear, PackedLinear, can_pack, can_quantize

__all__ = ["FusedLlama", "FusedCache", "FusedPrompts", "FusedRows"]


class _Positions:
    """Keys and values whose positions run along their next-to-last axis;
    ``length`` positions hold keys and values."""

    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype):
        self.keys = torch.empty(shape, dtype=dtype)
        self.values = torch.empty(shape, dtype=dtype)
        self.length = 0

    @property
    def capacity(self) -> int:
        return self.keys.shape[-2]

    def reserve(self, positions: int) -> None:
        """Room for ``positions`` in all, kept positions copied over (at least doubling, so growth is rare)."""
        if positions <= self.capacity:
            return
        capacity = max(positions, 2 * self.capacity)
        for name in ("keys", "values"):
            old = getattr(self, name)
            new = old.new_empty((*old.shape[:-2], capacity, old.shape[-1]))
            new[..., : self.length, :] = old[..., : self.length, :]
            setattr(self, name, new)


class FusedCache(_Positions):
    """Keys and values of one sequence, for :meth:`FusedLlama.forward`.

    Allocated per rewrite, so one :class:`FusedLlama` serves any number of
    threads; ``length`` is how many positions hold keys and values.
    """

    def __init__(self, layers: int, kv_heads: int, head_dim: int, capacity: int, dtype: torch.dtype):
        super().__init__((layers, kv_heads, capacity, head_dim), dtype)

    def crop(self, length: int) -> None:
        """Forget the positions from ``length`` on (rejected draft tokens)."""
        if not 0 <= length <= self.length:
            raise ValueError(f"cannot crop a cache of {self.length} positions to {length}")
        self.length = length


class FusedRows(_Positions):
    """The keys and values of the tokens several rows (a prompt's beams) add
    after their shared prompt, for :meth:`FusedLlama.forward_groups`.
    Every row holds ``length`` positions."""

    def __init__(self, layers: int, rows: int, kv_heads: int, head_dim: int, capacity: int, dtype: torch.dtype):
        super().__init__((layers, rows, kv_heads, capacity, head_dim), dtype)

    @property
    def rows(self) -> int:
        return self.keys.shape[1]

    def select(self, order: Sequence[int]) -> None:
        """Row ``i`` becomes a copy of row ``order[i]`` (the beams that go on, by their source)."""
        if len(order) != self.rows:
            raise ValueError(f"{len(order)} rows chosen for a cache of {self.rows}")
        if self.length and list(order) != list(range(self.rows)):
            index = torch.tensor(order)
            for name in ("keys", "values"):
                held = getattr(self, name)
                held[:, :, :, : self.length] = held[:, index, :, : self.length]


class FusedPrompts:
    """Several prompts' keys and values side by side for
    :meth:`FusedLlama.forward_groups`: padded to the longest, and in float32,
    the precision the beams' attention is computed in, converted once per
    search, not per step. ``lengths`` are the prompts' own lengths."""

    def __init__(self, caches: Sequence[FusedCache]):
        if not caches:
            raise ValueError("no prompts given")
        self.lengths = [cache.length for cache in caches]
        layers, kv_heads, _, head_dim = caches[0].keys.shape
        shape = (layers, len(caches), kv_heads, max(self.lengths), head_dim)
        self.keys, self.values = torch.zeros(shape), torch.zeros(shape)  # zeros, not garbage: padding is weighted 0
        for group, cache in enumerate(caches):
            self.keys[:, group, :, : cache.length] = cache.keys[..., : cache.length, :]
            self.values[:, group, :, : cache.length] = cache.values[..., : cache.length, :]
        self._mask()

    @property
    def groups(self) -> int:
        return len(self.lengths)

    def select(self, groups: Sequence[int]) -> None:
        """Keep the prompts ``groups`` (indices into the current ones), in that order."""
        if not groups or any(not 0 <= group < self.groups for group in groups):
            raise ValueError(f"cannot keep prompts {list(groups)} of {self.groups}")
        if list(groups) != list(range(self.groups)):
            index = torch.tensor(groups)
            self.lengths = [self.lengths[group] for group in groups]
            longest = max(self.lengths)
            self.keys = self.keys[:, index, :, :longest].contiguous()
            self.values = self.values[:, index, :, :longest].contiguous()
            self._mask()

    def _mask(self) -> None:
        """Added to the attention scores: -inf on a prompt's padding."""
        self.mask = torch.zeros(self.groups, 1, 1, self.keys.shape[-2])
        for group, length in enumerate(self.lengths):
            self.mask[group, ..., length:] = float("-inf")


class FusedLlama:
    """The lean forward of a Llama-architecture causal LM; see the module docstring.

    Build it with :meth:`from_model` before the model's linear layers are
    packed (stacking needs their plain weights); it keeps the model's modules
    by their parents, so packing them afterwards is seen here too.
    """

    def __init__(self, model, qkv: list[torch.nn.Module], gate_up: list[torch.nn.Module], lean: "_Int8 | None" = None):
        config = model.config
        self.model = model
        self._int8 = lean  # one sequence's int8 products, or None: the model's weights everywhere
        self.heads = config.num_attention_heads
        self.kv_heads = config.num_key_value_heads
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.intermediate = config.intermediate_size
        self._qkv, self._gate_up = qkv, gate_up  # per layer: a Linear, or its PackedLinear

    @staticmethod
    def supports(model) -> bool:
        """Whether ``model`` is a Llama this forward reproduces: Llama blocks
        without biases, SiLU, plain (not yet packed) q/k/v and gate/up layers,
        no PEFT wrapper. Positions come from the model's own rotary module,
        so any rotary scaling it has is applied as it applies it."""
        config = getattr(model, "config", None)
        inner = getattr(model, "model", None)
        if config is None or getattr(config, "model_type", None) != "llama" or inner is None:
            return False
        plain = all(
            type(getattr(block, name)) is torch.nn.Linear
            for layer in inner.layers
            for block, names in ((layer.self_attn, ("q_proj", "k_proj", "v_proj")), (layer.mlp, ("gate_proj", "up_proj")))
            for name in names
        )
        return (
            plain
            and not getattr(config, "attention_bias", False)
            and not getattr(config, "mlp_bias", False)
            and getattr(config, "hidden_act", "silu") == "silu"
        )

    @classmethod
    def from_model(cls, model, pack: bool = True, int8: bool = False) -> "FusedLlama":
        """Stack each layer's q/k/v and gate/up weights into one linear layer
        each (a :class:`~rewriting.PackedLinear` when ``pack`` and
        :func:`~rewriting.can_pack` allow); with ``int8`` (where
        :func:`~rewriting.can_quantize` allows), int8 copies for
        :meth:`forward` too (see the module docstring)."""
        if not cls.supports(model):
            raise ValueError(f"FusedLlama reproduces Llama models only, not {type(model).__name__}")
        packed = pack and can_pack(model.model.embed_tokens.weight.dtype)
        qkv, gate_up = [], []
        lean = _Int8([], [], [], Int8Linear(model.lm_head)) if int8 and can_quantize() else None
        for layer in model.model.layers:
            attn, mlp = layer.self_attn, layer.mlp
            for stacked, parts, name in ((qkv, (attn.q_proj, attn.k_proj, attn.v_proj), "qkv"),
                                         (gate_up, (mlp.gate_proj, mlp.up_proj), "gate_up")):
                linear = _stacked(parts)
                if lean is not None:  # from the same stacked weight, before packing takes it
                    getattr(lean, name).append(Int8Linear(linear))
                stacked.append(PackedLinear(linear) if packed else linear)
            if lean is not None:
                lean.o_proj.append(Int8Linear(attn.o_proj))
        return cls(model, qkv, gate_up, lean)

    @property
    def int8(self) -> bool:
        """Whether :meth:`forward` multiplies int8 weights."""
        return self._int8 is not None

    def new_cache(self, capacity: int) -> FusedCache:
        """An empty cache for ``capacity`` positions (it grows if a call needs more)."""
        dtype = self.model.model.embed_tokens.weight.dtype
        return FusedCache(len(self._qkv), self.kv_heads, self.head_dim, capacity, dtype)

    def new_rows(self, rows: int, capacity: int) -> FusedRows:
        """Empty per-row caches for ``rows`` rows of ``capacity`` positions each (they grow if needed)."""
        dtype = self.model.model.embed_tokens.weight.dtype
        return FusedRows(len(self._qkv), rows, self.kv_heads, self.head_dim, capacity, dtype)

    @torch.inference_mode()
    def forward(self, ids: Sequence[int], cache: FusedCache, keep: int = 1) -> torch.Tensor:
        """Feed ``ids`` at the positions after ``cache.length``; the logits
        ``(keep, vocab)`` of the last ``keep`` of them."""
        inner = self.model.model
        count = len(ids)
        start, end = cache.length, cache.length + count
        cache.reserve(end)
        x = inner.embed_tokens(torch.tensor(ids))
        cos, sin = _rotary(*inner.rotary_emb(x, torch.arange(start, end)[None]))
        mask = _causal_mask(count, end)
        lean = self._int8
        for index, layer in enumerate(inner.layers):
            q, k, v = (part.transpose(0, 1) for part in self._heads(index, layer, x, cos, sin, lean))
            x = self._after_attention(index, layer, x, self._cached_attention(index, layer, q, k, v, cache, start, mask), lean)
        cache.length = end
        return (self.model.lm_head if lean is None else lean.lm_head)(inner.norm(x[-keep:]))

    @torch.inference_mode()
    def forward_prompts(self, prompts: Sequence[Sequence[int]], caches: Sequence[FusedCache]) -> torch.Tensor:
        """Read several prompts, each into its own empty cache: the logits
        ``(prompts, vocab)`` after each one's last token. The linear layers
        run once over all the prompts' tokens, so the weights are read once,
        not once a prompt; attention runs per prompt, over its own positions
        (one prompt is exactly :meth:`forward`'s pass)."""
        if len(prompts) != len(caches) or not prompts:
            raise ValueError(f"{len(prompts)} prompts and {len(caches)} caches given: one empty cache per prompt, at least one")
        if any(cache.length for cache in caches):
            raise ValueError("forward_prompts reads prompts into empty caches")
        inner = self.model.model
        spans, start = [], 0
        for prompt, cache in zip(prompts, caches):
            cache.reserve(len(prompt))
            spans.append((start, start + len(prompt)))
            start += len(prompt)
        x = inner.embed_tokens(torch.tensor([token for prompt in prompts for token in prompt]))
        positions = torch.cat([torch.arange(len(prompt)) for prompt in prompts])
        cos, sin = _rotary(*inner.rotary_emb(x, positions[None]))
        masks = {length: _causal_mask(length, length) for length in map(len, prompts)}
        for index, layer in enumerate(inner.layers):
            q, k, v = (part.transpose(0, 1) for part in self._heads(index, layer, x, cos, sin))
            attended = [self._cached_attention(index, layer, q[:, first:end], k[:, first:end], v[:, first:end], cache, 0, masks[end - first])
                        for (first, end), cache in zip(spans, caches)]
            x = self._after_attention(index, layer, x, torch.cat(attended))
        for (first, end), cache in zip(spans, caches):
            cache.length = end - first
        return self.model.lm_head(inner.norm(x[[end - 1 for _, end in spans]]))

    @torch.inference_mode()
    def forward_groups(self, ids: Sequence[Sequence[int]], prompts: "FusedPrompts", rows: Sequence[FusedRows]) -> torch.Tensor:
        """Feed one token per row of several prompts' beams: group ``g``'s
        rows take ``ids[g]``, each after prompt ``g`` of ``prompts`` and its
        own ``rows[g]`` positions (the groups advance together, so every
        ``rows[g]`` holds as many). The logits ``(all rows, vocab)``, group by
        group; each row's are what :meth:`forward` gives for its sequence.

        The linear layers run once over every group's rows (a step's cost on
        a CPU is mostly reading the weights). Attention reads each prompt's
        keys once for all its beams, as queries side by side, and each row's
        own keys apart (:func:`_attended`): no prompt is copied per beam."""
        inner = self.model.model
        if not len(ids) == len(rows) == prompts.groups:
            raise ValueError(f"tokens for {len(ids)} groups, {len(rows)} rows' caches and {prompts.groups} prompts given")
        for tokens, own in zip(ids, rows):
            if len(tokens) != own.rows:
                raise ValueError(f"{len(tokens)} tokens for {own.rows} rows")
        at = rows[0].length
        if any(own.length != at for own in rows):
            raise ValueError(f"the groups' rows hold {[own.length for own in rows]} positions: they must advance together")
        for own in rows:
            own.reserve(at + 1)
        # Row r of the step is slot slots[r] of its group's queries, padded to the largest group.
        counts = [own.rows for own in rows]
        width = max(counts)
        slots = torch.tensor([group * width + slot for group, count in enumerate(counts) for slot in range(count)])
        count = len(slots)
        x = inner.embed_tokens(torch.tensor([token for tokens in ids for token in tokens]))
        positions = [length + at for length, group_rows in zip(prompts.lengths, counts) for _ in range(group_rows)]
        cos, sin = _rotary(*inner.rotary_emb(x, torch.tensor([positions])))  # each row its own position
        for index, layer in enumerate(inner.layers):
            q, k, v = self._heads(index, layer, x, cos, sin)
            first = 0
            for own, group_rows in zip(rows, counts):
                own.keys[index, :, :, at] = k[first : first + group_rows]
                own.values[index, :, :, at] = v[first : first + group_rows]
                first += group_rows
            own_keys = torch.cat([own.keys[index, :, :, : at + 1] for own in rows])
            own_values = torch.cat([own.values[index, :, :, : at + 1] for own in rows])
            out = _attended(q, prompts, index, own_keys, own_values, slots, width, layer.self_attn.scaling)
            x = self._after_attention(index, layer, x, out.to(x.dtype).reshape(count, -1))
        for own in rows:
            own.length += 1
        return self.model.lm_head(inner.norm(x))

    def _cached_attention(self, index: int, layer, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cache: FusedCache,
                          start: int, mask: torch.Tensor | None) -> torch.Tensor:
        """Layer ``index``'s attention of a span of one sequence: its keys and
        values ``(kv_heads, span, head_dim)`` go into ``cache`` from
        position ``start``, and its queries ``(heads, span, head_dim)`` attend
        over the cache up to the span's end under ``mask``
        (:func:`_causal_mask`); ``(span, heads * head_dim)``."""
        end = start + q.shape[1]
        cache.keys[index, :, start:end] = k
        cache.values[index, :, start:end] = v
        out = F.scaled_dot_product_attention(
            q[None], cache.keys[index, :, :end][None], cache.values[index, :, :end][None],
            attn_mask=mask, scale=layer.self_attn.scaling, enable_gqa=self.heads != self.kv_heads,
        )
        return out[0].transpose(0, 1).reshape(end - start, -1)

    def _heads(self, index: int, layer, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
               lean: "_Int8 | None" = None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Layer ``index``'s queries, keys and values of ``x`` ``(rows, hidden)``
        head by head, ``(rows, heads, head_dim)`` each, from one stacked
        product (``lean``'s int8 one if given); the queries and keys rotated
        to their positions (:func:`_rotary`'s ``cos`` and ``sin``) in one
        call, as they lie side by side in the product."""
        rotated = self.heads + self.kv_heads
        y = (self._qkv if lean is None else lean.qkv)[index](layer.input_layernorm(x))
        y = y.view(x.shape[0], rotated + self.kv_heads, self.head_dim)
        qk = _rotated(y[:, :rotated], cos, sin)
        return qk[:, : self.heads], qk[:, self.heads :], y[:, rotated:]

    def _after_attention(self, index: int, layer, x: torch.Tensor, attended: torch.Tensor, lean: "_Int8 | None" = None) -> torch.Tensor:
        """The layer's output: ``x`` plus the output projection of its
        attention's heads ``attended`` ``(rows, heads * head_dim)``, then plus
        its MLP (gate and up as one stacked product); ``lean``'s int8
        products if given, the down projection the model's own."""
        o_proj, gate_up = (layer.self_attn.o_proj, self._gate_up[index]) if lean is None else (lean.o_proj[index], lean.gate_up[index])
        x = x + o_proj(attended)
        gate_up = gate_up(layer.post_attention_layernorm(x))
        return x + layer.mlp.down_proj(F.silu(gate_up[:, : self.intermediate]) * gate_up[:, self.intermediate :])


class _Int8(NamedTuple):
    """The int8 products of :meth:`FusedLlama.forward`, per layer but the LM head."""

    qkv: list[Int8Linear]
    gate_up: list[Int8Linear]
    o_proj: list[Int8Linear]
    lm_head: Int8Linear


def _attended(q: torch.Tensor, prompts: FusedPrompts, index: int, own_keys: torch.Tensor, own_values: torch.Tensor,
              slots: torch.Tensor, width: int, scale: float) -> torch.Tensor:
    """Layer ``index``'s attention of each row's query ``q`` ``(rows, heads,
    head_dim)`` over its prompt's keys (``prompts``) and then its own
    ``(rows, kv_heads, own, head_dim)``, in float32; ``(rows, heads, head_dim)``.

    One softmax over both parts, so it is the attention over the row's whole
    sequence. The prompt part is one batched product per prompt and layer:
    a group's rows are the queries side by side (row ``r`` is query slot
    ``slots[r]`` of ``width`` per group), and each query head reads its
    key-value head (grouped-query attention, as transformers' ``repeat_kv``)."""
    rows, heads, head_dim = q.shape
    kv_heads = own_keys.shape[1]
    q = q.float().view(rows, kv_heads, heads // kv_heads, head_dim)
    grouped = _by_group(q, slots, prompts.groups, width)
    on_prompt = _by_row(grouped @ prompts.keys[index].transpose(-1, -2) * scale + prompts.mask, slots, width)
    longest = on_prompt.shape[-1]
    on_own = q @ own_keys.float().transpose(-1, -2) * scale  # (rows, kv_heads, share, own)
    weights = torch.cat([on_prompt, on_own], dim=-1).softmax(-1)
    to_prompt, to_own = weights[..., :longest], weights[..., longest:]
    from_prompt = _by_row(_by_group(to_prompt, slots, prompts.groups, width) @ prompts.values[index], slots, width)
    return (from_prompt + to_own @ own_values.float()).view(rows, heads, head_dim)


def _by_group(per_row: torch.Tensor, slots: torch.Tensor, groups: int, width: int) -> torch.Tensor:
    """Rows' ``(rows, kv_heads, share, n)`` laid out for one product per
    group: ``(groups, kv_heads, width * share, n)``, row ``r`` at slot
    ``slots[r]`` and a group's missing rows zero."""
    _, kv_heads, share, n = per_row.shape
    laid = per_row.new_zeros(groups * width, kv_heads, share, n)
    laid[slots] = per_row
    return laid.view(groups, width, kv_heads, share, n).transpose(1, 2).reshape(groups, kv_heads, width * share, n)


def _by_row(per_group: torch.Tensor, slots: torch.Tensor, width: int) -> torch.Tensor:
    """:func:`_by_group`'s layout back to each row's ``(rows, kv_heads, share, n)``."""
    groups, kv_heads, queries, n = per_group.shape
    share = queries // width
    return per_group.view(groups, kv_heads, width, share, n).transpose(1, 2).reshape(-1, kv_heads, share, n)[slots]


def _causal_mask(count: int, end: int) -> torch.Tensor | None:
    """The attention mask of ``count`` new positions ending at ``end``: row
    ``i`` sees the positions before the new ones and its own prefix of them.
    None for one position, which sees all."""
    return torch.ones(count, end, dtype=torch.bool).tril(end - count) if count > 1 else None


def _stacked(layers: Sequence[torch.nn.Linear]) -> torch.nn.Linear:
    """One bias-free linear layer whose output is ``layers``' outputs side by side."""
    weight = torch.cat([layer.weight.detach() for layer in layers])
    linear = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False, device="meta")
    linear.weight = torch.nn.Parameter(weight, requires_grad=False)
    return linear


def _rotary(cos: torch.Tensor, sin: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A rotary module's ``cos`` and ``sin`` ``(1, rows, head_dim)`` as
    :func:`_rotated` takes them: ``(rows, 1, head_dim)``, one position a row
    for every head, and ``sin``'s first half negated, so that rotating half
    of each vector is one roll rather than two slices, a negation and a cat."""
    half = sin.shape[-1] // 2
    sin = torch.cat((-sin[..., :half], sin[..., half:]), dim=-1)
    return cos[0, :, None], sin[0, :, None]


def _rotated(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotary positions of ``x`` ``(rows, heads, head_dim)`` as transformers'
    ``apply_rotary_pos_emb`` applies them, given :func:`_rotary`'s tables: its
    ``rotate_half(x) * sin`` is ``(-x2, x1) * (s1, s2)``, here ``(x2, x1) *
    (-s1, s2)``, the same products (a sign moved), so the same values."""
    return x * cos + x.roll(x.shape[-1] // 2, -1) * sin
