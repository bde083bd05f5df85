"""Metrics: pure functions, each with a worked example.

Two families live here.

*Rewrite metrics* compare a candidate rewrite with a reference (human)
rewrite, as QReCC's Table 3 does: :func:`rouge1_recall` (rouge-score, the
reference as target), :func:`bleu` (NLTK sentence BLEU, smoothed),
:func:`embedding_similarity` (USE or MiniLM vectors; :func:`cosine` or the
:func:`angular_similarity` USE's authors recommend) and :func:`r_at_k` (overlap
of the two queries' top-k BM25 results on a local index: a proxy for the
paper's web-search R@10).

*Answer metrics* are those of the seed papers: SQuAD's
:func:`normalize_answer`, :func:`exact_match` and :func:`token_f1` (QReCC),
CoQA's :func:`leave_one_out` averaging over several golds,
:func:`best_over_golds`, and :func:`mrr` / :func:`recall_at_k` against
relevance judgements.

Scores are floats in [0, 1] (cosine: [-1, 1]); callers multiply by 100 for
the papers' tables. Reference packages (rouge-score, NLTK) are wrapped, never
copied, and imported on first use so that answer metrics cost no import time.
"""

from __future__ import annotations

import collections
import math
import re
import string
from functools import lru_cache
from typing import Callable, Collection, Mapping, Protocol, Sequence

import numpy as np

from assistant.kernel import InvalidInputError, run_cli, sklearn_stopwords, tokens

__all__ = [
    "normalize_answer",
    "exact_match",
    "token_f1",
    "best_over_golds",
    "leave_one_out",
    "mrr",
    "recall_at_k",
    "rouge1_recall",
    "bleu",
    "cosine",
    "angular_similarity",
    "Encoder",
    "embedding_similarity",
    "embedding_similarities",
    "embedding_similarity_table",
    "Searcher",
    "result_ids",
    "batch_result_ids",
    "search_all",
    "SEARCH_THREADS",
    "r_at_k",
]


