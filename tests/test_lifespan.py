"""Years of birth and death that a collection gives only in a passage's short
description ("English mathematician (1815–1852)"): carried from the
collection through the index to the reader, which answers "When did X
die?" with the year and shows the description as its evidence."""

from __future__ import annotations

import fcntl
import json
import shutil
import threading

import numpy as np
import pytest

from assistant.kernel import Answer, DataFormatError, Passage, ReaderConfig, Rewrite, Turn, default_index_dir
from assistant.readers import SentenceReader, lifespan
from assistant.retrieval import (VECTORS_FILE, BM25Retriever, ChunkRetriever, build_index, described_titles, ensure_index,
                                 read_collection)

# Articles whose text gives no year; two descriptions do. The summaries'
# layout is the default collection's (title, extract, description, topic).
SUMMARIES = {
    "Ada Lovelace": {"title": "Ada Lovelace", "topic": "People", "description": "English mathematician (1815–1852)",
                     "extract": "Ada Lovelace was an English mathematician and writer. She wrote the first published "
                                "algorithm for Charles Babbage's Analytical Engine."},
    "Charles Babbage": {"title": "Charles Babbage", "topic": "People", "description": "",
                        "extract": "Charles Babbage was an English mathematician who died in 1871, long after "
                                   "Ada Lovelace, whose notes he kept."},
    "Shinzo Abe": {"title": "Shinzo Abe", "topic": "People",
                   "description": "Prime Minister of Japan (2006–2007; 2012–2020)",
                   "extract": "Shinzo Abe was a Japanese politician who served as Prime Minister of Japan."},
}


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    # The default collection's reader knows its file by name.
    path = tmp_path_factory.mktemp("wiki") / "summaries_en-us.json"
    path.write_text(json.dumps(SUMMARIES), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def described(summaries, tmp_path_factory):
    index = tmp_path_factory.mktemp("described") / "index"
    build_index(read_collection(summaries), index, progress=False)
    with BM25Retriever.from_index(index) as retriever:
        yield retriever


@pytest.fixture(scope="module")
def reader(minilm):
    return SentenceReader(minilm, ReaderConfig(definitions=True, short_answers=True))


def test_the_default_collections_reader_keeps_the_description(summaries):
    passages = {p["id"]: p for p in read_collection(summaries)}
    assert passages["Ada Lovelace"]["description"] == "English mathematician (1815–1852)"
    assert "description" not in passages["Charles Babbage"]  # an empty one is none


def test_the_described_titles_are_those_with_a_description(summaries, tmp_path):
    # What the rewriter reads of who is a person and what a place is.
    assert sorted(described_titles(summaries)) == [("Ada Lovelace", "English mathematician (1815–1852)"),
                                                   ("Shinzo Abe", "Prime Minister of Japan (2006–2007; 2012–2020)")]
    with pytest.raises(DataFormatError, match="no such file or folder"):
        list(described_titles(tmp_path / "missing.jsonl"))


def test_a_jsonl_passage_may_carry_a_description_which_is_checked(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "a", "contents": "Text.", "description": "Poet (1788–1824)"}) + "\n")
    assert next(read_collection(path))["description"] == "Poet (1788–1824)"
    path.write_text(json.dumps({"id": "a", "contents": "Text.", "description": 1824}) + "\n")
    with pytest.raises(DataFormatError, match='"description" must be a string, not int'):
        list(read_collection(path))


def test_the_index_stores_the_description_and_does_not_search_it(described):
    ada = described.search("Ada Lovelace", 1)[0]
    assert (ada.id, ada.description) == ("Ada Lovelace", "English mathematician (1815–1852)")
    # Its words are in no passage's text: BM25 finds nothing by them.
    assert described.search("1815", 3) == []


def test_a_year_only_the_description_gives_is_the_answer_and_it_the_evidence(described, reader):
    for question, year in (("When did Ada Lovelace die?", "1852"), ("When was Ada Lovelace born?", "1815"),
                           ("What year did Ada Lovelace die?", "1852")):
        answer = reader.read(question, described.search(question, 3))
        assert (answer.text, answer.evidence, answer.source_id) == (year, "English mathematician (1815–1852)", "Ada Lovelace")


