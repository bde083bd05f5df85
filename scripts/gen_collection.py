"""Generate a synthetic passage collection for indexing benchmarks.

    python scripts/gen_collection.py --out DIR [--passages 1000000] [--shards 8] [--seed 0]

Writes ``--shards`` JSONL files ``DIR/part-NNN.jsonl`` (pyserini's
JsonCollection folder layout, which ``python -m assistant.index`` reads too),
one ``{"id", "contents", "title", "url"}`` passage a line. The same arguments
always give the same bytes: words are drawn by a seeded numpy PCG64 stream.

Text is realistic in the ways that drive Lucene's cost: word frequencies
follow Zipf's law (rank r drawn with weight 1 / r**s) over a vocabulary of
made-up pronounceable words, passage lengths vary around QReCC's (about a
hundred words), and passages come in pages of a few passages sharing a
title, with ids like QReCC's ``<page>_p<n>``. Each passage's contents starts
with its title, so our indexer (which prefixes the title when missing) and
pyserini's plain JsonCollection index the very same text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from tqdm import tqdm

# Run as a file (python scripts/gen_collection.py): the repository root is not on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.kernel import CommandParser, check_at_least, output_path, run_cli  # noqa: E402

_ONSETS = ["", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
           "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "ou", "io"]
_CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "rt", "st", "ng"]


def vocabulary(size: int, rng: np.random.Generator) -> list[str]:
    """``size`` distinct made-up words; the shortest tend to get the top ranks,
    as function words do in real text."""
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < size:
        syllables = 1 + int(rng.integers(0, 2 + 3 * len(words) // size))
        word = "".join(
            _ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
            + _CODAS[rng.integers(len(_CODAS))]
            for _ in range(syllables)
        )
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words


def generate(passages: int, shards: int, out: Path, seed: int = 0, vocab: int = 50_000,
             zipf: float = 1.07, progress: bool = True) -> int:
    rng = np.random.default_rng(seed)
    words = vocabulary(vocab, rng)
    weights = 1.0 / np.arange(1, vocab + 1) ** zipf
    cumulative = np.cumsum(weights / weights.sum())
    out.mkdir(parents=True, exist_ok=True)
    files = [open(out / f"part-{n:03d}.jsonl", "w", encoding="utf-8") for n in range(shards)]
    written = page = 0
    try:
        with tqdm(total=passages, unit=" passages", file=sys.stderr, disable=not progress) as bar:
            while written < passages:
                # A block of pages is drawn with a few vectorised calls: one
                # call per page made the generator slower than the indexers.
                pages = _BLOCK_PAGES
                title_sizes = 1 + rng.integers(0, 3, size=pages)
                # Titles draw from the rarer half of the vocabulary, as names do.
                title_ranks = (vocab // 2 + rng.integers(0, vocab // 2, size=int(title_sizes.sum()))).tolist()
                in_page = 1 + rng.integers(0, 6, size=pages)
                lengths = np.clip(rng.normal(110, 35, size=int(in_page.sum())).astype(int), 20, 220)
                ranks = np.searchsorted(cumulative, rng.random(int(lengths.sum())), side="right").clip(0, vocab - 1)
                draws = [words[r] for r in ranks.tolist()]
                at_title = at_word = at_passage = 0
                lengths = lengths.tolist()
                for size, count in zip(title_sizes.tolist(), in_page.tolist()):
                    if written >= passages:
                        break
                    title = " ".join(words[r].capitalize() for r in title_ranks[at_title:at_title + size])
                    at_title += size
                    url = f"https://example.org/{title.replace(' ', '_')}"
                    for number in range(min(count, passages - written)):
                        length = lengths[at_passage + number]
                        body = " ".join(draws[at_word:at_word + length])
                        at_word += length
                        record = {"id": f"page{page:07d}_p{number}", "contents": f"{title}. {body.capitalize()}.",
                                  "title": title, "url": url}
                        files[written % shards].write(json.dumps(record) + "\n")
                        written += 1
                    at_passage += count
                    page += 1
                bar.update(min(written, passages) - bar.n)
    finally:
        for file in files:
            file.close()
    return written


# Pages drawn per block of vectorised calls (about 3.5 passages a page).
_BLOCK_PAGES = 10_000


def main(argv: list[str] | None = None) -> int:
    """The generator; a bad flag or an --out that cannot be a folder is one ``error:`` line, exit 2."""
    return run_cli(_main, argv, interrupted="the collection is incomplete: run the same command again")


def _main(argv: list[str] | None) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="output folder (JSONL shards)")
    parser.add_argument("--passages", type=int, default=1_000_000, help="passages to write (default 1,000,000)")
    parser.add_argument("--shards", type=int, default=8, help="JSONL files to spread passages over (default 8)")
    parser.add_argument("--seed", type=int, default=0, help="random seed: the same seed writes the same collection (default 0)")
    parser.add_argument("--vocab", type=int, default=50_000, help="vocabulary size (default 50,000)")
    parser.add_argument("--zipf", type=float, default=1.07, help="Zipf exponent s (English is about 1; default 1.07)")
    args = parser.parse_args(argv)
    # Each flag named with its value (one message named all three), and an
    # --out that is a file refused in words, not a FileExistsError traceback.
    check_at_least(passages=(args.passages, 1), shards=(args.shards, 1), vocab=(args.vocab, 10))
    output_path(args.out, "--out", folder=True)
    count = generate(args.passages, args.shards, args.out, args.seed, args.vocab, args.zipf)
    print(json.dumps({"out": str(args.out), "passages": count, "shards": args.shards, "seed": args.seed}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
