"""Reading: definitions from the subject's article, short answers, and
multiple choice by a causal LM's likelihood (a tiny random GPT-2)."""

from __future__ import annotations

import doctest
import math
import re
import time

import numpy as np
import pytest

from assistant.kernel import ConfigError, InvalidInputError, Passage, ReaderConfig, load_configs
import assistant.readers as readers_module
from assistant.readers import (
    NOT_FOUND,
    LikelihoodChoiceReader,
    LikelihoodConfig,
    SentenceReader,
    answer_kind,
    cast_span,
    definition_subject,
    full_name,
    kin_holder,
    kin_span,
    kind_asked,
    life_event,
    kind_span,
    lived,
    referents,
    same_name,
    short_span,
    split_sentences,
    term_overlap,
)
from conftest import TINY_COLLECTION

BY_ID = {p["id"]: p for p in TINY_COLLECTION}
DEATH = Passage(
    "death", "Ada Lovelace died on 27 November 1852 in London, aged 36. She had three children with William King.",
    2.0, "Ada Lovelace",
)

# Byron's lead names only what he was ("an English poet"): the next sentence
# completes the definition.
BYRON_DEFINED = "George Gordon Byron was an English poet. He was one of the leading figures of the Romantic movement."


def passages(*ids):
    """Tiny-collection passages in this order, with falling BM25-like scores."""
    return [Passage(i, BY_ID[i]["contents"], 3.0 - n * 0.5, BY_ID[i]["title"]) for n, i in enumerate(ids)]


@pytest.fixture(scope="module")
def readers():
    from assistant.encoders import load_minilm

    encoder = load_minilm()
    return (SentenceReader(encoder, ReaderConfig(definitions=False, short_answers=False)),
            SentenceReader(encoder, ReaderConfig(definitions=True, short_answers=True)))


def test_definitions_and_short_answers_are_on_by_default():
    # As measured (BENCHMARKS.md §10): both helped.
    assert ReaderConfig().definitions is True and ReaderConfig().short_answers is True


def test_shapes_are_reader_settings_from_env_and_overrides(monkeypatch):
    # One owner: CONVQA_* variables and build_assistant's overrides reach them.
    monkeypatch.setenv("CONVQA_DEFINITIONS", "1")
    monkeypatch.setenv("CONVQA_DEFINITION_SENTENCES", "2")
    *_, reading = load_configs(short_answers=True)
    assert (reading.definitions, reading.definition_sentences, reading.short_answers) == (True, 2, True)
    monkeypatch.setenv("CONVQA_SHORT_ANSWERS", "maybe")
    with pytest.raises(ConfigError, match="short_answers"):
        load_configs()
    with pytest.raises(ConfigError, match="definition_sentences"):
        ReaderConfig(definition_sentences=0)


def test_definition_sentences_sets_the_length_of_a_definition(readers):
    plain, _ = readers
    one = SentenceReader(plain.encoder, ReaderConfig(definitions=True, definition_sentences=1))
    two = SentenceReader(plain.encoder, ReaderConfig(definitions=True, definition_sentences=2))
    curie = [Passage("curie", "Marie Curie was a Polish and naturalised-French physicist and chemist who conducted "
                              "research on radioactivity. She was the first woman to win a Nobel Prize. She died in 1934.",
                     2.0, "Marie Curie")]
    lead, second, _ = split_sentences(curie[0].text)
    assert one.read("Who was Marie Curie?", curie).text == lead
    assert two.read("Who was Marie Curie?", curie).text == f"{lead} {second}"


def test_build_reader_passes_the_settings_on(readers):
    from assistant.readers import build_reader

    built = build_reader("sentence", ReaderConfig(definitions=True))  # MiniLM is loaded once per process
    answer = built.read("Who was Lord Byron?", passages("ada", "byron"))
    assert answer.text == BYRON_DEFINED


# ---------------------------------------------------------------- definitions


def test_definition_comes_from_the_subjects_own_article(readers):
    plain, shaped = readers
    ranked = passages("ada", "byron")  # Ada's article ranks first: it names Byron
    # The sentence reader answers with the sentence that mentions him most ...
    assert plain.read("Tell me about Lord Byron", ranked).text == "Her father was the poet Lord Byron."
    # ... a definition is the first sentence of his own article.
    for question in ("Tell me about Lord Byron", "Who was Lord Byron?", "who is lord byron"):
        answer = shaped.read(question, ranked)
        assert (answer.text, answer.evidence, answer.source_id) == (BYRON_DEFINED, BYRON_DEFINED, "byron")
        assert answer.found and answer.score == pytest.approx(2.5 / 3.0)  # its BM25 against the best


def test_who_was_a_surname_is_answered_from_the_person_the_search_ranked_first(readers):
    _, shaped = readers
    ranked = [Passage("isaac", "Sir Isaac Newton was an English physicist. He wrote the Principia.", 3.0, "Isaac Newton"),
              Passage("unit", "The newton is the unit of force. It is named after Isaac Newton.", 2.0, "Newton")]
    assert shaped.read("Who was Newton?", ranked).text == "Sir Isaac Newton was an English physicist. He wrote the Principia."
    # Asked "what", the unit's own article is the subject's.
    assert shaped.read("What is Newton?", ranked).text == "The newton is the unit of force. It is named after Isaac Newton."


def test_a_documents_first_passage_is_its_lead():
    from assistant.readers import lead_passage

    later = Passage("byron_p2", "He died in Greece.", 5.0, "Lord Byron")
    first = Passage("byron_p0", "George Gordon Byron was an English poet.", 1.0, "Lord Byron (poet)")
    assert lead_passage("Lord Byron", [later, first]) is first
    assert lead_passage("Lord Byron", [later]) is later
    assert lead_passage("Charles Babbage", [later, first]) is None


def test_without_the_article_or_for_a_role_the_sentence_reader_answers(readers):
    plain, shaped = readers
    # No passage is Byron's article: no definition to give.
    assert shaped.read("Who was Lord Byron?", passages("ada", "paris")).text == plain.read(
        "Who was Lord Byron?", passages("ada", "paris")
    ).text
    assert definition_subject("Who was the first man on the moon?") is None
    assert definition_subject("What is the capital of France?") is None
    assert definition_subject("What is a quokka?") == "a quokka"
    assert definition_subject("Tell me more about the Beatles.") == "the Beatles"


# ---------------------------------------------------------------- short answers


def test_question_kinds():
    kinds = {
        "When did she die?": "date", "In what year was it built?": "date", "How many children did she have?": "number",
        "How old was she?": "number", "Who wrote it?": "name", "Who was Ada Lovelace's father?": "name",
        "Who was Ada Lovelace?": None, "What did she write?": None, "Why did she go?": None,
    }
    assert {q: answer_kind(q) for q in kinds} == kinds


def test_short_answers_are_spans_of_the_best_sentence(readers):
    plain, shaped = readers
    sentence = "Ada Lovelace died on 27 November 1852 in London, aged 36."
    assert plain.read("When did Ada Lovelace die?", [DEATH]).text.startswith(sentence)
    expected = {
        "When did Ada Lovelace die?": ("27 November 1852", sentence),
        # The day and the year of the date are not an age.
        "How old was Ada Lovelace when she died?": ("36", sentence),
        "How many children did Ada Lovelace have?": ("three", "She had three children with William King."),
    }
    for question, (text, evidence) in expected.items():
        answer = shaped.read(question, [DEATH])
        assert (answer.text, answer.evidence, answer.source_id) == (text, evidence, "death")


def test_a_who_question_gets_a_name(readers):
    plain, shaped = readers
    father = shaped.read("Who was Ada Lovelace's father?", passages("ada", "byron"))
    assert (father.text, father.evidence) == ("Lord Byron", "Her father was the poet Lord Byron.")
    assert plain.read("Who was Ada Lovelace's father?", passages("ada", "byron")).text == "Her father was the poet Lord Byron."
    # "She wrote ...": the name is her article's title, not Babbage's, whom the sentence names.
    author = shaped.read("Who wrote the first published algorithm?", passages("ada", "babbage"))
    assert author.text == "Ada Lovelace"
    assert author.evidence.startswith("She wrote the first published algorithm")


def test_a_title_or_an_initial_before_a_name_does_not_end_its_sentence(readers):
    # Split after "Dr.", the best sentence was "... invented by Dr." and the name in it "Dr".
    _, shaped = readers
    frobnitz = [Passage("frob", "The frobnitz was invented by Dr. Ellen Marsh in 1989. She later founded Marsh Labs.", 3.0, "Frobnitz")]
    found = shaped.read("Who invented the frobnitz?", frobnitz)
    assert (found.text, found.evidence) == ("Dr. Ellen Marsh", "The frobnitz was invented by Dr. Ellen Marsh in 1989.")
    assert split_sentences("John F. Kennedy visited St. Louis. He left.\nMt. Fuji is high.") == [
        "John F. Kennedy visited St. Louis.", "He left.", "Mt. Fuji is high."]


def test_no_span_keeps_the_sentence(readers):
    plain, shaped = readers
    # Asked for a date, the best sentence has none: the sentence is the answer.
    question = "When did Ada Lovelace write about the Analytical Engine?"
    assert shaped.read(question, passages("ada")).text == plain.read(question, passages("ada")).text
    assert short_span("date", question, "She wrote notes.") is None
    assert short_span("number", "How many?", "No numbers here.") is None
    assert short_span("date", "When?", "It opened in March 1889 and closed in 1900.") == "March 1889"


@pytest.mark.parametrize("question, sentence, expected", [
    # A number word is read whole: once "seventeen" came out "seven" and
    # "ninety" "nine" (the shorter word first in the pattern, nothing after it)...
    ("How many children did she have?", "She was the seventh daughter and had seventeen children.", "seventeen"),
    ("How many people lived there?", "In the seventeenth century some ninety people lived there.", "ninety"),
    # ... and an ordinal, or a word a number word opens, is no number.
    ("How many children did he have?", "He was the tenth child of the family.", None),
    ("How many sons did he have?", "He was the seventh son of a seventh son.", None),
    ("How many tenants were there?", "By the nineteenth century the tenants were gone.", None),
    ("How many novels did she write?", "Her twenty-seventh novel was her last.", None),
    # A number word with its scale or its tens is still one number.
    ("How many people lived there?", "Some twenty-five thousand people lived there.", "twenty-five thousand"),
    ("How many years did the plan last?", "The plan lasted seventy-two years.", "seventy-two"),
])
def test_a_number_word_is_read_whole(question, sentence, expected):
    assert short_span("number", question, sentence) == expected


@pytest.mark.parametrize("question, sentence, expected", [
    # Only a tens word opens no ordinal: after "one" the same words make a
    # fraction or a measure, still a number.
    ("How long was the pause?", "There was a one-second pause between the shots.", "one-second"),
    ("How much of the land did they sell?", "They sold one-fifth of the land in 1871.", "one"),
    # A numeral with an ordinal's suffix is still read: often the only count or age said.
    ("How many times did she win the cup?", "She won the cup for the 5th time in 2011.", "5"),
    ("How old was he when he retired?", "He retired in 1982, on his 70th birthday.", "70"),
    # A count asked is no year said as a date: once the ordinal word is no
    # number, "in 1998" was the only number left and came out as the count.
    ("How many times did he win the race?", "In 1998 he won the race for a sixth time.", None),
    ("How many times was she elected?", "She was elected a third time in 1936.", None),
    ("How many novels are in the cycle?", "The fifth and last novel of the cycle came out in 1954.", None),
    # A year-looking count, or one beside a dated year, is still the count.
    ("How many inhabitants does the hamlet have?", "The hamlet has 1200 inhabitants.", "1200"),
    ("How many people lived in the hamlet?", "In 1850 the hamlet had 1200 people.", "1200"),
])
def test_an_ordinal_leaves_no_year_as_the_count(question, sentence, expected):
    assert short_span("number", question, sentence, "Someone") == expected


def test_a_number_with_separators_is_one_span_not_a_year():
    # "8,848" once lost its "848" to the year pattern and came out as "8,".
    assert short_span("number", "How high is Everest?", "Everest is 8,848 metres high.") == "8,848 metres"
    assert short_span("number", "How many people?", "About 2,500 people lived there in 1900.") == "2,500"
    assert short_span("date", "When was it?", "It is 8,848 metres high and was measured in 1856.") == "1856"


def test_of_several_dates_or_numbers_the_one_next_to_the_questions_words_wins():
    # The first date of the sentence is her accession; "die" is answered next to "death".
    victoria = "Victoria was Queen of the United Kingdom from 20 June 1837 until her death in 1901."
    assert short_span("date", "When did Queen Victoria die?", victoria, "Queen Victoria") == "1901"
    assert short_span("date", "When was Victoria's accession?", victoria.replace("from", "from her accession on"), "Queen Victoria") == "20 June 1837"
    # Without a word of the question's relation in it, the sentence may be
    # about something else: no span, the sentence stays the answer.
    assert short_span("date", "When did Victoria become queen?", victoria, "Queen Victoria") is None
    lead = "Augusta Ada King, Countess of Lovelace, was an English mathematician and writer."
    assert short_span("name", "Who was Ada Lovelace's father?", lead, "Ada Lovelace") is None
    lincoln = "Abraham Lincoln was the 16th president, serving from 1861 until his assassination in 1865."
    assert short_span("date", "When was Abraham Lincoln assassinated?", lincoln, "Abraham Lincoln") == "1865"
    # A count is the number followed by what is counted; "154" is no year here.
    works = "His works consist of some 39 plays, 154 sonnets, three long narrative poems and a few other verses."
    assert short_span("number", "How many plays did he write?", works, "William Shakespeare") == "39"
    assert short_span("number", "How many sonnets did he write?", works, "William Shakespeare") == "154"
    assert short_span("number", "How many long poems did he write?", works, "William Shakespeare") == "three"
    tokyo = "The Greater Tokyo Area, which includes parts of six neighboring prefectures, has 33 million residents."
    assert short_span("number", "How many people live in the Greater Tokyo Area?", tokyo, "Tokyo") == "33 million"
    # A question with no words of its own: the first span.
    assert short_span("date", "When?", "It opened in March 1889 and closed in 1900.") == "March 1889"



def test_a_measure_keeps_its_range_its_unit_and_how_near_it_is():
    # "six to eight weeks" was cut to "six": a measure is its range and its
    # unit, and "about" says how near it is.
    passport = "Standard service takes six to eight weeks."
    assert short_span("number", "How long does a passport take?", passport) == "six to eight weeks"
    assert short_span("number", "How long is the flight?", "The flight takes about 3 hours.") == "about 3 hours"
    assert short_span("number", "How long is the trail?", "The trail is 5.5 km long.") == "5.5 km"
    assert short_span("number", "How long do grey seals live?", "Grey seals live 25-35 years in the wild.") == "25-35 years"
    assert short_span("number", "How tall is the mast?", "It is at most 60 m tall.") == "at most 60 m"
    # A hedge of two words is kept whole: "just under" was cut to "under".
    assert short_span("number", "How long does it take?", "It takes just under 40 minutes by train.") == "just under 40 minutes"
    assert short_span("number", "How long is the well?", "The well is well over 40 m deep.") == "well over 40 m"
    assert short_span("number", "How much did sales grow?", "Sales grew by an estimated 20 percent in 2001.") == "an estimated 20 percent"
    # A count keeps its range ("between" too), with no unit or "about" added.
    assert short_span("number", "How many guides does it employ?", "It employs between 20 and 30 guides.") == "between 20 and 30"
    assert short_span("number", "How many servants did they have?", "They had two or three servants.") == "two or three"
    assert short_span("number", "How many people lived there?", "About 2,500 people lived there in 1900.") == "2,500"
    # A measure in two units is one; a count "from" one number to another has changed.
    assert short_span("number", "How tall was he?", "He stood 6 ft 2 in tall.") == "6 ft 2 in"
    assert short_span("number", "How many members does the club have?", "The club grew from 50 to 300 members.") == "300"
    # The word after a measure is a unit only from the list: not "along".
    assert short_span("number", "How long is the wall?", "The wall runs 2,196 along the border.") == "2,196"


def test_a_score_or_a_vote_is_no_range():
    # Only a rising pair is a range: "voted 5 to 4" was read "5 to 4".
    assert short_span("number", "How many justices voted for the ruling?", "The justices voted 5 to 4 for the ruling.") == "5"
    assert short_span("number", "How many goals did Brazil score?", "Brazil scored 2-0 against Germany.") == "2"
    assert short_span("number", "How many councillors voted in favour?", "The council voted 7 to 2 to approve the plan.") == "7"
    assert short_span("number", "How many seats did Labour win?", "Labour won 412 to 166 for the Conservatives.") == "412"
    assert short_span("number", "How many votes did the bill get?", "The bill passed 60 to 40 in the Senate.") == "60"
    assert short_span("number", "How many shares did he sell?", "He sold 500 to one buyer.") == "500"


def test_a_count_changed_by_a_number_is_no_range():
    # "by" before the first number, as "from": the count it came to is asked.
    grew = "Membership grew by 5,000 to 20,000 members last year."
    assert short_span("number", "How many members does the club have?", grew) == "20,000"
    rose = "The population increased by 2,000 to 15,000 people."
    assert short_span("number", "How many people live in the town?", rose) == "15,000"


def test_in_is_a_second_unit_only_after_feet():
    assert short_span("number", "How far did she swim?", "She swam 100 m 4 in a row each morning.") == "100 m"
    assert short_span("number", "How long did he serve?", "He served 5 years and 3 in the army.") == "5 years"
    assert short_span("number", "How tall was he?", "He stood 5 feet 10 in tall.") == "5 feet 10 in"


def test_a_number_takes_no_trailing_comma():
    assert short_span("number", "How many guides does it employ?", "It employs between 20 and 30, all trained.") == "between 20 and 30"
    assert short_span("number", "How many guides does it employ?", "It employs 30, all trained.") == "30"
    assert short_span("number", "How many guides does it employ?", "It employs 1,300, all trained.") == "1,300"


def test_an_era_makes_a_short_number_a_year():
    # "44 BC" was no date (a year had three or four digits): Caesar's
    # assassination got the whole sentence, and a century lost its era.
    caesar = ("Gaius Julius Caesar was the dictator of the Roman Republic almost continuously "
              "from 49 BC until his assassination in 44 BC.")
    assert short_span("date", "When was Julius Caesar assassinated?", caesar, "Julius Caesar") == "44 BC"
    colosseum = "Construction began under the Emperor Vespasian in 72 and was completed in AD 80 under Titus."
    assert short_span("date", "When was the Colosseum completed?", colosseum, "Colosseum") == "AD 80"
    assert short_span("date", "When?", "It was raised in the 3rd millennium BC.") == "the 3rd millennium BC"
    assert short_span("date", "When?", "Rome fell in 476 AD, long after 2,500 BC.") == "476 AD"
    # A short number without an era is still no year.
    assert short_span("date", "When?", "She had 3 children in 12 years.") is None


def test_a_name_that_qualifies_a_noun_before_another_name_is_no_answer():
    # "the fifth Mughal emperor, Shah Jahan": "Mughal" sat nearest "commissioned".
    taj = ("It was commissioned in 1631 by the fifth Mughal emperor, Shah Jahan, to house the tomb "
           "of his late wife, Mumtaz Mahal.")
    assert short_span("name", "Who commissioned the Taj Mahal?", taj, "Taj Mahal") == "Shah Jahan"
    leibniz = "Newton shares credit with the German mathematician Gottfried Wilhelm Leibniz for calculus."
    assert short_span("name", "Who shares credit with Newton?", leibniz, "Isaac Newton") == "Gottfried Wilhelm Leibniz"
    # A verb between two names leaves both names.
    assert short_span("name", "Who defeated Pompey?", "Caesar defeated Pompey at Pharsalus.") == "Caesar"
    assert short_span("name", "Who did Caesar defeat?", "Caesar defeated Pompey at Pharsalus.") == "Pompey"


def test_a_number_in_brackets_that_restates_another_in_other_units_is_no_answer(readers):
    # "(4,404 mi)" sits nearer "long" than the article's own "7,088 kilometers".
    _, shaped = readers
    nile = Passage("nile", "The Nile is a major north-flowing river in northeast Africa. At 7,088 kilometers "
                   "(4,404 mi) long, it is the longest river in the world.", 3.0, "Nile")
    assert shaped.read("How long is the Nile?", [nile]).text == "7,088 kilometers"
    high = "Its summit stands at 4,810 m (15,781 ft) above sea level."
    assert short_span("number", "How high above sea level is it?", high) == "4,810 m"


# ---------------------------------------------------------------- a pasted document

# As one-document mode reads a pasted text: one passage, titled "your text".
PASTED = Passage("your-text_p0", "Antonín Dvořák was a Czech composer. He was born in 1841 in Nelahozeves, near Prague. "
                 "In 1892 Dvořák moved to New York.", 0.0, "your text")
ACME = Passage("your-text_p0", "Acme Widgets is a toy maker based in Leeds. It was founded in 1952 by Harold Pike. "
               "It employs 340 people and sells its toys in 12 countries.", 0.0, "your text")
BRIDGE = Passage("your-text_p0", "The Karlo Bridge crosses the river Maren. Construction began in 1887 under the "
                 "engineer Josef Hradek. The bridge was opened in 1893. It is 412 metres long.", 0.0, "your text")


def test_a_sentence_that_opens_with_a_pronoun_is_about_the_name_before_it(readers):
    # "He was born in 1841" shared one word with "When was Dvořák born?" and
    # the sentence naming him, with no date, was the answer.
    _, shaped = readers
    expected = {
        (PASTED, "When was Dvořák born?"): ("1841", "He was born in 1841 in Nelahozeves, near Prague."),
        (PASTED, "Who was born in Nelahozeves?"): ("Antonín Dvořák", "He was born in 1841 in Nelahozeves, near Prague."),
        (ACME, "When was Acme Widgets founded?"): ("1952", "It was founded in 1952 by Harold Pike."),
        (ACME, "Who founded Acme Widgets?"): ("Harold Pike", "It was founded in 1952 by Harold Pike."),
        (ACME, "How many people does Acme Widgets employ?"): ("340", "It employs 340 people and sells its toys in 12 countries."),
        # A pasted text's title names no one: a sentence that names no subject
        # of its own is about the bridge too, and "It" is the bridge, not "Construction".
        (BRIDGE, "When did construction of the Karlo Bridge begin?"): ("1887", "Construction began in 1887 under the engineer Josef Hradek."),
        (BRIDGE, "How long is the Karlo Bridge?"): ("412 metres", "It is 412 metres long."),
    }
    for (passage, question), (text, evidence) in expected.items():
        answer = shaped.read(question, [passage])
        assert (answer.text, answer.evidence) == (text, evidence), question


def test_an_article_keeps_its_title_and_a_word_opening_a_sentence_is_no_name(readers):
    # "Among his most famous works are …" once made "Among" the name "His
    # career …" stood for, read in place of the article's title: Picasso's
    # death year was lost.
    _, shaped = readers
    picasso = Passage("Pablo Picasso", "Pablo Ruiz Picasso was a Spanish painter and sculptor who spent most of his "
                      "adult life in France. Among his most famous works are the proto-Cubist Les Demoiselles "
                      "d'Avignon (1907) and the anti-war painting Guernica (1937). His career spanned more than 76 "
                      "years, from his late teens to his death in 1973.", 3.0, "Pablo Picasso")
    assert shaped.read("When did Pablo Picasso die?", [picasso]).text == "1973"


def test_who_was_x_in_a_pasted_document_is_the_sentence_that_says_what_x_is(readers):
    # No article is Dvořák's own: the sentence about his birth (now about
    # him through "He") would win; the sentence that says what he was is the definition.
    _, shaped = readers
    assert shaped.read("Who was Dvořák?", [PASTED]).text == "Antonín Dvořák was a Czech composer."
    assert shaped.read("What is Acme Widgets?", [ACME]).text == "Acme Widgets is a toy maker based in Leeds."


def test_who_was_born_there_asks_for_a_name_not_a_definition():
    # "born in Nelahozeves" was taken for the subject of "Who was X?".
    for question in ("Who was born in Nelahozeves?", "Who was known as the Iron Lady?", "Who was elected in 1860?"):
        assert definition_subject(question) is None and answer_kind(question) == "name", question
    assert definition_subject("who was alfred the great") == "alfred the great"


def test_a_number_after_no_or_op_does_not_end_its_sentence():
    assert split_sentences("There he wrote his Symphony No. 9, From the New World. It is his Op. 95. He left.") == [
        "There he wrote his Symphony No. 9, From the New World.", "It is his Op. 95.", "He left."]


def test_one_letter_is_no_name():
    # "penicillin G" answered "Who discovered penicillin?" with "G".
    penicillin = ("A number of natural penicillins have been discovered, but only two purified compounds are in "
                  "clinical use: penicillin G and penicillin V. Penicillins were among the first medications.")
    assert short_span("name", "Who discovered penicillin?", penicillin, "Alexander Fleming") is None
    assert short_span("name", "Who discovered it?", "It was discovered by J. Smith.") == "J. Smith"


def test_irregular_verb_forms_and_measures_are_the_questions_words():
    # "sink" shares no prefix with "sank", nor "high" with "highest": the
    # sentence held the date or the height and the whole sentence was the answer.
    titanic = "RMS Titanic sank in the North Atlantic Ocean on 15 April 1912, four days into her maiden voyage."
    assert short_span("date", "When did the Titanic sink?", titanic, "Sinking of the Titanic") == "15 April 1912"
    kilimanjaro = ("It is the highest mountain in Africa, at 5,895 m (19,341 ft) above sea level and 4,900 m "
                   "(16,100 ft) above its plateau base.")
    assert short_span("number", "How high is Mount Kilimanjaro?", kilimanjaro, "Mount Kilimanjaro") == "5,895 m"
    assert short_span("name", "Who did Ada meet in 1833?", "In 1833 she met Charles Babbage.", "Ada Lovelace") == "Charles Babbage"


def test_who_did_it_answered_by_he_did_it_is_the_name_he_stands_for(readers):
    # "There he wrote his Symphony No. 9": the writer is "he", not "Symphony No".
    _, shaped = readers
    symphony = Passage("your-text_p0", PASTED.text + " There he wrote his Symphony No. 9, From the New World.", 0.0, "your text")
    answer = shaped.read("Who wrote the Symphony From the New World?", [symphony])
    assert (answer.text, answer.evidence) == ("Antonín Dvořák", "There he wrote his Symphony No. 9, From the New World.")
    # A question that names whom "he" stands for is about him, not for him.
    assert short_span("name", "Who did Tesla work for?", "He is best known for his work on alternating current.",
                      "your text", referent="Nikola Tesla") is None
    # Asked whom she met, not who met: the name beside the verb.
    assert short_span("name", "Who did she meet in 1833?", "In 1833 she met Charles Babbage.", "Ada Lovelace") == "Charles Babbage"


BRINDLEMERE = Passage("your-text_p0", "Brindlemere is a small market town on the river Osk. Its most famous native is the "
                      "painter Clara Voss, whose birthplace on Mill Lane is now a museum. She moved to Paris in 1902 "
                      "and died there in 1931. The town has a population of 4,200.", 0.0, "your text")


