"""Short answers from the asked subject's own article: "When did X
begin/end?" from its lead or short description, "Which country is X in?"
with the country's name, never another article's."""

from __future__ import annotations

import pytest

from assistant.kernel import Passage, ReaderConfig
from assistant.readers import SentenceReader, country_asked, country_by_adjective, country_named, event_asked, event_date, event_said

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
    # "722–1492", "c. 500–1500", "in 711 … in 1492": the first end is no
    # sure year, so the last is not the start; the lead stands.
    recon = Passage("Oskan Reconquest", "The Oskan Reconquest was the period between the conquest of Oska in 711 "
                    "and the fall of Brindle in 1492.", 3.0, "Oskan Reconquest", description="Campaigns in Oska")
    assert reader.read("When did the Oskan Reconquest begin?", [recon]).text.startswith("The Oskan Reconquest")
    assert event_date("start", "Period of history (c. 500–1500)") is None
    # A day with no year opens the range: its last day is not the whole.
    assert event_date("when", "A fire from Sunday 2 September to Thursday 5 September 1666.") is None
    assert event_date("start", "A war that lasted until 1492.") is None


def test_a_range_in_bc_gives_its_era_to_both_ends(reader):
    # "264 to 146 BC": the era is written once, after the end; the start is
    # "264 BC", never a bare (AD) "264".
    punic = Passage("Kelvan Wars", "The Kelvan Wars were fought between Oska and Brindle during the period 264 to "
                    "146 BC.", 3.0, "Kelvan Wars", description="Wars between Oska and Brindle (264–146 BC)")
    asked = {verb: reader.read(f"When did the Kelvan Wars {verb}?", [punic]) for verb in ("begin", "end", "take place")}
    assert {verb: answer.text for verb, answer in asked.items()} == {
        "begin": "264 BC", "end": "146 BC", "take place": "264 to 146 BC"}
    assert asked["begin"].evidence == punic.text
    assert (event_date("start", "Ancient war (431–404 BC)"), event_date("end", "Ancient war (431–404 BC)")) == ("431 BC", "404 BC")
    assert event_date("start", "Period of history (c. 475 – 221 BCE)") == "c. 475 BCE"
    assert event_date("end", "Wars waged between 58 and 50 BC by Oska.") == "50 BC"
    # BC years count down: "146 to 264 BC" is no range; "200 and 300" with
    # no "between" is no range either.
    assert event_date("start", "Wars from 146 to 264 BC.") is None
    assert event_date("start", "Armies of 300 and 200 BC fought.") is None


def test_a_range_whose_single_date_it_ended_at_is_no_start(reader):
    # "… and ending in 27 BC": the lead's one date is the end; the
    # description's range gives the start, over the span read from the lead.
    republic = Passage("Oskan Republic", "The Oskan Republic was the era of Oskan civilisation beginning with the "
                       "overthrow of the Oskan Kingdom and ending in 27 BC with the rise of the Empire.", 3.0,
                       "Oskan Republic", description="Period of Oskan history (c. 509 – 27 BC)")
    assert reader.read("When did the Oskan Republic begin?", [republic]).text == "c. 509 BC"
    assert event_date("start", "A state that fell in 1453 to its neighbours.") is None
    # An ancient person's years are a life, not an event's.
    king = Passage("Oska the Great", "Oska the Great was a king of the ancient kingdom of Brindle.", 3.0,
                   "Oska the Great", description="King of Brindle (356–323 BC)")
    assert reader.read("When did Oska the Great end?", [king]).text.startswith("Oska the Great was a king")


