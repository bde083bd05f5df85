"""One prompt's beam search bookkeeping, apart from the model that scores it.

:meth:`CausalLMRewriter._beam_batch` runs the model over every prompt's
beams at once; :class:`BeamState` decides, for one prompt, which of the
best continuations go on and which end, as ``model.generate(num_beams=N,
early_stopping=True)`` decides (tests pin the same hypotheses).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Collection, Iterable

__all__ = ["BeamState"]


@dataclass
class BeamState:
    """The running beams' tokens and the hypotheses that ended, best first.

    >>> state = BeamState(beams=2)
    >>> # (summed log-probability, beam, token), best first; token 2 ends a text.
    >>> state.advance([(-0.1, 0, 5), (-0.5, 0, 2), (-0.7, 0, 6), (-0.9, 0, 7)], length=1, last=False, ends={2})
    [(-0.1, 0, 5), (-0.7, 0, 6)]
    >>> state.sequences, state.ended, state.done
    ([[5], [6]], [(-0.5, [2])], False)
    >>> state.advance([(-0.3, 1, 2), (-0.4, 0, 2), (-0.6, 0, 8)], length=2, last=False, ends={2})
    []
    >>> state.ended, state.done
    ([(-0.15, [6, 2]), (-0.2, [5, 2])], True)
    """

    beams: int
    sequences: list[list[int]] = field(default_factory=list)
    # (summed log-probability / length, token ids with the ending one), best first
    ended: list[tuple[float, list[int]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.sequences:
            self.sequences = [[] for _ in range(self.beams)]

    @property
    def done(self) -> bool:
        """Whether ``beams`` hypotheses have ended: none can join them."""
        return len(self.ended) >= self.beams

    def advance(self, continuations: Iterable[tuple[float, int, int]], length: int, last: bool,
                ends: Collection[int]) -> list[tuple[float, int, int]]:
        """One step: ``continuations`` are the best ``(summed log-probability,
        beam, token)`` over all beams, best first, ``length`` the tokens each
        would hold. One that ends (a token of ``ends``, or any at the ``last``
        step) among the best ``beams`` is set aside, scored by its mean
        log-probability per token; up to ``beams`` others go on. Returns those
        that go on, ``[]`` once the prompt is done."""
        kept: list[tuple[float, int, int]] = []
        was_done = self.done
        for rank, (score, beam, token) in enumerate(continuations):
            if token in ends or last:
                if rank < self.beams and not was_done:
                    self.ended.append((score / length, self.sequences[beam] + [token]))
            elif len(kept) < self.beams:
                kept.append((score, beam, token))
        self.ended = sorted(self.ended, key=lambda hypothesis: -hypothesis[0])[: self.beams]
        if self.done or last:
            return []
        self.sequences = [self.sequences[beam] + [token] for _, beam, token in kept]
        return kept