def test_there_is_the_place_the_sentence_before_named(readers):
    # "Who was born in Verona?" got "Verona is a city …" and the sentence
    # after it: "there" stood for nothing, and the sentence that says who
    # was born there shared one word of two with the question.
    _, shaped = readers
    verona = Passage("your-text_p0", "Verona is a city in northern Italy. Romeo Montague was born there. He loved "
                     "Juliet Capulet.", 0.0, "your text")
    answer = shaped.read("Who was born in Verona?", [verona])
    assert (answer.text, answer.evidence) == ("Romeo Montague", "Romeo Montague was born there.")
    assert referents(["Clara Voss moved from Leeds to Paris.", "Tom Smith met her there."], every=True) == ["", "Paris"]
    # "There were …" is no place, and a text about a person names none.
    assert referents(["Verona is a city in Italy.", "Tom Smith said there were two of them."], every=True) == ["", ""]
    assert referents(["Clara Voss was a painter.", "Tom Smith met her there."], every=True) == ["", ""]


def test_she_after_his_wife_is_the_wife(readers):
    # "She" after "John Smith married his wife Mary" stood for John Smith:
    # "Who painted landscapes?" was answered "John Smith".
    _, shaped = readers
    smith = Passage("your-text_p0", "John Smith was a banker from Leeds. He married his wife Mary Brown in 1900. She "
                    "was a painter of landscapes. She died in Paris in 1950.", 0.0, "your text")
    assert shaped.read("Who painted landscapes?", [smith]).text == "Mary Brown"
    assert shaped.read("When did Mary Brown die?", [smith]).text == "1950"
    assert referents(split_sentences(smith.text), every=True) == ["", "John Smith", "Mary Brown", "Mary Brown"]
    # "He" is still the husband, "her sister" no one "she" stands for, and
    # a sentence opening with a name ends the wife's turn.
    assert referents(["John Smith married his wife Mary in 1900.", "He was a banker."]) == ["", "John Smith"]
    assert referents(["Anna Ricci lived with her sister Maria.", "She was a singer."]) == ["", "Anna Ricci"]
    assert referents(["Tom Hale married his wife Ann.", "She sang.", "Tom Hale died.", "She wept."]) == [
        "", "Ann", "", "Tom Hale"]


def test_a_spouse_takes_only_a_pronoun_the_subject_cannot_be():
    # "his mother" after "she married Pierre Curie" made every later "She"
    # the mother, Marie Curie's own Nobel Prizes included.
    curie = ["Marie Curie was a physicist.", "In 1895 she married Pierre Curie; his mother Sophie-Claire Depouilly "
             "had died in 1877.", "She won the Nobel Prize twice.", "She died in 1934."]
    assert referents(curie, every=True) == ["", "Marie Curie", "Marie Curie", "Marie Curie"]
    # "His wife" opening a sentence names her as "his wife" inside one does.
    assert referents(["John Smith was a banker.", "His wife Mary Brown was a painter.", "She died in 1950."]) == [
        "", "John Smith", "Mary Brown"]


def test_there_being_some_is_no_place():
    # "She said there were two theatres" took "there" for a place and the
    # name the text is about for the town, so "She" stood for no one.
    text = ["Clara Voss moved to Leeds.", "She said there were two theatres.", "She died in 1950."]
    assert referents(text, every=True) == ["", "Clara Voss", "Clara Voss"]


def test_another_form_of_the_questions_word_is_its_word_beside_a_span(readers):
    # "work" is not "worked" nor "marry" "married" by their first five
    # letters: the sentence held the name but no span was taken.
    _, shaped = readers
    lindqvist = Passage("your-text_p0", "Oskar Lindqvist was a Swedish chemist. He worked for the Nobel company from "
                        "1885 to 1899. He married Greta Holm in 1890.", 0.0, "your text")
    assert shaped.read("Who did Lindqvist work for?", [lindqvist]).text == "Nobel"
    assert shaped.read("Who did Lindqvist marry?", [lindqvist]).text == "Greta Holm"
    # What "how many people" counts is a population.
    assert shaped.read("How many people live in Brindlemere?", [BRINDLEMERE]).text == "4,200"


def test_a_person_pronoun_stands_for_a_person_not_a_place(readers):
    # "She" after "Brindlemere is a town. Its …" was Brindlemere.
    _, shaped = readers
    assert referents(["Brindlemere is a town.", "Its native is the painter Clara Voss.", "She died in 1931."]) == [
        "", "Brindlemere", "Clara Voss"]
    assert referents(["Madrid is the capital of Spain.", "He arrived there in 1920."]) == ["", ""]
    assert shaped.read("When did Clara Voss die?", [BRINDLEMERE]).text == "1931"


def test_a_date_in_another_clause_than_the_questions_word_is_no_answer():
    # "moved to Paris in 1902 and died there in 1931": 1902 is nearer "died".
    assert short_span("date", "When did she die?", "She moved to Paris in 1902 and died there in 1931.") == "1931"


def test_a_name_after_in_or_on_is_a_place_not_who():
    sentence = "Its most famous native is the painter Clara Voss, whose birthplace on Mill Lane is now a museum."
    assert short_span("name", "Who was born in Brindlemere?", sentence, referent="Brindlemere") == "Clara Voss"


def test_a_listed_relative_of_the_questions_word_counts_when_the_sentence_is_chosen(readers):
    # "born" is "birthplace"'s relative: "The town has a population of 4,200."
    # (about Brindlemere too) was read for "Who was born in Brindlemere?".
    _, shaped = readers
    answer = shaped.read("Who was born in Brindlemere?", [BRINDLEMERE])
    assert (answer.text, answer.evidence) == (
        "Clara Voss", "Its most famous native is the painter Clara Voss, whose birthplace on Mill Lane is now a museum.")
    # Their stems do not: "interesting" is not "interests".
    assert term_overlap("Is it interesting?", "", "Her interests were many.") == 0.0


def test_a_possessive_of_a_name_ending_in_s_is_that_name():
    # "Paris's" lost its "'s" only, "Paris" its "s": "paris" against "pari".
    assert term_overlap("What is Paris's nickname?", "", "Paris is called the City of Light.") == pytest.approx(0.5)
    assert term_overlap("What were Dickens's novels?", "", "Dickens wrote novels.") == pytest.approx(1.0)
    assert term_overlap("What were Dickens’s novels?", "", "Dickens wrote novels.") == pytest.approx(1.0)


def test_a_past_or_ing_form_in_the_sentence_meets_the_questions_base_word(readers):
    # "nickname" and "Nicknamed" shared no term: the lead ("Paris is the
    # capital …") was read for "What is Paris's nickname?".
    assert term_overlap("What is its nickname?", "", "Nicknamed the City of Light, it grew.") == pytest.approx(1.0)
    assert term_overlap("What did she paint?", "", "She painted the harbour.") == pytest.approx(1.0)
    assert term_overlap("Where did he stop?", "", "He stopped at Tarrow.") == pytest.approx(1.0)
    assert term_overlap("Who did he marry?", "", "He carried the box.") == 0.0
    # Only that way round, and no base under four letters: "feed" is not "fee".
    assert term_overlap("Who painted it?", "", "She will paint it.") == 0.0
    assert term_overlap("What is the fee?", "", "They feed the seals.") == 0.0
    _, shaped = readers
    paris = Passage("paris", "Paris is the capital of France. The city has 2.1 million residents. Nicknamed the City "
                    "of Light, Paris was a centre of the Enlightenment.", 1.0, "Paris")
    assert shaped.read("What is Paris's nickname?", [paris]).text.startswith("Nicknamed the City of Light")


@pytest.mark.parametrize("question, title, sentence, overlap", [
    # A name's -ed or -ing is no base word: "Limited", "Manning", "United".
    ("What is the speed limit?", "Tarrow", "Tarrow Motors Limited builds cars in Tarrow.", 0.0),
    ("Who was the first man on the moon?", "", "Peyton Manning played quarterback for the Colts.", 0.0),
    ("What unit of currency does Japan use?", "Japan", "Japan traded with the United States after 1854.", 0.2),
    # "boring" is not "bore", which listed_word writes as "born"'s "birth".
    ("Where was Tesla born?", "Nikola Tesla", "Tesla found lectures boring in Graz.", 0.5),
    # The sentence's first word is read only as an "-ed" form no capital
    # follows: an "-ing" one there is a name as often ("Manning", "Redding").
    ("Who was the first man on the moon?", "", "Manning played quarterback for the Colts.", 0.0),
    ("Who won the gold medal?", "", "Golding wrote Lord of the Flies.", 0.0),
    ("What field did he work in?", "", "Fielding wrote Tom Jones.", 0.0),
    ("What is the red planet?", "", "Redding is a city in California.", 0.0),
    ("What unit of currency does Japan use?", "", "United States forces occupied Japan until 1952.", 0.2),
    ("What is the limit?", "", "Limited Editions sells prints.", 0.0),
    ("What is its nickname?", "", "Nicknamed the City of Light, it grew.", 1.0),
    ("What is its nickname?", "", "(Nicknamed the City of Light) Paris grew.", 1.0),
    ("What did she paint?", "", "Painted in 1890, it hangs in Paris.", 1.0),
    ("Who did they marry?", "", "They married in 1900.", 1.0),
    ("What is the limit?", "", "Limited edition prints cost more.", 1.0),
])
def test_a_names_ed_or_ing_is_no_base_word(question, title, sentence, overlap):
    assert term_overlap(question, title, sentence) == pytest.approx(overlap)


# Words that only look made from another word gave it as their base:
# "rugged" met "rug", "evening" "even", "striped" "strip" (its own "-ed" is
# "stripped"), "earring" "ear" (no doubling after two vowels).
@pytest.mark.parametrize("question, sentence, overlap", [
    ("What is a rug?", "The rugged coast is long.", 0.0),
    ("What is a rag?", "He wore a ragged coat.", 0.0),
    ("Is it an even number?", "In the evening it rained.", 0.0),
    ("What is the morn?", "In the morning it rained.", 0.0),
    ("Who was a crook?", "The crooked path led home.", 0.0),
    ("What is the tide?", "Glad tidings came.", 0.0),
    ("What is a strip?", "The striped shirt was blue.", 0.0),
    ("What did they plan?", "The wood was planed.", 0.0),
    ("Who did he writ?", "His writing was neat.", 0.0),
    ("What is in the ear?", "She wore an earring.", 0.0),
    ("Who are the Cree?", "The creed was old.", 0.0),
    ("What is a unit?", "The united team won.", 0.0),
    ("What is a caste?", "The casting was done.", 0.0),
    ("What is Tel Aviv?", "He was telling stories.", 0.0),
    ("What is a plea?", "She was pleased.", 0.0),
    ("Which era was it?", "The tape was erased.", 0.0),
    ("What is a steppe?", "He stepped out.", 0.0),
    ("What is her income?", "The incoming mail was late.", 0.0),
    # A false base goes in each of the word's forms, beside the true one.
    ("What was the past?", "They were pasting labels.", 0.0),
    ("Was it severe?", "They were severing ties.", 0.0),
    ("What is a suite?", "The colour was suiting him.", 0.0),
    ("Who was the premier?", "The film was premiering in May.", 0.0),
    ("What is a caste?", "The mould was casted in May.", 0.0),
    ("Where did she sing?", "The fire singed her hair.", 0.0),
    ("What did the fire singe?", "The choir was singing.", 0.0),
    # The words they are made from still meet them.
    ("What did they unite?", "The united team won.", 1.0),
    ("What did they cast?", "The casting was done.", 1.0),
    ("What did he fill?", "He was filling the jar.", 1.0),
    ("What did he step on?", "He stepped on a nail.", 1.0),
    ("What did it please?", "She was pleased.", 1.0),
    ("What did they erase?", "The tape was erased.", 1.0),
    ("What did they focus on?", "They focused on the coast.", 1.0),
    ("What did they control?", "They controlled the coast.", 1.0),
    ("What did the fire singe?", "The fire singed her hair.", 1.0),
    ("Where did she sing?", "The choir was singing.", 1.0),
    ("What did they paste?", "They were pasting labels.", 1.0),
    ("What did they stock?", "They were stocking the shelves.", 1.0),
    ("Where did it moor?", "Its mooring was at the north pier.", 1.0),
    ("What did the galaxy lens?", "The galaxy lensed the light.", 1.0),
    ("What is the bias?", "The sample was biased.", 1.0),
    ("What did revoked mean?", "It was revoked, meaning void.", 1.0),
    ("What is a stripe?", "The striped shirt was blue.", 1.0),
    ("What did he strip?", "He stripped the bed.", 1.0),
    ("What did she write?", "Her writing was neat.", 1.0),
    ("Who did they wed?", "The wedding was in May.", 1.0),
    ("What did it plan?", "The council planned a bridge.", 1.0),
    ("What is its nickname?", "It was nicknamed the Pearl of the North.", 1.0),
    ("What is its nickname?", "Nicknamed the Pearl of the North, it grew.", 1.0),
])
def test_a_word_that_only_looks_derived_gives_no_base(question, sentence, overlap):
    assert term_overlap(question, "", sentence) == pytest.approx(overlap)


def test_a_word_that_only_looks_derived_does_not_outread_the_answer(readers):
    plain, _ = readers
    rex = Passage("p", "Rex lives in Tarrow. His owner's dogged work built the farm. The animal is fed on meat and rice.", 1.0,
                  "Rex")
    assert plain.read("What does the dog eat?", [rex]).text == "The animal is fed on meat and rice."
    tide = Passage("p", "Tarrow is a port. Glad tidings came from the mayor. The sea rises four metres at Tarrow twice daily.",
                   1.0, "Tarrow")
    assert plain.read("What is the tide at Tarrow?", [tide]).text == "The sea rises four metres at Tarrow twice daily."


def test_a_nouns_own_verb_form_still_meets_the_verb(readers):
    # "mooring" was listed as a noun of its own, and the moor sentence lost.
    plain, _ = readers
    ship = Passage("p", "The Tarrow was a steam ship. Its mooring was at the north pier. It carried coal to Hull.", 1.0,
                   "Tarrow")
    assert plain.read("Where did the ship moor?", [ship]).text == "Its mooring was at the north pier."


def test_a_name_ending_in_ed_or_ing_does_not_outread_the_answer(readers):
    plain, _ = readers
    limit = Passage("p", "Tarrow Motors Limited builds cars in Tarrow. Drivers there may go at most 50 km/h.", 1.0, "Tarrow")
    assert plain.read("What is the speed limit?", [limit]).text == "Drivers there may go at most 50 km/h."
    tesla = Passage("p", "Tesla found lectures boring in Graz. Smiljan was his home village, where his father was a priest.",
                    1.0, "Nikola Tesla")
    assert plain.read("Where was Tesla born?", [tesla]).text.startswith("Smiljan")


def test_a_who_question_is_not_answered_with_a_name_it_already_says():
    # "He … with William Faulkner calling him …" in Mark Twain's article
    # answered "Who called Twain …?" with the article's subject, the one
    # the question names.
    praised = ('He has been praised as the "greatest humorist the United States has produced", with William '
               'Faulkner calling him "the father of American literature".')
    asked = "Who called Twain the father of American literature?"
    assert short_span("name", asked, praised, "Mark Twain") == "William Faulkner"
    assert short_span("name", "Who married Twain?", "He married Olivia Langdon in 1870.", "Mark Twain") == "Olivia Langdon"
    assert short_span("name", asked, "William Faulkner, in a letter of 1950, called Mark Twain the father of "
                      "American literature.") == "William Faulkner"
    # A question naming someone else still gets the subject "he" stands for.
    assert short_span("name", "Who wrote Huckleberry Finn?", "He wrote Huckleberry Finn in 1884.", "Mark Twain") == "Mark Twain"
    # With no other name in the sentence, the repeated one is still the span.
    assert short_span("name", "Who did Twain meet?", "He met Mark Twain's brother.") == "Mark Twain"


@pytest.mark.parametrize("text, sentences", [
    # A quoted line stays with what follows it, whoever says it: split off
    # by a list of speech verbs, "Tom laughed." lost its quote and "Who
    # laughed?" its answer.
    ('"Why not?" Tom laughed. They walked home.', ['"Why not?" Tom laughed.', "They walked home."]),
    ('"There\'s no need to be sarcastic!" Marcia blurted. He left.', ['"There\'s no need to be sarcastic!" Marcia blurted.', "He left."]),
    ('"Why?" Asked Mary. He left.', ['"Why?" Asked Mary.', "He left."]),
    ('"Where are you going?" Mary asked her brother. He did not answer.',
     ['"Where are you going?" Mary asked her brother.', "He did not answer."]),
    ("Pet policy. «Can I bring my dog?» Dogs may.", ["Pet policy. «Can I bring my dog?» Dogs may."]),
    # A quoted title inside a sentence ends nothing.
    ('In "Where Is My Mind?" Black Francis sings about diving.', ['In "Where Is My Mind?" Black Francis sings about diving.']),
    ('The film "Who Framed Roger Rabbit?" (1988) won three Oscars.', ['The film "Who Framed Roger Rabbit?" (1988) won three Oscars.']),
])
def test_a_quoted_line_is_no_sentence_of_its_own(text, sentences):
    assert split_sentences(text) == sentences


def test_a_quoted_line_is_read_with_its_speaker(readers):
    _, shaped = readers
    tom = Passage("p", 'It was late. "Why not?" Tom laughed. They walked home.', 1.0, "story")
    assert shaped.read("Who laughed?", [tom]).text == "Tom"


@pytest.mark.parametrize("question, sentence, title, name", [
    # A name sharing a word with the question's is not the question's name.
    ("Who succeeded Henry VII?", "Henry VIII succeeded Henry VII in 1509 and married Catherine of Aragon.", "", "Henry VIII"),
    ("Who succeeded Henry VII?", "He succeeded his father Henry VII in 1509 and married Catherine of Aragon.", "Henry VIII", "Henry VIII"),
    ("Who succeeded Louis XV?", "Louis XVI succeeded Louis XV in 1774, with Marie Antoinette as queen.", "", "Louis XVI"),
    # What is "named after" someone repeats that one's name.
    ("Who is the Nobel Prize named for?", "The prize is named for Alfred Nobel, a Swedish chemist from Stockholm.", "", "Alfred Nobel"),
    ("Who is the Diesel engine named after?", "It is named after Rudolf Diesel, a German engineer born in Paris.", "Diesel engine",
     "Rudolf Diesel"),
    ("Who is Washington named after?", "It is named after George Washington, the first President of the United States.",
     "Washington (state)", "George Washington"),
    # The question's own name still gives way ("Washington" is George Washington).
    ("Who was Washington's vice president?", "John Adams served as vice president under George Washington in Philadelphia.", "",
     "John Adams"),
    ("Who did John marry?", "John Smith married Mary Smith in Boston.", "", "Mary Smith"),
    ("Who did Tesla work for?", "He worked for Thomas Edison in New York City.", "Nikola Tesla", "Thomas Edison"),
])
def test_only_the_questions_own_name_gives_way(question, sentence, title, name):
    assert short_span("name", question, sentence, title) == name


# "grew by 5,000 to 20,000" read as a range (a measure) or as 5,000 (a count);
# a question about the change itself keeps it, a range where it rises.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many members does the club have?", "Its membership grew by 5,000 to 20,000 in 1990.", "20,000"),
    ("How big is the club?", "The club grew by 5,000 to 20,000 members in 1990.", "20,000"),
    ("How many people live in Tarrow?", "Its population fell by 300 to 9,700 in 2001.", "9,700"),
    # A change that is a range goes with its "to" partner: the level is after both.
    ("How many members?", "Membership fell by 3 to 4 percent to 9,700.", "9,700"),
    ("How many members does the club have?", "Membership fell by 3 to 4 percent to 9,700 in 2001.", "9,700"),
    ("How much did fees go up?", "Fees went up by 10 to 20 dollars in 2019.", "10 to 20 dollars"),
    ("How far did the temperature drop?", "The temperature dropped by 5 to 10 degrees.", "5 to 10 degrees"),
    ("How many seats did the party hold?", "The party's seats were reduced by 12 to 40.", "40"),
    # A question about the change, by any of its verbs, keeps it (a range where it rises).
    ("How much did inflation increase?", "Inflation rose by 3 to 5 percent in 2019.", "3 to 5 percent"),
    ("How much were costs reduced?", "Costs were cut by 10 to 15 percent in 2019.", "10 to 15 percent"),
    ("How much will sea levels rise?", "Sea levels are expected to increase by 30 to 60 centimetres by 2100.", "30 to 60 centimetres"),
    ("How many members did the club gain?", "Its membership grew by 5,000 to 20,000 in 1990.", "5,000"),
    ("How many members joined the club?", "Its membership grew by 5,000 to 20,000 in 1990.", "5,000"),
    ("How many members signed up?", "Membership went up by 5,000 to 20,000 in 1990.", "5,000"),
    # "By how much/many" in any case asks about the change.
    ("BY HOW MANY members was the club larger?", "Its membership grew by 5,000 to 20,000 in 1990.", "5,000"),
    # A name or a longer word holding a verb of change asks for no change.
    ("How many people live in Niagara Falls?", "Its population fell by 300 to 9,700 in 2001.", "9,700"),
    ("How many people live in Fall River?", "Its population fell by 300 to 9,700 in 2001.", "9,700"),
    ("How many people live on the Lower East Side?", "Its population grew by 300 to 9,700 in 2001.", "9,700"),
    ("How many people live in Chang'an?", "Its population grew by 300 to 9,700.", "9,700"),
    ("How many additional staff work there?", "Staff grew by 300 to 9,700 in 2001.", "9,700"),
    ("How many members does Rose's club have?", "Membership grew by 300 to 9,700.", "9,700"),
    # Only after a verb of change: a tally is no change.
    ("How many senators supported the bill?", "The bill passed by 52 to 48 votes.", "52"),
])
def test_a_number_after_by_that_to_another_follows_is_the_change_not_the_level(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A change said how near ("by about 5,000") or as a range ("by 3-4%") was
# read as a range with the level ("5,000 to 20,000") or cut at its first
# number ("3"); a question about the change got the level with it.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many members does the club have?", "Its membership grew by about 5,000 to 20,000 in 1990.", "20,000"),
    ("How many members does the club have?", "Its membership grew by just under 5,000 to 20,000 in 1990.", "20,000"),
    ("How many members does the club have?", "Its membership grew by more than 5,000 to 20,000 in 1990.", "20,000"),
    ("How many members does the club have?", "Membership fell by 3-4% to 9,700 in 2001.", "9,700"),
    ("How many members does the club have?", "Membership fell by about 3 to 4 percent to 9,700 in 2001.", "9,700"),
    ("How many members does the club have?", "Membership fell by between 3 and 4 percent to 9,700 in 2001.", "9,700"),
    ("How many members does the club have?", "The club grew by 5,000 members, to 20,000.", "20,000"),
    ("By how much did it grow?", "Its membership grew by about 5,000 to 20,000 in 1990.", "5,000"),
    ("How much did membership increase?", "Its membership grew by about 5,000 to 20,000 in 1990.", "about 5,000"),
    ("How much did membership increase?", "Its membership grew by 5,000 to 20,000 in 1990.", "5,000"),
    ("How many members did the club gain?", "Its membership grew by roughly 5,000 to 20,000 in 1990.", "5,000"),
    ("How much did membership drop?", "Membership fell by 3–4% to 9,700 in 2001.", "3–4%"),
    ("How much did membership drop?", "Membership fell by about 3 to 4 percent to 9,700 in 2001.", "about 3 to 4 percent"),
    ("How many members did the club lose?", "Membership fell by 300 to 400 members to 9,700 in 2001.", "300 to 400"),
    ("How much does it produce?", "Production rose by over 50% to 3 million tons in 2010.", "3 million tons"),
    # A unit on the second number only is the change's range; on both, the change and the level.
    ("How much did inflation increase?", "Inflation rose by about 3 to 5 percent in 2019.", "about 3 to 5 percent"),
    ("How much did inflation increase?", "Inflation rose by 3% to 5% in 2019.", "3%"),
    # No verb of change, no change: a tally keeps its numbers.
    ("How many senators supported the bill?", "The bill passed by about 52 to 48 votes.", "52"),
])
def test_a_change_said_how_near_or_as_a_range_is_the_change_before_the_level(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A change that is a range with no level after it was cut at its first
# number ("fell by between 3,000 and 5,000": "3,000"), and a hedged pair
# whose second number is under twice the first read as the change and its
# level ("by about 300 to 400 seats": "300").
@pytest.mark.parametrize("question, sentence, span", [
    ("How many members did it lose?", "Membership fell by between 3,000 and 5,000 in 2001.", "between 3,000 and 5,000"),
    ("How many members did it lose?", "Membership fell by about 3,000 to 5,000 in 2001.", "3,000 to 5,000"),
    ("How much did membership fall?", "Membership fell by about 3,000 to 5,000 in 2001.", "about 3,000 to 5,000"),
    ("By what percent did membership grow?", "Membership grew by about 3 or 4 percent in 2001.", "3 or 4 percent"),
    ("By what percent did membership grow?", "Membership grew by about 3-4% in 2001.", "3-4%"),
    ("By what percent did membership grow?", "Membership grew by 3-4% in 2001.", "3-4%"),
    ("How many members joined?", "Membership grew by some 30 to 40 members in 2001.", "30 to 40"),
    ("How many seats were added?", "The hall was expanded by about 300 to 400 seats.", "300 to 400"),
    ("How many hours a day?", "It was cut by about 3 to 4 hours a day to save fuel.", "3 to 4"),
    ("How much did its share increase?", "Its share rose by about 3% to 5% in 2019.", "about 3% to 5%"),
    # A scale word on the second number only is the pair's: 1.5 million to 2 million.
    ("How many people died?", "The population fell by about 1.5 to 2 million after the famine.", "1.5 to 2 million"),
    # A level far from the change, or no hedge, is still the change and the level.
    ("How many members does the club have?", "Its membership grew by about 5,000 to 20,000 in 1990.", "20,000"),
    ("How many staff work there?", "Staff was cut by up to 200 to 1,800.", "1,800"),
    ("How many members did the club lose?", "Membership fell by 300 to 400 in 2001.", "300"),
    # Moving to a place and building are changes too.
    ("How many people moved to the town?", "The town grew by roughly 2,000 people to 11,000 people.", "2,000"),
    ("How many houses were built?", "The village grew by about 40 to 90 houses in the 1800s.", "40"),
    ("How many houses are there?", "The village grew by about 40 to 90 houses in the 1800s.", "90"),
])
def test_a_change_that_is_a_range_keeps_it(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A question with a verb of change that asks for the level reached got the
# change ("What did membership grow to?": "5,000").
@pytest.mark.parametrize("question", [
    "What did membership grow to?",
    "How high did membership rise?",
    "How many members did the club have after it grew?",
    "What was the membership after the increase?",
    "What level did membership rise to?",
])
def test_a_question_for_the_level_after_a_change_gets_the_level(question):
    assert short_span("number", question, "Its membership grew by about 5,000 to 20,000 in 1990.") == "20,000"
    assert short_span("number", question, "Membership fell by 3-4% to 9,700 in 2001.") == "9,700"


# A move or a building that only dates the question ("after he moved",
# "when the church was built"), or "building" the noun, made it ask for the
# change.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many employees did it have after he moved?", "He moved to Paris in 1920 and the firm grew by 200 to 1,500 employees.",
     "1,500"),
    ("How many staff did the firm have after the move?", "The firm grew by 200 to 1,500 staff after moving to Leeds.", "1,500"),
    ("How many staff work there since the move?", "The firm grew by 200 to 1,500 staff after moving to Leeds.", "1,500"),
    ("How many people lived there when the church was built?",
     "The population rose by 2,000 to 9,000 in 1880, the year the church was built.", "9,000"),
    ("How many residents does the building have?", "Occupancy of the building rose by 200 to 900 residents.", "900"),
    ("How many people moved away after the war?", "The town shrank by 3,000 people to 8,000 after the war.", "3,000"),
    ("How many members joined after the move?", "The club moved to a new ground in 2001, and its membership rose by 1,000 to "
     "6,000.", "1,000"),
    ("How much did the city grow after the railway was built?", "The city grew by 40,000 to 250,000 after the railway was built.",
     "40,000"),
])
def test_a_move_or_a_building_that_dates_the_question_asks_for_the_level(question, sentence, span):
    assert short_span("number", question, sentence) == span


