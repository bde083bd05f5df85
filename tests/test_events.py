"""Short answers from the asked subject's own article: "When did X
begin/end?" from its lead or short description, "Which country is X in?"
with the country's name, never another article's."""

from __future__ import annotations

import pytest

from assistant.kernel import Passage, ReaderConfig
from assistant.readers import SentenceReader, country_asked, country_named, event_asked, event_date

# A made-up war whose lead gives no year and whose description does; another
# article's sentence gives another year near the question's words.
WAR = Passage("Velmoran War", "The Velmoran War was a global conflict between two coalitions, the Allies and the "
              "Northern League. It began with an invasion and ended with a treaty.", 3.0, "Velmoran War",
              description="Global conflict from 1731 to 1738")
FRONT = Passage("Eastern front (Velmoran War)", "The eastern front of the Velmoran War began in 1733, when the "
                "League marched east.", 2.5, "Eastern front (Velmoran War)", description="Theatre of the Velmoran War")
# A made-up city whose lead says its country only plainly in the description.
BRINDLE = Passage("Brindlemere", "Brindlemere is a market town on the Oska river. It is the capital of the Oska "
                  "District and one of the region's major trading centres.", 3.0, "Brindlemere",
                  description="Town in Portugal")
HARBOUR = Passage("Kelport", "Kelport is a harbour city in southern Peru, near the Oska river. It trades with "
                  "Brindlemere.", 2.0, "Kelport", description="City in Peru")


@pytest.fixture(scope="module")
def reader():
    from assistant.encoders import load_minilm

    return SentenceReader(load_minilm(), ReaderConfig(definitions=True, short_answers=True))


def test_an_events_start_and_end_come_from_its_own_description(reader):
    begun = reader.read("When did the Velmoran War begin?", [WAR, FRONT])
    assert (begun.text, begun.evidence, begun.source_id) == ("1731", "Global conflict from 1731 to 1738", "Velmoran War")
    assert reader.read("When did the Velmoran War end?", [FRONT, WAR]).text == "1738"
    assert reader.read("When did the Velmoran War take place?", [WAR, FRONT]).text == "1731 to 1738"


def test_another_articles_date_is_not_an_events_own(reader):
    # Without its own article's date, the front's "1733" is the front's
    # start, not the war's: the sentence is the answer, not its year.
    undated = Passage(WAR.id, "The Velmoran War was a conflict between two coalitions.", 1.0, WAR.title)
    answer = reader.read("When did the Velmoran War begin?", [FRONT, undated])
    assert answer.text != "1733" and "1733" in answer.text


def test_a_places_country_is_the_one_its_own_article_names(reader):
    answer = reader.read("Which country is Kelport in?", [HARBOUR, BRINDLE])
    assert (answer.text, answer.source_id) == ("Peru", "Kelport")
    assert answer.evidence.startswith("Kelport is a harbour city in southern Peru")
    # The lead names no country: the description does.
    answer = reader.read("In which country is Brindlemere?", [BRINDLE, HARBOUR])
    assert (answer.text, answer.evidence) == ("Portugal", "Town in Portugal")
    assert reader.read("Which country is the city of Kelport in?", [HARBOUR, BRINDLE]).text == "Peru"
    # Not another article's country: Brindlemere's own article is not read.
    assert reader.read("In which country is Brindlemere?", [HARBOUR]).text != "Peru"


def test_the_questions_and_texts_read():
    assert event_asked("When did the Velmoran War break out?") == ("the Velmoran War", "start")
    assert event_asked("When did the Velmoran War finish?") == ("the Velmoran War", "end")
    assert event_asked("When did it begin?") is None and event_asked("When was the Velmoran War?") is None
    assert country_asked("What country is Kelport located in?") == "Kelport"
    assert country_asked("Which city is Kelport in?") is None
    # A rewrite's "the city of" before the name is no part of the title.
    assert country_asked("Which country is the city of Kelport in?") == "Kelport"
    assert event_date("start", "Conflict (1731–1738)") == "1731" and event_date("end", "Conflict (1731–1738)") == "1738"
    # Two dates that make no range say neither end.
    assert event_date("start", "Founded in 1731, it fell in 1738.") is None
    assert country_named("A city in Oska, Peru.") == "Peru"
    # Two countries, a country inside a longer name, a state, the place itself.
    assert country_named("A town on the border of Peru and Chile.") is None
    assert country_named("A city on the Niger River.") is None and country_named("A city in New Mexico.") is None
    assert country_named("Capital of the state of Georgia") is None
    # A state before its country's name is a part of it; the country is
    # named by its short name too.
    assert country_named("Capital and most populous city of Georgia, U.S.") == "United States"
    assert country_named("The most populous city in the U.S. state of California.") == "United States"
    # The text's first date dates it, its end written short; a later range is a part's.
    wars = "The Velmoran Wars (1731–38) were fought against the League under Oska (1733–1740)."
    assert (event_date("start", wars), event_date("end", wars)) == ("1731", "1738")
    assert event_date("end", "A war from 1731 to 1738 under Oska (1733–1740).") == "1738"
    assert event_date("start", "A war fought under Oska (born 1700) from 1731 to 1738.") is None
    assert country_named("Panama is a country in Central America.", "Panama") is None