def test_an_ages_centuries_date_it(reader):
    # The description's "14th to 17th centuries" dates the age's start,
    # not another article's year near the question's words.
    age = Passage("Oskan Age", "The Oskan Age was a period of history at the end of the Late Middle Ages.", 2.5,
                  "Oskan Age", description="European cultural period of the 14th to 17th centuries")
    thought = Passage("Oskan philosophy", "Oskan philosophy of the Oskan Age started with the Discourse of 1637.", 3.0,
                      "Oskan philosophy", description="Period of thought (1355–1650)")
    begun = reader.read("When did the Oskan Age start?", [thought, age])
    assert (begun.text, begun.source_id) == ("14th century", "Oskan Age")
    assert reader.read("When did the Oskan Age end?", [age]).text == "17th century"
    assert event_date("end", "Lasted from the 5th to late 15th centuries.") == "late 15th century"
    assert event_date("start", "A style from the late 12th to the 16th century.") == "late 12th century"
    assert event_date("start", "Kingdoms of the 5th to 3rd centuries BC") == "5th century BC"
    # One century opening a description dates it; elsewhere it is as often
    # another thing's, and a name after it makes a person's.
    assert event_date("start", "16th-century movement in Western Christianity") == "16th century"
    assert event_date("end", "16th-century movement in Western Christianity") is None
    assert event_date("start", "A temple over the ruins of a 5th-century church.") is None
    assert event_date("start", "15th-century Italian painter") is None
    # "of the 16th and 17th centuries": no range, no date.
    assert event_date("start", "The revolution of the 16th and 17th centuries.") is None


def test_a_year_within_the_century_said_of_the_event_stands(reader):
    # "1517, which started the Reform" says more than its own "16th-century".
    reform = Passage("Oskan Reform", "The Oskan Reform was a movement in Europe that challenged the papacy.", 2.5,
                     "Oskan Reform", description="16th-century movement in Western Christianity")
    luther = Passage("Oskan Luther", "The priest Oskan Luther published his theses in 1517, which started the Oskan "
                     "Reform.", 3.0, "Oskan Luther", description="Kelvan priest (1483–1546)")
    assert "1517" in reader.read("When did the Oskan Reform begin?", [luther, reform]).text
    assert reader.read("When did the Oskan Reform begin?", [reform]).text == "16th century"


def test_a_sentence_that_says_the_event_happened_then_dates_it(reader):
    # Another article's sentence that opens with its one year and says what
    # happened at the battle: the year, the sentence its evidence.
    conqueror = Passage("Oska the Conqueror", "In 1066, following the death of King Brindle, Oska invaded Kelvia, "
                        "leading an army to victory over the forces of Harold at the Battle of Kelport.", 3.0,
                        "Oska the Conqueror", description="King of Kelvia from 1066 to 1087")
    answer = reader.read("When did the Battle of Kelport take place?", [conqueror])
    assert (answer.text, answer.evidence, answer.source_id) == ("1066", conqueror.text, "Oska the Conqueror")
    launch = Passage("Oskanism", "Oskanism arose under Oska Luther, whose efforts helped launch the Oskan Reform in "
                     "1517.", 3.0, "Oskanism", description="Branch of Protestantism")
    assert reader.read("When did the Oskan Reform begin?", [launch]).text == "1517"
    # Not its start (a battle may last into the next year), not a later
    # battle, not a thing named after it, not "marked the beginning of".
    assert reader.read("When did the Battle of Kelport begin?", [conqueror]).text == conqueror.text
    assert event_said("the Battle of Kelport", "when", "In 1060, Oska took Brindle and later won at the Battle of Kelport.") is None
    assert event_said("the Siege of Kelport", "when", "In 1943, Oska was wounded at the Siege of Kelport memorial.") is None
    assert event_said("the Kelvan War", "when", "In 1943, Oska fought at the Kelvan War.") is None
    assert event_said("the Oskan Reform", "start", "The Oskan Reform marked the beginning of a church in 1517.") is None
    # X itself, not a longer name that ends with it; its start is not its end.
    assert event_said("the Reform", "start", "The Counter-Reform began in 1545.") is None
    assert event_said("the Revolution", "start", "The Second Revolution began in 1870.") is None
    assert event_said("the Oskan War", "end", "The Oskan War began in 1701.") is None
    assert event_said("the Oskan War", "start", "The Oskan War took place in 1701 to 1714 near Kelport.") is None
    assert event_said("the Oskan War", "start", "The Oskan War broke out on 3 May 1701.") == "3 May 1701"


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