def test_another_articles_date_loses_to_the_subjects_own_description(described, reader):
    # Babbage's sentence holds "died", a year and her name: read alone, it
    # answered 1871, the year he died.
    hits = described.search("When did Ada Lovelace die?", 3)
    plain = SentenceReader(reader.encoder, ReaderConfig(definitions=True, short_answers=True))
    without = [Passage(p.id, p.text, p.score, p.title, p.url) for p in hits]
    assert plain.read("When did Ada Lovelace die?", without).text == "1871"
    assert reader.read("When did Ada Lovelace die?", hits).text == "1852"


def test_the_subjects_own_sentence_wins_over_its_description(reader):
    own = Passage("Ada Lovelace", "Ada Lovelace was a mathematician. She died on 27 November 1852 in London.", 2.0,
                  "Ada Lovelace", description="English mathematician (1815–1852)")
    answer = reader.read("When did Ada Lovelace die?", [own])
    assert (answer.text, answer.evidence) == ("27 November 1852", "She died on 27 November 1852 in London.")


def test_a_sentence_of_another_event_loses_to_the_description(reader):
    # Camus's own summary gives his Nobel year and no birth: the sentence's
    # year is another event's, the description's the birth's.
    camus = Passage("Albert Camus", "Albert Camus was a French philosopher, novelist, author, dramatist, journalist, "
                    "world federalist, and political activist. He was the recipient of the 1957 Nobel Prize in "
                    "Literature at the age of 44, the second-youngest recipient in history, and the first laureate "
                    "in literature born in Africa.", 2.0, "Albert Camus",
                    description="French philosopher and writer (1913–1960)")
    answer = reader.read("When was Albert Camus born?", [camus])
    assert (answer.text, answer.evidence) == ("1913", "French philosopher and writer (1913–1960)")


def test_no_description_no_year_and_a_relative_or_a_term_is_not_a_lifespan(described, reader):
    ada = described.search("Ada Lovelace", 1)[0]
    pasted = Passage(ada.id, ada.text, ada.score, ada.title)  # an upload: no description
    assert reader.read("When did Ada Lovelace die?", [pasted]).text not in ("1852", "1815")
    assert reader.read("When was Ada Lovelace's father born?", [ada]).text != "1815"
    abe = described.search("Shinzo Abe", 1)[0]
    assert abe.description and reader.read("When was Shinzo Abe born?", [abe]).text not in ("2006", "2012")


def test_short_descriptions_read_as_lifespans():
    assert lifespan("Greek philosopher (c. 428-347 BC)") == ("c. 428 BC", "347 BC")
    assert lifespan("Roman general (c.390 – 454)") == ("c. 390", "454")
    assert lifespan("Polish composer (1810–49)") == ("1810", "1849")
    assert lifespan("Polish composer (c. 1810–49)") == ("c. 1810", "1849")
    # An office's plain years are its holder's life (Cnut's), not read as a reign.
    assert lifespan("King of Denmark, Norway and England (c.995–1035)") == ("c. 995", "1035")
    assert lifespan("Jamaican sprinter (born 1986)") == ("1986", "")
    assert lifespan("Cyrenaic presbyter (died 336)") == ("", "336")
    for reign_or_term in ("Sultan of Mataram (r. 1613–1645)", "Prime Minister of India (1966–1977; 1980–1984)",
                          "Emperor of China (1908–1912) and of Manchukuo (1934–1945)", "Emperor of Brazil (r. 1822–31)",
                          "Highest mountain in the Alps (4,806.m)", "English mathematician"):
        assert lifespan(reign_or_term) is None, reign_or_term