# ---------------------------------------------------------------- answers

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's answer normalisation: lower case, drop punctuation and the
    articles a/an/the, collapse white space (also CoQA's and QReCC's).

    >>> normalize_answer("The  Eiffel Tower!")
    'eiffel tower'
    """
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(gold: str, prediction: str) -> float:
    """1.0 when the normalised texts are equal, else 0.0.

    >>> exact_match("The Eiffel Tower", "eiffel tower.")
    1.0
    >>> exact_match("Paris", "Paris, France")
    0.0
    """
    return float(normalize_answer(gold) == normalize_answer(prediction))


def token_f1(gold: str, prediction: str) -> float:
    """SQuAD/CoQA token F1 between normalised texts.

    Tokens are counted with multiplicity. When either side normalises to no
    tokens (e.g. CoQA's empty "unknown" answers) the score is 1.0 if both are
    empty and 0.0 otherwise, as in the official SQuAD 2.0 and CoQA scripts.

    Worked example: gold "the cat sat on the mat" -> [cat, sat, on, mat],
    prediction "a cat on a mat" -> [cat, on, mat]; 3 tokens shared, precision
    3/3, recall 3/4, F1 = 2 * 1 * 0.75 / 1.75 = 6/7.

    >>> round(token_f1("the cat sat on the mat", "a cat on a mat"), 4)
    0.8571
    >>> token_f1("", "")
    1.0
    """
    gold_tokens = normalize_answer(gold).split()
    pred_tokens = normalize_answer(prediction).split()
    if not gold_tokens or not pred_tokens:
        return float(gold_tokens == pred_tokens)
    common = collections.Counter(gold_tokens) & collections.Counter(pred_tokens)
    shared = sum(common.values())
    if shared == 0:
        return 0.0
    precision = shared / len(pred_tokens)
    recall = shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


AnswerMetric = Callable[[str, str], float]


def best_over_golds(metric: AnswerMetric, golds: Sequence[str], prediction: str) -> float:
    """The best score of ``prediction`` against any gold (SQuAD's rule).

    >>> best_over_golds(exact_match, ["Paris", "the city of Paris"], "paris")
    1.0
    """
    if not golds:
        raise ValueError("best_over_golds needs at least one gold answer")
    return max(metric(gold, prediction) for gold in golds)


def leave_one_out(metric: AnswerMetric, golds: Sequence[str], prediction: str) -> float:
    """CoQA's multi-gold score.

    With n > 1 golds: for each gold i, the best score over the *other* n - 1
    golds, averaged over the n choices of i (this makes human performance,
    scored the same way against n - 1 references, comparable). With one gold:
    the score against it.

    Worked example, golds ["red", "red", "blue"] and prediction "red": the
    three leave-one-out subsets give max EM 1 ({red, blue}), 1 ({red, blue}),
    1 ({red, red}) -> 1.0; prediction "blue" gives 1, 1, 0 -> 2/3.

    >>> leave_one_out(exact_match, ["red", "red", "blue"], "red")
    1.0
    >>> round(leave_one_out(exact_match, ["red", "red", "blue"], "blue"), 4)
    0.6667
    >>> leave_one_out(exact_match, ["red"], "blue")
    0.0
    """
    if not golds:
        raise ValueError("leave_one_out needs at least one gold answer")
    if len(golds) == 1:
        return metric(golds[0], prediction)
    total = 0.0
    for i in range(len(golds)):
        others = list(golds[:i]) + list(golds[i + 1 :])
        total += best_over_golds(metric, others, prediction)
    return total / len(golds)


def _relevant_set(relevant: Collection[str] | Mapping[str, float]) -> set[str]:
    # TREC qrels grade relevance; a grade of 0 is a judged *non*-relevant item.
    if isinstance(relevant, Mapping):
        return {doc for doc, grade in relevant.items() if grade > 0}
    return set(relevant)


def mrr(ranked_ids: Sequence[str], relevant: Collection[str] | Mapping[str, float]) -> float:
    """Reciprocal rank of the first relevant id (0.0 when none is retrieved).

    ``relevant`` is a collection of ids, or a qrels mapping id -> grade where
    grades > 0 count as relevant. Average over queries to get the MRR.

    >>> mrr(["d3", "d1", "d7"], {"d1", "d9"})
    0.5
    >>> mrr(["d3", "d1"], {"d1": 0, "d3": 2})
    1.0
    >>> mrr(["d3"], {"d9"})
    0.0
    """
    rel = _relevant_set(relevant)
    for rank, doc in enumerate(ranked_ids, start=1):
        if doc in rel:
            return 1.0 / rank
    return 0.0


def recall_at_k(
    ranked_ids: Sequence[str], relevant: Collection[str] | Mapping[str, float], k: int
) -> float:
    """Share of the relevant ids found among the first ``k`` ranked ids.

    A query without any relevant id has no defined recall (TREC tools drop
    such queries): that raises ValueError rather than skewing a mean.

    >>> recall_at_k(["d3", "d1", "d7", "d9"], {"d1", "d9"}, k=3)
    0.5
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    rel = _relevant_set(relevant)
    if not rel:
        raise ValueError("recall_at_k is undefined for a query with no relevant ids")
    return len(rel.intersection(ranked_ids[:k])) / len(rel)


# ---------------------------------------------------------------- rewrites (lexical)


@lru_cache(maxsize=4)
def _rouge1_scorer(stem: bool):
    from rouge_score import rouge_scorer  # imported on first use: it loads NLTK, which a command scoring no ROUGE never needs

    return rouge_scorer.RougeScorer(["rouge1"], use_stemmer=stem)


def _drop_stopwords(text: str) -> str:
    # rouge-score tokenises by lower-casing and splitting on non-alphanumerics;
    # dropping stop words on that same split keeps its tokenisation intact.
    stop = sklearn_stopwords()
    return " ".join(w for w in tokens(text, "rouge") if w not in stop)


def rouge1_recall(
    reference: str, candidate: str, *, stem: bool = False, remove_stopwords: bool = False
) -> float:
    """ROUGE-1 recall of ``candidate`` against ``reference`` (rouge-score).

    The reference (human rewrite) is rouge-score's *target*: recall is the
    share of the reference's unigrams (with multiplicity, after rouge-score's
    lower-casing and non-alphanumeric splitting) that the candidate contains.
    Options, both off by default as in QReCC's numbers: ``stem`` uses
    rouge-score's Porter stemmer; ``remove_stopwords`` drops scikit-learn's
    English stop words from both sides first. An empty reference scores 0.0
    (rouge-score's convention).

    Worked example: reference "When was Ada Lovelace born?" has 5 unigrams;
    candidate "When was she born?" contains 3 of them -> 3/5.

    >>> rouge1_recall("When was Ada Lovelace born?", "When was she born?")
    0.6
    >>> rouge1_recall("What did the films win?", "What did that film win?", stem=True)
    0.8
    """
    if remove_stopwords:
        reference, candidate = _drop_stopwords(reference), _drop_stopwords(candidate)
    return float(_rouge1_scorer(stem).score(reference, candidate)["rouge1"].recall)


@lru_cache(maxsize=1)
def _bleu_parts():
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from rouge_score import tokenize

    return sentence_bleu, SmoothingFunction().method1, tokenize.tokenize


def bleu(reference: str, candidate: str) -> float:
    """Sentence-level BLEU-4 (uniform weights) of ``candidate`` against one
    ``reference``, via NLTK's ``sentence_bleu``.

    Smoothing: Chen & Cherry's method 1 (NLTK ``SmoothingFunction().method1``):
    an n-gram order with no match counts 0.1 matches instead of 0, so short
    rewrites sharing no 4-gram get a small positive score instead of 0.
    Tokens are rouge-score's (lower case, alphanumeric runs), so BLEU and
    ROUGE see the same words. Either side empty -> 0.0.

    Worked example: identical texts score 1.0; "when was she born" against
    "when was ada lovelace born" matches 3/4 unigrams, 1/3 bigrams, 0/2
    trigrams (-> 0.1/2) and 0/1 4-grams (-> 0.1/1), with brevity penalty
    exp(1 - 5/4): (.75 * .3333 * .05 * .1) ** (1/4) * 0.7788 = 0.1464.

    >>> bleu("When was Ada Lovelace born?", "When was Ada Lovelace born?")
    1.0
    >>> round(bleu("When was Ada Lovelace born?", "When was she born?"), 4)
    0.1464
    """
    sentence_bleu, smoothing, tokenize = _bleu_parts()
    ref, cand = tokenize(reference, None), tokenize(candidate, None)
    if not ref or not cand:
        return 0.0
    return float(sentence_bleu([ref], cand, smoothing_function=smoothing))


# ---------------------------------------------------------------- rewrites (embeddings)


def cosine(u, v) -> float:
    """Cosine of the angle between two vectors (0.0 if either is zero).

    >>> cosine([1.0, 0.0], [1.0, 1.0])  # doctest: +ELLIPSIS
    0.7071...
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    norm = float(np.linalg.norm(u) * np.linalg.norm(v))
    if norm == 0.0:
        return 0.0
    return float(np.clip(np.dot(u, v) / norm, -1.0, 1.0))


def angular_similarity(u, v) -> float:
    """1 - arccos(cosine) / pi, in [0, 1]: the similarity the Universal
    Sentence Encoder's authors recommend (Cer et al. 2018), which spreads out
    the cosines of near-paraphrases that all sit close to 1.

    Worked example: vectors 45 degrees apart -> 1 - (pi/4)/pi = 0.75.

    >>> angular_similarity([1.0, 0.0], [1.0, 1.0])
    0.75
    >>> angular_similarity([1.0, 0.0], [-1.0, 0.0])
    0.0
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
    if nu == 0.0 or nv == 0.0:
        return 0.5  # the angle of a zero vector is undefined; cosine 0 <-> 90 degrees
    u, v = u / nu, v / nv
    # Kahan's 2*atan2(|u - v|, |u + v|) instead of arccos(cos): arccos loses
    # about half the digits next to cos = 1, exactly where paraphrases sit.
    angle = 2.0 * math.atan2(float(np.linalg.norm(u - v)), float(np.linalg.norm(u + v)))
    return 1.0 - angle / math.pi


class Encoder(Protocol):
    """A sentence encoder: one vector per text, rows in input order. Looser
    than :class:`assistant.encoders.Encoder`, whose rows are unit vectors:
    the similarities here normalise, so any vectors will do."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


def embedding_similarity(encoder: Encoder, reference: str, candidate: str, *, angular: bool = False) -> float:
    """Cosine (or, with ``angular``, angular) similarity of the two texts'
    sentence vectors; the encoder is passed in, loaded once by the caller
    (``assistant.encoders.load_use()`` for QReCC's USE score).

    Worked example with a bag-of-letters toy encoder: "ab" -> (1, 1),
    "a" -> (1, 0), cosine 0.7071, angular 0.75.

    >>> class Letters:
    ...     def encode(self, texts):
    ...         return np.array([[t.count("a"), t.count("b")] for t in texts], float)
    >>> round(embedding_similarity(Letters(), "ab", "a"), 4)
    0.7071
    >>> embedding_similarity(Letters(), "ab", "a", angular=True)
    0.75
    """
    vectors = encoder.encode([reference, candidate])
    return angular_similarity(vectors[0], vectors[1]) if angular else cosine(vectors[0], vectors[1])


def embedding_similarities(
    encoder: Encoder,
    references: Sequence[str],
    candidates: Sequence[str],
    *,
    angular: bool = False,
    batch_size: int = 64,
) -> np.ndarray:
    """:func:`embedding_similarity` for many pairs, encoding in batches.

    Texts are de-duplicated before encoding (in a rewrite file the candidate
    often equals the reference), so each distinct text is encoded once.

    >>> class Letters:
    ...     def encode(self, texts):
    ...         return np.array([[t.count("a"), t.count("b")] for t in texts], float)
    >>> embedding_similarities(Letters(), ["ab", "ab"], ["a", "ab"], angular=True).tolist()
    [0.75, 1.0]
    """
    measure = "angular" if angular else "cosine"
    return embedding_similarity_table(encoder, references, candidates, (measure,), batch_size=batch_size)[measure]


# The measures embedding_similarity_table computes, by name.
_EMBEDDING_MEASURES = {"cosine": cosine, "angular": angular_similarity}


def embedding_similarity_table(
    encoder: Encoder,
    references: Sequence[str],
    candidates: Sequence[str],
    measures: Sequence[str] = ("cosine", "angular"),
    *,
    batch_size: int = 64,
) -> dict[str, np.ndarray]:
    """Several similarities of the same pairs from one encoding: ``{measure:
    scores}`` for ``measures`` among ``"cosine"`` (:func:`cosine`) and
    ``"angular"`` (:func:`angular_similarity`). Distinct texts are encoded
    once, in batches of ``batch_size``.

    >>> class Letters:
    ...     def encode(self, texts):
    ...         return np.array([[t.count("a"), t.count("b")] for t in texts], float)
    >>> {k: v.round(4).tolist() for k, v in embedding_similarity_table(Letters(), ["ab"], ["a"]).items()}
    {'cosine': [0.7071], 'angular': [0.75]}
    """
    if len(references) != len(candidates):
        raise ValueError(f"{len(references)} references but {len(candidates)} candidates")
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    unknown = [m for m in measures if m not in _EMBEDDING_MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {unknown}; choose from {list(_EMBEDDING_MEASURES)}")
    distinct = list(dict.fromkeys([*references, *candidates]))
    if not distinct:
        return {m: np.zeros(0) for m in measures}
    rows = [encoder.encode(distinct[i : i + batch_size]) for i in range(0, len(distinct), batch_size)]
    vectors = dict(zip(distinct, np.concatenate([np.asarray(r, dtype=np.float64) for r in rows])))
    return {
        m: np.array([_EMBEDDING_MEASURES[m](vectors[r], vectors[c]) for r, c in zip(references, candidates)])
        for m in measures
    }


# ---------------------------------------------------------------- rewrites (retrieval)


# Lucene threads for the eval commands' batch searches: the 2 cores of the
# machine they are sized for. Results do not depend on it.
SEARCH_THREADS = 2


class Searcher(Protocol):
    """What R@k needs of a retriever (``assistant`` retrievers qualify)."""

    def search(self, query: str, k: int) -> list: ...


def result_ids(retriever: Searcher, query: str, k: int = 10) -> list[str]:
    """The ids of ``query``'s top-``k`` results, best first (cacheable input
    for :func:`r_at_k`'s ``reference_ids``). An empty query retrieves nothing
    (retrievers refuse to search for it)."""
    if not query.split():
        return []
    return [passage.id for passage in retriever.search(query, k)][:k]


def batch_result_ids(retriever: Searcher, queries: Sequence[str], k: int = 10, threads: int = 1) -> list[list[str]]:
    """:func:`result_ids` of every query, in query order: one multi-threaded
    ``batch_search`` (``threads`` Lucene threads) where the retriever has it,
    else one search a query. Empty queries retrieve nothing, as there.

    >>> from types import SimpleNamespace as P
    >>> class Toy:
    ...     def search(self, query, k):
    ...         return [P(id=query + str(i)) for i in range(3)][:k]
    >>> batch_result_ids(Toy(), ["a", " ", "b"], k=2)
    [['a0', 'a1'], [], ['b0', 'b1']]
    """
    return [[passage.id for passage in passages][:k] for passages in search_all(retriever, queries, k, threads)]


def search_all(retriever: Searcher, queries: Sequence[str], k: int = 10, threads: int = 1) -> list[list]:
    """The top-``k`` passages of every query, in query order, each list as
    ``retriever.search`` gives it: one multi-threaded ``batch_search`` where
    the retriever has one (:class:`assistant.retrieval.BM25Retriever`), else
    a search a query. An empty query retrieves nothing (retrievers refuse it)."""
    asked = [i for i, query in enumerate(queries) if query.split()]
    many = getattr(retriever, "batch_search", None)
    if many is not None and asked:
        found = many([queries[i] for i in asked], k, threads)
    else:
        found = [retriever.search(queries[i], k) for i in asked]
    results: list[list] = [[] for _ in queries]
    for i, passages in zip(asked, found, strict=True):
        results[i] = list(passages)
    return results


def r_at_k(
    retriever: Searcher,
    reference: str,
    candidate: str,
    k: int = 10,
    *,
    reference_ids: Sequence[str] | None = None,
    candidate_ids: Sequence[str] | None = None,
) -> float:
    """QReCC's R@k between two queries: how many of the reference's top-k
    results the candidate's top-k results recover, divided by the number of
    results the reference got (at most k; fewer on a small index).

    Pass ``reference_ids`` (from :func:`result_ids`) to reuse the reference's
    results across rewriters, and ``candidate_ids`` for results searched
    already (e.g. by :func:`batch_result_ids`). A candidate equal to the reference scores 1.0
    without searching. When the reference retrieves nothing (e.g. only stop
    words), the score is 1.0 if the candidate retrieves nothing too (the
    result lists agree) and 0.0 otherwise, so every turn gets a score and a
    mean stays defined.

    Worked example with a toy retriever (a word's posting list): reference
    "ada" finds [d1, d2], candidate "poet" finds [d2, d3] -> 1/2.

    >>> from types import SimpleNamespace as P
    >>> class Toy:
    ...     postings = {"ada": ["d1", "d2"], "poet": ["d2", "d3"]}
    ...     def search(self, query, k):
    ...         return [P(id=i) for i in self.postings.get(query, [])][:k]
    >>> r_at_k(Toy(), "ada", "poet")
    0.5
    >>> r_at_k(Toy(), "the", "poet")
    0.0
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if candidate.strip() == reference.strip():
        return 1.0
    ref = list(reference_ids)[:k] if reference_ids is not None else result_ids(retriever, reference, k)
    cand = list(candidate_ids)[:k] if candidate_ids is not None else result_ids(retriever, candidate, k)
    if not ref:
        return float(not cand)
    return len(set(ref).intersection(cand)) / len(ref)


def _not_a_command(argv: Sequence[str] | None) -> int:
    raise InvalidInputError(
        "eval.metrics is a library of metric functions, not a command; "
        "score with python -m eval.rewrites, eval.retrieval, eval.qa, eval.coqa or eval.quality"
    )


if __name__ == "__main__":
    # ``python -m eval.metrics --help`` printed nothing and exited 0, as if it had run.
    import sys

    sys.exit(run_cli(_not_a_command, sys.argv[1:]))