# The rows below were answered right before the s50 event rules and wrongly
# by their first version (each pins one misread).
def _p(title: str, text: str, score: float = 3.0, description: str = "") -> Passage:
    return Passage(title, text, score, title, description=description)


WAR_OWN = _p("Kelvan War", "The Kelvan War was a global conflict between the Kelvan Axis and the Allies.", 2.0,
             "Global conflict from 1939 to 1945")


@pytest.mark.parametrize("other", [
    "The Siege of Kelgrad during the Kelvan War began on 8 September 1941.",
    "For Brindle, the Kelvan War began in 1937 with the invasion of Kelport.",
    "Oskan involvement in the Kelvan War began in 1941 after the attack on Kelport.",
])
def test_another_articles_sentence_about_a_part_of_x_does_not_date_x(reader, other):
    # X's own description dates X; another article's sentence whose subject
    # is a part of X, or X for one country, does not.
    assert reader.read("When did the Kelvan War begin?", [_p("Kelgrad", other), WAR_OWN]).text == "1939"
    assert event_said("the Kelvan War", "start", other) is None


@pytest.mark.parametrize("question, other, own, right", [
    ("When did the Kelvan Empire end?", "The war with the Kelvan Empire ended in 1453 with a truce.",
     _p("Kelvan Empire", "The Kelvan Empire was a state in Kelvia.", 2.0, "Empire (1299–1922)"), "1922"),
    ("When did the Kelvan War begin?", "The second Kelvan War began in 1801 along the coast.",
     _p("Kelvan War", "The Kelvan War was a war between Kelvia and Brindle.", 2.0, "War (1701–1714)"), "1701"),
    ("When did the Renaissance begin?", "A cultural renaissance began in 1920 in Kelport.",
     _p("Renaissance", "The Renaissance was a period of European history.", 2.0, "Cultural period (1300–1600)"), "1300"),
    ("When did the Reformation begin?", "The calendar reformation began in 1582 under Pope Oska.",
     _p("Reformation", "The Reformation was a movement in Western Christianity.", 2.0,
        "Religious movement (1517–1648)"), "1517"),
])
def test_a_sentence_naming_another_thing_does_not_date_x(reader, question, other, own, right):
    # "The war with X", "the second X", a lowercase "renaissance": not X.
    assert reader.read(question, [_p("Brindle", other), own]).text == right


@pytest.mark.parametrize("sentence", [
    "In 1917, a monument was unveiled to the soldiers who fell at the Battle of Kelport.",
    "In 1950, the regiment's colours, first carried at the Battle of Kelport, were retired.",
    "In 1871, Kelvia celebrated the jubilee of its victory at the Battle of Kelport.",
    "In 1805, Oska, who had lost an arm at the Battle of Kelport, became an admiral.",
    "In 1944, he was awarded the Kelvan Cross for bravery shown at the Battle of Kelport.",
])
def test_a_year_of_what_was_done_later_for_a_battle_does_not_date_it(reader, sentence):
    assert event_said("the Battle of Kelport", "when", sentence) is None
    assert reader.read("When did the Battle of Kelport take place?", [_p("Kelport Memorial", sentence)]).text == sentence


def test_a_year_of_what_happened_in_a_battle_dates_it():
    assert event_said("the Battle of Kelport", "when", "In 1066, Oska's half-brother was killed at the Battle of Kelport.") == "1066"
    assert event_said("the Siege of Kelport", "when", "In 1453, the city fell to the Oskans at the Siege of Kelport.") == "1453"


