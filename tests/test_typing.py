"""Questions as people type them in a chat box: names without their accents,
in lower case or capitals, misspelt. What BM25 finds for them, and what the
rescorer and the reader are then given to read."""

from __future__ import annotations

import json

import pytest

from assistant.kernel import Answer, Passage, folded_text
from assistant.pipeline import Assistant
from assistant.readers import lead_passage
from assistant.retrieval import BM25Retriever, ChunkRetriever, build_index, read_collection, split_passages
from rewriting import OriginalRewriter

_COLLECTION = [
    {"id": "dvorak", "title": "Antonín Dvořák", "url": "",
     "contents": "Antonín Dvořák was a Czech composer of the Romantic era."},
    {"id": "pele", "title": "Pelé", "url": "",
     "contents": "Pelé was a Brazilian footballer who won three World Cups."},
    {"id": "sao-paulo", "title": "São Paulo", "url": "",
     "contents": "São Paulo is the most populous city in Brazil. São Paulo lies on a plateau."},
    {"id": "brazil", "title": "Brazil", "url": "",
     "contents": "Brazil is the largest country in South America; its largest city is São Paulo."},
    # One passage writes the name without its accent: the accented spelling
    # is still the commoner one.
    {"id": "sao-paulo-fc", "title": "Football in Brazil", "url": "",
     "contents": "Clubs of Sao Paulo and Rio play in the national league."},
    {"id": "beethoven", "title": "Ludwig van Beethoven", "url": "",
     "contents": "Ludwig van Beethoven was a German composer and pianist."},
    {"id": "michelangelo", "title": "Michelangelo", "url": "",
     "contents": "Michelangelo was an Italian sculptor and painter of the High Renaissance."},
    {"id": "columbus", "title": "Christopher Columbus", "url": "",
     "contents": "Christopher Columbus was an Italian explorer who made four voyages."},
    # A second passage for each name below: a misspelling is corrected only
    # to a term two passages hold at least.
    {"id": "ninth", "title": "Symphony No. 9", "url": "",
     "contents": "The Ninth Symphony by Beethoven was first performed in Vienna in 1824."},
    {"id": "sistine", "title": "Sistine Chapel", "url": "",
     "contents": "The Sistine Chapel ceiling was painted by Michelangelo."},
    {"id": "columbus-day", "title": "Columbus Day", "url": "",
     "contents": "Columbus Day remembers the landing of Christopher Columbus in 1492."},
    # "booster" is one edit from both, each in two passages.
    {"id": "bolster-1", "title": "Bolster", "url": "", "contents": "The bolster was soft."},
    {"id": "bolster-2", "title": "Pillow", "url": "", "contents": "A bolster of feathers."},
    {"id": "boisterous-1", "title": "Crowd", "url": "", "contents": "A boisterous crowd."},
    {"id": "boisterous-2", "title": "Weather", "url": "", "contents": "Boisterous weather."},
    {"id": "poles", "title": "Geographic pole", "url": "",
     "contents": "A pole is a point where the axis of rotation meets the surface. The pale sky."},
]


@pytest.fixture(scope="module")
def typed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("typed")
    path = folder / "collection.jsonl"
    # Filler to the size of a collection whose misspellings are corrected
    # (thousands of passages; a few uploads' words are too few).
    filler = [{"id": f"filler-{n}", "title": "", "url": "", "contents": f"Filler {n}."} for n in range(5000)]
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in _COLLECTION + filler), encoding="utf-8")
    build_index(read_collection(path), folder / "index", progress=False)
    return BM25Retriever.from_index(folder / "index")


def _top(retriever, query):
    hits = retriever.search(query, 3)
    return hits[0].id if hits else None


@pytest.mark.parametrize(
    "question, article",
    [
        ("who was antonin dvorak", "dvorak"),
        ("Who was Antonin Dvorak?", "dvorak"),
        ("who is pele", "pele"),
        ("WHO IS PELE", "pele"),
    ],
)
def test_a_name_typed_without_its_accents_finds_its_article(typed, question, article):
    assert _top(typed, question) == article


def test_the_accented_spelling_is_added_where_it_is_the_commoner(typed):
    # "sao" is a term of the index (one passage writes "Sao"), but "são" is
    # in more passages: both are searched, and the city's article comes first.
    assert typed.respelled("where is sao paulo") == "where is são paulo"
    assert _top(typed, "where is sao paulo") == "sao-paulo"


def test_what_the_index_holds_is_searched_and_read_as_typed(typed):
    for question in ("Who was Antonín Dvořák?", "Where is the pole?", "Who was Beethoven?"):
        assert typed.respelled(question) == question
    assert _top(typed, "Beethoven composer") == "beethoven"


@pytest.mark.parametrize(
    "question, respelled, article",
    [
        ("who was beethovan", "who was beethoven", "beethoven"),
        ("Who was Michaelangelo?", "Who was Michelangelo?", "michelangelo"),
        # The ending the analyzer cut is kept: "cristoph" -> "christoph".
        ("who was cristopher columbus", "who was christopher columbus", "columbus"),
    ],
)
def test_a_long_misspelt_name_no_passage_holds_is_corrected(typed, question, respelled, article):
    assert typed.respelled(question) == respelled
    assert article in [hit.id for hit in typed.search(question, 2)]


def test_a_word_a_passage_holds_a_short_word_or_two_edits_are_not_guessed(typed):
    # Edit-distance guesses cost judged CAsT turns their passages where they
    # touched such words (see _typed.py).
    for question in ("who was bethovan", "who is pols", "tell me pls", "when did ww2 end", "the pale sky"):
        assert typed.respelled(question) == question


