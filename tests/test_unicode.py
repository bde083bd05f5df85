"""Questions that are not plain ASCII: accents typed two ways, full-width
letters, curly apostrophes, names in other scripts."""

from __future__ import annotations

import io
import json
import unicodedata

import pytest

from assistant.kernel import Answer
from assistant.pipeline import Assistant
from assistant.readers import MultipleChoiceReader, answer_multiple_choice, term_overlap
from assistant.retrieval import BM25Retriever, build_index, read_collection
from assistant.session import NOT_ENGLISH, index_uploads, language_notice
from rewriting import OriginalRewriter

_COLLECTION = [
    {"id": "dvorak", "title": "Antonín Dvořák", "url": "",
     "contents": "Antonín Dvořák was a Czech composer of the Romantic era."},
    {"id": "tokyo", "title": "Tokyo", "url": "",
     "contents": "Tokyo is the capital of Japan and its most populous city."},
    {"id": "sao-paulo", "title": "São Paulo", "url": "",
     "contents": "São Paulo is the most populous city in Brazil."},
    {"id": "finance", "title": "Finance", "url": "",
     "contents": "Finance is the study of money, currency and capital assets."},
]


@pytest.fixture(scope="module")
def accented(tmp_path_factory):
    folder = tmp_path_factory.mktemp("accented")
    path = folder / "collection.jsonl"
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in _COLLECTION), encoding="utf-8")
    build_index(read_collection(path), folder / "index", progress=False)
    return BM25Retriever.from_index(folder / "index")


class _FirstPassage:
    """A reader that answers with the best passage's text: the test is about
    what reaches retrieval, not about reading."""

    def read(self, question, passages):
        return Answer(passages[0].text if passages else "", 1.0)


def _ids(assistant, question):
    *_, turn = assistant.steps(question, [])
    return turn.question, [source.id for source in turn.sources]


@pytest.mark.parametrize(
    "typed, composed",
    [
        # A Mac's clipboard and some keyboards send "e" + a combining accent.
        (unicodedata.normalize("NFD", "Who was Antonín Dvořák?"), "Who was Antonín Dvořák?"),
        (unicodedata.normalize("NFD", "Where is São Paulo?"), "Where is São Paulo?"),
        # An East Asian keyboard's full-width letters, a PDF's "fi" ligature.
        ("What is \uff34\uff4f\uff4b\uff59\uff4f\uff1f", "What is Tokyo?"),
        ("What is \ufb01nance?", "What is finance?"),
    ],
)
def test_a_question_finds_what_its_plain_twin_finds(accented, typed, composed):
    assistant = Assistant(OriginalRewriter(), accented, _FirstPassage())
    assert typed != composed
    question, ids = _ids(assistant, typed)
    assert question == composed
    assert ids and ids == _ids(assistant, composed)[1]


def test_superscripts_are_kept_as_typed(accented):
    # Only the full-width forms and ligatures are folded: "km²" stays "km²".
    assistant = Assistant(OriginalRewriter(), accented, _FirstPassage())
    assert _ids(assistant, "How large is Tokyo in km\u00b2?")[0] == "How large is Tokyo in km\u00b2?"


@pytest.mark.parametrize(
    "question",
    [
        "Who is Владимир Путин?",
        "What does 三国演义 mean, and who wrote 中华人民共和国宪法?",
        "Who was Antonín Dvořák’s teacher? 😀",
        "Antonín Dvořák Bedřich Smetana",
        "Ada Lovelace Charles Babbage",
        "\uff37\uff48\uff4f \uff57\uff41\uff53 \uff21\uff44\uff41 \uff2c\uff4f\uff56\uff45\uff4c\uff41\uff43\uff45\uff1f",
    ],
)
def test_english_questions_with_other_scripts_names_or_full_width_letters_get_no_language_notice(question):
    assert language_notice(question) == ""


@pytest.mark.parametrize(
    "question",
    ["Кто такой Владимир Путин?", "ما هي عاصمة مصر؟", "Wer war Kurt Gödel?", "Qui était Marie Curie ?", "阿达·洛芙莱斯是谁？"],
)
def test_questions_in_other_languages_still_get_the_notice(question):
    assert language_notice(question) == NOT_ENGLISH


