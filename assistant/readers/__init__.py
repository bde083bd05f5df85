"""Readers: ``Reader.read(question, passages) -> Answer``, and multiple choice.

:class:`SentenceReader` ranks the passages' sentences (MiniLM similarity and
term overlap, interpolated with BM25 as QReCC does); :class:`GenerativeReader`
has a causal LM phrase the answer from that evidence;
:class:`MultipleChoiceReader` scores the options of a question about one long
document (QuALITY) by embeddings, :class:`LikelihoodChoiceReader` by a causal
LM's likelihood. ``ReaderConfig.definitions`` and ``short_answers`` (on by default) shape
the sentence reader's answer by the question: a definition from the
subject's own article, a short date, number or name.
"""

from ._build import READERS, build_reader
from ._choice import CHOICE_SCORINGS, Choice, MultipleChoiceReader, QualityConfig, answer_multiple_choice
from ._likelihood import LikelihoodChoiceReader, LikelihoodConfig
from ._generative import (
    GenerationConfig,
    GenerativeReader,
    clean_answer,
    is_yes_no_question,
)
from ._events import capital_asked, capital_of_another, capital_said, country_asked, country_by_adjective, country_named, event_asked, event_date, event_said
from ._lifespan import age_at_death, life_event, lifespan, lived
from ._sentence import NOT_FOUND, Reader, SentenceReader, split_sentences, term_overlap
from ._shapes import (
    answer_kind,
    cast_span,
    definition_subject,
    full_name,
    kin_holder,
    kin_span,
    kind_span,
    kind_asked,
    lead_passage,
    referents,
    same_name,
    short_span,
    subject_words,
)

__all__ = [
    "Reader",
    "READERS",
    "build_reader",
    "SentenceReader",
    "GenerativeReader",
    "GenerationConfig",
    "MultipleChoiceReader",
    "QualityConfig",
    "CHOICE_SCORINGS",
    "Choice",
    "answer_multiple_choice",
    "LikelihoodChoiceReader",
    "LikelihoodConfig",
    "definition_subject",
    "lead_passage",
    "answer_kind",
    "short_span",
    "subject_words",
    "cast_span",
    "full_name",
    "kin_span",
    "kind_span",
    "kind_asked",
    "kin_holder",
    "same_name",
    "referents",
    "event_asked",
    "event_date",
    "event_said",
    "capital_asked",
    "capital_of_another",
    "capital_said",
    "country_asked",
    "country_by_adjective",
    "country_named",
    "lifespan",
    "life_event",
    "lived",
    "age_at_death",
    "split_sentences",
    "term_overlap",
    "is_yes_no_question",
    "clean_answer",
    "NOT_FOUND",
]