def test_rescoring_chunks_and_a_saved_session_keep_the_description():
    from assistant.retrieval import DenseRescorer
    from assistant.session import Session, SessionTurn, TurnInfo, restore_state, saved_state

    passage = Passage("a", "Ada wrote notes.", 1.0, "Ada Lovelace", description="English mathematician (1815–1852)")
    assert ChunkRetriever([passage]).search("notes", 1)[0].description == passage.description

    class Ones:  # a toy encoder: every text the same unit vector
        def encode(self, texts):
            return np.ones((len(texts), 1), dtype=np.float32)

    rescorer = DenseRescorer(Ones(), ["a"], Ones().encode(["x"]), weight=0.5)
    assert rescorer.rescore("notes", [passage], 1)[0].description == passage.description
    session = Session()
    turn = Turn("q", Rewrite("q"), Answer("1852", 1.0), (passage,))
    session.turns.append(SessionTurn(turn, TurnInfo(system_rewrite=turn.rewrite, history=())))
    again = Session()
    restore_state(again, json.loads(json.dumps(saved_state(session))))
    assert again.turns[0].turn.sources[0].description == passage.description


def test_the_answers_description_is_shown_and_marked(reader):
    from assistant import chat
    from assistant.pipeline import turn_to_json
    from assistant.session import Session, SessionTurn, TurnInfo, chat_messages

    ada = Passage("Ada Lovelace", "Ada Lovelace was an English mathematician.", 2.0, "Ada Lovelace",
                  description="English mathematician (1815–1852)")
    turn = Turn("When did Ada Lovelace die?", Rewrite("When did Ada Lovelace die?"),
                reader.read("When did Ada Lovelace die?", [ada]), (ada,))
    assert turn_to_json(turn)["sources"][0]["description"] == "English mathematician (1815–1852)"
    assert "from the description of Ada Lovelace: English mathematician (1815–1852)" in chat._plain(turn)
    session = Session()
    session.turns.append(SessionTurn(turn, TurnInfo(system_rewrite=turn.rewrite, history=())))
    shown = chat_messages(session)[-1]["content"]
    assert '<span class="cqa-description"><mark>English mathematician (1815–1852)</mark></span>' in shown


def test_an_old_default_index_is_built_again_with_its_vectors_kept(old_default, monkeypatch):
    index = old_default  # built before descriptions were kept; and its vectors:
    ids = sorted(SUMMARIES)
    np.savez(index / VECTORS_FILE, ids=np.array(ids), vectors=np.eye(3, dtype=np.float16))
    kept = (index / VECTORS_FILE).read_bytes()
    with BM25Retriever.from_index(ensure_index(index)) as retriever:
        assert retriever.search("Ada Lovelace", 1)[0].description == "English mathematician (1815–1852)"
    assert (index / VECTORS_FILE).read_bytes() == kept
    # Built now, it is not built again; vectors of other passages are not kept.
    assert json.loads((index / "convqa.json").read_text())["format"] == 2
    with monkeypatch.context() as patch:
        patch.setattr("assistant.retrieval._index.build_index", _no_build)
        assert ensure_index(index) == index
    (index / "convqa.json").write_text(json.dumps({"passages": 3}))
    np.savez(index / VECTORS_FILE, ids=np.array(["x", "y", "z"]), vectors=np.eye(3, dtype=np.float16))
    ensure_index(index)
    assert not (index / VECTORS_FILE).exists()


def _no_build(*args, **kwargs):
    raise AssertionError("the index was built again")


@pytest.fixture
def old_default(summaries, tmp_path, monkeypatch):
    """The default index, built by a version before descriptions were kept."""
    monkeypatch.setenv("CONVQA_CACHE", str(tmp_path))
    monkeypatch.setattr("assistant.retrieval._collection.default_collection_path", lambda: summaries)
    index = default_index_dir()
    build_index(({k: v for k, v in p.items() if k != "description"} for p in read_collection(summaries)),
                index, progress=False)
    (index / "convqa.json").write_text(json.dumps({"passages": 3}))
    return index