def test_an_uploaded_documents_decomposed_accents_and_ligatures_are_found(tmp_path):
    # What a PDF's text or a Mac's clipboard gives: "e" + a combining acute, "\ufb01".
    text = unicodedata.normalize("NFD", "Antonín Dvořák wrote the New World Symphony.\n\nThe \ufb01nance ministry of São Paulo opened in 1891.")
    (tmp_path / "notes.txt").write_text(text, encoding="utf-8")
    index = index_uploads([tmp_path / "notes.txt"], root=tmp_path / "sessions")
    try:
        for question in ("Dvořák", "finance", "São Paulo"):
            [hit] = index.retriever.search(question, 3)
            assert "Dvořák" in hit.text and "finance ministry of São Paulo" in hit.text
    finally:
        index.close()


@pytest.mark.parametrize("sentence", ["Her father was Byron.", "She was a writer.", "Lovelace’s notes describe an algorithm."])
def test_a_curly_apostrophe_reads_as_a_straight_one(sentence):
    # A phone's keyboard types "Lovelace’s": it left a term "s" in the
    # question that no sentence holds, so the twins ranked sentences apart.
    straight = term_overlap("Who was Ada Lovelace's father?", "Ada Lovelace", sentence)
    assert term_overlap("Who was Ada Lovelace’s father?", "Ada Lovelace", sentence) == pytest.approx(straight)


def test_the_terminal_chat_gives_the_language_notice_the_app_gives(tiny_index, monkeypatch, capsys):
    from assistant import chat

    monkeypatch.setattr("sys.stdin", io.StringIO("ما هي عاصمة مصر؟\nWho is Владимир Путин?\n"))
    assert chat.main(["--json", "--rewriter", "original", "--index", str(tiny_index)]) == 0
    arabic, english = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert arabic["notice"] == NOT_ENGLISH and "notice" not in english


def test_multiple_choice_reads_a_pasted_pdfs_ligatures(minilm):
    filler = [f"Paragraph {n} is about the weather in the valley, the rivers, the farms and the old mills "
              f"that stood along the road for many years before the railway came to the town." for n in range(5)]
    pdf = "The \ufb01nance ministry raised taxes on salt and wine to pay for the new railway."
    reader = MultipleChoiceReader(minilm)
    choice = answer_multiple_choice("\n\n".join([*filler, pdf]), "What did the finance ministry do?",
                                    ["It raised taxes on salt", "It planted forests"], reader=reader)
    assert any(p is not None and "finance ministry raised taxes" in p.text for p in choice.evidence)


def test_a_pasted_documents_ligatures_and_decomposed_accents_are_found(app_services):
    from assistant.session import Session, use_document

    session = Session()
    pdf = unicodedata.normalize("NFD", "Dvořák wrote the New World Symphony in 1893.\n\nThe \ufb01nance ministry of São Paulo opened in 1891.")
    use_document(app_services, session, pdf, "notes")
    for question in ("finance", "São Paulo", "Dvořák"):
        hits = session.source.retriever.search(question, 1)
        assert hits and hits[0].score > 0 and question in hits[0].text


@pytest.mark.parametrize(
    "question",
    [
        "https://en.wikipedia.org/wiki/Ada_Lovelace",
        "www.example.com/ada-lovelace-biography-page",
        "en.wikipedia.org/wiki/Ada_Lovelace",
        "What is https://en.wikipedia.org/wiki/Ada_Lovelace about?",
    ],
)
def test_a_web_address_gets_no_language_notice(question):
    # The address's pieces (https, en, wikipedia, org, wiki) read as several
    # words with no English function word.
    assert language_notice(question) == ""


def test_a_question_in_another_language_beside_an_address_still_gets_the_notice():
    assert language_notice("Wer war diese Frau? https://de.wikipedia.org/wiki/Ada_Lovelace") == NOT_ENGLISH