def test_a_question_for_the_change_after_something_else_gets_the_change():
    sentence = "Its membership grew by about 5,000 to 20,000 in 1990, after the war."
    assert short_span("number", "How many members did it gain after the war?", sentence) == "5,000"



# A change in two units ("by 2 ft 6 in to 12 ft") was read as no change: a
# question for the level got the change ("2 ft 6 in").
@pytest.mark.parametrize("question, sentence, span", [
    ("How tall is the wall?", "The wall rose by 2 ft 6 in to 12 ft.", "12 ft"),
    ("How much did the wall rise?", "The wall rose by 2 ft 6 in to 12 ft.", "2 ft 6 in"),
    ("How many feet did the wall rise?", "The wall rose by 2 ft 6 in to 12 ft.", "2"),
    ("How long is the journey?", "The journey was cut by 2 hours 30 minutes to 5 hours.", "5 hours"),
    ("How much was the journey cut?", "The journey was cut by 2 hours 30 minutes to 5 hours.", "2 hours 30 minutes"),
    ("How high is the river?", "The river rose by about 3 m 20 cm to 9 m.", "9 m"),
    ("How much did the river rise?", "The river rose by about 3 m 20 cm to 9 m.", "about 3 m 20 cm"),
    # No level after it: the change is the only measure.
    ("How tall is the wall?", "The wall rose by 2 ft 6 in.", "2 ft 6 in"),
])
def test_a_change_in_two_units_is_one_change_before_the_level(question, sentence, span):
    assert short_span("number", question, sentence) == span



# "4 percentage points" was read as "4 percent" (and "50 basis points" as 50):
# a change in points keeps its unit, and opens no range with a level after it.
@pytest.mark.parametrize("question, sentence, span", [
    ("How much did unemployment fall?", "Unemployment fell by 4 percentage points to 6 percent in 2010.", "4 percentage points"),
    ("How many percentage points did unemployment drop?", "Unemployment fell by 4 percentage points in 2010.",
     "4 percentage points"),
    ("How much did unemployment fall?", "Unemployment fell 4 percentage points to 6%.", "4 percentage points"),
    ("How much did the rate rise?", "The rate rose by 2 to 4 percentage points in 2001.", "2 to 4 percentage points"),
    ("How high is the rate?", "The rate rose by about 2 to 3 percentage points to 9%.", "9%"),
    ("How much was the rate cut?", "The rate was cut by 50 basis points to 1.5%.", "50 basis points"),
    ("How much did the rate rise?", "The rate rose by 0.25 percentage point to 5.5%.", "0.25 percentage point"),
])
def test_a_change_in_percentage_points_keeps_its_unit(question, sentence, span):
    assert short_span("number", question, sentence) == span



# A change "from" one level "to" another after a verb of change was read as a
# range ("from about 5,000 to 20,000": "5,000 to 20,000") or as the first level
# ("from 5,000 to 20,000": "5,000") whatever the question asked.
GREW_FROM = "Membership grew from about 5,000 to 20,000 in 1990."
SALES_FROM = "Sales rose from about $5 million to $20 million in 2001."


@pytest.mark.parametrize("question, sentence, span", [
    ("How many members does the club have?", GREW_FROM, "20,000"),
    ("What did membership grow to?", GREW_FROM, "20,000"),
    ("How many members does the club have?", "Membership grew from 5,000 to 20,000 in 1990.", "20,000"),
    ("How many people live in the town?", "The town's population fell sharply from 9,000 to 4,000.", "4,000"),
    ("How tall is the wall?", "The wall rose from 10 ft 6 in to 12 ft.", "12 ft"),
    ("How much are sales?", SALES_FROM, "$20 million"),
    # The level before: a count without its hedge, a measure with it.
    ("How many members did it have at first?", GREW_FROM, "5,000"),
    ("How many members did it have before it grew?", GREW_FROM, "5,000"),
    ("How many members did the club have originally?", GREW_FROM, "5,000"),
    ("What did membership grow from?", GREW_FROM, "5,000"),
    ("How much were sales at first?", SALES_FROM, "about $5 million"),
    # The change is not said: both levels, with their "from".
    ("How much did sales rise?", SALES_FROM, "from about $5 million to $20 million"),
    ("How many members joined?", "Membership grew from 5,000 to 20,000 in 1990.", "from 5,000 to 20,000"),
])
def test_a_change_from_one_level_to_another_is_the_level_before_and_after(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A verb of change a few words before its "by" ("rose in 2001 by", "grew
# steadily by") was no change: "5,000 to 20,000" was read as a range.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many members does the club have?", "Membership rose in 2001 by about 5,000 to 20,000.", "20,000"),
    ("How much did membership grow?", "Membership rose in 2001 by about 5,000 to 20,000.", "about 5,000"),
    ("How many members joined?", "Membership grew steadily by 300 to 1,200 members.", "300"),
    ("How much are prices?", "Prices rose, then fell in 2009 by 5% to $40.", "$40"),
    ("How many people live there?", "The population rose in 2001 from about 5,000 to 20,000.", "20,000"),
])
def test_a_verb_of_change_a_few_words_before_by_is_still_the_change(question, sentence, span):
    assert short_span("number", question, sentence) == span


# The level before a change whose unit or scale is said only after the level
# after ("from 3 to 4 million euros") lost it ("3"): the whole span is kept.
@pytest.mark.parametrize("question, sentence, span", [
    ("How big was its budget at first?", "Its budget grew from 3 to 4 million euros.", "3 to 4 million euros"),
    ("How much were fares at first?", "Fares rose from 2 to 3 dollars.", "2 to 3 dollars"),
    ("How much revenue at first?", "Revenue jumped from $5 to $20 million.", "$5 to $20 million"),
    ("How big was the gap at first?", "The gap grew from about 2 to 3 percentage points.", "about 2 to 3 percentage points"),
    ("How many people at first?", "The town grew from 5 to 10 thousand people.", "5 to 10 thousand"),
    # Each level said with its unit, or neither, a count asked without its
    # unit, or a fall (no range): the first.
    ("How much revenue at first?", "Revenue jumped from $5 million to $20 million.", "$5 million"),
    ("How many ships did it have at first?", "Its fleet grew from 30 to 45 ships.", "30"),
    ("How fast was the limit at first?", "The limit increased from 30 to 50 mph.", "30"),
    ("How long was the course before?", "The course was reduced from 5 to 3 years.", "5"),
    ("How many members did it have at first?", "Membership rose from 3-4% to 9% of adults.", "3-4%"),
])
def test_the_level_before_keeps_a_unit_said_only_after_the_level_after(question, sentence, span):
    assert short_span("number", question, sentence) == span