def test_an_old_index_elsewhere_or_of_another_collection_is_left_alone(old_default, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("assistant.retrieval._index.build_index", _no_build)
    elsewhere = tmp_path / "mine"
    shutil.copytree(old_default, elsewhere)
    assert ensure_index(elsewhere) == elsewhere
    # A user's own collection indexed at the default path (--index ~/.cache/convqa/indexes/wiki-vital-en):
    # not replaced by Wikipedia's, said once.
    (old_default / "convqa.json").write_text(json.dumps({"passages": 2}))
    assert ensure_index(old_default) == old_default and ensure_index(old_default) == old_default
    assert capsys.readouterr().err.count("is not the default collection's") == 1
    assert json.loads((old_default / "convqa.json").read_text()) == {"passages": 2}


def test_an_old_default_index_that_cannot_be_built_again_is_served(old_default, monkeypatch, capsys):
    from assistant.kernel import ConfigError

    def refused(passages, index_dir, **kwargs):  # what a read-only cache's build raises
        raise ConfigError(f"cannot write the index folder {index_dir}: it is read-only.")

    monkeypatch.setattr("assistant.retrieval._index.build_index", refused)
    assert ensure_index(old_default) == old_default and ensure_index(old_default) == old_default
    assert capsys.readouterr().err.count("cannot be built again (cannot write the index folder") == 1
    with BM25Retriever.from_index(old_default) as retriever:
        assert retriever.search("Ada Lovelace", 1)[0].title == "Ada Lovelace"


def test_a_process_that_waited_for_anothers_build_does_not_build_again(old_default, monkeypatch):
    monkeypatch.setattr("assistant.retrieval._index.build_index", _no_build)
    done: list = []
    with open(old_default.parent / f"{old_default.name}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process, building
        waiting = threading.Thread(target=lambda: done.append(_outcome(ensure_index, old_default)), daemon=True)
        waiting.start()
        waiting.join(1.0)
        assert not done  # it waits for the lock
        (old_default / "convqa.json").write_text(json.dumps({"passages": 3, "format": 2}))
        fcntl.flock(lock, fcntl.LOCK_UN)
    waiting.join(30)
    assert done == [old_default]


def test_a_default_index_a_killed_rebuild_left_aside_is_put_back_not_built_again(old_default, monkeypatch, capsys,
                                                                                   dead_pid):
    # SIGKILL between a rebuild's two renames: the next start said "First
    # start", and the build it started put the old index back, then replaced
    # it, its vectors lost.
    from assistant.kernel import OWNER_FILE, owner_mark

    (old_default / "convqa.json").write_text(json.dumps({"passages": 3, "format": 2}))
    np.savez(old_default / VECTORS_FILE, ids=np.array(sorted(SUMMARIES)), vectors=np.eye(3, dtype=np.float16))
    kept = (old_default / VECTORS_FILE).read_bytes()
    aside = old_default.parent / f"{old_default.name}.killed01"
    aside.mkdir()
    (aside / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))
    old_default.rename(aside / "index")
    monkeypatch.setattr("assistant.retrieval._index.build_index", _no_build)
    assert ensure_index(old_default) == old_default
    assert (old_default / VECTORS_FILE).read_bytes() == kept and not aside.exists()
    said = capsys.readouterr().err
    assert "is put back" in said and "First start" not in said


def test_a_default_index_a_killed_first_start_completed_is_put_in_place_not_built_again(old_default, monkeypatch,
                                                                                          capsys, dead_pid):
    # SIGKILL as the first start's build was about to rename its checked
    # index into place: the next start said "First start" and indexed the
    # collection again, and the complete copy stayed beside it for good.
    from assistant.kernel import OWNER_FILE, owner_mark

    (old_default / "convqa.json").write_text(json.dumps({"passages": 3, "format": 2}))
    staging = old_default.parent / f"{old_default.name}.killed02"
    old_default.rename(staging)
    (staging / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))  # marked up to its rename
    monkeypatch.setattr("assistant.retrieval._index.build_index", _no_build)
    assert ensure_index(old_default) == old_default
    assert not staging.exists() and not (old_default / OWNER_FILE).exists()
    said = capsys.readouterr().err
    assert "is put in place" in said and "First start" not in said