@pytest.mark.parametrize("question, passage, right", [
    # A bracket after another name ("preceded by the Brindle dynasty
    # (221–206 BC)"): the description's range answers.
    ("When did the Kelvan dynasty begin?", _p(
        "Kelvan dynasty", "The Kelvan dynasty was an imperial dynasty of Kelvia established by Oska, and preceded by "
        "the short-lived Brindle dynasty (221–206 BC) and an interregnum (206–202 BC).", 3.0,
        "Imperial dynasty in Kelvia (202 BC – 220 AD)"), "202 BC"),
    ("When did the Kelvan dynasty end?", _p(
        "Kelvan dynasty", "The Kelvan dynasty was an imperial dynasty of Kelvia established by Oska, and preceded by "
        "the short-lived Brindle dynasty (221–206 BC) and an interregnum (206–202 BC).", 3.0,
        "Imperial dynasty in Kelvia (202 BC – 220 AD)"), "220 AD"),
    # A part's centuries ("the Dark Ages of the 12th–9th centuries BC").
    ("When did Ancient Kelvia end?", _p(
        "Ancient Kelvia", "Ancient Kelvia was a civilization existing from the Kelvan Dark Ages of the 12th–9th "
        "centuries BC to the end of classical antiquity (c. 600 AD).", 3.0, "Civilization"), "600 AD"),
    # The age of what a library holds is not the library's.
    ("When did the Kelvan Library begin?", _p(
        "Kelvan Library", "The Kelvan Library, which holds 5th to 10th-century manuscripts, was founded in 1602.", 3.0,
        "Library in Kelport"), "1602"),
])
def test_a_range_that_is_another_things_does_not_date_x(reader, question, passage, right):
    assert reader.read(question, [passage]).text == right


def test_a_lead_range_dates_x_only_where_it_is_xs_own(reader):
    coins = "Kelvan coins of 30 to 20 BC were found in the Kelvan Kingdom, which Oska founded in 35 BC."
    assert event_date("start", coins, "the Kelvan Kingdom") is None
    assert reader.read("When did the Kelvan Kingdom begin?", [_p("Kelvan Kingdom", coins, 3.0, "Ancient kingdom")]).text == coins
    assert event_date("start", "The Kelvan Wars were fought during the period 264 to 146 BC.", "the Kelvan Wars") == "264 BC"
    assert event_date("end", "The Kelvan War (431–404 BC) was an ancient war.", "the Kelvan War") == "404 BC"
    # ...not a range in a clause about another thing.
    assert event_date("start", "The Kelvan Kingdom succeeded the Oska dynasty, which ruled from 300 to 200 BC.",
                      "the Kelvan Kingdom") is None
    assert event_date("start", "The Kelvan War, which lasted from 431 to 404 BC, was an ancient war.",
                      "the Kelvan War") == "431 BC"


def test_a_span_stands_against_a_range_that_is_not_xs(reader):
    # "The war ended in 1714": a king's reign "(1690–1730)" in the lead is
    # no range of the war's to replace it.
    war = _p("Kelvan War", "The Kelvan War was a conflict in the reign of King Oska (1690–1730) between Kelvia and "
             "Brindle. The war ended in 1714 with the Treaty of Kelport.", 3.0, "War between Kelvia and Brindle")
    assert reader.read("When did the Kelvan War end?", [war]).text == "1714"
    # ...but the war's own "from 499 BC to 449 BC" replaces a span of its
    # earlier causes.
    wars = _p("Kelvan Wars", "The Kelvan Wars were a series of conflicts from 499 BC to 449 BC. The collision had "
              "begun when Oska conquered Kelport in 547 BC.", 3.0, "Series of wars")
    assert reader.read("When did the Kelvan Wars begin?", [wars]).text == "499 BC"


@pytest.mark.parametrize("question, passage, right", [
    ("Which country is Kelmyra in?", _p(
        "Kelmyra", "Kelmyra is an archaeological site near Kelport in the Peloponnese of Greece.", 3.0,
        "Archaeological site in Greece (c. 1600–1100 BC)"), "Greece"),
    ("When did Ancient Kelvia end?", _p(
        "Ancient Kelvia", "Ancient Kelvia was a civilization of ancient North Africa.", 3.0,
        "Civilization (c. 3150 BC – 30 BC)"), "30 BC"),
    ("When did Kelmacia begin?", _p(
        "Kelmacia", "Kelmacia, also called Kelmedon, was an ancient kingdom in northern Greece.", 3.0,
        "Ancient kingdom (c. 808 BC – 168 BC)"), "808 BC"),
])
def test_an_ancient_places_years_are_no_life(reader, question, passage, right):
    assert reader.read(question, [passage]).text == right