# Words between a verb of change and its "by" or "from" that open another
# phrase ("fell on news given by 3 to 4 analysts", "fell among pupils from 11
# to 16") made the numbers a change; only adverbs and words of time may.
@pytest.mark.parametrize("question, sentence, span", [
    ("How much did shares fall?", "Shares fell on news given by 3 to 4 analysts.", "3 to 4"),
    ("How many points did they win by?", "Attendance dropped at games won by 4 points to 2.", "4"),
    ("How old are the pupils?", "Attendance fell among pupils from 11 to 16 years old.", "11 to 16 years"),
    ("How long are shops open?", "Prices rose at shops open from 9 to 17 hours a day.", "9 to 17 hours"),
    ("How much are the jobs paid?", "Wages rose in jobs paid by 10 to 12 dollars an hour.", "10 to 12 dollars"),
    # Adverbs, years and words of time still stand between.
    ("How many members does the club have?", "Membership grew over the last decade by 300 to 1,200.", "1,200"),
    ("How much did membership grow?", "Membership grew over the last decade by 300 to 1,200.", "300"),
    ("How many people live there?", "The population fell sharply in the 1990s from 9,000 to 4,000.", "4,000"),
])
def test_only_adverbs_and_words_of_time_stand_between_a_change_and_its_by(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "percentage-points" with a hyphen was read as "percentage" and no unit.
@pytest.mark.parametrize("question, sentence, span", [
    ("How much did the rate rise?", "The rate rose by 5 percentage-points to 9%.", "5 percentage-points"),
    ("What is the rate?", "The rate rose by 5 percentage-points to 9%.", "9%"),
    ("How big was the rise?", "It was a 5 percentage-point rise in the rate.", "5 percentage-point"),
])
def test_hyphenated_percentage_points_keep_their_unit(question, sentence, span):
    assert short_span("number", question, sentence) == span


STEIN = Passage("your-text_p0", "Gertrude Stein was an American writer who hosted a salon in Paris. When he arrived in "
                "Paris in 1921, Ernest Hemingway was a young reporter. He wrote The Sun Also Rises in 1926.", 0.0, "your text")


def test_a_pronoun_before_the_name_it_stands_for_is_that_name(readers):
    # "When he arrived …, Ernest Hemingway was …": "he" (and the "He" after)
    # was Gertrude Stein, the name the sentence before opened with.
    _, shaped = readers
    assert shaped.read("Who wrote The Sun Also Rises?", [STEIN]).text == "Ernest Hemingway"
    assert shaped.read("Who arrived in Paris in 1921?", [STEIN]).text == "Ernest Hemingway"
    assert referents(split_sentences(STEIN.text), every=True) == ["", "", "Ernest Hemingway"]
    # "However, Babbage …": the clause before the subject may be one word.
    assert referents(["Ada Lovelace was a mathematician.", "However, Babbage disliked her notes.", "He died in 1871."]
                     ) == ["", "", "Babbage"]
    # "she" before the name shows a person, whom "She … there" still stands for
    # ("there" after a place's name shows that "She" is someone else).
    curie = Passage("your-text_p0", "When she was 24, Marie Curie moved to Paris. She studied physics there.", 0.0,
                    "your text")
    assert shaped.read("Who studied physics?", [curie]).text == "Marie Curie"


def test_a_person_pronoun_after_a_place_stands_for_the_name_the_next_sentence_opens_with(readers):
    # "He arrived there" after a city, before "Luis Ortega later founded …",
    # had no referent: the whole sentence was the answer.
    _, shaped = readers
    lisbon = Passage("your-text_p0", "Lisbon is the capital of Portugal. She arrived there in 1961 as a student. "
                     "Maria Soares later became a famous fado singer.", 0.0, "your text")
    assert shaped.read("Who arrived in Lisbon in 1961?", [lisbon]).text == "Maria Soares"
    madrid = Passage("your-text_p0", "Madrid is the capital of Spain. He arrived there in 1920 as a young painter. "
                     "Luis Ortega later founded the Academy of Light.", 0.0, "your text")
    assert shaped.read("Who arrived in Madrid in 1920?", [madrid]).text == "Luis Ortega"
    # At a passage's start "He" is whom the passage before named.
    assert referents(["He arrived in 1920.", "Luis Ortega welcomed him."], every=True) == ["", ""]


def test_the_town_is_the_place_the_text_named(readers):
    # "The town has …" after "She was born in Brindlemere" was about Clara Voss.
    _, shaped = readers
    born = Passage("your-text_p0", "Clara Voss was a painter. She was born in Brindlemere in 1870. The town has a "
                   "population of 4,200.", 0.0, "your text")
    assert shaped.read("How many people live in Brindlemere?", [born]).text == "4,200"
    # "Brindlemere, a market town": the town, though Paris is named nearer.
    called = Passage("your-text_p0", "Clara Voss was born in Brindlemere, a market town on the river Osk. She moved "
                     "to Paris in 1902. The town has a population of 4,200. The city had three million people.", 0.0,
                     "your text")
    assert shaped.read("How many people live in Brindlemere?", [called]).text == "4,200"
    # A town the text is about is not where the sentence before says it lies.
    kelso = Passage("your-text_p0", "Kelso lies on the river Tweed in Scotland. The town was founded in the 12th "
                    "century around an abbey. It has a population of 5,600.", 0.0, "your text")
    assert shaped.read("When was Kelso founded?", [kelso]).text == "the 12th century"
    # "the town clerk" calls no one a town.
    assert referents(["Kelso is a town in Scotland.", "Tom Smith was the town clerk.", "The town has 5,600 people."],
                     every=True) == ["", "", "Kelso"]


def test_a_pasted_documents_title_is_no_ones_name(readers):
    # "She was born …" with no name before it was answered "your text".
    _, shaped = readers
    soprano = Passage("your-text_p0", "She was born in 1975 in Verona. She became a soprano.", 0.0, "your text")
    assert shaped.read("Who was born in Verona?", [soprano]).text != "your text"


TESLA = Passage("Nikola Tesla", "Nikola Tesla was a Serbian-American engineer, futurist, and inventor. He is known for "
                "his contributions to the design of the modern alternating current (AC) electricity supply system.",
                0.63, "Nikola Tesla")


def test_what_the_passages_about_the_subject_never_say_is_not_found_when_asked_for(readers):
    # The collection's summary of Tesla names no employer: its lead sentence was the answer.
    shaped = SentenceReader(readers[1].encoder, ReaderConfig(unsaid_not_found=True))
    assert ReaderConfig().unsaid_not_found is False  # it cost a held-out fact (BENCHMARKS.md §10, session 34)
    assert readers[1].read("Who did Tesla work for?", [TESLA]).found
    tesla = [
        TESLA,
        Passage("Robert Millikan", "Robert Andrews Millikan was an American experimental physicist who received the "
                "Nobel Prize in Physics in 1923 for his work on the elementary charge of electricity.", 0.30,
                "Robert Millikan"),
    ]
    for question in ("Who did Tesla work for?", "When was Nikola Tesla born?"):
        answer = shaped.read(question, tesla)
        assert (answer.text, answer.found) == (NOT_FOUND, False), question
    assert shaped.read("When did Millikan receive the Nobel Prize?", tesla).text == "1923"
    # A sentence with the question's word and no span of its kind still answers.
    tarn = Passage("your-text_p0", "Lake Tarn is a glacial lake. The lake was formed after the last ice age.", 0.0, "your text")
    assert shaped.read("When was Lake Tarn formed?", [tarn]).text == "The lake was formed after the last ice age."
    # A question that names no one is not judged: which sentences are about it is not known.
    assert shaped.read("when was the electricity supply system designed", tesla).found



ADA = Passage("Ada Lovelace", "Augusta Ada King, Countess of Lovelace, also known as Ada Lovelace, was an English "
              "mathematician and writer chiefly known for work on Charles Babbage's proposed mechanical "
              "general-purpose computer, the analytical engine. She was the first to recognise the machine had "
              "applications beyond pure calculation. Lovelace is often considered the first computer programmer.",
              0.73, "Ada Lovelace")


def test_a_kin_relation_the_subjects_passages_never_say_is_not_found(readers):
    # The default collection's summary of Ada Lovelace names no parent: "Who
    # was Ada Lovelace's father?" got her lead sentence (the general rule is off).
    _, shaped = readers
    hypatia = Passage("Hypatia", "Hypatia was a Neoplatonist philosopher. Scholars believe she edited the Almagest, "
                      "based on the title of her father Theon's commentary.", 0.24, "Hypatia")
    for question in ("Who was Ada Lovelace's father?", "Who were Ada Lovelace's children?"):
        answer = shaped.read(question, [ADA, hypatia])
        assert (answer.text, answer.found) == (NOT_FOUND, False), question
    # Said the other way round ("the son of"), the relation is in the passage: it answers.
    leonidas = Passage("Leonidas I", "Leonidas I was king of the Ancient Greek city-state of Sparta. He was the son "
                       "of king Anaxandridas II and the 17th king of the Agiad dynasty.", 0.6, "Leonidas I")
    assert "Anaxandridas" in shaped.read("Who was Leonidas I's father?", [leonidas]).text
    # Other questions keep the general rule's default (off): they answer as before.
    assert shaped.read("Who did Ada Lovelace work with?", [ADA]).found
    assert shaped.read("When did Ada Lovelace die?", [ADA]).found

KYRGYZSTAN = Passage("Kyrgyzstan", "Kyrgyzstan is a landlocked country located in Central Asia, lying in the Tian Shan "
                     "and Pamir mountain ranges. Its capital and largest city is Bishkek.", 0.9, "Kyrgyzstan",
                     description="Country in Central Asia")
ARMINIUS = Passage("Arminius", "Arminius was a chieftain of the Germanic Cherusci who led an alliance of tribes to "
                   "victory in the Battle of the Teutoburg Forest in AD 9, in which three Roman legions were destroyed. "
                   "It has been considered one of the most decisive battles in history.", 0.8, "Arminius")
WORLD_CUP = Passage("FIFA World Cup", "The FIFA World Cup is an international association football competition. The "
                    "reigning champion is Spain, who won their second title at the 23rd edition of the competition.",
                    0.9, "FIFA World Cup")


def test_an_answer_from_an_article_that_never_names_the_subject_is_not_found(readers):
    # The default collection has no article naming Gettysburg or Verdun,
    # and the World Cup's never names Brazil: another subject's sentence
    # was the answer.
    plain, shaped = readers
    for question, read in (("Who won the Battle of Gettysburg?", [ARMINIUS]),
                           ("How many people died in the Battle of Verdun?", [ARMINIUS]),
                           ("How many World Cups has Brazil won?", [WORLD_CUP])):
        answer = shaped.read(question, read)
        assert (answer.text, answer.found) == (NOT_FOUND, False), question
    # (A word many names share, "Battle" or "World Cup", which those
    # articles hold, is not the subject: it alone does not make them about it.)
    # The subject named in the text, not the title, or the title's own name, answers.
    assert shaped.read("Which country is Bishkek in?", [KYRGYZSTAN]).found
    assert shaped.read("How many World Cups has Spain won?", [WORLD_CUP]).found
    assert shaped.read("Who led the Cherusci to victory in the Battle of the Teutoburg Forest?", [ARMINIUS]).found
    # Written otherwise: a possessive, accents, a plural, a people's adjective, an acronym.
    assert shaped.read("Where is Kyrgyzstan's capital?", [KYRGYZSTAN]).found
    dvorak = Passage("Antonín Dvořák", "Antonín Dvořák was a Czech composer. He wrote the New World Symphony in 1893.",
                     0.7, "Antonín Dvořák")
    assert shaped.read("When did Antonin Dvorak write the New World Symphony?", [dvorak]).found
    assert shaped.read("When did Germanic tribes destroy the Roman Legions?", [ARMINIUS]).found
    assert shaped.read("When did the Romans lose three legions in Germania?", [ARMINIUS]).found
    rembrandt = Passage("Rembrandt", "Rembrandt van Rijn was a painter and printmaker of the Netherlands. He is "
                        "considered one of the greatest visual artists in the history of art.", 0.7, "Rembrandt")
    assert shaped.read("Who was the greatest Dutch painter?", [rembrandt]).found
    soviet = Passage("Soviet Union", "The Soviet Union was a transcontinental country that spanned much of Eurasia "
                     "from 1922 to 1991.", 0.7, "Soviet Union")
    assert shaped.read("When did the USSR end?", [soviet]).found
    # An acronym with a digit (held-out NQ-style "how many people died in
    # WW2" got "not found" from World War II's own article).
    ww2 = Passage("World War II", "World War II was a global conflict between two coalitions. An estimated 60 to 75 "
                  "million people died, most of them civilians.", 0.7, "World War II")
    assert shaped.read("how many people died in WW2", [ww2]).found
    # Not judged: a question naming nothing (NQ's lower case), a story or
    # pasted text with no title naming its subject, the plain reader.
    assert shaped.read("who won the battle of gettysburg", [ARMINIUS]).found
    story = Passage("story", "She lived in a small house by the lake with her two cats. She was born in 1931.", 0.5)
    assert shaped.read("When was Clara born?", [story]).found
    pasted = Passage("your-text_p0", "She lived in a small house by the lake. She was born in 1931.", 0.5, "your text")
    assert shaped.read("When was Clara born?", [pasted]).found
    assert plain.read("Who won the Battle of Gettysburg?", [ARMINIUS]).found


def test_a_place_that_only_narrows_what_is_asked_need_not_be_named_by_its_name(readers):
    # A review found right answers made "not found": the place in the
    # question narrows what is asked, and the answer's article, about the
    # thing asked, writes the place otherwise or not at all.
    _, shaped = readers
    sterling = Passage("Pound sterling", "Sterling is the currency of the United Kingdom and nine of its dependent "
                       "territories. Each pound is divided into 100 pence.", 0.8, "Pound sterling",
                       description="Currency of the United Kingdom")
    dollar = Passage("United States dollar", "The United States dollar is the official currency of the United States "
                     "and several other countries.", 0.8, "United States dollar", description="Currency of the United States")
    dutch = Passage("Dutch language", "Dutch is a West Germanic language spoken by about 25 million people as a first "
                    "language. Dutch is the native language of most of the population of the Netherlands and Flanders.",
                    0.8, "Dutch language", description="West Germanic language")
    euro = Passage("Euro", "The euro is the official currency of 21 of the 27 member states of the European Union. Each "
                   "euro is subdivided into 100 cents.", 0.8, "Euro", description="Currency of the European Union")
    nile = Passage("Nile", "The Nile is a major north-flowing river in northeast Africa which empties into the "
                   "Mediterranean Sea. At 7,088 kilometers long, it is the longest river in the world.", 0.8, "Nile",
                   description="Major river in northeast Africa")
    augustus = Passage("Augustus", "Augustus, also known as Octavian, was the founder of the Roman Empire and the first "
                       "Roman emperor from 27 BC until his death in AD 14.", 0.8, "Augustus",
                       description="Roman emperor from 27 BC to AD 14")
    elizabeth = Passage("Elizabeth II", "Elizabeth II reigned from 6 February 1952 until her death in 2022. Her reign of "
                        "70 years and 214 days is the longest of any British monarch.", 0.8, "Elizabeth II",
                        description="Queen from 1952 to 2022")
    # Another name of the country or its part ("Britain", "Scotland" and "the United Kingdom",
    # "America", "Holland"), a people's word ("Roman", "British"), or an
    # article of the kind asked ("currency of", "river in") that puts
    # itself in no country.
    for question, read, said in (("What is the currency of Britain?", sterling, "Sterling"),
                                 ("What currency does Britain use?", sterling, "Sterling"),
                                 ("What is the currency of Scotland?", sterling, "Sterling"),
                                 ("What is the currency of America?", dollar, "dollar"),
                                 ("What language is spoken in Holland?", dutch, "Dutch"),
                                 ("What is the currency of Germany?", euro, "euro"),
                                 ("What is the currency of France?", euro, "euro"),
                                 ("What is the currency of Italy?", euro, "euro"),
                                 ("What is the longest river in Egypt?", nile, "longest river"),
                                 ("Who was the first emperor of Rome?", augustus, "Augustus"),
                                 ("Who was Britain's longest-reigning monarch?", elizabeth, "British monarch")):
        answer = shaped.read(question, [read])
        assert answer.found and said in answer.evidence, question
    # Still "not found": an article of the kind asked that puts itself in
    # another country, one of another kind, a particle ("La") shared by
    # chance, a kind said with another people's word ("Mesopotamian god",
    # "Roman emperor"), a people's word of another place ("Romanian" is not Rome's,
    # "Indian" not Indonesia's).
    yen = Passage("Japanese yen", "The yen is the official currency of Japan. It is the third-most traded currency "
                  "in the foreign exchange market.", 0.8, "Japanese yen", description="Currency of Japan")
    magdalena = Passage("Magdalena River", "The Magdalena River is the main river of Colombia, flowing northward about "
                        "1,528 kilometres through the western half of the country.", 0.8, "Magdalena River",
                        description="River in Colombia")
    jatte = Passage("La Grande Jatte", "A Sunday Afternoon on the Island of La Grande Jatte is a painting by Georges "
                    "Seurat, painted in 1884.", 0.8, "La Grande Jatte", description="Painting by Georges Seurat")
    dacia = Passage("Dacia", "Dacia was the land inhabited by the Dacians. The first Romanian emperor was never crowned "
                    "there.", 0.8, "Dacia", description="Ancient land")
    rupee = Passage("Indian rupee", "The Indian rupee is the official currency in the Republic of India.", 0.8,
                    "Indian rupee", description="Official currency")
    enlil = Passage("Enlil", "Enlil is an ancient Mesopotamian god associated with wind, air, earth, and storms. He is "
                    "first attested as the chief deity of the Sumerian pantheon.", 0.8, "Enlil",
                    description="Ancient Mesopotamian god")
    for question, read in (("Which currency is used in Finland?", yen), ("What is the currency of Finland?", yen),
                           ("Who was the chief god of Egypt?", enlil), ("Who was the first emperor of China?", augustus),
                           ("What is the longest river in Germany?", magdalena),
                           ("Who painted La Gioconda?", jatte), ("Who was the first emperor of Rome?", dacia),
                           ("What is the currency of Indonesia?", rupee)):
        answer = shaped.read(question, [read])
        assert (answer.text, answer.found) == (NOT_FOUND, False), question


TITANS = Passage("Titans", "In Greek mythology, the Titans were the deities who preceded the Olympians. According to "
                 "the Theogony of Hesiod, they were the twelve children of the primordial deities Uranus (Sky) and "
                 "Gaia (Earth).", 0.68, "Titans")
ZEUS = Passage("Zeus", "Zeus is the supreme deity of the Greek pantheon. He is a sky and thunder god in ancient Greek "
               "religion, who rules as king of the gods on Mount Olympus.", 0.62, "Zeus")
HERACLES = Passage("Heracles", "Heracles, born Alcaeus or Alcides, was a divine hero in Greek mythology, the son of "
                   "Zeus and Alcmene, and the foster son of Amphitryon.", 0.54, "Heracles")


def test_children_of_someone_are_those_a_sentence_says_are_theirs(readers):
    # "Who were the children of Zeus?" was answered "Uranus": the Titans'
    # sentence, about the children of Uranus and Gaia, read best, and the
    # name next to "children" was a parent of others.
    _, shaped = readers
    for question in ("Who were the children of Zeus?", "Who were Zeus's children?", "Who were the sons of Zeus?"):
        answer = shaped.read(question, [TITANS, ZEUS, HERACLES])
        assert (answer.text, answer.evidence) == ("Heracles", HERACLES.text), question
        # Where no sentence says whose children they are, none are made up.
        assert shaped.read(question, [TITANS, ZEUS]).text == NOT_FOUND, question
    # The other way round: "the son of Zeus and Alcmene" names his parents,
    # both of them, and not which is his mother.
    assert shaped.read("Who were the parents of Heracles?", [TITANS, HERACLES]).text == "Zeus and Alcmene"
    for question in ("Who was the mother of Heracles?", "Who was the father of Heracles?"):
        assert shaped.read(question, [TITANS, HERACLES]).text not in ("Zeus", "Alcmene"), question


def test_a_parent_of_a_sex_is_the_one_the_sentence_says_is_of_it():
    # "Who was the mother of Heracles?" was answered "Zeus", the first name
    # of "the son of Zeus and Alcmene", whatever the question asked.
    ada = "She was the only legitimate child of the poet Lord Byron and Lady Byron."
    assert kin_span("Who was Ada Lovelace's mother?", ada, "Ada Lovelace") == ("Lady Byron", set())
    assert kin_span("Who was Ada Lovelace's father?", ada, "Ada Lovelace") == ("Lord Byron", set())
    aeneas = "Aeneas was the son of the Trojan prince Anchises and the goddess Aphrodite."
    assert kin_span("Who was the mother of Aeneas?", aeneas, "Aeneas") == ("Aphrodite", set())
    assert kin_span("Who was the father of Aeneas?", aeneas, "Aeneas") == ("Anchises", set())
    # Two parents of no said sex: which is the father one sentence does not
    # tell ("the son of Leto and Zeus"); both are the answer, none guessed.
    for question in ("Who was the mother of Isaac?", "Who was the father of Isaac?"):
        assert kin_span(question, "Isaac was the son of Abraham and Sarah.", "Isaac") == ("Abraham and Sarah", set())
        assert short_span("name", question, "Isaac was the son of Abraham and Sarah.", "Isaac") == "Abraham and Sarah"
    # A title set off after a name says its sex as one before it does.
    achilles = "He was the son of the Nereid Thetis and Peleus, king of Phthia and famous Argonaut."
    assert kin_span("Who was the mother of Achilles?", achilles, "Achilles") == ("Thetis", set())
    assert kin_span("Who was the father of Achilles?", achilles, "Achilles") == ("Peleus", set())
    both = "Edward was the son of Henry and Anne, king and queen of England."
    assert kin_span("Who was the mother of Edward?", both, "Edward") == ("Henry and Anne", set())
    # A lone parent of "the son of" is taken for the father, not the mother.
    assert kin_span("Who was Otto's father?", "Otto was the son of Henry the Fowler.", "Otto") == (
        "Henry the Fowler", set())
    assert short_span("name", "Who was Otto's mother?", "Otto was the son of Henry the Fowler.", "Otto") is None
    # Every name of the phrase, not the words describing them.
    assert kin_span("Who were Zeus's parents?", "Zeus was the son of the Titans Cronus and Rhea.", "Zeus") == (
        "Cronus and Rhea", set())


def test_which_what_and_how_many_are_each_read_by_their_own_rule():
    # answer_kind reads a date asked by its noun after "in", "since" or
    # "until" at most, kind_asked a which/what later in the question too,
    # and what a "how many" counts only at the question's start.
    assert [answer_kind(q) for q in ("In what year did she die?", "Since what century?", "What date was it?",
                                     "On what date did he die?", "What years?")] == ["date", "date", "date", None, None]
    assert kind_asked("How many schools did he attend?") is None
    assert kind_asked("How many books did the author which committee praised write?") == "committee praised"
    assert short_span("number", "How many plays did she write?", "She wrote 3 plays and 12 books.") == "3"
    assert short_span("number", "How many books did she write?", "She wrote 3 plays and 12 books.") == "12"


def test_the_question_word_is_read_after_a_lead_in(readers):
    # "So how many …", "In 2010, how many …", "Tell me who …": the question
    # word after a word of talk, a request or a fronted phrase asks what it
    # asks at the start; "how many" in a quoted title does not.
    _, shaped = readers
    lisbon = [Passage("lisbon", "Lisbon is the capital of Portugal. About 545,000 people live in the city proper, "
                      "and 2.9 million in its metropolitan area.", 1.0, "Lisbon")]
    for question in ("So how many people live in Lisbon?", "Ok, how many people live in Lisbon?",
                     "Tell me how many people live in Lisbon."):
        assert shaped.read(question, lisbon).text == "545,000"
    college = [Passage("korvan", "Korvan College was founded in 1871 by Elias Brandt. In 2010, 4,200 students "
                       "attended the college.", 1.0, "Korvan College")]
    assert shaped.read("In 2010, how many students attended Korvan College?", college).text == "4,200"
    assert shaped.read("And who founded Korvan College?", college).text == "Elias Brandt"
    assert [answer_kind(q) for q in ("And when did she die?", 'Did he sing "Oh, How Many Roads"?',
                                     "Did he sing 'Oh, how many roads'?")] == ["date", None, None]
    assert cast_span("In the 2017 film, who plays Maurice?", "Kevin Kline as Maurice .") == "Kevin Kline"
    assert life_event("And how old was Ada Lovelace when she died?") == "age"
    # A yes/no question with a clause set off by commas is no fronted phrase:
    # "Did she, when young, …" asks yes or no, not when ("1890" was its answer).
    bergen = [Passage("ing", "In 1890, when she was young, she lived in Bergen with her uncle.", 1.0, "Ingrid Vale")]
    assert shaped.read("Did she, when she was young, live in Bergen?", bergen).text == bergen[0].text
    assert [answer_kind(q) for q in ("Did she, when young, live with her uncle?", "Is it true that, in 2010, how many came?",
                                     "Was Paradise Lost, which Milton dictated, published in 1667?")] == [None, None, None]
    assert definition_subject("Did Milton, who was blind, write Paradise Lost?") is None


def test_who_holds_a_quoted_nickname_is_the_person_not_the_name(readers):
    # Quotes, straight or curly, do not part the question's nickname from
    # the sentence's; the answer is who holds it: the name it is given
    # after, or the person a pronoun stands for ("Soviet" was the name
    # nearest the question's words).
    _, shaped = readers
    thatcher = [Passage("mt", "Margaret Thatcher was a British stateswoman. A Soviet journalist nicknamed her "
                        "\u201cthe Iron Lady\u201d, a name that stuck.", 1.0, "Margaret Thatcher")]
    for question in ("Who was nicknamed 'the Iron Lady'?", 'Who is known as "The Iron Lady"?', "Who was called the Iron Lady?"):
        assert shaped.read(question, thatcher).text == "Margaret Thatcher"
    pasted = [Passage("doc", "Brannoch Orvell was a Scottish engineer. Orvell, nicknamed 'the Bridge Builder', designed "
                      "the Kelda Bridge in 1888. He died in Glasgow in 1902.", 1.0, "your text")]
    assert shaped.read("Who was nicknamed \u2018the Bridge Builder\u2019?", pasted).text == "Brannoch Orvell"
    assert definition_subject("Who is the \u201cKing of Pop\u201d?") is None
    # Without "the", the quoted name is the subject asked about, not a name given.
    assert definition_subject('Who is "Weird Al"?') == '"Weird Al"'
    # Straight single quotes around "the"'s name ask who holds it as the
    # curly ones do ("Who is the 'Iron Lady'?" got the nickname's sentence);
    # an apostrophe is no quote ("O'Neill's", "the Beatles'", "the 'Lady's' own").
    assert shaped.read("Who is the 'Iron Lady'?", thatcher).text == "Margaret Thatcher"
    assert shaped.read("Who is the 'Bridge Builder'?", pasted).text == "Brannoch Orvell"
    assert [definition_subject(q) for q in ("Who is the 'Iron Lady'?", "Who is 'Weird Al'?", "Who is the 'Iron Lady' of Britain?")] == [
        None, "'Weird Al'", "the 'Iron Lady' of Britain"]
    oneill = [Passage("eo", "Eugene O'Neill was an American playwright. O'Neill's wife was the actress Carlotta Monterey.",
                      1.0, "Eugene O'Neill")]
    assert shaped.read("Who is O'Neill's wife?", oneill).text == "Carlotta Monterey"


def test_a_refactor_of_the_question_readings_keeps_these_answers():
    # One shared parse of which/what/how many X (since reverted) lost what
    # a how-many counts when it is accented, the "which" of "states which
    # border" once a "how many" stood before it, and "what year" written
    # "year-long" or "inwhat" (a typo); one shared reading of typed names
    # took "Mr.smith" for two names, leaving the question nothing it asks,
    # so any sentence with a date or a number answered it. These are the
    # answers before that refactor; a change to one is a reader change to
    # measure, not a refactor.
    ada = Passage("Ada Lovelace", "Ada Lovelace was a person.", 1.0, "Ada Lovelace",
                  description="English mathematician (1815–1852)")
    assert short_span("number", "How many Pokémon are there?",
                      "The franchise has 1,025 Pokémon species across 9 generations.", "Pokémon") == "1,025"
    assert kind_asked("How many states which border Canada are there?") == "border canada"
    assert kind_asked("How many titles what team won?") == "team won"
    assert [answer_kind(q) for q in ("What year-long war ended in 1453?", "What date-rape drug was it?",
                                     "inwhat year did Ada die?")] == ["date", "date", "date"]
    assert lived("inwhat year did Ada die?", [ada])[1] == "1852"
    for kind, sentence in (("date", "Ada Lovelace died in 1852."), ("number", "Its population is 800,000."),
                           ("name", "Bilbao is in Spain, a country in Europe.")):
        assert short_span(kind, "Was Mr.smith there?", sentence) is None


def test_one_person_is_named_by_all_the_words_of_the_shorter_name():
    # Any shared word made two people one: "Elizabeth II … daughter of
    # George VI" answered "Who was the mother of Elizabeth I?", and "Charles
    # Darwin was the son of Robert Darwin" made Robert his own son.
    assert same_name("Mozart", "Wolfgang Amadeus Mozart") and same_name("Ada Lovelace", "Ada Lovelace's")
    assert not same_name("Elizabeth I", "Elizabeth II") and not same_name("Charles Darwin", "Robert Darwin")
    assert short_span("name", "Who was the mother of Elizabeth I?", "Elizabeth II is the daughter of George VI.") is None
    assert short_span("name", "Who was Charles Darwin's father?", "Charles Darwin was the son of Robert Darwin.") == (
        "Robert Darwin")
    assert short_span("name", "Who was Henry VIII's father?", "Henry VIII was the second son of Henry VII.") == "Henry VII"
    assert short_span("name", "Who was Mozart's father?", "Leopold Mozart was the father of Wolfgang Amadeus Mozart.") == (
        "Leopold Mozart")
    assert kin_holder("Who was Catherine the Great's mother?") == ("up", "Catherine the Great")


def test_a_kin_answer_from_another_sentence_is_only_what_its_kin_phrase_says(readers):
    # The nearest name to "children" in "She married William King in 1835
    # and had three children." answered "Who were Ada Lovelace's children?".
    _, shaped = readers
    # (The best sentence names no one; the kin answer read the next best.)
    ada = Passage("Ada Lovelace", "Ada Lovelace was an English mathematician. Her children were raised by her mother. "
                  "She married William King in 1835 and had three children.", 0.7, "Ada Lovelace")
    assert shaped.read("Who were Ada Lovelace's children?", [ada]).text != "William King"


HADES = Passage("Hades", "Hades is the god of the dead and riches and the King of the underworld. Hades was the eldest "
                "son of Cronus and Rhea, although this also made him the last son to be regurgitated by his father. "
                "He and his brothers, Zeus and Poseidon, defeated, overthrew, and replaced their father's generation of "
                "gods, the Titans.", 0.63, "Hades")


def test_a_kin_name_is_one_a_kin_phrase_gives_or_a_kin_said_to_be_theirs(readers):
    # "Who was the father of Zeus?" was answered "Hades", whom "He" of "He
    # and his brothers, Zeus and Poseidon, … their father's generation"
    # stands for, and "Who were Ada Lovelace's children?" "William King",
    # the name nearest "children" in a sentence about her marriage.
    _, shaped = readers
    answer = shaped.read("Who was the father of Zeus?", [HADES])
    assert answer.text in (NOT_FOUND, answer.evidence)
    # Another passage's kin phrase about the one asked about answers.
    zeus = Passage("Zeus", "Zeus is the supreme deity of the Greek pantheon. He is the youngest child of Cronus and "
                   "Rhea.", 0.65, "Zeus")
    for question in ("Who was the father of Zeus?", "Who were the parents of Zeus?"):
        assert shaped.read(question, [HADES, zeus]).text == "Cronus and Rhea", question
    ada = Passage("Ada Lovelace", "Ada Lovelace was an English mathematician. She married William King in 1835 and had "
                  "three children.", 0.7, "Ada Lovelace")
    answer = shaped.read("Who were Ada Lovelace's children?", [ada])
    assert answer.text in (NOT_FOUND, answer.evidence)
    son = Passage("Byron King-Noel", "Byron King-Noel was the eldest son of Ada Lovelace and William King.", 0.5,
                  "Byron King-Noel")
    assert shaped.read("Who were Ada Lovelace's children?", [ada, son]).text == "Byron King-Noel"
    # A kin the sentence says is the holder's is still read by its name.
    assert short_span("name", "Who was Ada Lovelace's father?", "He met Ada Lovelace's father, Lord Byron, in 1815.",
                      referent="John Murray") == "Lord Byron"


def test_two_parents_of_no_said_sex_both_answer_for_either(readers):
    # "the son of Henry VII and Elizabeth of York" gave no name for his
    # father or mother: which is which the sentence does not say.
    _, shaped = readers
    henry = Passage("Henry VIII", "Henry VIII was King of England from 1509 until his death in 1547. Born at Greenwich, "
                    "he was the son of Henry VII and Elizabeth of York.", 0.6, "Henry VIII")
    for question in ("Who were the parents of Henry VIII?", "Who was the father of Henry VIII?",
                     "Who was the mother of Henry VIII?"):
        answer = shaped.read(question, [henry])
        assert (answer.text, answer.evidence) == ("Henry VII and Elizabeth of York", split_sentences(henry.text)[1])


def test_a_kin_phrase_set_off_after_a_name_is_that_ones_kin(readers):
    # "He was a descendant of Perseus, another son of Zeus." gave Zeus for
    # the parents of Heracles.
    _, shaped = readers
    heracles = Passage("Heracles", HERACLES.text + " He was a descendant of Perseus, another son of Zeus.", 0.54,
                       "Heracles")
    assert shaped.read("Who were the parents of Heracles?", [heracles]).text == "Zeus and Alcmene"
    assert kin_span("Who were the children of Zeus?", "He was a descendant of Perseus, another son of Zeus.",
                    "Heracles") == ("Perseus", set())
    # A name before a noun is no one asked about: "the father of American
    # literature" asks for no kin.
    assert kin_holder("Who called Twain the father of American literature?") is None


def test_a_kin_span_is_the_kin_of_the_one_asked_about():
    assert kin_span("Who were the children of Zeus?", HERACLES.text, "Heracles") == ("Heracles", set())
    assert kin_span("Who was Cronus's father?", "Cronus was the son of Uranus.", "Cronus") == ("Uranus", set())
    # The father of Zeus is no child of his, nor are the children of another.
    assert kin_span("Who were the sons of Zeus?", "Cronus was the father of Zeus.", "Cronus") is None
    assert kin_span("Who were Zeus's children?", TITANS.text, "Titans") is None
    assert short_span("name", "Who were the children of Zeus?", TITANS.text, "Titans") is None
    assert kin_span("When did Zeus rule?", TITANS.text, "Titans") == (None, set())


ISAAC = ("Isaac is one of the three patriarchs of the Israelites, the son of Abraham and Sarah, the father of Jacob "
         "and Esau, and the grandfather of the twelve tribes of Israel.")


def test_a_list_of_parents_before_a_comma_owns_no_kin_phrase_after_it():
    # "the son of Abraham and Sarah, the father of Jacob and Esau" made
    # Sarah the father of Esau (and, by ", the father of", a man).
    assert kin_span("Who was Esau's father?", ISAAC, "Isaac") == ("Isaac", set())
    assert kin_span("Who were the children of Isaac?", ISAAC, "Isaac") == ("Jacob and Esau", set())
    isaac = "Isaac, the son of Abraham and Sarah, the father of Jacob and Esau, was a patriarch."
    assert kin_span("Who was Isaac's mother?", isaac, "Isaac") == ("Abraham and Sarah", set())
    # A name set off before its kin phrase still owns it.
    assert kin_span("Who were the children of Zeus?", "He was a descendant of Perseus, another son of Zeus.",
                    "Heracles") == ("Perseus", set())


def test_a_sentence_opening_with_its_subject_under_another_name_is_about_the_subject():
    # "Alexander III of Macedon, son of Philip II" in Alexander the Great's
    # article read as another man's son.
    alexander = "Alexander III of Macedon, son of Philip II, became king at twenty."
    assert kin_span("Who was the father of Alexander the Great?", alexander, "Alexander the Great") == (
        "Philip II", set())
    # Another man opening the sentence is still another man.
    assert kin_span("Who were the children of Zeus?", "Perseus, another son of Zeus, was his ancestor.",
                    "Heracles") == ("Perseus", set())


@pytest.mark.parametrize("question, sentence, title", [
    ("Who was Ada Lovelace's mother?", "Her father Lord Byron left; her mother raised her alone.", "Ada Lovelace"),
    ("Who was Charles Darwin's mother?", "His father Robert Darwin was a doctor, and his mother died when he was eight.",
     "Charles Darwin"),
    ("Who was Ada Lovelace's father?", "Her father's friend Charles Babbage taught her.", "Ada Lovelace"),
    ("Who was Heracles's father?", "His father's wife Hera hated him.", "Heracles"),
    ("Who was Ali's father?", "His father-in-law Muhammad was the prophet.", "Ali"),
    ("Who was Ali's father?", "Muhammad was his father-in-law.", "Ali"),
    ("Who was Ada Lovelace's father?", "Charles Babbage was her father's friend.", "Ada Lovelace"),
    ("Who was Indira Gandhi's father?", "Her father was an Indian lawyer.", "Indira Gandhi"),
    ("Who was Sargon's father?", "His father was Akkadian.", "Sargon"),
    ("Who was Sappho's father?", "Her father was a Greek merchant.", "Sappho"),
    ("Who was Leif's father?", "His father was a Viking chieftain.", "Leif"),
])
def test_an_owned_kin_word_answers_with_its_own_name_or_none(question, sentence, title):
    # The nearest name answered: the father for the mother, the father's
    # friend or wife for the father, a people's word for a name.
    assert short_span("name", question, sentence, title) is None


def test_an_owned_kin_word_answers_with_the_name_attached_to_it():
    assert short_span("name", "Who was Ada Lovelace's father?", "Her father, Lord Byron, left her.", "Ada Lovelace") == (
        "Lord Byron")
    assert short_span("name", "Who was Charles Darwin's father?", "His father Robert Darwin was a doctor, and his mother "
                      "died when he was eight.", "Charles Darwin") == "Robert Darwin"
    assert short_span("name", "Who was Sargon's father?", "His father was the Akkadian king La'ibum.", "Sargon") == (
        "La'ibum")


def test_a_parent_another_sentence_gives_a_sex_is_not_answered_for_the_other(readers):
    # "the son of Zeus and Alcmene" answered the mother of Heracles with
    # both names, though the passage calls Zeus a god.
    _, shaped = readers
    heracles = Passage("Heracles", HERACLES.text + " He was hated by Hera, the wife of the god Zeus.", 0.54, "Heracles")
    assert shaped.read("Who was the mother of Heracles?", [heracles]).text == "Alcmene"
    assert shaped.read("Who was the father of Heracles?", [heracles]).text == "Zeus"
    assert shaped.read("Who were the parents of Heracles?", [heracles]).text == "Zeus and Alcmene"
    # With no word of either's sex both still answer (the test above).
    assert shaped.read("Who was the mother of Heracles?", [HERACLES]).text == "Zeus and Alcmene"


# ---------------------------------------------------------------- multiple choice by likelihood

DOCUMENT = "The lighthouse keeper painted the door blue every spring. Ships came to the harbour at dawn."
QUESTION = "What colour was the door?"


def _log_likelihood(model, tokenizer, context: str, option: str) -> tuple[float, int]:
    """Sum of log p(option tokens | context) from one forward pass, and the token count."""
    import torch

    prefix = tokenizer.encode(context)
    target = tokenizer.encode(" " + option)
    with torch.no_grad():
        logits = model(torch.tensor([prefix + target])).logits[0]
    logprobs = torch.log_softmax(logits, dim=-1)
    total = sum(float(logprobs[len(prefix) + i - 1, t]) for i, t in enumerate(target))
    return total, len(target)


def test_options_are_scored_by_their_log_likelihood(tiny_gpt2):
    model, tokenizer = tiny_gpt2
    options = ["blue", "a bright shade of red", "green"]
    context = f"{DOCUMENT}\nQuestion: {QUESTION}\nAnswer:"  # one passage: the document is short
    by_hand = [_log_likelihood(model, tokenizer, context, o) for o in options]

    mean = LikelihoodChoiceReader(model, tokenizer).answer(DOCUMENT, QUESTION, options)
    assert mean.scores == pytest.approx([total / n for total, n in by_hand], abs=1e-4)
    assert mean.index == max(range(3), key=lambda i: mean.scores[i])
    assert [p.id for p in mean.evidence] == ["doc_p0"] * 3

    summed = LikelihoodChoiceReader(model, tokenizer, LikelihoodConfig(mean=False)).answer(DOCUMENT, QUESTION, options)
    assert summed.scores == pytest.approx([total for total, _ in by_hand], abs=1e-4)


def test_the_option_the_model_expects_is_chosen(tiny_gpt2):
    import torch

    model, tokenizer = tiny_gpt2
    reader = LikelihoodChoiceReader(model, tokenizer)
    context = f"{DOCUMENT}\nQuestion: {QUESTION}\nAnswer:"
    # Teach the tiny model this one answer; then the reader must pick it.
    ids = torch.tensor([tokenizer.encode(context + " blue")])
    model.train()
    optimiser = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(40):
        optimiser.zero_grad()
        model(ids, labels=ids).loss.backward()
        optimiser.step()
    model.eval()
    choice = reader.answer(DOCUMENT, QUESTION, ["red", "blue", "green"])
    assert choice.index == 1
    assert choice.scores[1] > max(choice.scores[0], choice.scores[2])


def test_long_documents_fit_the_window_and_bad_questions_are_refused(tiny_gpt2):
    model, tokenizer = tiny_gpt2  # n_positions = 256
    long_document = "\n\n".join(f"Paragraph {i} says the door was painted again in year {i}." * 6 for i in range(40))
    choice = LikelihoodChoiceReader(model, tokenizer).answer(long_document, QUESTION, ["blue", "red"])
    assert len(choice.scores) == 2 and all(math.isfinite(s) for s in choice.scores)
    with pytest.raises(InvalidInputError, match="at least two"):
        LikelihoodChoiceReader(model, tokenizer).answer(DOCUMENT, QUESTION, ["blue"])


def test_any_causal_lm_loads_by_path(tiny_gpt2, tmp_path):
    model, tokenizer = tiny_gpt2
    model.save_pretrained(tmp_path / "lm")
    tokenizer.save_pretrained(tmp_path / "lm")
    loaded = LikelihoodChoiceReader.from_pretrained(str(tmp_path / "lm"), LikelihoodConfig(threads=1))
    expected = LikelihoodChoiceReader(model, tokenizer).answer(DOCUMENT, QUESTION, ["blue", "red"]).scores
    assert loaded.answer(DOCUMENT, QUESTION, ["blue", "red"]).scores == pytest.approx(expected, abs=1e-4)


def test_markup_ends_a_sentence_and_no_tag_is_read():
    # NQ's pages keep their HTML-like markup: a cast list without full stops read as one
    # "sentence" of the whole list, tags and all, and that was the answer shown.
    page = "<H2> Cast </H2> <Ul> <Li> Emma Watson as Belle </Li> <Li> Kevin Kline as Maurice </Li> </Ul>"
    assert split_sentences(page) == ["Cast", "Emma Watson as Belle", "Kevin Kline as Maurice"]
    row = "<Table> <Tr> <Th> Created by </Th> <Td> Bruce Miller </Td> </Tr> </Table> <P> It ran. A cat sat. </P>"
    assert split_sentences(row) == ["Created by Bruce Miller", "It ran.", "A cat sat."]
    assert split_sentences("If a < b then b > a.") == ["If a < b then b > a."]


def test_a_label_is_answered_by_its_value_and_a_table_row_by_its_data_cells(readers):
    # A records list gives each record's name as a list item and its holder in the definition
    # list after it; the reader answered "Most combined points in a quarter", the label.
    plain, _ = readers
    records = ("<Ul> <Li> Most points scored in a quarter </Li> </Ul> <Dl> <Dd> <Ul> <Li> 37 by Klay Thompson , "
               "Golden State Warriors on January 23 , 2015 </Li> </Ul> </Dd> </Dl> <Ul> <Li> Most assists in a season "
               "</Li> </Ul> <Dl> <Dd> <Ul> <Li> 1,164 by John Stockton in 1990 </Li> </Ul> </Dd> </Dl>")
    answer = plain.read("what are the most points scored in a quarter", [Passage("nba_p0", records, 2.0, "NBA records")])
    assert answer.text == "37 by Klay Thompson , Golden State Warriors on January 23 , 2015"
    # A table row reads with its header cell, which is never the answer, and the row after it
    # is another field, not the answer's continuation.
    box = ("<Table> <Tr> <Th> Original network </Th> <Td> HBO </Td> </Tr> <Tr> <Th> Original release </Th> <Td> "
           "July 16 , 2017 -- August 27 , 2017 </Td> </Tr> <Tr> <Th> Season chronology </Th> <Td> Season 8 </Td> "
           "</Tr> </Table>")
    answer = plain.read("when was the original release of season 7", [Passage("got_p0", box, 2.0, "Game of Thrones season 7")])
    assert answer.text == "July 16 , 2017 -- August 27 , 2017"
    # A row is short by nature ("No. of episodes 7") and is read however short; its header finds
    # the short answer ("Born" for "when was she born") but is never in it.
    _, shaped = readers
    box = ("<Table> <Tr> <Th> No. of episodes </Th> <Td> 7 </Td> </Tr> <Tr> <Th> Original network </Th> <Td> HBO "
           "</Td> </Tr> </Table>")
    assert shaped.read("how many episodes are in season 7", [Passage("got_p1", box, 2.0, "Game of Thrones season 7")]).text == "7"
    born = ("<Table> <Tr> <Th> Born </Th> <Td> Augusta Ada Byron 10 December 1815 London , England </Td> </Tr> <Tr> "
            "<Th> Died </Th> <Td> 27 November 1852 ( aged 36 ) </Td> </Tr> </Table>")
    answer = shaped.read("when was ada lovelace born", [Passage("ada_p0", born, 2.0, "Ada Lovelace")])
    assert (answer.text, answer.evidence) == ("10 December 1815", "Born Augusta Ada Byron 10 December 1815 London , England")
    # A list item no description follows, and a paragraph, answer as they did.
    cast = "<Ul> <Li> Emma Watson as Belle , a young woman . </Li> <Li> Kevin Kline as Maurice , her father . </Li> </Ul>"
    answer = plain.read("who played maurice", [Passage("bb_p0", cast, 2.0, "Beauty and the Beast")])
    assert answer.text == "Kevin Kline as Maurice , her father ."


def test_a_statement_item_is_not_a_label_and_a_pointer_note_is_no_value(readers):
    # An item without a full stop with a description under it was taken as a label and
    # answered with the description: a hatnote ("Main article : Paris"), a source, a quote.
    plain, _ = readers
    cases = [
        ("what is the capital of france", "<Ul> <Li> Paris is the capital and largest city of France </Li> </Ul> <Dl> <Dd> "
         "Main article : Paris </Dd> </Dl>", "Paris is the capital and largest city of France"),
        ("who wrote the declaration of independence", "<Ul> <Li> Thomas Jefferson wrote the first draft of the Declaration "
         "of Independence in 1776 : </Li> </Ul> <Dl> <Dd> `` We hold these truths to be self - evident '' </Dd> </Dl>",
         "Thomas Jefferson wrote the first draft of the Declaration of Independence in 1776 :"),
        ("what is the capital and largest city of france", "<Ul> <Li> Capital and largest city of France </Li> </Ul> <Dl> "
         "<Dd> Main article : Paris </Dd> </Dl>", "Capital and largest city of France"),
    ]
    for question, text, expected in cases:
        assert plain.read(question, [Passage("x_p0", text, 2.0, "France")]).text == expected, question


def test_a_table_rows_entity_header_stays_in_its_answer(readers):
    # A data table's row header is the entity (a season, a mountain): only a header the
    # question names (an infobox field) is left out of the answer.
    plain, shaped = readers
    seasons = ("<Table> <Tr> <Th> Season </Th> <Th> Winner </Th> </Tr> <Tr> <Th> 2015 -- 16 </Th> <Td> Leicester City "
               "</Td> </Tr> <Tr> <Th> 2016 -- 17 </Th> <Td> Chelsea </Td> </Tr> </Table>")
    for question in ("which season did leicester city win the premier league", "who won the premier league in 2015 -- 16"):
        assert plain.read(question, [Passage("pl_p0", seasons, 2.0, "Premier League")]).text == "2015 -- 16 Leicester City", question
    peaks = ("<Table> <Tr> <Th> Mountain </Th> <Th> Height </Th> </Tr> <Tr> <Th> Mount Everest </Th> <Td> 8,848 m </Td> "
             "</Tr> <Tr> <Th> K2 </Th> <Td> 8,611 m </Td> </Tr> </Table>")
    assert "Mount Everest" in plain.read("what is the tallest mountain in the world", [Passage("m_p0", peaks, 2.0, "Highest mountains")]).text
    # A row without a number does not answer a number question over the prose that does.
    obama = ("<Table> <Tr> <Th> Children </Th> <Td> Malia Sasha </Td> </Tr> </Table> <P> Barack and Michelle Obama have two "
             "daughters , Malia and Sasha . </P>")
    assert shaped.read("how many children does obama have", [Passage("o_p0", obama, 2.0, "Barack Obama")]).text == "two"


def test_a_row_that_says_when_does_not_answer_who(readers):
    # "Founded" is all the question's terms, but its date answers "when"; read as a field, the
    # row dropped the next one, which says who ("Founders Steve Jobs Steve Wozniak").
    plain, _ = readers
    box = ("<Table> <Tr> <Th> Founded </Th> <Td> April 1 , 1976 in Los Altos , California </Td> </Tr> <Tr> <Th> Founders </Th> "
           "<Td> Steve Jobs Steve Wozniak </Td> </Tr> </Table>")
    passages = [Passage("apple_p0", box, 2.0, "Apple Inc.")]
    assert "Steve Jobs" in plain.read("who founded the company", passages).text
    assert plain.read("when was the company founded", passages).text == "April 1 , 1976 in Los Altos , California"
    # A bare participle header says when, not who, whatever its value opens with ("Spring 1976",
    # "Summer 1969" answered who founded the company, who produced the album).
    spring = _table(("Founded", "Spring 1976"), ("Founders", "Steve Jobs Steve Wozniak"))
    assert plain.read("who founded the company", [Passage("apple_p1", spring, 2.0, "Apple Inc.")]).text == "Founders Steve Jobs Steve Wozniak"
    album = _table(("Produced", "Summer 1969"), ("Producer", "George Martin"))
    answer = plain.read("who produced the album", [Passage("a_p1", album, 2.0, "Abbey Road")]).text
    assert answer == "Produced Summer 1969 Producer George Martin"
    # A header that says by whom answers who.
    by = _table(("Founded by", "Steve Jobs"), ("Founded", "Spring 1976"))
    assert plain.read("who founded the company", [Passage("apple_p2", by, 2.0, "Apple Inc.")]).text == "Steve Jobs"
    # Only a participle over a date says when: a field that ends in "ed" ("Seed") or a doer's
    # field ("Owned") over a name answers who (both were refused).
    seed = _table(("Seed", "Roger Federer"), ("Surface", "Grass"))
    assert plain.read("who was the top seed", [Passage("w_p1", seed, 2.0, "Wimbledon")]).text == "Roger Federer"
    owner = _table(("Owned", "Jerry Jones"), ("Stadium", "AT&T Stadium"))
    assert plain.read("who owned the team", [Passage("d_p1", owner, 2.0, "Dallas Cowboys")]).text == "Jerry Jones"
    # Over a place it says where, and the row after it who (the place alone answered).
    garage = _table(("Founded", "Garage in Los Altos"), ("Founders", "Steve Jobs Steve Wozniak"))
    answer = plain.read("who founded the company", [Passage("apple_p3", garage, 2.0, "Apple Inc.")]).text
    assert answer == "Founded Garage in Los Altos Founders Steve Jobs Steve Wozniak"


def _table(*rows):
    return "<Table> " + " ".join(f"<Tr> <Th> {h} </Th> <Td> {d} </Td> </Tr>" for h, d in rows) + " </Table>"


def test_a_row_headed_by_what_the_answer_is_of_does_not_answer(readers):
    # "King George VI" is the king whose father is asked, "Capital Ottawa" what the question asks
    # the other end of: each answered ("George VI", "Ottawa"), where the start found nothing.
    plain, _ = readers
    king = [Passage("k_p0", _table(("King", "George VI"), ("Father", "George V")), 2.0, "George VI")]
    assert plain.read("who was the father of the king", king).text == "George V"
    capital = [Passage("c_p0", _table(("Country", "Canada"), ("Capital", "Ottawa")), 2.0, "Canada")]
    assert plain.read("what country is the capital of", capital).text == "Canada"
    # The field asked of its owner is still answered, and so is a name's.
    assert plain.read("what is the capital of the country", capital).text == "Ottawa"
    assert plain.read("what is the name of the king", king).text == "George VI"


def test_a_rows_or_labels_value_answers_only_a_question_of_its_kind(readers):
    # A row the question names the header of answered with a value of another kind, or one the
    # question names already: "who produced the album" got "1969" ("Produced 1969"), "who was
    # president before joe biden" "Joe Biden", "when did the battle take place" "Waterloo ,
    # Belgium" ("Place"), "who played in the final" "3 -- 1"; a label's value likewise. Such a
    # row or item reads as any other sentence.
    plain, _ = readers
    album = _table(("Producer", "George Martin"), ("Produced", "1969"))
    assert "George Martin" in plain.read("who produced the album", [Passage("a_p0", album, 2.0, "Abbey Road")]).text
    office = _table(("President", "Joe Biden"), ("Vice President", "Kamala Harris"), ("Preceded by", "Donald Trump"))
    answer = plain.read("who was president before joe biden", [Passage("o_p0", office, 2.0, "Biden administration")])
    assert (answer.found, answer.text) == (False, NOT_FOUND)
    battle = _table(("Date", "18 June 1815"), ("Place", "Waterloo , Belgium"), ("Result", "Coalition victory"))
    answer = plain.read("when did the battle take place", [Passage("b_p0", battle, 2.0, "Battle of Waterloo")]).text
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert answer == "Place Waterloo , Belgium Result Coalition victory"
    final = _table(("Final", "3 -- 1")) + " <P> Spain and the Netherlands met in the final in Johannesburg . </P>"
    assert "Spain" in plain.read("who played in the final", [Passage("c_p0", final, 2.0, "Cup")]).text
    # A day is no count: "how many people died in the disaster" got "15 April 1912" ("Died").
    disaster = _table(("Deaths", "1,517"), ("Died", "15 April 1912"))
    answer = plain.read("how many people died in the disaster", [Passage("d_p0", disaster, 2.0, "Titanic")])
    assert (answer.found, answer.text) == (False, NOT_FOUND)
    members = "<Ul> <Li> Original members leave </Li> </Ul> <Dl> <Dd> John Lennon and Paul McCartney </Dd> </Dl>"
    answer = plain.read("when did the original members leave", [Passage("m_p0", members, 2.0, "The Beatles")]).text
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert answer == "Original members leave"


def test_a_negated_question_has_no_label_and_a_bracketed_note_is_no_value(readers):
    # "which songs were not written by lennon" got the songs written by Lennon, the value of the
    # label "Songs written by Lennon"; "( see map below )" answered as a label's value.
    plain, _ = readers
    songs = ("<Dl> <Dt> Songs written by Lennon </Dt> <Dd> Help , Strawberry Fields Forever </Dd> <Dt> Songs written by "
             "McCartney </Dt> <Dd> Yesterday , Hey Jude </Dd> </Dl>")
    answer = plain.read("which songs were not written by lennon", [Passage("s_p0", songs, 2.0, "Songs")]).text
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert answer == "Songs written by Lennon"
    languages = ("<Dl> <Dt> Official languages of Switzerland </Dt> <Dd> ( see map below ) </Dd> </Dl> <P> Switzerland has "
                 "four official languages : German , French , Italian and Romansh . </P>")
    answer = plain.read("what are the official languages of switzerland", [Passage("l_p0", languages, 2.0, "Switzerland")]).text
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert answer == "Official languages of Switzerland"
    # "no" in a label is a term: "Countries with no army" restates "which countries have no army",
    # not "which countries have an army", which got the countries without one.
    armies = ("<Ul> <Li> Countries with no army </Li> </Ul> <Dl> <Dd> Costa Rica , Iceland , Panama </Dd> </Dl> <P> Most "
              "countries , such as France and Brazil , have a standing army . </P>")
    passages = [Passage("g_p0", armies, 2.0, "Armies")]
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert plain.read("which countries have an army", passages).text == "Countries with no army"
    assert plain.read("which countries have no army", passages).text == "Costa Rica , Iceland , Panama"
    # Nor does a label without "no" restate a question that says "no" to one of its terms: "which
    # countries have no army" got the countries with one. "No Doubt" is a band's name.
    armies = "<Ul> <Li> Countries with an army </Li> </Ul> <Dl> <Dd> France , Brazil </Dd> </Dl>"
    answer = plain.read("which countries have no army", [Passage("g_p1", armies, 2.0, "Armies")]).text
    # The start's answer, not the right one: a fix that finds the answer may change it.
    assert answer == "Countries with an army"
    albums = "<Ul> <Li> Albums that went platinum </Li> </Ul> <Dl> <Dd> Tragic Kingdom , Rock Steady </Dd> </Dl>"
    answer = plain.read("which albums by no doubt went platinum", [Passage("n_p1", albums, 2.0, "No Doubt")]).text
    assert answer == "Tragic Kingdom , Rock Steady"



def test_a_label_or_row_header_that_says_more_than_the_question_answers_itself(readers):
    # A list item was a label, answered by the note under it, whenever it was short ("Directed by
    # Christopher Nolan" gave "Produced by Emma Thomas"), and a row header left out whenever it
    # shared a word with the question ("Most goals : Lionel Messi" gave "91"): a label or a
    # field's name says nothing the question does not.
    plain, _ = readers
    cases = [
        ("what is the capital of canada", "Canada", "<Ul> <Li> Ottawa is Canada 's capital </Li> </Ul> <Dl> <Dd> It lies on the "
         "Ottawa River in Ontario </Dd> </Dl>", "Ottawa is Canada 's capital"),
        ("who won the 2016 premier league", "Premier League", "<Ul> <Li> Leicester City won in 2016 </Li> </Ul> <Dl> <Dd> Citation needed "
         "</Dd> </Dl>", "Leicester City won in 2016"),
        ("who directed the film", "Film", "<Ul> <Li> Directed by Christopher Nolan </Li> </Ul> <Dl> <Dd> Produced by Emma Thomas "
         "</Dd> </Dl>", "Directed by Christopher Nolan Produced by Emma Thomas"),
        ("who holds the record", "Records", "<Ul> <Li> Record held by Brian Lara </Li> </Ul> <Dl> <Dd> 501 not out , Edgbaston , 1994 "
         "</Dd> </Dl>", "Record held by Brian Lara 501 not out , Edgbaston , 1994"),
        ("who is the president of france", "France", "<Table> <Tr> <Th> Emmanuel Macron , President </Th> <Td> 2017 -- present </Td> "
         "</Tr> <Tr> <Th> Elisabeth Borne , Prime Minister </Th> <Td> 2022 -- 2024 </Td> </Tr> </Table>",
         "Emmanuel Macron , President 2017 -- present"),
        ("who has scored the most goals", "Records", "<Table> <Tr> <Th> Most goals : Lionel Messi </Th> <Td> 91 </Td> </Tr> <Tr> <Th> "
         "Most assists : Xavi </Th> <Td> 25 </Td> </Tr> </Table>", "Most goals : Lionel Messi 91"),
        ("who is the lead singer of queen", "Queen", "<Table> <Tr> <Th> Lead singer Freddie Mercury </Th> <Td> 1970 -- 1991 "
         "</Td> </Tr> <Tr> <Th> Guitar Brian May </Th> <Td> 1970 -- present </Td> </Tr> </Table>",
         "Lead singer Freddie Mercury 1970 -- 1991 Guitar Brian May 1970 -- present"),
        ("which country won the most gold medals", "2016 Olympics", "<Table> <Tr> <Th> United States ( most gold medals ) </Th> <Td> 46 "
         "</Td> </Tr> <Tr> <Th> Great Britain </Th> <Td> 27 </Td> </Tr> </Table>", "United States ( most gold medals ) 46"),
    ]
    for question, title, text, expected in cases:
        assert plain.read(question, [Passage("x_p0", text, 2.0, title)]).text == expected, question


def test_a_cast_question_is_answered_by_the_actor_the_sentence_pairs_with_the_role():
    # The nearest name to the question's words was as likely the role's or a third one's.
    assert cast_span("who played maurice in beauty and the beast", "Kevin Kline as Maurice , Belle 's father .") == "Kevin Kline"
    both = "Presley Smith would play Sunny Baudelaire , and Rhys Darby would play Charles , Sir 's partner ."
    assert short_span("name", "who plays charles a series of unfortunate events", both) == "Rhys Darby"
    assert cast_span("who plays lorraine in back to the future", "Maggie McFly is played by Lea Thompson , who also plays "
                     "Marty 's mother Lorraine .") == "Lea Thompson"
    assert cast_span("who does ewan mcgregor play", "Ewan McGregor as Lumière , the Beast 's bouteiller .") == "Lumière"
    assert cast_span("who played marty's sister", "Lea Thompson , who also plays Marty 's mother Lorraine .") is None
    assert cast_span("who wrote the score", "Kevin Kline as Maurice .") is None
    # A role in two forms: the actor plays both ("who voices beast" got another sentence's name).
    assert cast_span("who voices beast", "Dan Stevens as The Prince / Beast , a cold - hearted prince .") == "Dan Stevens"
    assert cast_span("who plays gaston", "Dan Stevens as The Prince / Beast , a prince , and Luke Evans as Gaston .") == "Luke Evans"
    # A name after the slash that is itself cast is the next entry's actor: a question naming
    # an actor got another actor ("who plays gary oldman" gave "Tom Hardy").
    assert cast_span("who plays gary oldman", "Tom Hardy as Bane / Gary Oldman as Gordon .") is None
    assert cast_span("who plays gordon", "Tom Hardy as Bane / Gary Oldman as Gordon .") == "Gary Oldman"
    assert cast_span("who plays beast", "Dan Stevens as The Prince / Beast as a boy .") == "Dan Stevens"
    # A name after the slash the question names only in part may be the next entry's actor
    # ("who plays olivia" gave "Claire Foy"); one named whole is the role's other form.
    assert cast_span("who plays olivia", "Claire Foy as Queen Elizabeth II / Olivia Colman ( older ) .") is None
    assert cast_span("who plays trevor slattery", "Ben Kingsley as The Mandarin / Trevor Slattery , an actor .") == "Ben Kingsley"


def test_the_reader_takes_a_cast_from_a_sentence_other_than_the_best(readers):
    # "Maurice is an inventor …" matches "who played maurice" better than the cast list does;
    # only the cast list says who played him, and its year is the page title's.
    _, shaped = readers
    title = "Beauty and the Beast ( 2017 film )"
    page = [Passage("bb_p0", "Maurice is an eccentric inventor and Belle 's father , played in the 2017 film by a star .",
                    3.0, title),
            Passage("bb_p1", "<Ul> <Li> Emma Watson as Belle , a young woman . </Li> <Li> Kevin Kline as Maurice , "
                    "Belle 's protective widowed father . </Li> </Ul>", 2.0, title)]
    answer = shaped.read("who played maurice in beauty and the beast 2017", page)
    assert answer.text == "Kevin Kline"
    assert answer.evidence == "Kevin Kline as Maurice , Belle 's protective widowed father ."


def test_the_cast_of_the_character_an_earlier_sentence_named_answers_who_plays_it(readers):
    # A character's section names the role once, then says who played "the character": read
    # alone, that sentence pairs no two names, and "who plays jennifer" got the role's own name.
    played = "The character was played by Claudia Wells in Back to the Future ."
    assert cast_span("who plays jennifer in back to the future", played, "Jennifer Jane Parker") == "Claudia Wells"
    assert cast_span("who plays jennifer in back to the future", played) is None
    assert cast_span("who plays lorraine in back to the future", played, "Jennifer Jane Parker") is None
    assert cast_span("who does lea thompson play", "She also plays Maggie McFly , Marty 's ancestor .", "Lea Thompson") == "Maggie McFly"
    _, shaped = readers
    title = "List of Back to the Future characters"
    page = [Passage("bttf_p0", "<H3> Jennifer Parker ( edit ) </H3> <P> Jennifer Jane Parker is the girlfriend ( and , in "
                    "2015 , the wife ) of Marty McFly . The character was played by Claudia Wells in Back to the Future . "
                    "</P>", 3.0, title),
            Passage("bttf_p1", "<P> In the future , Jennifer and Marty had two children , Marlene and Marty Jr. </P>", 2.0, title)]
    answer = shaped.read("who plays jennifer in back to the future 1", page)
    assert (answer.text, answer.evidence) == ("Claudia Wells", played)


def test_a_name_answered_by_surname_is_the_full_name_the_passages_give(readers):
    # An article names a person in full once, then by surname; the sentence that answers is a later one.
    assert full_name("Phillips", ["Phillips played Sondra 's date .", "It was Joseph C. Phillips 's final season ."]) == "Joseph C. Phillips"
    # Two longer names for it, or a longer name with a lower-case word, are not its full name.
    assert full_name("Johnson", ["Andrew Johnson was impeached .", "Lyndon Johnson signed it ."]) == "Johnson"
    assert full_name("Paris", ["He studied at the University of Paris ."]) == "Paris"
    assert full_name("Rhys Darby", ["Rhys Darby would play Charles ."]) == "Rhys Darby"
    _, shaped = readers
    title = "List of The Cosby Show characters"
    page = [Passage("cs_p0", "<P> Phillips played Sondra 's date in a season two episode , before coming back as a new "
                    "character , and playing the husband of Denise . </P>", 3.0, title),
            Passage("cs_p1", "<P> Martin appears in the sixth season , Joseph C. Phillips 's final season as a regular . "
                    "</P>", 2.0, title)]
    assert shaped.read("who played denise husband on the cosby show", page).text == "Joseph C. Phillips"


def test_he_or_she_is_the_role_of_a_who_plays_question_only_where_it_is_played(readers):
    # "He also plays Seamus McFly" after "Marty McFly is played by Michael J. Fox": "He" is the
    # actor, and read as the role it answered "who plays seamus mcfly" with "Marty McFly".
    plays = "He also plays Seamus McFly , Marty 's ancestor ."
    assert cast_span("who plays seamus mcfly", plays, "Marty McFly") is None
    assert cast_span("who does michael j. fox play", plays, "Michael J. Fox") == "Seamus McFly"
    assert cast_span("who plays lorraine", "She is played by Lea Thompson .", "Lorraine Baines") == "Lea Thompson"
    _, shaped = readers
    title = "List of Back to the Future characters"
    for question, lead, cast, actor in (
            ("who plays seamus mcfly in back to the future 3",
             "Marty McFly is played by Michael J. Fox . He also plays Seamus McFly , Marty 's ancestor , in Back to the Future Part III .",
             "Cast : Michael J. Fox as Seamus McFly and Marty McFly .", "Michael J. Fox"),
            ("who plays maggie mcfly",
             "Lorraine Baines is played by Lea Thompson . She also plays Maggie McFly , Seamus 's wife , in Part III .",
             "Cast : Lea Thompson as Maggie McFly .", "Lea Thompson")):
        page = [Passage("bttf_a0", lead, 3.0, title), Passage("bttf_a1", cast, 2.0, "Back to the Future Part III")]
        assert shaped.read(question, page).text == actor


def test_a_longer_name_is_the_full_name_only_in_the_answers_article_and_as_a_name(readers):
    # full_name widened every "who" answer: another person's kin, another article's
    # namesake, a sentence's opening word and another place were read as the full name.
    assert full_name("Johnson", ["His wife Lady Bird Johnson attended the signing ."]) == "Johnson"
    assert full_name("Phillips", ["Then Phillips left the show ."]) == "Phillips"
    assert full_name("Claudia Wells", ["Actress Claudia Wells was cast ."]) == "Claudia Wells"
    assert full_name("England", ["The squad later toured New England ."]) == "England"
    # A lead that says who the longer name is names it in full, at its sentence's start too.
    assert full_name("Darby", ["Rhys Darby is a New Zealand actor ."]) == "Rhys Darby"
    _, shaped = readers
    act = "Civil Rights Act of 1964"
    cases = (
        ("Who signed the Civil Rights Act of 1964?", [Passage("cra_a0", "Johnson signed the Civil Rights Act of 1964 on July 2 . "
                                                              "His wife Lady Bird Johnson attended the signing .", 3.0, act)]),
        ("Who signed the Civil Rights Act?", [Passage("cra_a0", "Johnson signed the Civil Rights Act on July 2 .", 3.0, act),
                                              Passage("bj_b0", "The mayor met Boris Johnson , a British politician .", 2.5, "Boris Johnson")]),
        ("Who scored the winning goal?", [Passage("wc_a0", "Hurst scored the winning goal in extra time . Meanwhile Hurst became a hero .",
                                                  3.0, "1966 FIFA World Cup Final")]),
        ("Who won the 1966 World Cup?", [Passage("wc_b0", "England won the 1966 World Cup . The squad later toured New England .",
                                                 3.0, "1966 FIFA World Cup")]),
    )
    assert [shaped.read(question, page).text for question, page in cases] == ["Johnson", "Johnson", "Hurst", "England"]


def test_the_cast_answer_is_the_full_name_its_article_gives(readers):
    # The cast sentence names the actor by surname; the article's lead names him in full.
    _, shaped = readers
    page = [Passage("ue_a0", "Rhys Darby is a New Zealand actor . Darby as Charles , Olaf 's partner .", 3.0,
                    "A Series of Unfortunate Events")]
    assert shaped.read("who plays charles", page).text == "Rhys Darby"


def test_a_which_question_is_answered_by_the_name_of_the_kind_it_asks(readers):
    # "which committee …?" got the whole sentence; its answer is the one name
    # that is a committee, not the President named nearer its words.
    plain, shaped = readers
    title = "Appointment and confirmation to the Supreme Court of the United States"
    sentence = ("Candidates are nominated by the President of the United States and must face hearings in which "
                "they answer questions before the Senate Judiciary Committee , which can vote to send the nomination on .")
    page = [Passage("sc_p0", f"<P> {sentence} </P>", 2.0, title)]
    question = "after the president appoints a new supreme court justice which committee holds hearings to consider"
    assert plain.read(question, page).text == sentence
    answer = shaped.read(question, page)
    assert (answer.text, answer.evidence, answer.source_id) == ("Senate Judiciary Committee", sentence, "sc_p0")
    assert shaped.read("What university did she attend?", [Passage(
        "ada", "Ada was taught at home. Later she studied at the University of London with De Morgan.", 1.0, "Ada")]).text \
        == "University of London"
    # A sentence with no name of the asked kind keeps the whole sentence.
    atp = "Most of the ATP is made by oxidative phosphorylation in the Mitochondria ."
    assert shaped.read("which process produces the most atp", [Passage("atp", atp, 1.0, "Cellular respiration")]).text == atp


def test_the_kind_a_which_question_asks_is_a_noun_a_name_holds_beside_other_words():
    assert kind_span("which committee holds hearings", "The Committee holds hearings in the Senate .") is None
    # One name of the kind, said twice, answers; two may be either.
    assert kind_span("which committee holds hearings", "The Senate Judiciary Committee meets ; "
                     "the Senate Judiciary Committee holds hearings .") == "Senate Judiciary Committee"
    assert kind_span("which committee holds hearings", "The House Rules Committee and the Senate Judiciary Committee "
                     "meet ; the Senate Judiciary Committee holds hearings .") is None
    assert kind_span("who chairs the committee", "The Senate Judiciary Committee is chaired by Dick Durbin .") is None
    # The noun heads the name: its last word, or the word before its "of".
    assert kind_span("What school subjects are needed to become a nurse?",
                     "Home State Requirements Schools Job Description Salaries") is None
    assert kind_span("which church did he lead", "He led the Church of England from 1533 .") == "Church of England"
    # "which one", "what kind of": no noun of a kind ("Formula One" is no answer to "which one").
    assert kind_span("Which one won the race?", "Hamilton won the Formula One race .") is None


def test_the_kind_asked_is_the_noun_after_which_or_what_at_the_questions_start():
    assert [kind_asked(q) for q in ("what kind of committee is it", "what type of committee", "what sort of committee",
                                    "what kinds of committee exist", "what is the name of the committee", "Which one won?")] \
        == [None] * 6
    assert kind_asked("In which country is Bilbao?") == "country"
    assert kind_asked("What time zone is Chicago in?") == "time zone"
    # Later in a question, "which" before a capitalised word opens a relative clause.
    assert kind_asked("How did the company which Jobs founded get its name?") is None
    assert kind_asked("after the president appoints a justice which committee holds hearings") == "committee holds"


@pytest.mark.parametrize("question, sentence", [
    # A plural head names several, not the one state asked for.
    ("What state is Chicago in?", "Chicago is the largest city in the state of Illinois and the third-largest in the United States ."),
    ("Which lake is Chicago on?", "Chicago lies on the Great Lakes , on the shore of Lake Michigan ."),
    # A title names the office, not who held it.
    ("Which king built the Tower of London?", "It was built by William the Conqueror , the first Norman King of England ."),
    ("Which president signed the treaty?", "The treaty was signed by Charles de Gaulle , President of France , in 1963 ."),
    # A country is named without the noun: a name with it is a region.
    ("In which country is Bilbao?", "Bilbao is a city in Spain , in the Basque Country ."),
    # Two names of the kind ("World War II" is headed by "War", its numeral left out): which one the sentence need not say.
    ("Which war ended in 1945?", "World War II ended in 1945 with the surrender of Japan , which also ended the Pacific War ."),
    ("Which river is the longest in Europe?", "The Volga is the longest river in Europe , longer than the Danube River and the Ural River ."),
    ("Which city was she born in?", "She was born in Kansas City and later moved to Mexico City ."),
    # A plural asks for several.
    ("Which countries border France?", "France borders Belgium and Spain ; the Low Countries lie to its north ."),
    # A date noun is answer_kind's, and a name with it no date.
    ("Do you know what year the Berlin Wall fell?", "The Berlin Wall fell in 1989 , the Year of Revolutions ."),
    ("How did the company which Jobs founded get its name?", "Apple was founded by Steve Jobs and Steve Wozniak in 1976 ."),
    # A name cut short after "and" is no name.
    ("Which hall of fame is Hendrix in?", "Hendrix was inducted into the Rock and Roll Hall of Fame in 1992 ."),
    # "what time zone" asks for a zone, not a time.
    ("What time zone is Chicago in?", "Chicago lies one hour behind Eastern Standard Time ."),
])
def test_a_which_question_keeps_the_sentence_where_a_name_of_its_kind_may_not_answer_it(question, sentence):
    assert kind_span(question, sentence) is None


def test_a_which_question_is_answered_by_a_place_or_a_two_word_kind():
    # A name in a place ("held in Mexico City") is what "which city" asks.
    assert kind_span("What city hosted the 1968 Olympics?", "The 1968 Summer Olympics were held in Mexico City .") == "Mexico City"
    assert kind_span("What time zone is Chicago in?", "Chicago is in the Central Time Zone , one hour behind Eastern Standard Time .") \
        == "Central Time Zone"
    # Every preposition a question may open with stands before "which", after a lead-in too.
    assert [kind_asked(q) for q in ("Until which Congress did he serve?", "And under which King did he serve?",
                                    "So, into which Sea does it flow?")] == ["congress", "king", "sea"]
    # Two capitalised words before "and" are a name of their own, not a name cut short.
    assert kind_span("What school did Obama attend?", "He graduated from Columbia University and Harvard Law School .") \
        == "Harvard Law School"


def test_the_public_readers_docstring_examples_hold():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner()
    for name in readers_module.__all__:
        for test in finder.find(getattr(readers_module, name), name):
            runner.run(test)
    failed, tried = runner.summarize(verbose=False)
    assert tried > 0 and failed == 0


@pytest.mark.parametrize("space", ["\xa0", "\u2009", "\u202f", "\u3000"])
def test_a_name_written_with_another_space_is_found(readers, space):
    # "King Henry\xa0II": the name's words rejoined with a plain space were
    # not in the text, and the reader raised ValueError, ending the chat.
    sentence = f"Catherine de' Medici was Queen of France from 1547 to 1559 by marriage to King Henry{space}II."
    assert short_span("name", "Who did Catherine de' Medici marry?", sentence) == f"King Henry{space}II"
    assert kind_span("which committee", f"It went to the Senate{space}Judiciary Committee .") == f"Senate{space}Judiciary Committee"
    assert cast_span("who does ewan mcgregor play", f"Ewan{space}McGregor as Lumière , a candelabrum .") == "Lumière"
    _, shaped = readers
    # (Asked of the passage's own subject: one naming Anne Boleyn is "not found" from it.)
    assert shaped.read("Which king did Catherine marry?", [Passage("c", sentence, 1.0, "Catherine de' Medici")]).found


def test_a_date_with_a_spaced_comma_is_one_date():
    # Tokenised text ("April 17 , 1982") lost its month and day: the answer was "1982".
    sentence = "The Charter was signed into law by Queen Elizabeth II of Canada on April 17 , 1982 , along with the Act ."
    assert short_span("date", "when was the charter of rights and freedoms signed", sentence) == "April 17 , 1982"


def test_a_rewrite_naming_the_subject_by_the_leads_full_name_is_not_answered_by_the_lead(readers):
    # A follow-up's rewrite takes the full name from the lead it was answered
    # with; counted word by word, that name alone made the lead the best
    # sentence for whatever was asked.
    plain, shaped = readers
    cleopatra = Passage(
        "Cleopatra",
        "Cleopatra VII Thea Philopator was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC, and the last "
        "active Hellenistic pharaoh. Her first language was Koine Greek. After her death, Egypt became a province "
        "of the Roman Empire, marking the end of the Hellenistic period in the Mediterranean.",
        2.0, "Cleopatra")
    history = Passage("History of Egypt", "Egypt later came under Persian, Greek, Roman, and Arab rule.", 1.4,
                      "History of Egypt")
    question = "What did Egypt become after Cleopatra VII Thea Philopator's death?"
    for reader in (plain, shaped):
        answer = reader.read(question, [cleopatra, history])
        assert answer.text.startswith("After her death, Egypt became a province of the Roman Empire")


def test_a_lead_that_only_names_its_subjects_kind_is_completed_by_the_next_sentence(readers):
    # "… was an English writer and journalist." says what Dickens was, not
    # what he is known for: the article's next sentence does.
    _, shaped = readers
    dickens = Passage(
        "Charles Dickens",
        "Charles John Huffam Dickens was an English writer and journalist. He created some of literature's "
        "best-known fictional characters, and is regarded by many as the greatest novelist of the Victorian era. "
        "His works enjoyed unprecedented popularity during his lifetime.",
        2.0, "Charles Dickens")
    for question in ("Who was Charles Dickens?", "WHO WAS CHARLES DICKENS"):
        assert shaped.read(question, [dickens]).text == (
            "Charles John Huffam Dickens was an English writer and journalist. He created some of literature's "
            "best-known fictional characters, and is regarded by many as the greatest novelist of the Victorian era.")
    # A lead that says more is the whole definition, as before.
    cleopatra = Passage(
        "Cleopatra",
        "Cleopatra VII Thea Philopator was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC, and the last "
        "active Hellenistic pharaoh. A member of the Ptolemaic dynasty, she was a descendant of its founder.",
        2.0, "Cleopatra")
    assert shaped.read("Who was Cleopatra?", [cleopatra]).text == (
        "Cleopatra VII Thea Philopator was Queen of the Ptolemaic Kingdom of Egypt from 51 to 30 BC, and the last "
        "active Hellenistic pharaoh.")


def test_a_leads_full_name_counts_only_for_a_question_naming_the_subject_by_it(readers):
    # "Tiberius Julius Caesar Augustus" holds other emperors' names: counted
    # for every sentence of "Tiberius", it made his birth the answer to
    # where Julius Caesar was born, and "Tiberius" Julius Caesar's wife.
    plain, shaped = readers
    tiberius = Passage(
        "Tiberius",
        "Tiberius Julius Caesar Augustus was Roman emperor from AD 14 until 37. Tiberius was born in Rome in 42 BC "
        "to politician Tiberius Claudius Nero. He married Vipsania Agrippina.",
        2.0, "Tiberius")
    caesar = Passage(
        "Julius Caesar",
        "Gaius Julius Caesar was a Roman general and statesman. He was assassinated in 44 BC. He played a critical "
        "role in the events that led to the demise of the Roman Republic.",
        1.9, "Julius Caesar")
    for reader in (plain, shaped):
        assert "Tiberius" not in reader.read("Where was Julius Caesar born?", [tiberius, caesar]).text


def test_a_bare_lead_is_completed_only_by_a_short_sentence_of_its_own_paragraph(readers):
    _, shaped = readers
    # A heading or a list item after the lead (a page's markup) is no sentence of its definition.
    eiffel = Passage("Eiffel Tower", "<P> The Eiffel Tower is a wrought-iron lattice tower . </P> <H2> History </H2> "
                     "<P> It was built in 1889 . </P>", 2.0, "Eiffel Tower")
    assert shaped.read("What is the Eiffel Tower?", [eiffel]).text == "The Eiffel Tower is a wrought-iron lattice tower ."
    python = Passage("Python", "Python is a programming language. Guido van Rossum", 2.0, "Python")
    assert shaped.read("What is Python?", [python]).text == "Python is a programming language."
    # A note on another subject, or a sentence too long to be half an answer, is not taken.
    mercury = Passage("Mercury", "Mercury is a chemical element. Not to be confused with the planet Mercury, the "
                      "smallest planet of the Solar System.", 2.0, "Mercury")
    assert shaped.read("What is Mercury?", [mercury]).text == "Mercury is a chemical element."
    eastwood = Passage("Clint Eastwood", "Clinton Eastwood Jr. is an American retired actor and filmmaker. After "
                       "achieving success in the Western TV series Rawhide, Eastwood rose to international fame with "
                       "his role as the Man with No Name in Sergio Leone's Dollars Trilogy of spaghetti Westerns during "
                       "the mid-1960s and as antihero cop Harry Callahan in the five Dirty Harry films throughout the "
                       "1970s and 1980s.", 2.0, "Clint Eastwood")
    assert shaped.read("Who was Clint Eastwood?", [eastwood]).text == (
        "Clinton Eastwood Jr. is an American retired actor and filmmaker.")


def test_a_lead_whose_is_belongs_to_a_later_clause_is_not_bare(readers):
    # Its words after a later clause's "is" are few, but the lead says much.
    _, shaped = readers
    kale = Passage("Kale", "Kale, also called leaf cabbage, belongs to a group of cabbage cultivars primarily grown "
                   "for their edible leaves, but it is also used as an ornamental plant. Its cultivars vary.",
                   2.0, "Kale")
    health = Passage("Health", "Health has a variety of definitions which have been used for different purposes "
                     "over time and is a multidimensional concept. It commonly refers to well-being.", 2.0, "Health")
    assert shaped.read("What is kale?", [kale]).text.endswith("ornamental plant.")
    assert shaped.read("What is health?", [health]).text.endswith("multidimensional concept.")


def test_a_bare_lead_has_at_most_six_words_after_its_is(readers):
    _, shaped = readers
    six = Passage("Ada", "Ada was a writer of many short notes. She wrote on engines.", 2.0, "Ada")
    seven = Passage("Ada", "Ada was a writer of very many short notes. She wrote on engines.", 2.0, "Ada")
    assert shaped.read("Who was Ada?", [six]).text == "Ada was a writer of many short notes. She wrote on engines."
    assert shaped.read("Who was Ada?", [seven]).text == "Ada was a writer of very many short notes."


def test_a_roles_voice_is_asked_for_its_cast():
    # "who is chips voice" (a possessive typed without its apostrophe) and "who is the voice of X"
    # ask who voices the role; they read as "who is X?" and got the whole cast list item.
    chip = "Nathan Mack as Chip , Mrs. Potts ' plucky son who has been transformed into a teacup ."
    assert cast_span("who is chips voice in beauty and the beast", chip) == "Nathan Mack"
    assert cast_span("who is the voice of chip in beauty and the beast", chip) == "Nathan Mack"
    assert cast_span("who does nathan mack voice in beauty and the beast", chip) == "Chip"
    assert answer_kind("who is chips voice in beauty and the beast") == "name"
    assert definition_subject("who is the voice of chip") is None
    assert definition_subject("who is chip") == "chip"


def test_only_a_roles_voice_is_asked_for_its_cast():
    # A voice coach, the show "the voice", "this voice": no role's cast is asked.
    assert cast_span("Who is Adele's voice coach?", "Adele is voiced by Dan Wilson .") is None
    assert [definition_subject(q) for q in ("who is blake shelton on the voice", "who is this voice")] == [
        "blake shelton on the voice", "this voice"]
    # A holder of several words keeps its last "s": "james earl jones" asks for no "Jone".
    assert cast_span("who is james earl jones voice", "Jone is voiced by Dan Smith .") is None
    assert cast_span("who is chips voice?", "Chip is voiced by Nathan Mack .") == "Nathan Mack"


# ------------------------------------------------- a document's own questions


class _Angles:
    """A toy encoder: the question is one unit vector, each sentence holding a
    key of ``similar`` is at that cosine to it, any other text at 0."""

    def __init__(self, question: str, similar: dict[str, float]):
        self.question, self.similar = question, similar

    def encode(self, texts):
        rows = []
        for text in texts:
            cos = 1.0 if text == self.question else next((v for k, v in self.similar.items() if k in text), 0.0)
            rows.append([cos, math.sqrt(max(0.0, 1 - cos * cos))])
        return np.array(rows, dtype=np.float32)


def _toy_reader(question, similar):
    return SentenceReader(_Angles(question, similar), ReaderConfig(definitions=False, short_answers=False))


def test_a_question_the_document_asks_is_answered_by_the_sentence_after_it():
    question = "Can I renew my licence online?"
    faq = Passage("faq", "Can you renew your licence online? No. You must renew at an office. Fees are listed below.", 1.0, "")
    reader = _toy_reader(question, {"licence online": 0.9, "You must renew": 0.5})
    # Its short reply opens the answer; a sentence far from the question does not continue it.
    assert reader.read(question, [faq]).text == "No. You must renew at an office."
    # A following sentence that is not about the question (the next
    # paragraph's, packed into the passage) is no answer: the question stays.
    cats = Passage("cats", "Dogs may come in the garden. Are cats allowed indoors? The library opens at nine.", 1.0, "")
    asked = "Are cats allowed indoors?"
    assert _toy_reader(asked, {"Are cats allowed": 0.9, "library": 0.1}).read(asked, [cats]).text == asked


def test_a_question_the_document_asks_in_any_closing_quote_is_one():
    # A question closed by «», „“ or ‘’ (a block of its own) was no question:
    # it was the answer, not the sentence after it.
    question = "Can I bring my dog on the bus?"
    for opening, closing in ("\u00ab\u00bb", "\u201e\u201c", "\u2018\u2019", '""'):
        faq = Passage("faq", f"<p>Pet policy.</p><p>{opening}Can I bring my dog on the bus?{closing}</p>"
                             "<p>Dogs may ride on a lead.</p><p>Fees are listed below.</p>", 1.0, "")
        reader = _toy_reader(question, {"dog on the bus": 0.9, "ride on a lead": 0.6})
        assert reader.read(question, [faq]).text == "Dogs may ride on a lead.", opening


def test_a_short_reply_to_another_question_is_left_out():
    # The document's question is the best match, but asks something else:
    # its "Yes."/"No." would answer the user falsely; the sentence after it stays.
    faq = Passage("faq", "Can dogs get sunburn? Yes. Dogs with thin coats can burn. Do cats need vaccines? "
                         "Our clinic offers grooming on weekends.", 1.0, "")
    for question in ("Can dogs eat chocolate?", "Can cats get sunburn?"):
        reader = _toy_reader(question, {"Can dogs get sunburn": 0.9, "thin coats": 0.5})
        assert reader.read(question, [faq]).text == "Dogs with thin coats can burn."
    office = Passage("office", "Our office is open Monday to Friday. Can I renew my licence online? No. "
                               "You must renew in person at an office. How much does a licence cost? The fee is 40 dollars.", 1.0, "")
    question = "Can I renew my passport online?"
    reader = _toy_reader(question, {"licence online": 0.9, "in person": 0.5})
    assert reader.read(question, [office]).text == "You must renew in person at an office."


def test_a_continuation_after_a_skipped_question_is_as_near_as_the_question():
    # The answer after the document's question is less similar than the
    # question was; an unrelated sentence nearly as similar as that answer
    # does not continue it.
    question = "Why did the bridge fall?"
    faq = Passage("faq", "Why did the bridge fall down? Engineers blamed the wind. The river was later dredged.", 1.0, "")
    reader = _toy_reader(question, {"bridge fall down": 0.9, "Engineers": 0.5, "river": 0.45})
    assert reader.read(question, [faq]).text == "Engineers blamed the wind."


def test_a_question_after_the_answer_does_not_continue_it():
    question = "Where do I renew my licence?"
    faq = Passage("faq", "You must renew at an office near you. Can I renew by post instead?", 1.0, "")
    reader = _toy_reader(question, {"You must renew": 0.9, "by post": 0.85})
    assert reader.read(question, [faq]).text == "You must renew at an office near you."


def test_a_best_scored_sentence_below_the_similarity_bar_is_not_found():
    # Another sentence clearing the bar does not stand in for the best-scored
    # one: on the sets it turned "not found" into wrong answers.
    question = "Can I renew my licence online?"
    lifted = Passage("a", "Renew your licence online at any time of the year.", 3.0, "")
    near = Passage("b", "An office visit is needed for every driver.", 0.3, "")
    reader = _toy_reader(question, {"Renew your licence": 0.3, "office visit": 0.5})
    answer = reader.read(question, [lifted, near])
    assert (answer.text, answer.found) == (NOT_FOUND, False)


# "How many people live in Berlin?" was answered from "The urban area of
# Berlin has a population of over 5 million" before the article's city
# figure: a place's own people are not its wider area's, unless asked for
# (or asked at a time, which only the wider area's figure may give).
TARROW_PEOPLE = Passage("tarrow", "Tarrow is a city in Ohio. The Tarrow metropolitan area has 2 million residents. "
                                  "The city has 400,000 residents, of whom 5,000 are students.", 1.0, "Tarrow")


def _tarrow(*sentences: str) -> Passage:
    return Passage("tarrow", " ".join(("Tarrow is a city in Ohio, on the Lark River.",) + sentences), 1.0, "Tarrow")


def _first_figure(text: str) -> str:
    match = re.search(r"\d(?:[\d,.]*\d)?(?:\s+million)?", text)
    return match.group() if match else text


@pytest.mark.parametrize("question, passage, span", [
    ("How many people live in Tarrow?", TARROW_PEOPLE, "400,000"),
    ("How many people live in the Tarrow metropolitan area?", TARROW_PEOPLE, "2 million"),
    ("How many people live in Wendland?", Passage("w", "Wendland is a country in Europe. Wendland has a population of "
                                                       "5 million. Its capital region has 2 million inhabitants.", 1.0, "Wendland"), "5 million"),
    ("How many people lived in Tarrow in 1900?", Passage("t", "Tarrow is a city in Ohio. In 1900 the Tarrow metropolitan area "
                                                             "had 50,000 residents. Today the city has 400,000 inhabitants.", 1.0, "Tarrow"), "50,000"),
])
def test_a_places_own_people_are_not_its_wider_areas(readers, question, passage, span):
    _, shaped = readers
    assert shaped.read(question, [passage]).text == span


# Each way of asking a place's headcount, and each way of saying its own
# figure ("the city proper", "within the city limits", "the population of
# the … region is"), gives the place's own over the wider area's.
@pytest.mark.parametrize("question, passage, figure", [
    ("What is the population of Tarrow?", _tarrow("The urban area of Tarrow has a population of over 2 million.",
                                                  "The city proper has a population of 612,000."), "612,000"),
    ("How many people are in Tarrow?", _tarrow("Greater Tarrow is home to 2.4 million people.",
                                               "The city itself has 598,000 residents."), "598,000"),
    ("How many inhabitants does Tarrow have?", _tarrow("The Tarrow conurbation has 1.9 million inhabitants.",
                                                       "The city has 455,000 inhabitants."), "455,000"),
    ("How big is Tarrow's population?", _tarrow("The population of the Tarrow metropolitan region is 3 million.",
                                                "About 700,000 people live within the city limits."), "700,000"),
    ("How many people live in Tarrow?", _tarrow("The Tarrow metropolitan area has 2 million residents.",
                                                "Within the Tarrow metropolitan area, the city proper has 612,000 inhabitants."), "612,000"),
    ("How many people live in Velmora?", Passage("v", "Velmora is the capital of Ostria. Over 8 million people live in the "
                                                      "Velmora Urban Area as of 2024. The city proper is home to 5.2 million people.",
                                                 1.0, "Velmora"), "5.2 million"),
])
def test_each_way_of_asking_a_places_headcount_gets_its_own_figure(readers, question, passage, figure):
    _, shaped = readers
    assert _first_figure(shaped.read(question, [passage]).text) == figure


# A figure of a part of the place's people (a district's, a borough's, a
# share, a group), of a flow (visitors a year), of a past time, or of
# another place (a country's capital) is not the place's own: the wider
# area's figure, the best read, stays (it is at least all the people
# around the place, where a part's is a few of them).
@pytest.mark.parametrize("question, other", [
    ("How many people live in Tarrow?", "The city is divided into 12 districts, each with about 30,000 residents."),
    ("How many people live in Tarrow?", "The largest borough, Eastfield, has 80,000 residents."),
    ("How many people live in Tarrow?", "The neighbourhood of Kell is home to 25,000 residents."),
    ("What is the population of Tarrow?", "About 15 percent of residents, or 61,000 people, were born abroad."),
    ("How many people live in Tarrow?", "In 1850 the city had 40,000 inhabitants."),
    ("How many people live in Tarrow?", "At its peak the city had 900,000 inhabitants, before decades of decline."),
    ("How many people live in Tarrow?", "Each year 20,000 new residents move to the city."),
    ("How many people live in Tarrow?", "The city receives 5 million visitors per year, more than its residents."),
])
def test_a_parts_a_flows_or_a_past_figure_is_not_the_places_own(readers, question, other):
    _, shaped = readers
    passage = _tarrow("The Tarrow metropolitan area has 2 million residents.", other)
    assert _first_figure(shaped.read(question, [passage]).text) == "2 million"


# A place the sentence only sets the city in ("the fifth-most populous
# city in Germany", "the capital … of India") is not said to have its
# figure: the city's own stands.
@pytest.mark.parametrize("own", [
    "Its 778,589 inhabitants make it the fifth-most populous city in Ostria.",
    "It is the financial capital and the most populous city proper of Ostria, with an estimated population of 12.5 million.",
])
def test_a_place_a_city_is_set_in_does_not_take_its_figure(readers, own):
    _, shaped = readers
    passage = _tarrow("Tarrow is the heart of the larger Lark metropolitan region, which has a population of more than 23 million.", own)
    assert _first_figure(shaped.read("What is the population of Tarrow?", [passage]).text) in ("778,589", "12.5 million")


def test_a_countrys_people_are_not_its_capitals(readers):
    _, shaped = readers
    ostria = Passage("o", "Ostria is a country in Central Europe. The Velmora metropolitan area has 3 million inhabitants. "
                          "The city of Velmora has 1.9 million residents.", 1.0, "Ostria")
    assert _first_figure(shaped.read("How many people live in Ostria?", [ostria]).text) == "3 million"
    # Nor, read in the capital's own article, is the capital's own figure.
    velmora = Passage("v", "Velmora is a city in Central Europe. Its metropolitan area, the largest in Ostria, has 3 million "
                           "inhabitants. The city has 1.9 million residents.", 1.0, "Velmora")
    assert _first_figure(shaped.read("How many people live in Ostria?", [velmora]).text) == "3 million"


def test_a_built_up_areas_people_are_not_the_places_own(readers):
    # A prefecture or province-sized city's own people, said of its
    # "metropolitan region", are more than its built-up area's: neither is
    # taken for the other.
    _, shaped = readers
    passage = _tarrow("It is the state's most populous metropolitan region, with a population of 8,782,285.",
                      "Its built-up area is home to 6,669,711 inhabitants.")
    assert _first_figure(shaped.read("What's Tarrow's population?", [passage]).text) == "8,782,285"


# Three ways an article says a city's own people that the headcount swap
# did not read as its own, each after a wider area's sentence the reader
# ranks first: the year in brackets between the figure and "inhabitants",
# "based on" after the figure, and a wider area's sentence whose "city
# proper" is where the area reaches beyond (not its own bounds). Each got
# the wider area's figure, or a number word inside "seventh".
@pytest.mark.parametrize("wider, own, figure", [
    ("Situated on the Lark, the city forms a continuous conurbation with its neighbours, with the built-up area comprising "
     "around 1.2 million inhabitants.", "Its 52,311 (2024) inhabitants make it the 13th-largest city in Ostria.", "52,311"),
    ("Its metropolitan area is home to 53,480 inhabitants at the 2022 census.",
     "With a population of 24,632 based on the 2022 census, about 10% of the total population of Ostria.", "24,632"),
    ("Its metropolitan area, the seventh most populous in Ostria, has a population of approximately 2.2 million and "
     "stretches beyond the boundaries of the city proper for approximately 30 kilometres.",
     "With a population of 640,200 within the city's administrative limits as of 2026, it is the largest city in southern "
     "Ostria and the third-largest city in Ostria after Velmora and Karnabad, while its province-level municipality is the "
     "third most populous in Ostria with a population of 2,100,300 residents.", "640,200"),
])
def test_a_citys_own_figure_however_said_beats_its_wider_areas(readers, wider, own, figure):
    _, shaped = readers
    assert shaped.read("How many people live in Tarrow?", [_tarrow(own, wider)]).text == figure


# What the own figure above must not take: a share before the people
# ("home to about 35% of the country's … residents" answered "35%"), a
# range the span already holds whole (cut to its upper end), people
# "based at" a place (not "based on" a census), and another place's own
# figure in its own article ("How many people live in Bavaria?" read in
# Stuttgart's took Stuttgart's).
@pytest.mark.parametrize("question, passage, answer", [
    ("How many people live in Tarrow?", Passage("tarrow", "Tarrow is an island country in the Lark Sea. Its capital is "
     "Velmora, which is home to about 35% of the country's roughly 90,000 residents.", 1.0, "Tarrow"), "90,000"),
    ("How many people live in Tarrow?", _tarrow("Its population is estimated to be between 3 and 4 million residents, "
     "making Tarrow the largest city in Ohio."), "between 3 and 4 million"),
    ("How many people live in Tarrow?", _tarrow("The city has a population of 4,000 based at the air force base, and "
     "about 640,000 residents in all."), "640,000"),
    ("How many people live in Lark Valley?", Passage("velmora", "Velmora is a city in Ostria. Velmora has a population "
     "of 613,000 as of 2023, while over 2.8 million people live in Lark Valley, the region around it.", 1.0, "Velmora"),
     "2.8 million"),
])
def test_a_places_own_figure_is_no_share_range_part_or_other_places(readers, question, passage, answer):
    _, shaped = readers
    assert shaped.read(question, [passage]).text == answer


# What "N residents/people" are said to do or be, past a verb of living or
# a where/when, says they are some of the people, not all who live there
# ("are over 65", "commute"); a figure to come, or older than the wider
# area's (older than this century where that gives no year), is not now;
# a flow ("a year", "every year") is no number living there.
@pytest.mark.parametrize("wider, other", [
    ("The Tarrow metropolitan area has 2 million residents.", "Some 400,000 residents are over the age of 65."),
    ("The Tarrow metropolitan area has 2 million residents.", "Around 700,000 residents commute to work by bus."),
    ("The Tarrow metropolitan area has 2 million residents.", "More than 500,000 people attended the funeral of the poet in 2004."),
    ("The Tarrow metropolitan area has 2 million residents.", "Some 300,000 residents lack access to clean water."),
    ("The Tarrow metropolitan area has 2 million residents.", "The city is projected to have 900,000 inhabitants by 2050."),
    ("The Tarrow metropolitan area has 2 million residents.", "The city is expected to reach 900,000 inhabitants."),
    ("The Tarrow metropolitan area has 2 million residents.", "The city gains 20,000 residents a year."),
    ("The Tarrow metropolitan area has 2 million residents.", "Tarrow adds 20,000 residents within its limits every year."),
])
def test_what_people_do_a_time_to_come_or_an_older_year_is_not_the_places_own(readers, wider, other):
    _, shaped = readers
    passage = _tarrow(wider, other)
    assert _first_figure(shaped.read("How many people live in Tarrow?", [passage]).text) == "2 million"


@pytest.mark.parametrize("wider, other", [
    ("The Karnabad metropolitan area has 3.4 million inhabitants.", "In 1995 the city had 900,000 inhabitants."),
    ("The Karnabad metropolitan area had 3.4 million inhabitants in 2020.", "The city's population was 900,000 at the 2010 census."),
])
def test_a_figure_older_than_the_wider_areas_is_not_the_places_own(readers, wider, other):
    _, shaped = readers
    passage = Passage("k", f"Karnabad is the capital of Sindra province. {wider} {other}", 1.0, "Karnabad")
    assert _first_figure(shaped.read("How many people live in Karnabad?", [passage]).text) == "3.4 million"


@pytest.mark.parametrize("wider, own, figure", [
    ("The Tarrow metropolitan area had 2 million residents in 2010.", "The city had 400,000 residents in 2020.", "400,000"),
    ("The Tarrow metropolitan area has 2 million residents.", "The city has 400,000 residents as of 2023.", "400,000"),
    ("The Tarrow metropolitan area has 2 million residents.", "About 400,000 people live within the city limits.", "400,000"),
])
def test_a_figure_of_the_people_living_there_now_is_the_places_own(readers, wider, own, figure):
    _, shaped = readers
    assert _first_figure(shaped.read("How many people live in Tarrow?", [_tarrow(wider, own)]).text) == figure


# Another place named as having the figure, in apposition or as the
# sentence's subject ("Velmora is the largest city in Ostria, with …"),
# is not the asked place: the wider area's figure stays.
@pytest.mark.parametrize("question, passage, figure", [
    ("How many people live in Tarrow?", _tarrow("The Tarrow metropolitan area has 2 million residents.",
                                                "The capital of the state, Columbus, has a population of 900,000."), "2 million"),
    ("How many people live in Ostria?", Passage("o", "Ostria is a landlocked country in Central Europe. The Velmora metropolitan "
                                                     "area has 3 million inhabitants. Velmora is the largest city in Ostria, with "
                                                     "1.9 million residents.", 1.0, "Ostria"), "3 million"),
    ("How many people live in Velmora?", Passage("v", "Velmora is the capital of Ostria. The Velmora metropolitan area has 3 million "
                                                      "inhabitants. It is the largest city in Ostria, with 1.9 million residents.",
                                                 1.0, "Velmora"), "1.9 million"),
])
def test_another_place_named_as_having_the_figure_is_not_the_asked_place(readers, question, passage, figure):
    _, shaped = readers
    assert _first_figure(shaped.read(question, [passage]).text) == figure


# The place's own article is one whose title names all of the place (a
# qualifier after a comma aside) and no more: "San Salvador" is not
# Salvador's, "Papua New Guinea" not Guinea's, "Quebec City" not Quebec's.
@pytest.mark.parametrize("question, passage, figure", [
    ("How many people live in Guinea?", Passage("p", "Papua New Guinea is a country in Oceania. The Port Moresby urban area has "
                                                     "400,000 people. Papua New Guinea has a population of 11.8 million.", 1.0,
                                                "Papua New Guinea"), "400,000"),
    ("How many inhabitants does Salvador have?", Passage("s", "San Salvador is the capital of El Salvador. The San Salvador "
                                                              "metropolitan area has 1,600,000 inhabitants. The city has a "
                                                              "population of 525,990.", 1.0, "San Salvador"), "1,600,000"),
    ("How many people live in Quebec?", Passage("q", "Quebec City is the capital of the Canadian province of Quebec. The Quebec "
                                                     "City metropolitan area had 839,311 people in 2021. The city had a population "
                                                     "of 549,459 in 2021.", 1.0, "Quebec City"), "839,311"),
    ("How many inhabitants does Leon have?", Passage("l", "Leon is a city in Mexico. The Leon metropolitan area has 2,140,094 "
                                                          "inhabitants. The city has 1,579,803 inhabitants.", 1.0, "Leon, Guanajuato"),
     "1,579,803"),
])
def test_only_the_asked_places_own_article_gives_its_own_figure(readers, question, passage, figure):
    _, shaped = readers
    assert _first_figure(shaped.read(question, [passage]).text) == figure


def test_a_long_run_of_digits_costs_linear_time(readers):
    """A number is read from where it starts only: a long run of "1,1,…"
    was tried from each digit, in time that grew with its square."""
    _, shaped = readers
    passage = _tarrow("The Tarrow metropolitan area has 2 million residents.", "Its census codes are " + "1," * 7500 + "9 in all.")
    start = time.perf_counter()
    shaped.read("How many people live in Tarrow?", [passage])
    assert time.perf_counter() - start < 3.0


def test_the_own_figure_never_turns_an_answer_into_none(readers):
    # An own sentence under the similarity bar is not taken for a wider
    # area's above it: the wider area's answer stands.
    encoder = readers[0].encoder
    strict = SentenceReader(encoder, ReaderConfig(definitions=True, short_answers=True, min_similarity=0.62))
    passage = _tarrow("The Tarrow metropolitan area has 2 million residents.", "Home to 410,000 souls, it is quiet.")
    answer = strict.read("How many people live in Tarrow?", [passage])
    assert (answer.found, _first_figure(answer.text)) == (True, "2 million")


# Only a question that asks, whole, for the place's people: one that asks
# for a group of them, a time or a wider area is answered as before.
@pytest.mark.parametrize("question, passage, figure", [
    ("What is the Jewish population of Tarrow?", _tarrow("The Jewish population of the Tarrow metropolitan area is 45,000.",
                                                          "The city has 410,000 residents."), "45,000"),
    ("How many people lived in Tarrow at its peak?", _tarrow("At its peak in 1950 the Tarrow metropolitan area had 2.5 million residents.",
                                                             "The city has 410,000 residents."), "2.5 million"),
    ("What is the population of the Tarrow region?", _tarrow("The Tarrow capital region has 2 million residents.",
                                                             "The city has 410,000 residents."), "2 million"),
    ("How many people live in poverty in Tarrow?", _tarrow("The Tarrow metropolitan area has 2 million residents living in poverty.",
                                                           "The city has 410,000 residents."), "2 million"),
])
def test_a_question_for_some_of_a_places_people_is_not_asked_its_headcount(readers, question, passage, figure):
    _, shaped = readers
    assert _first_figure(shaped.read(question, [passage]).text) == figure


# What a verb of change changes, said between it and its "by" or "from" ("cut
# rates by", "cut its staff from", "raised its budget by"), made it no change:
# a question for the level got the change or the level before.
@pytest.mark.parametrize("question, sentence, span", [
    ("What is the rate now?", "The bank cut rates by 50 basis points to 1.5%.", "1.5%"),
    ("By how much did it cut rates?", "The bank cut rates by 50 basis points to 1.5%.", "50 basis points"),
    ("How many staff does it have?", "The firm cut its staff from 500 to 300.", "300"),
    ("How many staff did it have at first?", "The firm cut its staff from 500 to 300.", "500"),
    ("By how much did it cut its staff?", "The firm cut its staff from 500 to 300.", "from 500 to 300"),
    ("What is the budget now?", "The city raised its budget by $2 million to $10 million.", "$10 million"),
    ("How much did the city raise its budget?", "The city raised its budget by $2 million to $10 million.", "$2 million"),
    ("How many seats are there?", "The firm increased the number of seats from 10 to 12.", "12"),
    ("What is the tax rate?", "The government raised taxes from 20% to 25% in 2010.", "25%"),
    ("What is the age limit?", "The state raised the age limit from 16 to 18.", "18"),
    ("How many cows did the farm have at first?", "The farm grew its herd from 50 to 80 cows.", "50"),
    # A pair against the verb's way, from one year to another, or what is
    # raised "from" a count, is a range or a time; "raised by" names who did it.
    ("When was power cut?", "The storm cut power from 5 to 10 pm.", "5"),
    ("How long is his hair?", "The barber cut his hair from 5 to 10 cm.", "5 to 10 cm"),
    ("How long did she raise her sons?", "She raised her sons from 1950 to 1960 in Ohio.", "1950 to 1960"),
    ("How long did farmers grow crops?", "Farmers grew crops from 1950 to 1960 on the land.", "1950 to 1960"),
    ("How much did the school raise?", "The school raised funds from 30 to 40 parents.", "30 to 40"),
    ("How many volunteers raised the money?", "The money was raised by 300 to 400 volunteers.", "400"),
    ("How long was he raised by his aunt?", "He was raised by his aunt from 1950 to 1960.", "1950 to 1960"),
    ("How many cheers were there?", "The mayor cut the ribbon by the river to 500 cheers.", "500"),
    ("How old are the children?", "Sales grew among children from 5 to 10.", "5 to 10"),
])
def test_what_a_verb_of_change_changes_may_stand_before_its_by_or_from(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "A 5 percentage increase" was answered "5": the unit is kept as said.
@pytest.mark.parametrize("question, sentence, span", [
    ("How big was the increase?", "The 5 percentage increase was the largest since 1990.", "5 percentage"),
    ("How much did the tax rise?", "The tax rose by 5 percentage to 20%.", "5 percentage"),
    ("How big was the rise?", "Rates saw a 5 percentage-point rise.", "5 percentage-point"),
])
def test_a_number_said_in_percentage_keeps_it(question, sentence, span):
    assert short_span("number", question, sentence) == span


# Levels said with their years ("from 5,000 in 1900 to 20,000 in 2000") were
# no change: every question got the first level.
DATED_FROM = "The population grew from 5,000 in 1900 to 20,000 in 2000."


@pytest.mark.parametrize("question, sentence, span", [
    ("What is the population now?", DATED_FROM, "20,000"),
    ("What was the population in 1900?", DATED_FROM, "5,000"),
    ("What was the population in 2000?", DATED_FROM, "20,000"),
    ("What was the population at first?", DATED_FROM, "5,000"),
    ("By how much did the population grow?", DATED_FROM, "from 5,000 in 1900 to 20,000 in 2000"),
    ("How many members does it have?", "Membership rose from 300 in the 1990s to 1,200 in May 2010.", "1,200"),
    ("How much did sales fall?", "Sales fell from $5 million in 2008 to $3 million in 2009.",
     "from $5 million in 2008 to $3 million in 2009"),
    ("How high is the river?", "The river rose from 3 m in 1990 to 5 m in 2000.", "5 m"),
    ("What is the population now?", "The population grew by 5,000 in 1990 to 20,000.", "20,000"),
    # A level said without its year keeps the change's span as it was.
    ("How much did it grow?", "The population grew from 5,000 to 20,000 in 2000.", "from 5,000 to 20,000"),
    # A first level with its year is no range with the second's unit.
    ("What was the population at first?", "The population grew from 3 in 1900 to 4 million in 2000.", "3"),
])
def test_levels_said_with_their_years_are_the_level_before_and_after(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A long run of spaces after a level's "in" ("from 5 in" and 2,000 spaces)
# was split every way by the pattern for a level's time: one question took
# very long. Read it once, as the start did.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many people lived there?", "The population grew from 5 in" + " " * 2000 + "xx to 9.", "5"),
    ("What was the population at first?", "The population grew from 5 in the" + " " * 2000 + "xx to 9.", "5"),
    ("What is the population now?", "The population grew from 5,000 in" + " " * 2000 + "1900 to 20,000.", "20,000"),
])
def test_a_long_run_of_spaces_after_a_levels_time_is_read_once(question, sentence, span):
    assert short_span("number", question, sentence) == span


# Times of day ("cut power from 10 pm to 5 am") were read as a cut from 10 to
# 5: a number said with its am, pm or o'clock is no level of a change.
@pytest.mark.parametrize("question, sentence, span", [
    ("When was power cut?", "The storm cut power from 10 pm to 5 am.", "10"),
    ("When was the water cut?", "The city cut water from 11 pm to 6 am on Sunday.", "11"),
    ("When was power cut?", "The storm cut power from 10 to 5 am.", "10"),
    ("How many staff does it have?", "The firm cut its staff from 500 to 300 amid protests.", "300"),
])
def test_times_of_day_after_a_verb_of_change_are_no_change(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "cut the budget by 20 votes to 10" was read as a cut of the budget by 20
# to 10: a tally's "by" changes nothing it names; a change with its object
# is still one.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many votes did the motion get?", "The motion cut the budget by 20 votes to 10.", "20"),
    ("How many votes did the amendment get?", "Parliament raised the limit by 300 votes to 250.", "300"),
    ("What is the tax now?", "The council cut the tax by 5 percent to 20 percent.", "20 percent"),
])
def test_a_tally_after_a_verb_of_change_is_no_change(question, sentence, span):
    assert short_span("number", question, sentence) == span