@pytest.mark.parametrize("copy", ["of another collection", "of an earlier format", "damaged"])
def test_a_killed_build_s_copy_that_is_not_what_a_start_builds_is_not_put_in_place(old_default, capsys, dead_pid,
                                                                                     copy):
    # Put in place by any build's cleanup, a killed build's copy of another
    # collection (a user's --input) became the default index, or the build
    # that put it there failed and left it where there was none; a damaged
    # one (its removal killed part way) was served.
    from assistant.kernel import OWNER_FILE, owner_mark

    record = {"passages": 3, "format": 2}
    if copy == "of another collection":
        record["passages"] = 4
    elif copy == "of an earlier format":
        del record["format"]
    (old_default / "convqa.json").write_text(json.dumps(record))
    if copy == "damaged":
        next(p for p in old_default.iterdir() if p.name.startswith("_") and p.suffix != ".si").unlink()
    staging = old_default.parent / f"{old_default.name}.killed02"
    old_default.rename(staging)
    (staging / OWNER_FILE).write_text(json.dumps(dict(owner_mark(), pid=dead_pid)))  # marked up to its rename
    assert ensure_index(old_default) == old_default
    said = capsys.readouterr().err
    assert "First start" in said and "put in place" not in said
    assert not staging.exists()  # superseded by the index built
    assert json.loads((old_default / "convqa.json").read_text()) == {"passages": 3, "format": 2}


def _outcome(function, *args):
    try:
        return function(*args)
    except BaseException as error:  # the thread's failure, seen by the test
        return error


def test_an_age_at_death_is_the_descriptions_years_apart_with_them(described, reader):
    for question in ("How old was Ada Lovelace when she died?", "How old was Ada Lovelace at her death?",
                     "At what age did Ada Lovelace die?", "How long did Ada Lovelace live?"):
        answer = reader.read(question, described.search(question, 3))
        # Years alone: her birthday may not have come in 1852.
        assert (answer.text, answer.evidence, answer.source_id) == (
            "36 or 37 (1815–1852)", "English mathematician (1815–1852)", "Ada Lovelace"), question


def test_an_age_another_sentence_gives_loses_to_the_description_one_that_agrees_wins(reader):
    # Read alone, the sentence answers 17.
    text = "Ada Lovelace was a mathematician. She met Charles Babbage when she was 17 years old."
    ada = Passage("Ada Lovelace", text, 2.0, "Ada Lovelace", description="English mathematician (1815–1852)")
    assert reader.read("How old was Ada Lovelace when she died?", [ada]).text == "36 or 37 (1815–1852)"
    said = Passage("Ada Lovelace", f"{text} She died of cancer in 1852 at the age of 36.", 2.0, "Ada Lovelace",
                   description=ada.description)
    answer = reader.read("How old was Ada Lovelace when she died?", [said])
    assert "36" in answer.text and answer.evidence == "She died of cancer in 1852 at the age of 36."


def test_no_age_without_both_years_nor_a_certain_one_and_an_uncertain_one_is_about():
    from assistant.readers import age_at_death

    assert age_at_death(*lifespan("American actor (born 1940)")) is None
    assert age_at_death(*lifespan("Flemish painter (died 1441)")) is None
    assert age_at_death(*lifespan("Roman statesman (100 BC–44 BC)")) == "55 or 56 (100 BC–44 BC)"
    assert age_at_death(*lifespan("Roman poet (43 BC – AD 17)")) == "58 or 59 (43 BC–AD 17)"
    assert age_at_death(*lifespan("Greek philosopher (c. 428-347 BC)")) == "about 81 (c. 428 BC–347 BC)"
    # A year of two: either may be the one.
    assert age_at_death(*lifespan("Russian military commander (1729/30–1800)")) == "69 to 71 (1729/30–1800)"
    assert age_at_death(*lifespan("Priest and theologian (c. 342/347 – 420)")) == "about 73 to 78 (c. 342/347–420)"
    assert age_at_death(*lifespan("Egyptian queen (1544?–1512)")) is None  # in the wrong order
    assert age_at_death(*lifespan("Greek mathematician (after 238 BCE–190 BCE)")) is None