def test_a_date_another_thing_ended_at_is_xs_start(reader):
    empire = _p("Kelvan Empire", "The Kelvan Empire arose after the Oskan Sultanate collapsed in 1299.", 3.0, "Former empire")
    assert reader.read("When did the Kelvan Empire begin?", [empire]).text == "1299"


def test_x_own_date_is_surer_than_another_articles_sentence(reader):
    # Another article saying X began (its own view, or a part of X) does
    # not beat the date X's own article gives.
    other = _p("Brindle", "The Kelvan War began in 1937 in the east of Brindle.")
    assert reader.read("When did the Kelvan War begin?", [other, WAR_OWN]).text == "1939"
    assert reader.read("When did the Kelvan War begin?", [other]).text == "1937"


def test_a_name_written_lowercase_is_no_name():
    assert event_said("the Renaissance", "start", "The renaissance began in 1920 in Kelport.") is None
    assert event_said("the Renaissance", "start", "Oska helped launch the renaissance in 1920.") is None
    assert event_said("the Renaissance", "start", "Oska helped launch the Renaissance in 1420.") == "1420"


def test_a_year_at_a_battle_dates_it_only_where_the_clause_says_it_was_fought():
    assert event_said("the Battle of Kelport", "when", "In 1990, a reenactment was staged at the Battle of Kelport.") is None


def _by_adjective(*texts, subject="Kelvia"):
    found = country_by_adjective(texts, subject)
    return found[0] if found else None


def test_a_country_is_read_from_its_adjective_before_the_places_kind(reader):
    # The lead's "is a Japanese island" or the description's "U.S. state"
    # says the country where no name does.
    assert _by_adjective("Kelshima is a Japanese island in the Oska Sea.", subject="Kelshima") == "Japan"
    assert _by_adjective("Kelvia is the most populous state in the Southern United States.") is None
    assert _by_adjective("Kelvia is the most populous state in the Southern United States.", "U.S. state") == "United States"
    assert _by_adjective("Largest Greek island", subject="Kelos") == "Greece"
    assert _by_adjective("Kelria is a Spanish autonomous community in the south of the peninsula.") == "Spain"
    assert _by_adjective("Kelria is a Norwegian archipelago in the Arctic Ocean.") == "Norway"
    # The other text may name a neighbour; both texts' adjectives agree.
    assert _by_adjective("Kelos is the largest island of Oska, after Cyprus.", "Largest Greek island") == "Greece"
    assert _by_adjective("Kelos is a Greek island.", "Largest Greek island") == "Greece"
    assert _by_adjective("Kelos is a Greek island.", "Turkish island") is None
    island = Passage("Kelshima", "Kelshima is the largest of the Oska Islands.", 3.0, "Kelshima",
                     description="Japanese prefecture")
    answer = reader.read("Which country is Kelshima in?", [island, HARBOUR])
    assert (answer.text, answer.evidence, answer.source_id) == ("Japan", "Japanese prefecture", "Kelshima")
    # The description's name beats the lead's adjective.
    town = Passage("Kelm", "Kelm is a Polish city.", 3.0, "Kelm", description="City in Kelvia, United States")
    assert reader.read("Which country is Kelm in?", [town]).text == "United States"
    # No adjective in country_named itself: a name or nothing.
    assert country_named("Kelshima is a Japanese island.", "Kelshima") is None