# A change of what is itself counted in votes ("cut her majority by 500
# votes to 2,000") was read as a tally: "What is her majority now?" got 500.
# A tally says the larger count first.
@pytest.mark.parametrize("question, sentence, span", [
    ("What is her majority now?", "The election cut her majority by 500 votes to 2,000.", "2,000"),
    ("What is his lead now?", "The recount cut his lead by 300 votes to 1,200.", "1,200"),
    ("How many votes did it pass by?", "Parliament expanded the majority rule by 300 votes to 250.", "300"),
    ("How many votes did it pass by?", "Congress cut the lead funding by 220 votes to 190.", "220"),
    ("How many votes did the motion get?", "The motion cut the majority by 20 votes to 10.", "20"),
])
def test_a_change_of_what_is_counted_in_votes_is_no_tally(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "cut down its staff from 500 to 300" was no change ("down" opens no object):
# "How many staff does it have?" got 500. A verb said with its particle reads
# like the verb, the particle giving its way.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many staff does it have now?", "The company cut down its staff from 500 to 300.", "300"),
    ("How many staff did it have at first?", "The company cut down its staff from 500 to 300.", "500"),
    ("How many staff does it have now?", "The company scaled back its staff from 500 to 300.", "300"),
    ("How many staff does it have now?", "The company scaled up its staff from 300 to 500.", "500"),
    ("What is the budget now?", "The budget was scaled back by $2 million to $3 million.", "$3 million"),
    ("How tall were the trees?", "Loggers cut down trees from 5 to 10 metres tall.", "5 to 10 metres"),
])
def test_a_verb_of_change_with_its_particle_reads_like_the_verb(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "The school grew children from 5 to 10 years old" was read as a change:
# "How old are the children?" got "10 years". An age after the pair says how
# old what was changed is, unless an age was changed.
@pytest.mark.parametrize("question, sentence, span", [
    ("How old are the children?", "The school grew children from 5 to 10 years old.", "5 to 10 years"),
    ("How old were the trees?", "The forest grew trees from 50 to 200 years old.", "50 to 200 years"),
    ("How old is the retirement age now?", "The state raised the retirement age from 60 to 65 years old.", "65 years"),
])
def test_an_age_after_a_pair_of_a_verb_of_change_is_a_range(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "raised the age limit from 16 to 18 years" was read as raised from 16 to
# 18 counted things ("raised funds from 30 to 40 parents"): "What is the age
# limit?" got 16. A second level said in its unit is a level.
@pytest.mark.parametrize("question, sentence, span", [
    ("What is the age limit?", "The state raised the age limit from 16 to 18 years.", "18"),
    ("What is the speed limit now?", "The state raised the speed limit from 55 to 65 mph.", "65"),
    ("What is the price now?", "The shop raised prices from 30 to 40 dollars.", "40"),
    ("How much did the school raise?", "The school raised funds from 30 to 40 parents.", "30 to 40"),
])
def test_raised_from_a_level_in_its_unit_is_a_change(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "raised sheep from 500 to 800 metres above sea level" was read as a change
# of the sheep, the second level in its unit: "How high do the sheep graze?"
# got "800 metres". A unit of length that says where or how big is no level.
@pytest.mark.parametrize("question, sentence, span", [
    ("How high do the sheep graze?", "The farm raised sheep from 500 to 800 metres above sea level.", "500 to 800 metres"),
    ("How far away were the donors?", "The charity raised money from 30 to 40 miles away.", "30 to 40 miles"),
    ("How far apart are the stations?", "The company raised funds from 10 to 20 miles apart.", "10 to 20 miles"),
    ("How high was the wall raised?", "The builders raised the wall from 2 to 3 metres.", "3 metres"),
    ("What is the speed limit now?", "The council raised the speed limit from 55 to 65 mph north of the city.", "65"),
    ("What is the age limit now?", "The state raised the age limit from 16 to 18 years under the new law.", "18"),
])
def test_raised_to_a_length_saying_where_is_a_range(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "The 2019 percentage" was read as a number said in percentage, so the
# bare-year filter missed it: a year before "percentage" is a year.
@pytest.mark.parametrize("question, sentence, span", [
    ("What was the vote share in 2019?", "The 2019 percentage was 40%.", "40%"),
    ("What was growth in 2001?", "Growth in 2001 percentage terms was 5%.", "5%"),
    ("How big was the increase?", "The 25 percentage increase was the largest since 1990.", "25 percentage"),
])
def test_a_year_before_percentage_is_a_year(question, sentence, span):
    assert short_span("number", question, sentence) == span


# "Sales grew despite visitors from 5 to 10 countries" was read as a change
# of "despite visitors": a conjunction or particle opens no object of a verb
# of change.
@pytest.mark.parametrize("question, sentence, span", [
    ("How many countries did buyers come from?", "Sales grew because buyers from 5 to 10 countries came.", "10"),
    ("How many countries did visitors come from?", "Sales dropped despite visitors from 10 to 5 countries.", "5"),
    ("How old was she when she grew up in Ohio?", "She grew up from 5 to 10 in Ohio.", "5 to 10"),
    ("How many seats are there?", "The council increased the number of seats from 50 to 60.", "60"),
])
def test_a_conjunction_or_particle_is_no_object_of_a_verb_of_change(question, sentence, span):
    assert short_span("number", question, sentence) == span



def test_a_measure_question_whose_best_sentence_states_none_takes_its_articles_next_that_does(readers):
    # "How long can a blue whale grow?" read "The blue whale's long and slender
    # body …" (its "long" matched), which states no length: the article's
    # sentence with the length is the answer, not the sentence that cannot be.
    plain, shaped = readers
    glorp = [Passage("glorp", "The glorp's long and slender body can grow in many shades of blue. "
                              "Reaching a maximum length of 30 m, it is the largest animal known.", 3.0, "Glorp")]
    question = "How long can a glorp grow?"
    assert plain.read(question, glorp).text.startswith("The glorp's long and slender body")
    answer = shaped.read(question, glorp)
    assert (answer.text, answer.evidence, answer.source_id) == (
        "30 m", "Reaching a maximum length of 30 m, it is the largest animal known.", "glorp")
    # Another article's measure is about another subject: the sentence stays.
    blorp = [Passage("glorp", "The glorp's long and slender body can grow in many shades of blue.", 3.0, "Glorp"),
             Passage("blorp", "The blorp is a whale. Reaching a maximum length of 30 m, it is the largest animal known.",
                     2.9, "Blorp")]
    assert plain.read(question, blorp).source_id == "glorp"
    assert shaped.read(question, blorp).text == plain.read(question, blorp).text
    # The sentence the reader joined to the best one is read before a
    # better-scored one it left out.
    bridge = [Passage("bridge", "The Glorp Bridge is long, and it has been measured in many ways. When discussing the "
                                "Glorp Bridge, one almost always means the 1,280 m long main span between the towers. "
                                "However, the approach viaducts make the whole Glorp Bridge 2,700 m long.", 3.0,
                      "Glorp Bridge")]
    assert plain.read("How long is the Glorp Bridge?", bridge).text.endswith("main span between the towers.")
    assert shaped.read("How long is the Glorp Bridge?", bridge).text == "1,280 m"
    # An age elsewhere in the article that the description's lifespan does
    # not allow is someone else's: the description answers.
    poet = [Passage("glorp", "Lord Glorp was an English poet who died young and famous. "
                             "His only daughter, who also wrote, died aged 40.", 3.0, "Lord Glorp",
                    description="English poet (1788–1824)")]
    assert shaped.read("How old was Lord Glorp when he died?", poet).text == "35 or 36 (1788–1824)"


def test_a_count_or_a_date_whose_best_sentence_holds_none_is_not_taken_from_another_sentence(readers):
    # A bare count or date from a sentence ranked below was as often about
    # something else ("60" votes to end a filibuster for "how many votes to
    # confirm"): the sentences the reader chose stay the answer.
    plain, shaped = readers
    sonnets = [Passage("sonnets", "Lord Glorp wrote sonnets on a variety of themes. When discussing Glorp's sonnets, "
                                  "it is almost always a reference to the sonnets that were first published all "
                                  "together in a quarto. However, there are six additional sonnets that Glorp wrote and "
                                  "included in his plays.", 3.0, "Glorp's sonnets")]
    question = "How many sonnets did Lord Glorp write?"
    assert plain.read(question, sonnets).text.startswith("Lord Glorp wrote sonnets on a variety of themes.")
    assert shaped.read(question, sonnets).text == plain.read(question, sonnets).text


def test_a_measure_of_a_part_is_not_taken_from_a_sentence_about_the_whole(readers):
    # "How long is the Nile delta?" read "The Nile is about 6,650 km long":
    # the river's length given as its delta's. The other sentence is read
    # only if it names what is measured (its words not in the title).
    plain, shaped = readers
    cases = [
        ("How long is the Glorp delta?",
         [Passage("glorp", "The Glorp delta is a long fan of fertile land where the river meets the sea. "
                           "The Glorp is about 6,650 km long and flows through eleven countries.", 3.0, "Glorp")]),
        ("How tall was Lord Glorp's hat?",
         [Passage("lord", "Glorp's stovepipe hat was tall and became his trademark. Glorp was 1.93 m tall.", 3.0,
                  "Lord Glorp")]),
        # An upload's chunks share its file name: another chunk's cable is no warranty.
        ("How long is the warranty?",
         [Passage("doc_p0", "The warranty is long and covers most parts of the machine.", 0.0, "manual.txt"),
          Passage("doc_p1", "The power cable is 2 m long.", 0.0, "manual.txt")]),
    ]
    for question, passages in cases:
        assert shaped.read(question, passages).text == plain.read(question, passages).text, question
    # What is measured is the title's subject (up to a preposition, less the
    # verb and its particle): the article's measure is its own.
    moon = [Passage("moon", "The Glorp moon is Earth's only natural satellite, far from any other body. "
                            "It orbits at an average distance of 384,400 km.", 3.0, "Glorp moon")]
    assert shaped.read("How far is the Glorp moon from Earth?", moon).text == "384,400 km"
    glorps = [Passage("glorps", "Glorps died out long ago, after dominating the land for a very long time. "
                                "The extinction event happened 66 million years ago.", 3.0, "Glorp")]
    assert shaped.read("How long ago did the glorps die out?", glorps).text == "66 million years"


# ------------------------------------------------- who: a person, not a description

COMEDY = Passage("Divine Comedy", "The Divine Comedy is an Italian narrative poem by Dante Alighieri, begun c. 1308 and "
                 "completed c. 1321. It helped establish the Tuscan language, in which it is written, as the "
                 "standardized Italian language.", 3.0, "Divine Comedy")


def test_who_is_not_answered_with_a_peoples_word_or_a_word_that_describes_a_noun():
    # "Who wrote the Divine Comedy?" was answered "Italian", from "… in which
    # it is written, as the standardized Italian language" ("written" matched).
    tuscan = split_sentences(COMEDY.text)[1]
    assert short_span("name", "Who wrote the Divine Comedy?", tuscan, "Divine Comedy") is None
    # A capitalised word between an article and a noun says what it is ("the
    # Romantic poet"); the name after it is who.
    assert short_span("name", "Who was Mary Shelley's husband?", "She also edited the works of her husband, the "
                      "Romantic poet and philosopher Percy Bysshe Shelley.", "Mary Shelley") == "Percy Bysshe Shelley"
    # Another word there names who; so does one with such an ending before a plural.
    assert short_span("name", "Who flew the first powered airplane?", "The first powered airplane was flown by the "
                      "Wright brothers in 1903.") == "Wright"
    assert short_span("name", "Who founded the Glorp company?", "The Glorp company was founded by the Morgan brothers "
                      "in 1903.") == "Morgan"


def test_who_made_a_work_is_read_from_its_leads_by_when_the_best_sentence_names_no_one(readers):
    _, shaped = readers
    answer = shaped.read("Who wrote the Divine Comedy?", [COMEDY])
    assert (answer.text, answer.evidence) == ("Dante Alighieri", split_sentences(COMEDY.text)[0])
    rite = Passage("The Rite of Spring", "The Rite of Spring is a ballet and orchestral concert work by the Russian "
                   "composer Igor Stravinsky. It was written for the 1913 Paris season of the Ballets Russes company.",
                   3.0, "The Rite of Spring")
    assert shaped.read("Who composed The Rite of Spring?", [rite]).text == "Igor Stravinsky"
    # Only the work the question names: another article's "by" is about another work.
    # (Its text names the Comedy: an article that never does is "not found" from.)
    other = Passage("Inferno", "Inferno is the first part of a poem by Dante Alighieri. It helped establish the Tuscan "
                    "language, in which the Comedy is written.", 3.0, "Inferno")
    assert shaped.read("Who wrote the Divine Comedy?", [other]).text == split_sentences(other.text)[1]
    # Only a question for who did it: "Who was …?" asks for no maker.
    assert short_span("name", "Who was the Divine Comedy's hero?", split_sentences(COMEDY.text)[0],
                      "Divine Comedy") is None


def _lead(title: str, text: str) -> Passage:
    return Passage(title, text, 3.0, title)


def test_a_works_author_answers_only_a_question_for_who_made_it(readers):
    # "Who translated/illustrated the Divine Comedy?" got "Dante Alighieri"
    # from the lead's "a poem by Dante Alighieri": the lead's "by" names the
    # author, not who did anything else to the work.
    _, shaped = readers
    for question, second in [
        ("Who translated the Divine Comedy?", "It has been translated into many languages."),
        ("Who illustrated the Divine Comedy?", "Its best known illustrations are engravings."),
    ]:
        comedy = _lead("Divine Comedy", "The Divine Comedy is an Italian narrative poem by Dante Alighieri, begun c. "
                       f"1308. {second}")
        assert shaped.read(question, [comedy]).text == second, question
    for question, second in [
        ("Who directed Frankenstein?", "It was directed for the screen many times."),
        ("Who published Frankenstein?", "It was first published anonymously in London."),
    ]:
        frankenstein = _lead("Frankenstein", f"Frankenstein is an 1818 novel by Mary Shelley. {second}")
        assert shaped.read(question, [frankenstein]).text == second, question
    # A verb of making asks for the maker only of a kind it makes: a poem is
    # written, so its author did not compose it.
    ode = _lead("Ode to Joy", "Ode to Joy is a poem by Friedrich Schiller, best known for its musical setting by "
                "Ludwig van Beethoven. It was composed in 1785.")
    assert shaped.read("Who composed Ode to Joy?", [ode]).text == "It was composed in 1785."
    # A maker past "based on" made what the work comes from.
    later = "It was created for the summer of 1975."
    jaws = _lead("Jaws", f"Jaws is a 1975 film based on the novel by Peter Benchley. {later}")
    assert shaped.read("Who created Jaws?", [jaws]).text == later
    jaws = _lead("Jaws", f"Jaws is a 1975 film by Steven Spielberg. {later}")
    assert shaped.read("Who created Jaws?", [jaws]).text == "Steven Spielberg"


def test_a_people_that_did_the_thing_answers_who(readers):
    # "won by Celtic, who beat Inter Milan" gave "Inter Milan": a people's
    # word is a description only before a noun it describes, and a group
    # that acts ("team", "family") is who did it.
    _, shaped = readers
    for question, text, expected in [
        ("Who won the 1967 European Cup?", "The 1967 European Cup final was won by Celtic, who beat Inter Milan 2-1 in "
         "Lisbon.", "Celtic"),
        ("Who won the 1967 European Cup?", "The 1967 European Cup was won by the Celtic team, which beat Inter Milan "
         "2-1 in Lisbon.", "Celtic"),
        ("Who won the 1998 World Cup?", "The 1998 World Cup was won by the French team, which beat Brazil 3-0.",
         "French"),
        ("Who colonized Brazil?", "Brazil is the largest country in South America. Brazil was colonized by the "
         "Portuguese in the 16th century.", "Portuguese"),
        ("Who ruled India until 1947?", "India was ruled by the British until 1947. The period is called the British "
         "Raj.", "British"),
        ("Who attacked Pearl Harbor?", "Pearl Harbor was attacked by the Japanese on December 7, 1941. The attack led "
         "the United States into the war.", "Japanese"),
        ("Who founded the bank?", "The bank was founded by the Morgan family in 1871 in New York.", "Morgan"),
    ]:
        assert shaped.read(question, [_lead("Topic", text)]).text == expected, text


def test_a_kin_words_description_holds_no_function_word():
    # "Her father was a close friend of the composer Franz Liszt" gave
    # "Franz Liszt": past "of", "at" or "who" the name is someone else's.
    for question, sentence in [
        ("Who was Clara Wieck's father?", "Her father was a close friend of the composer Franz Liszt."),
        ("Who was Marie Curie's father?", "Her father was a teacher of mathematics at the University of Warsaw."),
        ("Who was Arthur Wellesley's father?", "His father was a man who worked for the Duke of Leinster."),
        ("Who was Emily Dickinson's father?", "Her father was a lawyer and a trustee of Amherst College."),
        ("Who was Jane Austen's father?", "Her father was the rector of the parishes of Steventon and Deane, George "
         "Austen."),
    ]:
        holder = question[len("Who was "):question.index("'")]
        assert short_span("name", question, sentence, holder) is None, sentence
    # Content words joined by "and" still describe.
    assert short_span("name", "Who was Ada Lovelace's mother?", "Her mother was the highly educated and strict Anne "
                      "Isabella Milbanke.", "Ada Lovelace") == "Anne Isabella Milbanke"


def test_an_owned_kin_word_is_read_past_a_long_description_and_a_possessive():
    # "her mother was the philosopher and women's rights advocate Mary
    # Wollstonecraft" gave the whole sentence; "her father Theon's
    # commentary" gave "Theon's".
    shelley = ("Her father was the political philosopher William Godwin and her mother was the philosopher and "
               "women's rights advocate Mary Wollstonecraft.")
    assert short_span("name", "Who was Mary Shelley's mother?", shelley, "Mary Shelley") == "Mary Wollstonecraft"
    assert short_span("name", "Who was Mary Shelley's father?", shelley, "Mary Shelley") == "William Godwin"
    assert short_span("name", "Who was Hypatia's father?", "Scholars believe she edited the Almagest, based on the "
                      "title of her father Theon's commentary.", "Hypatia") == "Theon"


def test_in_the_holders_own_article_another_full_name_is_another_person(readers):
    # "He is the eldest son of George H. W. Bush" in George W. Bush's article
    # gave the whole sentence for his father: the two names are one by
    # same_name, so the kin phrase was taken to name the holder himself.
    _, shaped = readers
    bush = Passage("George W. Bush", "George Walker Bush is an American former politician. He is the eldest son of "
                   "George H. W. Bush, the 41st president of the United States.", 0.7, "George W. Bush")
    assert shaped.read("Who was George W. Bush's father?", [bush]).text == "George H. W. Bush"
    # Outside the holder's own article the phrase still names the holder:
    # in the son's article the father's children are the son.
    assert kin_span("Who were George H. W. Bush's children?", split_sentences(bush.text)[1], "George W. Bush") == (
        "George W. Bush", set())


# A country is named without the noun ("Ostria"): a sentence that says
# "the country" or "the Black Country" names none, and counting the
# question's "country" in it ranked it over the city's lead that names
# its country ("Which country is Mombasa in?" got "It is the country's
# oldest … city"). A kind with a word after it ("country music") is
# another question, its noun counted.
@pytest.mark.parametrize("lead, other", [
    ("Tarrow is a coastal city in southeastern Ostria along the Lark Ocean.",
     "It is the country's oldest and second-largest city after Velmora, with about 1,200,000 people."),
    ("Tarrow is a city and metropolitan borough in the centre of the West Midlands region of England.",
     "Tarrow is the centre of the ceremonial Lark county, and borders the Black Country to its west."),
])
def test_which_country_is_not_read_in_the_word_country(readers, lead, other):
    _, shaped = readers
    passage = Passage("tarrow", f"{lead} {other}", 1.0, "Tarrow")
    # The lead is the evidence: the answer itself, or the country it names
    # ("England"; "Ostria" is on no list of countries).
    answer = shaped.read("Which country is Tarrow in?", [passage])
    assert answer.evidence.startswith(lead) and (answer.text.startswith(lead) or answer.text == "England")


# The same noun said of a country counts: "the most populous country",
# "than any other country" say the asked country itself ("Which country
# has the largest population?" got a sentence about tigers when the
# question's noun was never counted).
@pytest.mark.parametrize("question, title, answer, other", [
    ("Which country has the largest population?", "Population", "Ostria is the most populous country in the world, "
     "with 1.4 billion people.", "The largest population of tigers lives in Kestia."),
    ("Which country has the most islands?", "Islands", "Ostria has more islands than any other country, about 267,570.",
     "The island with the most people is Velmora."),
])
def test_which_country_counts_country_said_of_one(readers, question, title, answer, other):
    _, shaped = readers
    assert shaped.read(question, [Passage("p", f"{other} {answer}", 1.0, title)]).text.startswith(answer)


# A capital "I" right after a name word is the name's Roman numeral, not the
# pronoun every stop-word list drops: "World War I" was read from the World
# War II article, ranked first, which then held every word of the question.
@pytest.mark.parametrize("question, answer", [
    ("How many people died in World War I?", "15 to 22 million"),
    ("How many people died in World War II?", "60 to 75 million"),
])
def test_a_names_numeral_i_is_read_as_part_of_the_name(readers, question, answer):
    wars = [
        Passage("ww2", "World War II was the deadliest conflict in history, causing the deaths of 60 to 75 million people.",
                3.0, "World War II"),
        Passage("ww1", "One of the deadliest conflicts in history, World War I resulted in an estimated 15 to 22 million "
                "deaths.", 2.9, "World War I"),
    ]
    assert readers[1].read(question, wars).text == answer


def test_the_pronoun_i_is_no_term_of_a_sentence():
    # Only the numeral after a name word is a term: the pronoun matches nothing of "World War I".
    assert term_overlap("When did World War I begin?", "World War II", "As I said, the war began in 1939.") == pytest.approx(0.75)
    assert term_overlap("When did World War I begin?", "World War I", "The war began in 1914.") == pytest.approx(1.0)
    # Nor the pronoun after a name, before its verb.
    assert term_overlap("When did World War I begin?", "World War II",
                        "As Churchill I remember wrote, the war began in 1939.") == pytest.approx(0.75)

# An age asked of a person comes from a sentence about that person, never
# from one whose subject is their kin or another name ("Byron → daughter's
# 36"): such a sentence is shown whole, as a sentence with no span is. A year
# is never someone's age at a time. Without a description there is no
# lifespan to check the age against.
@pytest.mark.parametrize("question, text, title, answer", [
    ("How old was Lord Byron when he died?",
     "Byron died of a fever at Missolonghi in Greece. His daughter Ada died aged 36 of cancer.", "Lord Byron", None),
    ("How old was he when he died?", "His daughter Ada died aged 36 of cancer.", "Lord Byron", None),
    ("How old was Lord Byron when he died?", "His only daughter died aged 36.", "Lord Byron", None),
    ("How old was Einstein when he died?", "His son Hans Albert died aged 68.", "Albert Einstein", None),
    ("How old was Mozart when he died?", "Mozart's father Leopold died aged 67 in 1787.", "Wolfgang Amadeus Mozart", None),
    ("How old was Anne Frank when she died?",
     "Anne Frank died in Bergen-Belsen in early 1945. Her sister Margot was 19 years old when she died there.", "Anne Frank",
     None),
    # The kin word of "when her husband died" asks of no kin, Victoria is asked; but the husband's death
    # is the event asked about, so his sentence is not another's (main's answer kept).
    ("How old was Queen Victoria when her husband died?", "Her husband Albert died aged 42.", "Queen Victoria", "42"),
    # The person's own age, by name, pronoun or lead-in, with other names after the subject.
    ("How old was Lord Byron when he died?", "Byron died at Missolonghi, Greece, aged 36.", "Lord Byron", "36"),
    ("How old was Lord Byron when he died?", "He died aged 36, a hero of the Greek cause.", "Lord Byron", "36"),
    ("How old was Mozart when he died?", "In December 1791, Mozart died in Vienna aged 35.", "Wolfgang Amadeus Mozart", "35"),
    ("How old was Lord Byron when he died?", "In Missolonghi, he died aged 36.", "Lord Byron", "36"),
    ("How old was Anne Frank when she died?", "Anne Frank died in Bergen-Belsen in early 1945, at the age of 15.",
     "Anne Frank", "15"),
    # A sentence's capitalised first word is no other person, and a name
    # sharing no word with the one asked may be theirs (a pen or birth name).
    ("How old was Lord Byron when he died?", "According to his doctor, Byron died aged 36.", "Lord Byron", "36"),
    ("How old was Lord Byron when he died?", "Weakened by fever, he died aged 36.", "Lord Byron", "36"),
    ("How old was Lord Byron when he died?", "Historians agree that he died aged 36.", "Lord Byron", "36"),
    ("How old was she when she died?", "Weakened by illness, the queen died aged 69.", "Elizabeth I", "69"),
    ("How old was Lord Byron when he died?", "Yesterday I read that Byron died aged 36.", "Lord Byron", "36"),
    ("How old was Mark Twain when he died?", "Samuel Clemens died of a heart attack in 1910 aged 74.", "Mark Twain", "74"),
    ("How old was George Orwell when he died?", "Eric Blair died of tuberculosis in London aged 46.", "George Orwell",
     "46"),
    # Asked of the kin, the kin's sentence answers.
    ("How old was Lord Byron's daughter when she died?", "His daughter Ada died aged 36 of cancer.", "Lord Byron", "36"),
    # A thing's age is not a person's: a name in its subject is no other person.
    ("How old is the oldest tree?", "Methuselah, the oldest known tree, is about 4,850 years old.", "Bristlecone pine",
     "about 4,850 years"),
])
def test_an_age_is_read_from_a_sentence_about_the_person_asked(readers, question, text, title, answer):
    read = readers[1].read(question, [Passage("p", text, 3.0, title)])
    assert read.text == (answer or read.evidence)


# "What is the capital of X?" asks for a name: the capital a read sentence
# says X has, that sentence the evidence ("Ottawa is the capital city of
# Canada." answered "What is the capital of Canada?" whole).
@pytest.mark.parametrize("question", [
    "What is the capital of Ostria?", "What's Ostria's capital?", "Which city is the capital of Ostria?",
    "What is the capital city of Ostria?",
])
@pytest.mark.parametrize("title, sentence", [
    ("Tarrow", "Tarrow is the capital city of Ostria."),
    ("Ostria", "Ostria is a federal republic of nine states, where its capital, Tarrow, is located."),
    ("Ostria", "Ostria's capital and largest city is Tarrow, while Velmora is its main port."),
    ("Velmora", "Velmora is a port city near Tarrow, the capital of Ostria."),
    ("Ostria", "The capital and largest metropolitan region is Tarrow; other cities are Velmora and Kest."),
    ("Ostria", "Its capital and most populous city, Tarrow, is a seat of the Lark Union."),
    ("Ostria", "Its capital city of Tarrow is in the centre, while its largest city is the port of Velmora."),
    ("Tarrow", "Tarrow is the capital city of the Lark state of Ostria."),
])
def test_a_capital_asked_is_answered_by_its_name(readers, question, title, sentence):
    _, shaped = readers
    passage = Passage("p", f"{sentence} {title} is known for its wool and its mild winters.", 1.0, title)
    answer = shaped.read(question, [passage])
    assert (answer.text, answer.evidence) == ("Tarrow", sentence)


# A past capital, one of several, or a capital "of the country" in another
# place's article is no name to give: the sentence stays the answer.
@pytest.mark.parametrize("title, sentence", [
    ("Tarrow", "Tarrow was the capital city of Ostria until 1990."),
    ("Tarrow", "Tarrow is the legislative capital of Ostria."),
    ("Tarrow", "Tarrow is the capital city of Ostria until the new city opens in 2031."),
    # "The capital" names X's only in X's own article. (The article names
    # Ostria: one that never does is not about it, and is not found.)
    ("Velmora", "The capital and largest city is Tarrow, far from Velmora in Ostria."),
    # After "state capital" a bare name may be the capital itself, not
    # another place: no refusal.
    ("Ostria", "Its cities include Velmora, Kest and the state capital of Tarrow."),
])
def test_a_capital_not_said_to_be_xs_own_stays_a_sentence(readers, title, sentence):
    _, shaped = readers
    answer = shaped.read("What is the capital of Ostria?", [Passage("p", sentence, 1.0, title)])
    assert answer.text == sentence


# Another place's capital is not X's: "Zurich is … the capital of the canton
# of Zurich" answered "What is the capital of Switzerland?", Victoria's
# Melbourne Australia's. The collection does not say X's: not found.
@pytest.mark.parametrize("sentence", [
    "Tarrow is the largest city in Ostria and the capital of the canton of Velm.",
    "Tarrow is the capital and most populous city of the Ostrian state of Velm and the second city in Ostria.",
    "Tarrow is the largest city and port of Ostria and capital of the Velm Region.",
])
def test_another_places_capital_is_not_xs(readers, sentence):
    _, shaped = readers
    answer = shaped.read("What is the capital of Ostria?", [Passage("p", sentence, 1.0, "Tarrow")])
    assert not answer.found and answer.text == NOT_FOUND


# A capital said of another name in X's own article is X's own city ("in
# and around the capital city of Palermo" in Sicily's, "in the capital city
# of Suva" in Fiji's): no refusal, the sentence stays. So is a capital of
# X said with a modifier, "in" X or another name of X ("the historical
# capital of Bohemia", "in the Kurdistan Region of Iraq", "the United Arab
# Emirates (UAE)", "Fars province, … known by the exonym Persia proper").
@pytest.mark.parametrize("question, title, sentence", [
    ("What is the capital of Ostria?", "Ostria", "With over 4.7 million inhabitants, including 1.2 million in and around "
     "the capital city of Tarrow, it is the largest island in the Lark Sea."),
    ("Which city is the capital of Ostria?", "Ostria", "About three-quarters of Ostrians live on the coasts, either in "
     "the capital city of Tarrow, or in smaller urban centres such as Velm."),
    ("What is the capital of Ostria?", "Tarrow", "Tarrow is the capital and largest city of the Velm Republic and the "
     "historical capital of Ostria."),
    ("What is the capital of the Ostria Region?", "Tarrow", "Tarrow is the capital and most populated city in the Ostria "
     "Region of Velm and the capital of the Tarrow Governorate."),
    ("What is the capital of Northern Ostria?", "Tarrow", "Tarrow is the capital city of Tarrow State, and the former "
     "political capital of Northern Ostria."),
    ("What is the capital of the ULE?", "Tarrow", "Tarrow is the capital city of the United Lark Emirates (ULE), and of "
     "the Emirate of Tarrow."),
    ("What is the capital of Ostria?", "Tarrow", "Tarrow is the fifth-most-populous city of Velm and the capital of Kest "
     "province, which is historically known by the exonym Ostria proper."),
])
def test_a_capital_of_x_by_another_name_is_not_refused(readers, question, title, sentence):
    _, shaped = readers
    passage = Passage("p", f"{sentence} {title} is known for its wool and its mild winters.", 1.0, title)
    answer = shaped.read(question, [passage])
    assert answer.found and answer.text.startswith(sentence)


# "the U.S.?" keeps its dot: "of the U.S. state of Georgia" is a state's
# capital, not the country's. A name never starts with a lone initial left
# by a sentence not split ("70°W. Iqaluit"), nor is a longer name ending in
# X X's ("New South Wales's capital" for Wales).
@pytest.mark.parametrize("question, sentence, answer", [
    ("What is the capital of the O.S.?", "Tarrow is the capital and most populous city of the O.S. state of Velm.", None),
    ("What is the capital of Ostria?", "The bay lies at 68°N 70°W. Tarrow, the capital of Ostria, is a port.", "Tarrow"),
    ("What is the capital of Ostria?", "New Ostria's capital, Tarrow, is a port on Lark Bay.", None),
])
def test_a_capital_name_is_xs_own_and_whole(readers, question, sentence, answer):
    _, shaped = readers
    read = shaped.read(question, [Passage("p", sentence, 1.0, "Velm")])
    assert read.text == answer if answer else read.text != "Tarrow"


# ------------------------------------------------- who discovered X: the discoverer's own article

GLORIUM = Passage("Glorium", "Glorium is a chemical element with the symbol Gl. Together with brindium, glorium was "
                  "one of the first rare elements to be discovered.", 3.0, "Glorium")


def _person(title: str, text: str, score: float = 2.0) -> Passage:
    return Passage(title, text, score, title, description="Ostrian chemist (1850–1920)")


def test_who_discovered_x_is_the_person_whose_own_article_says_so(readers):
    # "Who discovered radium?" was answered "Together" (Actinium's "Together
    # with polonium, radium, and radon, …") though Marie Curie's article
    # gives her prize "[for] the discovery of the elements radium and polonium".
    _, shaped = readers
    said = 'She won the 1911 prize "[for] the discovery of the elements glorium and brindium".'
    mara = _person("Mara Vell", f"Mara Vell was an Ostrian chemist. {said}")
    answer = shaped.read("Who discovered glorium?", [GLORIUM, mara])
    assert (answer.text, answer.evidence, answer.source_id) == ("Mara Vell", said, "Mara Vell")
    # The verb, its subject the article's own by name after a lead-in.
    kelm = _person("Otto Kelm (chemist)", "Otto Kelm was an Ostrian chemist. In 1898, Kelm discovered glorium in Vienna.")
    assert shaped.read("Who discovered glorium?", [GLORIUM, kelm]).text == "Otto Kelm"


@pytest.mark.parametrize("text", [
    # A part or kind of X is no discovery of X itself.
    "Otto Kelm was an Ostrian chemist. He discovered isotopes of glorium.",
    "Otto Kelm was an Ostrian chemist. He discovered glorium isotopes in 1901.",
    # Found together: none of them alone.
    "Otto Kelm was an Ostrian chemist. Kelm, Vell and Dorn discovered glorium.",
    "Otto Kelm was an Ostrian chemist. He and his student discovered glorium.",
    # Another's discovery told in his article.
    "Otto Kelm was an Ostrian chemist. Kelm praised Vell, who discovered glorium.",
    "Otto Kelm was an Ostrian chemist. Einstein praised the discovery of glorium.",
])
def test_who_discovered_x_is_not_someone_whose_article_tells_another_finding(readers, text):
    _, shaped = readers
    assert shaped.read("Who discovered glorium?", [GLORIUM, _person("Otto Kelm", text)]).text != "Otto Kelm"


def test_who_discovered_x_needs_a_persons_article(readers):
    _, shaped = readers
    # An article with no lifespan in its description is no person's.
    firm = Passage("Kelm Works", "Kelm Works is an Ostrian company. Kelm Works discovered glorium in 1898.", 2.0, "Kelm Works",
                   description="Ostrian company")
    assert shaped.read("Who discovered glorium?", [GLORIUM, firm]).text != "Kelm Works"


def test_who_discovered_x_is_not_found_where_nothing_read_says_a_discovery(readers):
    # "Who discovered gravity?" was answered by a sentence of the law's
    # publication ("Who discovered DNA?" by one of a prize for the polymerase
    # chain reaction): no sentence read names a discoverer.
    _, shaped = readers
    law = Passage("Law", "The law describes glorium as a force between bodies. Its publication marked the "
                  "unification of the phenomena of glorium on Earth with astronomical behaviors.", 3.0, "Law",
                  description="Law of physics")
    assert shaped.read("Who discovered glorium?", [law]).text == NOT_FOUND
    # One that names who did what it tells may still answer.
    said = ("This principle was formulated by Ostrian physicist Otto Kelm in 1925 for electrons, and later extended "
            "to all fermions.")
    named = Passage("Glorium principle", f"The glorium principle says no two particles share one state. {said}", 3.0,
                    "Glorium principle", description="Principle of physics")
    assert shaped.read("Who discovered the glorium principle?", [named]).evidence == said
    # A sentence that says it was discovered still answers.
    found = Passage("Glorium", "Glorium is a chemical element. It was discovered in 1898 in a mine near Vienna.", 3.0,
                    "Glorium", description="Chemical element")
    assert shaped.read("Who discovered glorium?", [found]).found


def test_an_ordinal_is_no_count():
    # "How many World Cups has Spain won?" was answered "23" from "… who won
    # their second title at the 23rd edition of the competition, the 2026
    # World Cup …".
    won = ("The reigning champion is Spain, who won their second title at the 23rd edition of the competition, "
           "the 2026 World Cup, by defeating the holders, Argentina.")
    assert short_span("number", "How many World Cups has Spain won?", won, "FIFA World Cup") is None
    # The count beside the thing counted stays; in a sentence that ranks,
    # only that one ("popes in the 11th century … 50 years of conflict").
    assert short_span("number", "How many titles has Spain won?", "Spain has won 2 titles, the 2nd in 2026.",
                      "FIFA World Cup") == "2"
    assert short_span("number", "How many popes were in the Investiture Controversy?", "A series of popes in the 11th "
                      "and 12th centuries undercut the Emperor, and the controversy led to nearly 50 years of conflict.",
                      "Investiture Controversy") is None
    # Nor does a rank stand in for the count beside the thing counted.
    assert short_span("number", "How many islands surround Tasmania?", "The state encompasses the main island of "
                      "Tasmania, the 26th-largest island in the world, and the surrounding 1000 islands.",
                      "Tasmania") == "1000"
    # A figure said bare in a sentence that ranks stays the count.
    assert short_span("number", "How many people live in Detroit?", "It is the 26th-most populous city in the United "
                      "States, with a population of 639,111 at the 2020 census.", "Detroit") == "639,111"
    # An ordinal before the very thing counted counts it up to then.
    assert short_span("number", "How many performances had Carmen had when Bizet died?",
                      "Bizet died after the 33rd performance.", "Carmen") == "33"
    # A rank asked is no count: the ordinal stays.
    assert short_span("number", "What place did Spain finish?", "Spain finished 2nd.", "FIFA World Cup") == "2"
    # A year said as a count stays ("1500 people").
    assert short_span("number", "How many people attended the final?", "About 1500 people attended the 1998 World Cup "
                      "final.", "FIFA World Cup") == "1500"


@pytest.mark.parametrize("question, passage", [
    # "Who discovered the Doppler effect?" lost main's "It is named after
    # the physicist Christian Doppler, who described the phenomenon in 1842."
    ("Who discovered the glorium effect?",
     Passage("Glorium effect", "The glorium effect is the change in the frequency of a wave for an observer moving "
             "relative to its source. It is named after the physicist Otto Kelm, who described the phenomenon in 1842.",
             3.0, "Glorium effect", description="Change in the frequency of a wave")),
    # Named after him, no other word of his.
    ("Who discovered the glorium comet?",
     Passage("Glorium comet", "The glorium comet is a comet seen from Earth every 76 years. It is named after the "
             "astronomer Otto Kelm.", 3.0, "Glorium comet", description="Periodic comet")),
    # "Who discovered genetics?": "Gregor Mendel, a Moravian Augustinian
    # friar …, was the first to study genetics scientifically."
    ("Who discovered glorics?",
     Passage("Glorics", "Glorics is the study of glories in living things. Otto Kelm, an Ostrian friar working in the "
             "19th century in Vienna, was the first to study glorics scientifically.", 3.0, "Glorics",
             description="Science of glories")),
])
def test_who_discovered_x_keeps_a_sentence_naming_the_doer_in_other_words(readers, question, passage):
    _, shaped = readers
    answer = shaped.read(question, [passage])
    assert answer.found and "Otto Kelm" in answer.text


def test_who_discovered_x_keeps_a_sentence_naming_a_retrieved_person(readers):
    # "Who discovered the smallpox vaccine?" lost main's sentence naming
    # Edward Jenner, whose own article (retrieved) says he created it.
    _, shaped = readers
    vaccine = Passage("Glorium vaccine", "The glorium vaccine is the first vaccine against a contagious disease. In 1796, "
                      "Ostrian physician Mara Vell showed at Vienna Hospital that an infection with the mild cowpox "
                      "virus gave immunity against glorium.", 3.0, "Glorium vaccine", description="Vaccine")
    mara = _person("Mara Vell", "Mara Vell was an Ostrian physician and scientist who gave the world its first vaccine.", 1.0)
    answer = shaped.read("Who discovered the glorium vaccine?", [vaccine, mara])
    assert answer.found and "Mara Vell" in answer.text
    # Her article not retrieved, no word says she did it: nothing answers
    # (the hospital's article names no person).
    hospital = Passage("Vienna Hospital", "Vienna Hospital is a hospital in Vienna.", 1.0, "Vienna Hospital",
                       description="Hospital in Ostria")
    assert shaped.read("Who discovered the glorium vaccine?", [vaccine, hospital]).text == NOT_FOUND
    # A word of doing beside no full name keeps nothing either.
    named = Passage("Glorium", "Glorium is a chemical element. Its name was proposed for the Ostrian word for glory.",
                    3.0, "Glorium", description="Chemical element")
    assert shaped.read("Who discovered glorium?", [named]).text == NOT_FOUND
    # Nor one said of the thing done to, beside a name of no one ("Who
    # discovered helium?" read "… formed during the Big Bang. Large amounts
    # of new helium are created by nuclear fusion of hydrogen in stars.").
    made = Passage("Glorium", "Glorium is a chemical element. Most glorium was formed during the Big Bang, and new "
                   "glorium is created by nuclear fusion in stars.", 3.0, "Glorium", description="Chemical element")
    assert shaped.read("Who discovered glorium?", [made]).text == NOT_FOUND


@pytest.mark.parametrize("question, sentence", [
    # "How many terms did Barack Obama serve as the 44th president?" was
    # answered "2009" once the ordinal "44" was refused.
    ("How many terms did Otto Kelm serve as the 44th president?",
     "Otto Kelm is an Ostrian former politician who served as the 44th president of Ostria from 2009 to 2017."),
    # "How many times was Grover Cleveland president?" read Theodore
    # Roosevelt's "26th president …, serving from 1901 to 1909": "1901".
    ("How many times was Otto Kelm president?", "Mara Vell was the 26th president of Ostria, serving from 1901 to 1909."),
    ("How many times was Otto Kelm president?", "Mara Vell was the 26th president of Ostria between 1901 and 1909."),
])
def test_a_count_is_no_year_of_a_span_of_time(question, sentence):
    assert short_span("number", question, sentence, "Ostria") is None