def test_a_living_persons_age_at_death_is_not_made_up(reader):
    gehry = Passage("Frank Gehry", "Frank Gehry is an architect.", 2.0, "Frank Gehry",
                    description="Canadian-American architect (born 1929)")
    answer = reader.read("How old was Frank Gehry when he died?", [gehry])
    assert "1929" not in answer.text and " or " not in answer.text


def test_a_reign_the_article_gives_as_a_term_is_no_life(reader):
    # His description gives the years of his reign as plainly as another's gives a life.
    suleiman = Passage("Suleiman the Magnificent", "Suleiman I, commonly known as Suleiman the Magnificent, "
                       "was the Ottoman sultan from 1520 to 1566. His reign was the longest.", 2.0,
                       "Suleiman the Magnificent", description="Sultan of the Ottoman Empire (1520–1566)")
    assert reader.read("When was Suleiman the Magnificent born?", [suleiman]).text != "1520"
    assert "46" not in reader.read("How old was Suleiman the Magnificent when he died?", [suleiman]).text
    # A life the text gives in brackets is still one.
    hafez = Passage("Hafez", "Khajeh Shams-od-Din Mohammad Hafez Shirazi (1325–1390), also known by his pen name "
                    "Hafez, was a Persian poet.", 2.0, "Hafez", description="Persian poet and mystic (1325–1390)")
    assert reader.read("When was Hafez born?", [hafez]).text == "1325"


def test_a_rewrites_full_name_from_the_lead_finds_the_article(reader):
    # A follow-up's rewrite took the name the answer's lead gives, not the title's.
    keaton = Passage("Buster Keaton", 'Joseph Frank "Buster" Keaton was an American actor and filmmaker.', 2.0,
                     "Buster Keaton", description="American actor and filmmaker (1895–1966)")
    answer = reader.read("How old was Joseph Frank Keaton when he died?", [keaton])
    assert (answer.text, answer.evidence) == ("70 or 71 (1895–1966)", keaton.description)
    assert reader.read("When did Joseph Frank Keaton die?", [keaton]).text == "1966"


def test_how_long_someone_lived_somewhere_is_no_age_at_death():
    from assistant.readers import life_event

    assert life_event("How long did Niels Bohr live?") == "age"
    assert life_event("How long did Niels Bohr live in Copenhagen?") is None
    assert life_event("How old was Niels Bohr when he won the Nobel Prize?") is None


def test_an_age_at_anothers_death_is_no_age_at_death():
    from assistant.readers import life_event, lived

    # Another's death: its lifespan gives that one's age, not the subject's.
    for question in ("How old was Plato when Socrates died?", "How old was Napoleon when Nelson died?",
                     "How old was Queen Victoria when Prince Albert died?",
                     "What was Plato's age when Socrates passed away?"):
        assert life_event(question) is None, question
    socrates = Passage("Socrates", "Socrates was a Greek philosopher.", 2.0, "Socrates",
                       description="Greek philosopher (c. 470–399 BC)")
    prince = Passage("Prince (musician)", "Prince was an American singer.", 2.0, "Prince (musician)",
                     description="American musician (1958–2016)")
    assert lived("How old was Plato when Socrates died?", [socrates]) is None
    assert lived("How old was Queen Victoria when Prince Albert died?", [prince]) is None
    # The subject's own death, by a pronoun or a name of theirs, still is.
    for question in ("How old was Ada Lovelace when she died?", "How old was Mozart when Wolfgang Amadeus Mozart died?",
                     "What was John Keats's age when he died?", "At what age was Niels Bohr when Bohr passed away?"):
        assert life_event(question) == "age", question