def test_a_countrys_adjective_before_no_place_of_its_own_says_nothing():
    # A company's, a people's, a person's kind; another noun's adjective.
    assert _by_adjective("Kelco is a Japanese multinational company.") is None
    assert _by_adjective("The Kel are a Japanese indigenous people of the islands.") is None
    assert _by_adjective("Kel Oska is a French-born American actress.") is None
    assert _by_adjective("Kelm is a district with a large Japanese community.") is None
    # A past state, a name before the adjective, two countries, the country itself.
    assert _by_adjective("Kelvia was a German state on the plain.") is None
    assert _by_adjective("German state from 1525 to 1947") is None
    assert _by_adjective("Former German state") is None
    assert _by_adjective("West Indian island") is None
    assert _by_adjective("Kelisle is a Russian island north of Japan.") is None
    assert _by_adjective("Kelvia is an Oska Greek island.") is None
    assert _by_adjective("Japanese archipelago", subject="Japan") is None
    assert _by_adjective("Kelos is a Greek island country.", subject="Cyprus") is None
    assert _by_adjective("German state", subject="Kelvian Germany") is None


def test_a_countrys_adjective_of_a_part_a_past_or_an_enclave_says_nothing():
    # The kind must be the head noun, not the first part of another.
    assert _by_adjective("Kelco is a Malaysian state-owned oil company.") is None
    assert _by_adjective("Kel Oska is a Chinese city planner.") is None
    assert _by_adjective("Kelco is a Japanese department store chain.") is None
    # A colonial past, a language, an old or one-time state.
    assert _by_adjective("Kelport is a French colonial city on the east coast.") is None
    assert _by_adjective("Kelm is a German speaking province.") is None
    assert _by_adjective("Kelm is a largely Spanish-speaking city.") is None
    assert _by_adjective("Kelport is an old Greek port city.") is None
    assert _by_adjective("Kelberg is a one-time German city on the coast.") is None
    # An enclave: a bare "community" or "district", or a name after the kind.
    assert _by_adjective("Kelm is a Russian community.") is None and _by_adjective("Kelm is a Cuban district.") is None
    assert _by_adjective("Kelm is a Polish city in Oska County, Kelvia.") is None
    assert _by_adjective("Kelm is a Greek town of Oska.") is None
    # A border feature, a second country's adjective, a text that says who
    # governs it, a text that names a country anywhere.
    assert _by_adjective("Kelberg is a Swiss mountain.") is None and _by_adjective("The Kel is a Russian river.") is None
    assert _by_adjective("Kelisle is an Estonian island, near the Russian coast.") is None
    assert _by_adjective("Kelisle is a French overseas department in the Indian Ocean.") == "France"
    assert _by_adjective("Kelmen is a group of islands administered by Kelvia.", "Chinese island county") is None
    assert _by_adjective("Kelmen is a Chinese island county off Taiwan.") is None
    assert _by_adjective("Kelmen is a Chinese island county.", "County of Taiwan") is None
    assert _by_adjective("Kelmen, off Taiwan, is a Chinese island county.") is None
    # A name the other text gives beats the adjective.
    assert _by_adjective("Kelm is a Polish city.", "City in Kelvia, United States") is None


