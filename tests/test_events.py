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


def test_where_its_own_article_gives_no_date_todays_answer_stands(reader):
    # Another article's date is as often the right one ("The Reformation
    # began in 1517 when Martin Luther …"): it is not dropped.
    undated = Passage(WAR.id, "The Velmoran War was a conflict between two coalitions.", 1.0, WAR.title)
    begun = Passage("Oska the Elder", "The Velmoran War began in 1729 when Oska the Elder crossed the river.", 3.0,
                    "Oska the Elder", description="Velmoran general")
    assert reader.read("When did the Velmoran War begin?", [begun, undated]).text == "1729"


def test_a_range_whose_start_is_not_read_dates_nothing(reader):
    # "264 to 146 BC", "431–404 BC", "in 711 … in 1492": the first end is no
    # sure year, so the last is not the start; the lead stands.
    punic = Passage("Kelvan Wars", "The Kelvan Wars were fought between Oska and Brindle from 264 to 146 BC.", 3.0,
                    "Kelvan Wars", description="Wars between Oska and Brindle (264–146 BC)")
    for verb in ("begin", "take place"):
        answer = reader.read(f"When did the Kelvan Wars {verb}?", [punic])
        assert answer.text.startswith("The Kelvan Wars were fought"), answer.text
    recon = Passage("Oskan Reconquest", "The Oskan Reconquest was the period between the conquest of Oska in 711 "
                    "and the fall of Brindle in 1492.", 3.0, "Oskan Reconquest", description="Campaigns in Oska")
    assert reader.read("When did the Oskan Reconquest begin?", [recon]).text.startswith("The Oskan Reconquest")
    assert event_date("start", "Ancient war (431–404 BC)") is None
    assert event_date("start", "Period of history (c. 500–1500)") is None
    # A day with no year opens the range: its last day is not the whole.
    assert event_date("when", "A fire from Sunday 2 September to Thursday 5 September 1666.") is None
    assert event_date("start", "A war that lasted until 1492.") is None


def test_a_persons_years_before_the_events_own_date_nothing(reader):
    # "fought under Henry VI (1421–1471), … lasting from 1455 to 1487": the
    # bracket is a life; the description's own range answers.
    roses = Passage("Wars of the Lilies", "The Wars of the Lilies, fought under King Oska (1421–1471), were civil "
                    "wars lasting from 1455 to 1487.", 3.0, "Wars of the Lilies", description="Civil wars (1455–1487)")
    assert event_date("end", roses.text) is None
    assert reader.read("When did the Wars of the Lilies end?", [roses]).text == "1487"
    # A person's own article: its birth day is no start.
    painter = Passage("Oska Brindle", "Oska Brindle (25 October 1881 – 8 April 1973) was a Kelvan painter.", 3.0,
                      "Oska Brindle", description="Kelvan painter (1881–1973)")
    assert reader.read("When did Oska Brindle start?", [painter]).text.startswith("Oska Brindle (25 October")


def test_a_country_counts_only_where_the_place_is_said_to_be_in_it():
    # Beside, near or between countries, or another's story, is not in them.
    assert country_named("Kelisle is a dependency in the Oska Sea, between Great Britain and Ireland.") is None
    assert country_named("Kelisle is an island country near the coast of north-west France.") is None
    assert country_named("Kelburg is a town in Upper Oska, on the border with Germany.") is None
    assert country_named("Kelburg is the largest city of Kel Oblast, a Russian exclave on the border with Poland.") is None
    assert country_named("The Oska is the second-longest river in Europe, after the Volga in Russia.") is None
    assert country_named("Kelm is a city on the Oska, the birthplace of a physicist who emigrated to the United States.") is None
    assert country_named("Oska Falls spans the border between the Canadian province of Ontario and the U.S. state of New York.") is None
    assert country_named("Peru is a country in western South America, bordered by Ecuador, Colombia and Brazil.") is None
    assert country_named("The Kelm team once beat France.") is None
    # ...where it is, it does: "in (southern) X", "of X", "Region, X".
    assert country_named("Kelm is a city in southern Peru.") == "Peru" and country_named("City in Bavaria, Germany") == "Germany"
    assert country_named("Kelm is the second-largest island of Japan.") == "Japan"


def test_a_country_is_read_for_a_place_asked_what_it_is_in(reader):
    # Not "Which country is the capital of X?" (another place), nor a
    # person's or a past "was".
    assert country_asked("Which country is the capital of Peru?") is None
    assert country_asked("Which country was Oska in?") is None and country_asked("Which country is Oska?") is None
    # Of two articles titled the same, the one the best sentence came from is read.
    state = Passage("Kelvia (state)", "Kelvia is a state in the southeastern region of the United States.", 3.0,
                    "Kelvia (state)", description="U.S. state")
    country = Passage("Kelvia (country)", "Kelvia is a country in the Caucasus, bordered by Russia and Turkey.", 2.5,
                      "Kelvia (country)", description="Country in the Caucasus")
    answer = reader.read("Which country is Kelvia in?", [state, country])
    assert answer.source_id == "Kelvia (country)" and answer.text.startswith("Kelvia is a country")


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