def test_respelled_words_keep_their_ending_and_case(typed):
    assert typed.respelled("Who was Antonin Dvorak?") == "Who was Antonín Dvořák?"
    assert typed.respelled("WHO IS PELE") == "WHO IS PELÉ"
    assert typed.respelled("who was antonin dvorak???") == "who was antonín dvořák???"


class _Reads:
    """A reader that keeps the question it was given."""

    def __init__(self):
        self.questions = []

    def read(self, question, passages):
        self.questions.append(question)
        return Answer(passages[0].text if passages else "", 1.0)


def test_the_reader_reads_the_name_as_the_index_spells_it_and_the_rewrite_stays_as_typed(typed):
    reader = _Reads()
    *_, turn = Assistant(OriginalRewriter(), typed, reader).steps("who is pele", [])
    assert reader.questions == ["who is pelé"]
    assert turn.rewrite.text == "who is pele"
    assert turn.sources[0].id == "pele"


# One document searched in memory (the app's single-document mode, a
# multiple-choice question about a file): the same folding as the index's.
_DOCUMENT = """Antonín Dvořák was a Czech composer. He wrote the New World Symphony in America.

Kraków is a city in southern Poland, on the Vistula. It was the capital of Poland until 1596.

São Paulo is the largest city of Brazil.

São Paulo lies on a plateau.

Clubs of Sao Paulo play in the national league."""


@pytest.fixture
def document():
    return ChunkRetriever(split_passages(_DOCUMENT, "notes", max_words=8, title="notes"))


@pytest.mark.parametrize(
    "typed, written, found",
    [
        ("who was antonin dvorak", "Who was Antonín Dvořák?", "Dvořák was a Czech composer"),
        ("WHERE IS KRAKOW", "Where is Kraków?", "Kraków is a city"),
    ],
)
def test_a_document_searched_in_memory_finds_a_name_typed_without_its_accents(document, typed, written, found):
    hits = document.search(typed, 3)
    assert hits and found in hits[0].text
    # The typed spelling is no word of the document: exactly the written one's scores.
    assert document.scores(typed) == pytest.approx(document.scores(written), abs=1e-9)


def test_a_document_in_memory_reads_the_name_as_it_spells_it_and_keeps_what_it_holds(document):
    assert document.respelled("who was antonin dvorak") == "who was antonín dvořák"
    # "Sao" is a word of the document too, but fewer passages hold it: both are searched.
    assert document.respelled("Where is Sao Paulo?") == "Where is São Paulo?"
    assert {"notes_p5", "notes_p6", "notes_p7"} == {p.id for p in document.search("where is sao paulo", 3)}
    for question in ("Who was Antonín Dvořák?", "Where is the plateau?", "who was beethovan"):
        assert document.respelled(question) == question
    reader = _Reads()
    *_, turn = Assistant(OriginalRewriter(), document, reader).steps("who was antonin dvorak", [])
    assert reader.questions == ["who was antonín dvořák"]
    assert turn.rewrite.text == "who was antonin dvorak"
    assert "Dvořák was a Czech composer" in turn.sources[0].text


def test_a_document_in_memory_leaves_words_it_does_not_hold_as_typed(document):
    # Its words are too few to tell a misspelling from a word it does not use.
    for question in ("where is Polland", "did he walk through Prague"):
        assert document.respelled(question) == question


def test_a_few_documents_words_are_not_corrected(retriever):
    # The tiny collection (a few passages, as a session's uploads): "Babbage"
    # is in two of its passages, but a word it lacks may be no misspelling.
    assert retriever.respelled("who was charles babbagge") == "who was charles babbagge"


def test_a_misspelling_as_near_two_words_is_not_guessed(typed):
    assert typed.respelled("those booster engines") == "those booster engines"
    assert typed.respelled("a bollster") == "a bolster"


def test_a_question_with_no_name_to_respell_is_analyzed_once(monkeypatch):
    # Respelling runs on every turn beside the search's own analysis: a
    # question with nothing to respell (nearly all) costs one analyzer call,
    # not one a word (for the index, each is a call into Java).
    import assistant.retrieval

    calls = []
    analyze = assistant.retrieval.analyze
    monkeypatch.setattr("assistant.retrieval._chunks.analyze", lambda text: calls.append(text) or analyze(text))
    document = ChunkRetriever(split_passages(_DOCUMENT, "notes", max_words=8, title="notes"))
    document.respelled("warm up")  # the document's accented terms are listed once, at first use
    calls.clear()
    assert document.respelled("Who wrote the New World Symphony in America?") == "Who wrote the New World Symphony in America?"
    assert len(calls) == 1
    assert document.respelled("who was antonin dvorak") == "who was antonín dvořák"


def test_a_definition_finds_its_article_by_a_title_typed_without_accents():
    passages = [Passage("x#0", "Basilica ...", 1.0, "Sagrada Família"), Passage("y#0", "Other.", 2.0, "Barcelona")]
    assert lead_passage("Sagrada Familia", passages).id == "x#0"
    assert lead_passage("pele", [Passage("p#0", "Pelé was...", 1.0, "Pelé")]).id == "p#0"


def test_folded_text_takes_accents_off_latin_letters_only():
    assert folded_text("Kraków, Łódź, Brontë, Nguyễn, Ørsted") == "Krakow, Lodz, Bronte, Nguyen, Orsted"
    assert folded_text("Владимир, 東京, ahiṃsā") == "Владимир, 東京, ahimsa"
    assert folded_text("plain") == "plain"