# The rows a review of the first version of the adjective rule found worse:
# each answers as it did before the rule (the country named, else the lead
# sentence itself).
LEAD = None
WORSE_ROWS = [
    ('Hoi An', 'Hoi An', 'Hoi An is a French colonial town in central Vietnam.',
     'Town', 'Vietnam'),
    ('Vigan', 'Vigan', 'Vigan is a Spanish colonial city in the Philippines.',
     'Component city', 'Philippines'),
    ('Asmara', 'Asmara', 'Asmara is an Italian colonial city in Eritrea.',
     'Capital city', 'Eritrea'),
    ('Malacca', 'Malacca', 'Malacca is a Portuguese colonial port in Malaysia.',
     'State', 'Malaysia'),
    ('Pondicherry', 'Pondicherry', "Pondicherry is a French colonial city on India's east coast.",
     'Union territory', LEAD),
    ('Hamtramck', 'Hamtramck', 'Hamtramck is a Polish city in Wayne County, Michigan.',
     'City in Michigan, United States', 'United States'),
    ('Frankenmuth', 'Frankenmuth', 'Frankenmuth is a German town in Saginaw County, Michigan.',
     'City in Michigan', LEAD),
    ('New Glarus', 'New Glarus', 'New Glarus is a Swiss village in Green County, Wisconsin.',
     'Village in Wisconsin, United States', 'United States'),
    ('Helvetia', 'Helvetia', 'Helvetia is a Swiss mountain village in Randolph County, West Virginia.',
     'Unincorporated community', LEAD),
    ('Solvang', 'Solvang', 'Solvang is a Danish town in Santa Barbara County, California.',
     'City in California', LEAD),
    ('Liberdade', 'Liberdade', 'Liberdade is a Japanese district in São Paulo.',
     'District of São Paulo, Brazil', 'Brazil'),
    ('Hialeah', 'Hialeah', 'Hialeah is a largely Spanish speaking city in Miami-Dade County, Florida.',
     'City in Florida, United States', 'United States'),
    ('Astoria', 'Astoria', 'Astoria is a Greek district in the borough of Queens.',
     'Neighborhood of Queens', LEAD),
    ('Little Havana', 'Little Havana', 'Little Havana is a Cuban district of Miami.',
     'Neighborhood of Miami', LEAD),
    ('Brighton Beach', 'Brighton Beach', 'Brighton Beach is a Russian community in southern Brooklyn.',
     'Neighborhood in Brooklyn', LEAD),
    ('Little Saigon', 'Little Saigon', 'Little Saigon is a Vietnamese community in Orange County, California.',
     'Ethnic enclave', LEAD),
    ('Oraibi', 'Oraibi', 'Oraibi is an Indian village in Navajo County, Arizona.',
     'Hopi village', LEAD),
    ('Kinmen', 'Kinmen', 'Kinmen is a Chinese island county administered by Taiwan.',
     'Island county', LEAD),
    ('Lim Chong', 'Lim Chong', 'Lim Chong is a Chinese city planner who works in Singapore.',
     'Urban planner', 'Singapore'),
    ('the Matterhorn', 'Matterhorn', 'The Matterhorn is a Swiss mountain on the border with Italy.',
     'Mountain in the Alps', LEAD),
    ('the Amur', 'Amur', 'The Amur is a Russian river forming the border with China.',
     'River in East Asia', LEAD),
    ('South Tyrol', 'South Tyrol', 'South Tyrol is a German speaking province of Italy.',
     'Autonomous province', 'Italy'),
    ('Lugano', 'Lugano', 'Lugano is an Italian speaking city in Switzerland.',
     'City', 'Switzerland'),
    ('Quebec', 'Quebec', 'Quebec is a French speaking province of Canada.',
     'Province', 'Canada'),
    ('Smyrna', 'Smyrna', 'Smyrna is an old Greek port city on the Aegean coast of Anatolia.',
     'City', LEAD),
    ('Königsberg', 'Königsberg', 'Königsberg is a one-time German city on the Baltic, now Kaliningrad.',
     'City', LEAD),
    ('Artsakh', 'Artsakh', 'Artsakh is an Armenian region in the South Caucasus.',
     'Region', LEAD),
    ('Kreuzberg', 'Kreuzberg', 'Kreuzberg is a Turkish community in Berlin.',
     'District of Berlin', LEAD),
    ('Lake Peipus', 'Lake Peipus', 'Lake Peipus is an Estonian lake on the Russian border.',
     'Lake', LEAD),
]


@pytest.mark.parametrize("subject, title, lead, description, expected", WORSE_ROWS)
def test_a_countrys_adjective_never_beats_the_answer_a_name_gives(reader, subject, title, lead, description, expected):
    passage = Passage(title, lead, 3.0, title, description=description)
    assert reader.read(f"Which country is {subject} in?", [passage]).text == (expected or lead)
