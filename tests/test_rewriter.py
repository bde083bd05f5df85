"""Tests for the causal-LM rewriter: prompt/target building, the drift guard,
batched greedy decoding, the copy head, loading, and the batch CLI.

Models are a tiny random GPT-2 (tests/conftest.py) unless a test says
otherwise; the shipped adapter is exercised once, when it is present.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

import pytest
import torch

from assistant.kernel import ModelNotFoundError, Rewrite, same_name, same_name_word
from rewriting import (
    IGNORE_INDEX,
    TRAINED_ADAPTER,
    TRAINED_INPUT_TOKENS,
    CausalLMRewriter,
    CopyHead,
    Decoding,
    OriginalRewriter,
    PromptConfig,
    Recipe,
    RewriterConfig,
    chat_prompt,
    consensus,
    drift_reason,
    encode_example,
    inference_dtype,
    load_rewriter,
    lookup_draft,
    plain_prompt_ids,
    turns,
)

HISTORY = [
    "Who was Ada Lovelace?",
    "Ada Lovelace was an English mathematician and writer, chiefly known for her work on "
    "Charles Babbage's proposed mechanical general-purpose computer, the Analytical Engine.",
    "What did she write about?",
    "She wrote the first algorithm intended to be carried out by such a machine.",
]


# --- prompt and target building ---------------------------------------------


def test_turns_pairs_questions_with_answers_and_handles_missing_ones():
    assert turns(["Q1", "A1", "Q2", ""]) == [("Q1", "A1"), ("Q2", "")]
    assert turns(["Q1", "A1", "Q2"]) == [("Q1", "A1"), ("Q2", "")]
    assert turns([]) == []


def test_plain_prompt_shows_history_then_question(tiny_gpt2):
    _, tok = tiny_gpt2
    text = tok.decode(plain_prompt_ids(tok, "Who was her father?", HISTORY))
    assert text == (
        "Q: Who was Ada Lovelace?\n"
        "A: Ada Lovelace was an English mathematician and writer, chiefly known for her work on Charles Babbage's proposed mechanical\n"
        "Q: What did she write about?\n"
        "A: She wrote the first algorithm intended to be carried out by such a machine.\n"
        "Question: Who was her father?\nRewrite:"
    )


def _thirty_turns() -> list[str]:
    """A history far longer than any prompt budget, each turn recognisable."""
    history = []
    for i in range(30):
        history += [f"Question number {i} about topic {i}?", f"Answer {i}."]
    return history


def test_plain_prompt_keeps_newest_turns_within_budget(tiny_gpt2):
    _, tok = tiny_gpt2
    history = _thirty_turns()
    config = PromptConfig(max_input_tokens=60)
    ids = plain_prompt_ids(tok, "And the last one?", history, config)
    text = tok.decode(ids)
    assert len(ids) <= 60
    assert "Question number 29" in text and "Question number 0 " not in text
    assert text.endswith("Question: And the last one?\nRewrite:")
    # Answers only for the most recent answer_turns turns.
    assert "Answer 29." in text and "Answer 28." in text and "Answer 27." not in text


def test_an_inference_budget_keeps_more_earlier_turns_than_the_training_one(tiny_gpt2):
    model, tok = tiny_gpt2
    history = _thirty_turns()
    trained = PromptConfig(max_input_tokens=60)
    short = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", prompt=trained))
    long = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", prompt=trained, max_input_tokens=120))
    short_ids = short.prompt_ids("And the last one?", history)
    long_ids = long.prompt_ids("And the last one?", history)
    assert short_ids == plain_prompt_ids(tok, "And the last one?", history, trained)
    assert 60 < len(long_ids) <= 120
    oldest_short = min(i for i in range(30) if f"Question number {i} " in tok.decode(short_ids))
    text = tok.decode(long_ids)
    assert f"Question number {oldest_short - 1} " in text and text.endswith("Question: And the last one?\nRewrite:")
    assert "Answer 27." not in text  # the other budgets stay the training ones


def test_plain_prompt_skips_empty_answers(tiny_gpt2):
    _, tok = tiny_gpt2
    text = tok.decode(plain_prompt_ids(tok, "Why?", ["How do garage doors open?", "", "Is it loud?"]))
    assert text == "Q: How do garage doors open?\nQ: Is it loud?\nQuestion: Why?\nRewrite:"


def test_encode_example_puts_loss_on_rewrite_and_eos_only(tiny_gpt2):
    _, tok = tiny_gpt2
    ids, labels = encode_example(tok, "Who was her father?", HISTORY, "Who was Ada Lovelace's father?")
    assert len(ids) == len(labels)
    prompt = plain_prompt_ids(tok, "Who was her father?", HISTORY)
    assert ids[: len(prompt)] == prompt
    assert labels[: len(prompt)] == [IGNORE_INDEX] * len(prompt)
    target = labels[len(prompt) :]
    assert target[-1] == tok.eos_token_id
    assert tok.decode(target[:-1]) == " Who was Ada Lovelace's father?"


def test_chat_prompt_has_instruction_two_examples_and_question_last(tiny_gpt2):
    _, tok = tiny_gpt2
    tok.chat_template = (
        "{% for m in messages %}<{{ m['role'] }}>{{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}<assistant>{% endif %}"
    )
    text = chat_prompt(tok, "Who was her father?", HISTORY, max_history_turns=1)
    assert text.startswith("<system>Rewrite the user's last question")
    assert text.count("<assistant>") == 3  # two worked examples + the generation prompt
    assert "What did Ada Lovelace write about?" in text
    # Only the last turn of the real history, then the question, then the reply slot.
    assert "Q: Who was Ada Lovelace?\nA: Ada" not in text.split("Berlin?")[-1]
    assert text.endswith("Q: What did she write about?\nA: She wrote the first algorithm intended to be "
                         "carried out by such a machine.\n\nLast question: Who was her father?\n<assistant>")


# --- drift guard --------------------------------------------------------------


@pytest.mark.parametrize(
    "candidate, reason",
    [
        ("Who was Ada Lovelace's father?", ""),
        ("Who was her father?", ""),
        ("", "the rewrite was empty"),
        ("Who was Ada Lovelace?", "the rewrite repeats an earlier question"),
        ("What is the capital of France?", "the rewrite kept only 0% of the question's content words"),
        ("Who was " + "very " * 30 + "father?", "the rewrite was much longer than the question"),
    ],
)
def test_drift_reason(candidate, reason):
    assert drift_reason("Who was her father?", HISTORY, candidate) == reason


def test_drift_guard_tolerates_plurals_and_possessives():
    assert drift_reason("What about the countries?", HISTORY, "What about Byron's country?") == ""


_WRITERS = ["Who was Mark Twain?", "Mark Twain was an American writer.", "Who was Ernest Hemingway?",
            "Ernest Hemingway was an American novelist."]
_PAINTERS = ["Who was Leonardo da Vinci?", "Leonardo da Vinci was an Italian painter.", "Who was Michelangelo?",
             "Michelangelo was an Italian sculptor."]


@pytest.mark.parametrize("question, history, candidate, reason", [
    # The two damaged rewrites long_dev showed: a history name in the typed one's place, and glued onto it.
    ("Who called Twain the father of American literature?", _WRITERS,
     "Who called Ernest Hemingway the father of American literature?", "the rewrite lost the name Twain"),
    ("Where was Michelangelo born?", _PAINTERS, "Where was Michelangelo Leonardo da Vinci born?",
     "the rewrite put Leonardo da Vinci beside the name Michelangelo"),
    # The typed surname made the full name the history gives, possessive or not: kept.
    ("Who called Twain the father of American literature?", _WRITERS,
     "Who called Mark Twain the father of American literature?", ""),
    ("What was Twain's first book?", _WRITERS, "What was Mark Twain's first book?", ""),
    # A name completed where the history gives no other, and a pronoun resolved beside a typed name: kept.
    ("Did he meet Einstein?", _WRITERS, "Did Ernest Hemingway meet Albert Einstein?", ""),
    ("Was that the only Olympics he ran?", ["Who was Jesse Owens?", "An American sprinter."],
     "Was that the only Olympics Jesse Owens ran?", ""),
    # An owner put before a typed title, an acronym spelt out, a noun the history writes in lower case: kept.
    ("What was Time Waits for No Slave?", ["Who are Napalm Death?", "Napalm Death are a band."],
     "What was Napalm Death's Time Waits for No Slave?", ""),
    ("How much does an NP earn?", ["What does a nurse practitioner do?", "Cares for patients."],
     "How much does a nurse practitioner earn?", ""),
    ("What came after the Dinosaur era?", ["When did dinosaurs live?", "In the Mesozoic Era."],
     "What came after the Mesozoic Era?", ""),
    # A sentence's first word names no one the rewrite must keep.
    ("Tell me more. Where was Twain born?", _WRITERS, "Where was Mark Twain born?", ""),
    # One word of a history name put beside a new typed name may be its own: kept.
    ("When was the Mustang launched?", ["Who founded Ford?", "Henry Ford."], "When was the Ford Mustang launched?", ""),
    ("What did Michelle study?", ["Who is Barack Obama?", "The 44th president. He married Michelle Robinson in 1992."],
     "What did Michelle Obama study?", ""),
    ("What did Orville do?", ["Who was Wilbur Wright?", "An aviation pioneer."], "What did Orville Wright do?", ""),
    ("Did Marie win a second Nobel?", ["Who discovered radium?", "Marie and Pierre Curie."],
     "Did Marie Curie win a second Nobel Prize?", ""),
    ("When did Windows 95 come out?", ["What is Microsoft?", "A software company."],
     "When did Microsoft Windows 95 come out?", ""),
    # Another one's first name put before a surname the history gave with its own: refused.
    ("When did Chilton die?", ["Who played in Big Star?", "Four months after Alex Chilton's death, Andy Hummel died."],
     "When did Andy Chilton die?", "the rewrite put Andy beside the name Chilton"),
    # A sentence's end closes a history name: "Babbage" opening the next one is no surname of "Lord Byron".
    ("Did Ada work with Babbage?", ["Who was Ada Lovelace?", "Daughter of Lord Byron. Babbage called her the Enchantress.",
                                    "Who was her mother?", "Anne Isabella Milbanke; Charles Dickens was a friend."],
     "Did Ada Lovelace work with Charles Babbage?", ""),
    # An acronym's dots end no sentence: the name after one is typed, and no name runs across one.
    ("What did the U.S. Senate pass in 1964?", _WRITERS, "What did the U.S. Congress pass in 1964?",
     "the rewrite lost the name Senate"),
    ("Did he go on to become Surgeon General?", ["Who is Sanjay Gupta?", "A doctor named for the U.S. Surgeon General post."],
     "Did Sanjay Gupta go on to become U.S. Surgeon General?", ""),
    # A title or a kind of place the history wrote with another name is no one's name: kept.
    ("What did Lincoln say at Gettysburg?", ["Who was Ulysses Grant?", "President Grant was the 18th president."],
     "What did President Lincoln say at Gettysburg?", ""),
    ("How long is the Nile?", ["What is the Amazon River?", "A river in South America."], "How long is the Nile River?", ""),
    # The part of another history name that a particle leads (the beam long_dev picked after the glued one).
    ("Where was Michelangelo born?", _PAINTERS, "Where was Michelangelo da Vinci born?",
     "the rewrite put da Vinci beside the name Michelangelo"),
    # A whole single-word name of the history beside a typed word that is itself one: refused.
    ("Where was Michelangelo born?", ["Who was Leonardo?", "A painter.", "Who was Michelangelo?", "A sculptor."],
     "Where was Michelangelo Leonardo born?", "the rewrite put Leonardo beside the name Michelangelo"),
    # A title's or an initial's dot ends no sentence, and the title or initial is no typed name.
    ("What did Mrs. Thatcher do in 1982?", ["Who was Margaret Thatcher?", "UK PM."], "What did Margaret Thatcher do in 1982?", ""),
    ("When did Dr. Fauci join the NIH?", ["Who is Anthony Fauci?", "Anthony Fauci is an American immunologist."],
     "When did Dr. Anthony Fauci join the NIH?", ""),
    ("What happened in St. Louis in 1904?", ["Who was Scott Joplin?", "A composer."], "What happened in Saint Louis in 1904?", ""),
    ("What did J. K. Rowling write after that?", ["Who wrote Harry Potter?", "J. K. Rowling."],
     "What did Joanne Rowling write after Harry Potter?", ""),
    ("What did Mr. Darcy think of her?", ["Who is Elizabeth Bennet?", "A character."],
     "What did Mr. Bingley think of Elizabeth Bennet?", "the rewrite lost the name Darcy"),
    # An owner ending in s' is no part of the name after it; only the words after the last owner went in beside it.
    ("What were the songs on Beyond the Season?", ["Who is Garth Brooks?", "A country singer."],
     "What were the songs on Garth Brooks' Beyond the Season album?", ""),
    ("Where was Michelangelo born?", _PAINTERS, "Where was Michelangelo Italy's Leonardo da Vinci born?",
     "the rewrite put Leonardo da Vinci beside the name Michelangelo"),
    # A capital "I" after a name word is the name's numeral: "World War II" is another war, "Elizabeth II"
    # another queen. The pronoun "I" is no name.
    ("When did World War I end?", ["Who won World War II?", "The Allies."], "When did World War II end?",
     "the rewrite lost the name World War I"),
    ("Who was Elizabeth I's mother?", ["Who was Elizabeth II?", "The Queen."], "Who was Elizabeth II's mother?",
     "the rewrite lost the name Elizabeth I"),
    ("When did World War I end?", ["Who won World War II?", "The Allies."], "When did World War I end?", ""),
    ("Can I see Paris in a day?", ["What is Paris?", "A city."], "Can you see Paris in a day?", ""),
    # The pronoun after a name, before a verb it takes, is no numeral.
    ("Tell me about Rome I mean the city", [], "Tell me about the city of Rome", ""),
    ("Did you know Paris I think is nice?", [], "Do you think Paris is nice?", ""),
    ("What did Einstein I wonder say about God?", [], "What did Einstein say about God?", ""),
    ("Is Python I guess a good language?", [], "Is Python a good programming language?", ""),
    ("After Obama I think Trump won?", [], "Who won after Obama?", "the rewrite lost the name Trump"),
    ("When did Pope John Paul I die?", [], "When did Pope John Paul II die?", "the rewrite lost the name Pope John Paul I"),
    ("What did Napoleon I do?", [], "What did Napoleon III do?", "the rewrite lost the name Napoleon I"),
    ("Did Elizabeth I have children?", [], "Did Elizabeth II have children?", "the rewrite lost the name Elizabeth I"),
])
def test_the_drift_guard_keeps_a_name_the_user_typed(question, history, candidate, reason):
    assert drift_reason(question, history, candidate) == reason


_PLANES = ["Which is the biggest commercial plane?", "It carries the most passengers."]


@pytest.mark.parametrize("question, history, candidate, reason", [
    # The user audit's repro, and the training turns' wrong plane: a name from no text of a conversation naming no one.
    ("What about her?", ["only one"], "What about Grigory Potemkin?",
     "the rewrite put in the name Grigory Potemkin, which the conversation never gave"),
    ("What are its operational costs?", _PLANES, "What are the operational costs of the Boeing 777-300ER?",
     "the rewrite put in the name Boeing, which the conversation never gave"),
    ("What about her?", ["only one"], "What about Potemkin's wife?",
     "the rewrite put in the name Potemkin, which the conversation never gave"),
    # The name without its possessive mark, the "s" before it kept (the name's own).
    ("What about her?", ["only one"], "What was Garth Brooks' best year?",
     "the rewrite put in the name Garth Brooks, which the conversation never gave"),
    # A name an answer gives, or an earlier question, is the conversation's own.
    ("Who invented it?", ["What is a telephone?", "A device Alexander Graham Bell patented."],
     "Who invented the telephone Alexander Graham Bell patented?", ""),
    ("What did she write?", ["was ada lovelace a writer?", "she was.", "Who was Mary Shelley?", "a novelist."],
     "What did Mary Shelley write?", ""),
    # Its words written in the conversation in another case, with accents or a possessive, are no new name.
    ("When did it open?", ["when was the lake tahoe resort built?", "in the sixties."], "When did Lake Tahoe resort open?", ""),
    ("Where was he born?", ["what did dvořák compose?", "symphonies."], "Where was Dvorak born?", ""),
    ("What was his first book?", ["what are twain's novels?", "many."], "What was Twain's first book?", ""),
    # Where the conversation names someone, a name it never gave is left to the model (the human rewrites
    # put in such names: another person of the story, the full name of an acronym).
    ("How did the summit go?", ["Why did Nixon go to China?", "to meet mao."], "How did the summit between Nixon and Zhou Enlai go?", ""),
    # An acronym the model writes, and a rewrite that names no one, stay.
    ("What is the cause?", ["why are bees dying?", "a disorder."], "What is the cause of CCD?", ""),
    ("Why are so many dying?", ["What are some interesting facts about bees?", ""], "Why are so many bees dying?", ""),
])
def test_the_drift_guard_keeps_out_a_name_the_conversation_never_gave(question, history, candidate, reason):
    assert drift_reason(question, history, candidate) == reason


def test_a_rewrite_that_put_in_a_name_from_nowhere_is_looked_at_again_and_its_beams_guarded(tiny_gpt2):
    # Like a damaged typed name: the question as asked with the note, the
    # second look searched, and a beam with a name from nowhere not picked.
    _, tok = tiny_gpt2
    beams = (" What about Grigory Potemkin's wife?", " What about the actress?")
    rewriter = _second_look_rewriter(tok, "What about Grigory Potemkin?", scripted=beams, second_look=2)
    picked = rewriter.rewrite("What about her?", ["only one"])
    assert rewriter.searched == [(1, 2, False)]
    assert picked == Rewrite("What about the actress?")
    kept = _second_look_rewriter(tok, "What about Grigory Potemkin?", scripted=beams[:1], second_look=1).rewrite("What about her?", ["only one"])
    assert (kept.text, kept.alternatives) == ("What about her?", ())
    assert kept.note == "kept the original question: the rewrite put in the name Grigory Potemkin, which the conversation never gave"


def test_a_rewrite_that_damaged_a_typed_name_is_kept_as_asked_and_looked_at_again(tiny_gpt2):
    # The guard rejects the glued rewrite like any drifted one: the question
    # as asked, with the reason, and the turn gets the second look (whose
    # beams, about someone else here, are rejected too).
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "Where was Michelangelo Leonardo da Vinci born?")
    kept = rewriter.rewrite("Where was Michelangelo born?", _PAINTERS)
    assert rewriter.searched == [(1, 4, False)]
    assert kept.text == "Where was Michelangelo born?"
    assert kept.note == "kept the original question: the rewrite put Leonardo da Vinci beside the name Michelangelo"
    # Its full name from the history is the rewrite, with no search.
    full = _second_look_rewriter(tok, "Who called Mark Twain the father of American literature?")
    assert full.rewrite("Who called Twain the father of American literature?", _WRITERS) == Rewrite(
        "Who called Mark Twain the father of American literature?")
    assert full.searched == []


def test_a_candidate_that_damaged_a_typed_name_votes_but_is_not_picked(tiny_gpt2):
    # The greedy rewrite glued a name on, and a beam lost the typed one:
    # neither is picked nor an alternative, but both still vote, and their
    # votes pick the beam nearer to what they wrote ("born in Italy").
    _, tok = tiny_gpt2
    beams = (" Where was Michelangelo Buonarroti born?", " Where was Michelangelo Buonarroti born in Italy?",
             " Where was Leonardo da Vinci born in Italy?")
    rewriter = _second_look_rewriter(tok, "Where was Michelangelo Leonardo da Vinci born?", scripted=beams, second_look=3)
    picked = rewriter.rewrite("Where was Michelangelo born?", _PAINTERS)
    assert rewriter.searched == [(1, 3, False)]
    assert picked == Rewrite("Where was Michelangelo Buonarroti born in Italy?", alternatives=("Where was Michelangelo Buonarroti born?",))
    # Every candidate damaged it: the question as asked, with the note.
    damaged = _second_look_rewriter(tok, "Where was Michelangelo Leonardo da Vinci born?", scripted=beams[2:], second_look=1)
    kept = damaged.rewrite("Where was Michelangelo born?", _PAINTERS)
    assert (kept.text, kept.alternatives) == ("Where was Michelangelo born?", ())
    assert kept.note.startswith("kept the original question: the rewrite put Leonardo da Vinci beside")


def test_an_output_kept_out_for_not_ending_is_no_damaged_name(tiny_gpt2):
    # Cut off before the typed name, it lacks the name's words too, but the
    # guard kept the question for the cut: the question stays a candidate,
    # the pick on the tie with the one beam, with its note.
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "", scripted=(" Where was Michelangelo Buonarroti born?",), second_look=1)
    cut = tok.encode(" Where was", add_special_tokens=False)
    rewriter._generate = lambda prompts, opening=(), reads=None, stop=None: [Decoding(cut, False) for _ in prompts]
    kept = rewriter.rewrite("Where was Michelangelo born?", _PAINTERS)
    assert rewriter.searched == [(1, 1, False)]
    assert (kept.text, kept.note) == ("Where was Michelangelo born?", "kept the original question: the rewrite did not end")
    assert kept.alternatives == ("Where was Michelangelo Buonarroti born?",)


# --- the rewriter with a tiny model -------------------------------------------


class _NoCalls(torch.nn.Module):
    """A model that fails the test if it is ever run."""

    def forward(self, *args, **kwargs):
        raise AssertionError("the model must not be called")


def test_first_turn_is_returned_unchanged_without_calling_the_model(tiny_gpt2):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.rewrite("  Who was Ada   Lovelace? ", []) == Rewrite("Who was Ada Lovelace?")


@pytest.mark.parametrize("question", ["Who was Vasco da Gama?", "  What is the  Danube? ",
                                      "And Marco Polo, when did he travel through Asia?"])
def test_a_question_naming_a_new_subject_is_kept_as_asked_without_calling_the_model(tiny_gpt2, question):
    # In mid-conversation the trained model glued the earlier subject on
    # ("Who was Ernest Hemingway?" came back "Who was Ernest Hemingway, Mark
    # Twain?") or took the fronted name's "he" for the earlier subject.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.rewrite(question, HISTORY) == Rewrite(" ".join(question.split()))


def test_a_follow_up_after_a_new_subject_is_shown_the_turns_from_it_on(tiny_gpt2):
    # After "Who was Vasco da Gama?", "Which route did he discover?" was
    # rewritten for Columbus, whom the turns before it named twice.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    history = ["Who was Christopher Columbus?", "An explorer.", "How many voyages did Christopher Columbus make?", "Four.",
               "Who was Vasco da Gama?", "A Portuguese mariner."]
    assert tok.decode(rewriter.prompt_ids("Which route did he discover?", history)) == (
        "Q: Who was Vasco da Gama?\nA: A Portuguese mariner.\nQuestion: Which route did he discover?\nRewrite:"
    )
    # A conversation that opened with one keeps all its turns; a thing
    # defined on the way leaves "she" to the person before it.
    assert tok.decode(rewriter.prompt_ids("Which route did he discover?", history[:4])).startswith("Q: Who was Christopher Columbus?")
    singer = ["What other venture was Amy Winehouse doing?", "A museum show.", "What was the British Music Experience?", "A museum."]
    assert tok.decode(rewriter.prompt_ids("What did she do next?", singer)).startswith("Q: What other venture was Amy Winehouse doing?")


@pytest.mark.parametrize("question", ["a", "ok", "Hmm...", "?x", "thanks!", "?!"])
def test_a_follow_up_that_asks_nothing_is_kept_without_the_model(tiny_gpt2, question):
    # The trained model made "a" after the telephone turns into "a) who
    # invented the telephone?" (and, in the chat, into "what is the name of
    # the person who invented the telephone?"), searched in the user's name.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.rewrite(f" {question} ", HISTORY) == Rewrite(question, "kept the original question: it asks nothing to rewrite")
    assert rewriter.nbest_batch([(question, HISTORY)], beams=2) == [[]]


# Dotted abbreviations are no lone letters, "Nice" and "Ty" are names as
# often as thanks, and "No?" after a yes-or-no answer asks it back.
@pytest.mark.parametrize("question", ["Why?", "How so?", "And X?", "Yes, ideologically.", "5?", "谁？", "U.S.?", "L.A.?",
                                      "D.C.?", "p.m.?", "i.e.?", "No?", "Yes?", "Nice?", "Ty?"])
def test_a_short_follow_up_that_asks_something_still_goes_to_the_model(tiny_gpt2, question):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    with pytest.raises(AssertionError, match="must not be called"):
        rewriter.rewrite(question, HISTORY)


def test_emoji_are_dropped_from_the_models_rewrite(tiny_gpt2):
    # The model kept or moved the question's emoji ("🤖🤖 who
    # invented the telephone? 📞" -> "📞 who invented the
    # telephone?"), or brought in one of the history's for another.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    for question, output, expected in [
        ("\U0001F916 who invented the telephone? \U0001F4DE", "\U0001F4DE who invented the telephone?", "who invented the telephone?"),
        ("What did she write? \U0001F44D", "What did Ada Lovelace write? \U0001F44D\U0001F3FD", "What did Ada Lovelace write?"),
        ("Where was she born \u2764\ufe0f?", "Where was Ada \u2764\ufe0f Lovelace born \U0001F1EC\U0001F1E7?", "Where was Ada Lovelace born?"),
        ("What is C\u266f minor at 30 \u00b0C?", "What is C\u266f minor at 30 \u00b0C?", "What is C\u266f minor at 30 \u00b0C?"),  # music signs, units stay
    ]:
        ids = tok.encode(" " + output, add_special_tokens=False)
        assert rewriter.finish(question, HISTORY, ids, ended=True) == Rewrite(expected)


@pytest.mark.parametrize(
    "output, expected",
    [
        # A family joined by zero-width joiners, a flag of tags, skin tones: gone whole.
        ("Who is in the \U0001F468\u200d\U0001F469\u200d\U0001F467 photo?", "Who is in the photo?"),
        ("Is \U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F in the UK?", "Is in the UK?"),
        ("Is \u2764\ufe0f love \U0001F44D\U0001F3FD?", "Is love?"),
        # A keycap's digit stays, a keycapped year whole ("1 9 5 4" searched four numbers).
        ("What happened in 1\ufe0f\u20e39\ufe0f\u20e35\ufe0f\u20e34\ufe0f\u20e3?", "What happened in 1954?"),
        # A zero-width joiner inside an Indic word shapes its letters: it stays.
        ("What does \u0dc1\u0dca\u200d\u0dbb\u0dd3 mean in Sri Lanka's name?", "What does \u0dc1\u0dca\u200d\u0dbb\u0dd3 mean in Sri Lanka's name?"),
        ("Is \u0915\u094d\u200d\u0937 a letter?", "Is \u0915\u094d\u200d\u0937 a letter?"),
        # Text symbols of the emoji blocks, which the question asks about, stay.
        ("Which piece is \u265e in Bobby Fischer's notation?", "Which piece is \u265e in Bobby Fischer's notation?"),
        ("\u2642 or \u2640?", "\u2642 or \u2640?"),
        ("Is it a \u2605\u2605\u2605 hotel with \u2713 and \u2660 or \u2776?", "Is it a \u2605\u2605\u2605 hotel with \u2713 and \u2660 or \u2776?"),
        ("Is \u262f or \u2609 or \u2680 or \U0001F110 or \U0001F701 or \U0001F030 older?", "Is \u262f or \u2609 or \u2680 or \U0001F110 or \U0001F701 or \U0001F030 older?"),
        ("Is \u2764\ufe0e red \u2614 or \u2600\ufe0f?", "Is \u2764 red or?"),  # shown as text it stays; as emoji, not
    ],
)
def test_emoji_sequences_go_whole_and_text_symbols_stay(tiny_gpt2, output, expected):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    ids = tok.encode(" " + output, add_special_tokens=False)
    assert rewriter.finish(output, HISTORY, ids, ended=True) == Rewrite(expected)


@pytest.mark.parametrize(
    "typed, expected",
    [
        # Where an emoji stood before a comma, a dot, a colon or a closing bracket or quote: no space left before it.
        ("Who is he \U0001F914, really?", "Who is he, really?"),
        ("Who is he\U0001F914 , really?", "Who is he, really?"),
        ("Is it good \U0001F44D\U0001F3FD. Really?", "Is it good. Really?"),
        ("He won \U0001F3C6: gold?", "He won: gold?"),
        ("Is it (really \U0001F600)?", "Is it (really)?"),
        ("Is it \u201cyes \U0001F600\u201d?", "Is it \u201cyes\u201d?"),
        # Nor after an opening bracket or quote.
        ("(\U0001F600 really) who?", "(really) who?"),
        ('Is "\U0001F600 great" a phrase?', 'Is "great" a phrase?'),
        # Between words one space, and the user's own spacing and quotes as typed.
        ("Who \U0001F914  \U0001F914 is he?", "Who is he?"),
        ('He said "hi" \U0001F600 then left?', 'He said "hi" then left?'),
        ("Rock \U0001F3B8 'n' roll, or \U0001F600 .NET?", "Rock 'n' roll, or .NET?"),
        ("Who is she ? \U0001F60A", "Who is she ?"),
        # A quote that opens a quote of punctuation or a bracket, and a smiley, are no closing marks.
        ('He said \U0001F914 "\u00bfQu\u00e9?"', 'He said "\u00bfQu\u00e9?"'),
        ('Is it \U0001F600 "(really)"?', 'Is it "(really)"?'),
        ('Say \U0001F600 "..." now?', 'Say "..." now?'),
        ("Is it great \U0001F600 :)", "Is it great :)"),
        ("Is it great \U0001F600 :-)", "Is it great :-)"),
        # An emoji after the mark goes too, and the mark still closes.
        ("Who is he \U0001F914?\U0001F600", "Who is he?"),
    ],
)
def test_a_dropped_emoji_leaves_no_space_before_punctuation(tiny_gpt2, typed, expected):
    # "Who is he \U0001F914, really?" was read, and rewritten, as "Who is he , really?".
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.rewrite(typed, []) == Rewrite(expected)
    ids = tok.encode(" " + typed, add_special_tokens=False)
    assert rewriter.finish("Who is he?", HISTORY, ids, ended=True) == Rewrite(expected)


def test_the_rewriter_reads_a_question_and_its_history_without_emoji(tiny_gpt2):
    # It read them: a smiley after "Who was Ernest Hemingway?" made it no new
    # subject (the model then glued the earlier one on), the model copied
    # or moved them, and brought in one of the history's ("\U0001F914 and his
    # wife?" became "\U0001F4DE and his wife?" after a telephone turn).
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.rewrite("Who was Ada Lovelace? \U0001F60A", []) == Rewrite("Who was Ada Lovelace?")
    assert rewriter.rewrite("Who was Ernest Hemingway? \U0001F60A\U0001F44D", HISTORY) == Rewrite("Who was Ernest Hemingway?")
    pair = ["Who was Ada Lovelace? \U0001F60A", "A mathematician.", "Who was Charles Babbage?", "An engineer."]
    assert rewriter.rewrite("When did the two meet?", pair) == Rewrite("When did the two, Ada Lovelace and Charles Babbage, meet?")
    smiling = [text + " \U0001F4DE" if i % 2 == 0 else text for i, text in enumerate(HISTORY)]
    assert rewriter.prompt_ids("\U0001F914 And her father?", smiling) == rewriter.prompt_ids("And her father?", HISTORY)
    # The draft of the rewrite's opening is the question's words, which the rewrite opens with.
    openings = []
    output = tok.encode(" And Ada Lovelace's father?", add_special_tokens=False)

    def generate(prompts, opening=(), reads=None, stop=None):
        openings.append(list(opening))
        return [Decoding(output, True) for _ in prompts]

    rewriter._generate = generate
    assert rewriter.rewrite("\U0001F914 And  her father?", smiling) == rewriter.rewrite("And her father?", HISTORY)
    assert openings[0] == openings[1] == rewriter._opening_draft("And her father?") != []


@pytest.mark.parametrize("history", [HISTORY, []])
def test_a_question_of_emoji_alone_is_kept_as_typed(tiny_gpt2, history):
    # Without its emoji it was "" (or "?"): the turn's rewrite, searched and
    # written to eval's rewrites, was empty.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    note = "kept the original question: it asks nothing to rewrite"
    for question in ["\U0001F600\U0001F600", " \U0001F914 ? ", "\u2764\ufe0f"]:
        assert rewriter.rewrite(question, history) == Rewrite(" ".join(question.split()), note)
    assert rewriter.rewrite_batch([("\U0001F44D", history), ("", history)]) == [Rewrite("\U0001F44D", note), Rewrite("")]


def test_the_guards_read_the_history_the_model_read(tiny_gpt2):
    # The model read it without emoji, the drift guard with them: a rewrite
    # repeating "What happened in 1954?", asked in keycaps, was taken.
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain", candidates=0, second_look=0))
    output = tok.encode(" What happened in 1954?", add_special_tokens=False)
    rewriter._generate = lambda prompts, opening=(), reads=None, stop=None: [Decoding(output, True) for _ in prompts]
    keycaps = ["What happened in 1\ufe0f\u20e39\ufe0f\u20e35\ufe0f\u20e34\ufe0f\u20e3?", "A war ended."]
    expected = Rewrite("And after that?", "kept the original question: the rewrite repeats an earlier question", "What happened in 1954?")
    assert rewriter.rewrite("And after that?", ["What happened in 1954?", "A war ended."]) == expected
    assert rewriter.rewrite("And after that?", keycaps) == expected
    assert rewriter.rewrite_batch([("And after that? \U0001F914", keycaps)]) == [expected]
    rewriter._beam_batch = lambda prompts, beams, greedy=False, stop=None: [[(output, True)] * (beams + greedy) for _ in prompts]
    assert rewriter.nbest_batch([("And after that?", keycaps)], beams=1) == [[expected]]
    # Generated ids finished by a caller of its own (scripts/study_nbest.py) are guarded against the history as read too.
    assert rewriter.finish("And after that? \U0001F914", keycaps, output, ended=True) == expected
    rewriter.config = RewriterConfig(prompt_format="plain", candidates=2)
    assert rewriter.rewrite("And after that?", keycaps) == expected


_HOLIDAY = ["Where did Billie Holiday sing?", "She began singing in nightclubs in Harlem, at Covan's."]


@pytest.mark.parametrize(
    "question, output, expected",
    [
        # An exclusion naming what no text of the conversation gives: cut.
        ("did she sing in any other clubs?", "did Billie Holiday sing in any other clubs other than the Red Door?",
         "did Billie Holiday sing in any other clubs?"),
        ("Any other clubs?", "Besides the Red Door, did Billie Holiday sing in any other clubs?",
         "Did Billie Holiday sing in any other clubs?"),
        # One of what the history gave, or one the question asked for, stays.
        ("did she sing in any other clubs?", "did Billie Holiday sing in any other clubs besides Covan's?",
         "did Billie Holiday sing in any other clubs besides Covan's?"),
        ("did she sing anywhere besides the Red Door?", "did Billie Holiday sing anywhere besides the Red Door?",
         "did Billie Holiday sing anywhere besides the Red Door?"),
        # The user's own words after the made-up name ("in 1935", "and when") stay: only the exclusion goes.
        ("did she sing in other clubs in 1935?", "did Billie Holiday sing in other clubs besides the Red Door in 1935?",
         "did Billie Holiday sing in other clubs in 1935?"),
        ("did she sing in other clubs in 1935?", "did Billie Holiday sing in other clubs, other than the Red Door, in 1935?",
         "did Billie Holiday sing in other clubs in 1935?"),
        ("did she sing in other clubs, and when?", "did Billie Holiday sing in other clubs besides the Red Door and the Savoy, and when?",
         "did Billie Holiday sing in other clubs, and when?"),
        ("did she sing in other clubs in 1935?", "Besides the Red Door in 1935, did Billie Holiday sing in other clubs?",
         "In 1935, did Billie Holiday sing in other clubs?"),
        # Words after the name that the user did not type so ("club", "Count"): the cut would take them, or leave
        # the model's; kept whole.
        ("did she sing in other clubs in 1935?", "did Billie Holiday sing in other clubs besides the Red Door club in 1935?",
         "did Billie Holiday sing in other clubs besides the Red Door club in 1935?"),
        ("did she sing in other clubs with Basie?", "did Billie Holiday sing in other clubs besides the Red Door with Count Basie?",
         "did Billie Holiday sing in other clubs besides the Red Door with Count Basie?"),
        # The user's words already written before the exclusion, or after a fronted one, are not kept twice.
        ("did she sing in 1935 in other clubs?", "did Billie Holiday sing in 1935 in other clubs besides the Red Door in 1935?",
         "did Billie Holiday sing in 1935 in other clubs?"),
        ("did she sing in other clubs in Harlem?", "Besides the Red Door in Harlem, did Billie Holiday sing in other clubs in Harlem?",
         "Did Billie Holiday sing in other clubs in Harlem?"),
        ("did she sing in other clubs in 1935?", "Apart from the Red Door in 1935, did Billie Holiday sing in other clubs in 1935?",
         "Did Billie Holiday sing in other clubs in 1935?"),
        ("did she sing in 1935 in other clubs?",
         "Other than the Red Door and the Savoy in 1935, did Billie Holiday sing in 1935 in other clubs?",
         "Did Billie Holiday sing in 1935 in other clubs?"),
        # The comma after the names goes with them, unless the user typed it.
        ("did she sing other songs in 1935?", "did Billie Holiday sing other songs besides Strange Fruit, in 1935?",
         "did Billie Holiday sing other songs in 1935?"),
        ("did she sing other songs, in 1935?", "did Billie Holiday sing other songs besides Strange Fruit, in 1935?",
         "did Billie Holiday sing other songs, in 1935?"),
        # The question's own exclusion is the user's, whatever the model made of it (not the model's addition).
        ("did she sing in other clubs besides that one?", "did Billie Holiday sing in other clubs besides the Red Door?",
         "did Billie Holiday sing in other clubs besides the Red Door?"),
    ],
)
def test_an_exclusion_of_a_name_from_nowhere_is_cut_from_the_rewrite(tiny_gpt2, question, output, expected):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    ids = tok.encode(" " + output, add_special_tokens=False)
    assert rewriter.finish(question, _HOLIDAY, ids, ended=True) == Rewrite(expected)


def test_finish_decodes_cuts_and_guards_generated_ids(tiny_gpt2):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    ids = tok.encode(" Who was Ada Lovelace's father?\nRewrite: more", add_special_tokens=False)
    # A finished first line is a rewrite even without an end of text.
    assert rewriter.finish(" Who was  her father? ", HISTORY, ids, ended=False) == Rewrite("Who was Ada Lovelace's father?")
    unended = tok.encode(" Who was Ada Lovelace's father and", add_special_tokens=False)
    kept = rewriter.finish("Who was her father?", HISTORY, unended, ended=False)
    assert (kept.text, kept.note) == ("Who was her father?", "kept the original question: the rewrite did not end")
    drifted = rewriter.finish("Who was her father?", HISTORY, tok.encode(" What is the capital of France?"), ended=True)
    assert drifted.text == "Who was her father?" and drifted.note.startswith("kept the original question: ")
    assert tok.eos_token_id in rewriter.eos_ids


# A lead sentence says Ada's gender ("Countess", "daughter"; "Lord" is Byron's title).
_ADA = ["Who was Ada Lovelace?", "Augusta Ada King, Countess of Lovelace, was an English mathematician, the daughter of Lord Byron."]


@pytest.mark.parametrize("question, history, output, expected", [
    # "he" after her father was asked about: the father, not Ada (the history as the app passes it, and as asked).
    ("When did he die?", _ADA + ["Who was Ada Lovelace's father?", "I could not find an answer."],
     "When did Ada Lovelace die?", "When did Ada Lovelace's father die?"),
    ("When did he die?", _ADA + ["Who was her father?", "I could not find an answer."], "When did Ada Lovelace die?",
     "When did Ada Lovelace's father die?"),
    # By the name the answer gives him (test_the_kin_goes_in_by_the_name_its_answer_gives).
    ("When did he die?", _ADA + ["Who was her father?", "Lord Byron."], "When did Ada Lovelace die?", "When did Lord Byron die?"),
    ("What were his poems?", _ADA + ["Who was Ada Lovelace's father?", "Lord Byron. He was a poet."],  # his gender, not hers
     "What were Ada Lovelace's poems?", "What were Lord Byron's poems?"),
    # Her gender said by the answer's sentences opening with "She".
    ("When did he die?", ["Who was Ada Lovelace?", "A mathematician. She wrote the first program.", "Who was Ada Lovelace's father?",
                          "Lord Byron."], "When did Ada Lovelace die?", "When did Lord Byron die?"),
    # The pronoun agrees with the name's gender: kept.
    ("When did she die?", _ADA + ["Who was Ada Lovelace's father?", "Lord Byron."], "When did Ada Lovelace die?", "When did Ada Lovelace die?"),
    # No kin of the pronoun's gender asked about: nothing to put in, kept.
    ("When did he die?", _ADA + ["Who was Ada Lovelace's mother?", "Anne Isabella Milbanke."], "When did Ada Lovelace die?",
     "When did Ada Lovelace die?"),
    # Kin after a possessive is another person: Darin stays "he", and so does his childhood.
    ("What was his childhood like?", ["Who was Bobby Darin?", "Darin was reared by his maternal grandmother, whom he believed was "
                                      "his mother.", "Who was Bobby Darin's father?", "She never said."],
     "What was Bobby Darin's childhood like?", "What was Bobby Darin's childhood like?"),
    # "she" the model took for a man: his wife ("his actress wife" describes her, not him).
    ("When did she die?", ["Who was Bobby Darin?", "A singer. He appeared with his actress wife Sandra Dee.",
                           "Who was Bobby Darin's wife?", "Sandra Dee."], "When did Bobby Darin die?", "When did Sandra Dee die?"),
    # The history does not say her gender (no description, or both genders): kept.
    ("When did he die?", ["Who was Ada Lovelace?", "A mathematician.", "Who was Ada Lovelace's father?", "Lord Byron."],
     "When did Ada Lovelace die?", "When did Ada Lovelace die?"),
    ("When did he die?", ["Who was Ada Lovelace?", "She was a mathematician. He was a poet.", "Who was Ada Lovelace's father?", "Byron."],
     "When did Ada Lovelace die?", "When did Ada Lovelace die?"),
])
def test_a_pronoun_put_in_as_a_name_of_the_other_gender_becomes_the_kin_asked_about(tiny_gpt2, question, history, output, expected):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.finish(question, history, tok.encode(" " + output, add_special_tokens=False), ended=True) == Rewrite(expected)


# "Who was her father?" answered with his name: that name goes in for "he"
# (retrieval finds Lord Byron's own article, which no summary calls "Ada
# Lovelace's father"). Only a name the answer clearly gives the kin asked
# about; otherwise the kin of the name, as before.
_HER_FATHER = _ADA + ["Who was her father?"]
_HIS_WIFE = ["Who was John Smith?", "John Smith was an English painter. He lived in York.", "Who was his wife?"]


@pytest.mark.parametrize("history, question, output, expected", [
    # A reader's span: the name alone.
    (_HER_FATHER + ["Lord Byron"], "When did he die?", "When did Ada Lovelace die?", "When did Lord Byron die?"),
    (_HIS_WIFE + ["Mary Brown"], "When was she born?", "When was John Smith born?", "When was Mary Brown born?"),
    (_HIS_WIFE + ["Mary Brown."], "Where was she from?", "Where was John Smith from?", "Where was Mary Brown from?"),
    # A sentence that ties the kin word to one name.
    (_HER_FATHER + ["Her father was the poet Lord Byron."], "When did he die?", "When did Ada Lovelace die?",
     "When did Lord Byron die?"),
    (_HER_FATHER + ["Her father was the English poet Lord Byron, who left when she was a baby."], "When did he die?",
     "When did Ada Lovelace die?", "When did Lord Byron die?"),
    (_HER_FATHER + ["Her father was Lord Byron and her mother was Anne Isabella Milbanke."], "When did he die?",
     "When did Ada Lovelace die?", "When did Lord Byron die?"),
    (_HER_FATHER + ["Lord Byron was her father."], "Where was he born?", "Where was Ada Lovelace born?",
     "Where was Lord Byron born?"),
    (_HER_FATHER + ["Her father, Lord Byron, was a poet."], "What were his poems?", "What were Ada Lovelace's poems?",
     "What were Lord Byron's poems?"),
    # Hers, not another man's father ("His" is Byron's).
    (_HER_FATHER + ["Her father was Lord Byron. His father was Captain John Byron."], "When did he die?",
     "When did Ada Lovelace die?", "When did Lord Byron die?"),
    (_HIS_WIFE + ["John Smith's wife was Mary Brown."], "When was she born?", "When was John Smith born?",
     "When was Mary Brown born?"),
    # No one name clearly his: the kin of the name, as before.
    (_HER_FATHER + ["Lady Byron."], "When did he die?", "When did Ada Lovelace die?", "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Lord Byron. She was his only child."], "When did he die?", "When did Ada Lovelace die?",
     "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Lord Byron and John Murray."], "When did he die?", "When did Ada Lovelace die?",
     "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Her father was Lord Byron, though some say her father was John Murray."], "When did he die?",
     "When did Ada Lovelace die?", "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Ada Lovelace."], "When did he die?", "When did Ada Lovelace die?", "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Yes."], "When did he die?", "When did Ada Lovelace die?", "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Her father was a famous poet in London."], "When did he die?", "When did Ada Lovelace die?",
     "When did Ada Lovelace's father die?"),
    (_HIS_WIFE + ["He married in 1850."], "When was she born?", "When was John Smith born?", "When was John Smith's wife born?"),
])
def test_the_kin_goes_in_by_the_name_its_answer_gives(tiny_gpt2, history, question, output, expected):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    assert rewriter.finish(question, history, tok.encode(" " + output, add_special_tokens=False), ended=True) == Rewrite(expected)


# What the father was, another's kin, or the subject under another of her
# names is no name for "he": the kin of the name goes in, as before.
_INDIRA = ["Who was Indira Gandhi?", "Indira Gandhi was an Indian politician. She was Prime Minister of India.",
           "Who was her father?"]


@pytest.mark.parametrize("history, expected", [
    (_HER_FATHER + ["Her father was English."], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Her father was Catholic."], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Her father was Roman Catholic."], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Indian"], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Charles Babbage was her father's friend."], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Lord Byron was her father-in-law."], "When did Ada Lovelace's father die?"),
    (_HER_FATHER + ["Augusta Ada King"], "When did Ada Lovelace's father die?"),
    (_INDIRA + ["Indian"], "When did Indira Gandhi's father die?"),
    (_INDIRA + ["Jawaharlal Nehru"], "When did Jawaharlal Nehru die?"),
])
def test_no_kin_name_from_a_description_anothers_kin_or_the_subject(tiny_gpt2, history, expected):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    owner = history[0].removeprefix("Who was ").rstrip("?")
    output = f"When did {owner} die?"
    assert rewriter.finish("When did he die?", history, tok.encode(" " + output, add_special_tokens=False), ended=True) == Rewrite(expected)


def test_over_long_question_is_kept_with_a_note(tiny_gpt2):
    _, tok = tiny_gpt2
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain"))
    question = "word " * 200 + "?"
    result = rewriter.rewrite(question, HISTORY)
    assert result.text == " ".join(question.split())
    assert result.note == "kept the original question: too long to rewrite"


def test_batched_decoding_equals_one_at_a_time(tiny_gpt2):
    # Left padding with correct positions and masks must not change greedy output.
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=6))
    prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
    assert len({len(p) for p in prompts}) == 3
    batched = rewriter._generate(prompts)
    single = [rewriter._generate([p])[0] for p in prompts]
    assert batched == single
    assert all(len(ids) == 6 for ids, _ in batched)


@pytest.mark.parametrize("copy", [False, True])
@pytest.mark.parametrize("draft_rows", [0, 16])
def test_a_batch_whose_rows_end_apart_and_draft_equals_one_at_a_time_step_by_step(tiny_gpt2, draft_rows, copy):
    # Rows that end leave the batch; the rows left draft (ragged acceptance:
    # rejected tokens stay in the cache, masked out). Neither may change a
    # row's greedy output. The copy gate makes outputs of prompt tokens, so
    # drafts are found and some are right.
    model, tok = tiny_gpt2
    head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0) if copy else None
    config = RewriterConfig(prompt_format="plain", max_new_tokens=16, batch_draft_rows=draft_rows)
    batched = CausalLMRewriter(model, tok, config, copy_head=head)
    stepwise = CausalLMRewriter(model, tok, replace(config, draft_tokens=0), copy_head=head)
    prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]),
                                                      ("When?", ["Hi", ""]), ("What did she write?", HISTORY)]]
    # An end-of-text token that one row writes early, so rows end apart.
    first = stepwise._generate([prompts[0]])[0][0]
    for rewriter in (batched, stepwise):
        rewriter._eos_ids = frozenset({first[2]})
    expected = [stepwise._generate([p])[0] for p in prompts]
    assert len({len(ids) for ids, _ in expected}) > 1 and any(stopped for _, stopped in expected)
    shapes = []
    forward = model.forward
    model.forward = lambda *args, **kwargs: shapes.append(tuple(kwargs["input_ids"].shape)) or forward(*args, **kwargs)
    try:
        assert batched._generate(prompts) == expected
    finally:
        model.forward = forward
    rows = [batch for batch, _ in shapes[1:]]
    assert rows == sorted(rows, reverse=True) and rows[-1] < len(prompts)  # ended rows left
    assert any(width > 1 for _, width in shapes[1:]) == bool(draft_rows)  # drafts only when asked


@pytest.mark.parametrize("copy", [False, True])
def test_drafted_decoding_equals_step_by_step_decoding(tiny_gpt2, copy):
    # Prompt-lookup drafts may only save forward passes, never change the greedy output.
    model, tok = tiny_gpt2
    # With the gate forced to the copy side the output is made of prompt tokens,
    # so drafts are found and some are right.
    head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0) if copy else None
    config = RewriterConfig(prompt_format="plain", max_new_tokens=20)
    drafted = CausalLMRewriter(model, tok, config, copy_head=head)
    stepwise = CausalLMRewriter(model, tok, replace(config, draft_tokens=0), copy_head=head)
    passes = []
    forward = model.forward
    model.forward = lambda *args, **kwargs: passes.append(1) or forward(*args, **kwargs)
    for question, history in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]:
        prompt = plain_prompt_ids(tok, question, history)
        passes.clear()
        result = drafted._generate([prompt])
        drafted_passes = len(passes)
        passes.clear()
        assert result == stepwise._generate([prompt])
        assert len(passes) == 20  # one prefill and 19 single steps
        if copy:
            assert drafted_passes < 20
    model.forward = forward


@pytest.mark.parametrize("right", [0, 3, 8])
def test_an_opening_draft_checked_with_the_prompt_never_changes_the_output(tiny_gpt2, right):
    # The prompt's own pass checks an opening draft: a right one saves steps,
    # a wrong one (from its first token, or after `right` tokens) changes nothing.
    model, tok = tiny_gpt2
    config = RewriterConfig(prompt_format="plain", max_new_tokens=20)
    drafted = CausalLMRewriter(model, tok, config)
    stepwise = CausalLMRewriter(model, tok, replace(config, draft_tokens=0))
    prompt = plain_prompt_ids(tok, "Who was her father?", HISTORY[:2])
    expected = stepwise._generate([prompt])[0]
    wrong = (expected[0][right] + 1) % len(tok) if right < 8 else None
    opening = expected[0][:right] + ([wrong] * (8 - right) if wrong is not None else [])
    passes = []
    forward = model.forward
    model.forward = lambda *args, **kwargs: passes.append(1) or forward(*args, **kwargs)
    try:
        assert drafted._generate([prompt], opening) == [expected]
    finally:
        model.forward = forward
    if right == 8:
        assert len(passes) <= 1 + 20 - 9  # the prompt's pass gave 9 tokens; at most one pass per token after
    # Of the question as read (its spaces closed up where it came in: rewrite_batch).
    assert drafted._opening_draft("Who was her father?") == tok.encode(" Who was her father?", add_special_tokens=False)[:8]
    assert stepwise._opening_draft("Who was her father?") == []  # drafting off


def test_lookup_draft_prefers_the_longest_latest_match():
    # [6, 7] occurs twice; the later occurrence's continuation wins over
    # the earlier one, and a 2-gram match over a 1-gram one.
    assert lookup_draft([6, 7, 1, 2, 6, 7, 3, 4, 9, 7], 2) == [3, 4]
    assert lookup_draft([6, 7, 1, 2, 6, 7, 3, 4, 9, 6, 7], 2) == [3, 4]
    assert lookup_draft([1, 2, 3], 0) == []
    assert lookup_draft([1], 4) == []


def test_random_model_output_falls_back_to_the_question_with_a_note(tiny_gpt2):
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=8))
    results = rewriter.rewrite_batch([("Who was her father?", HISTORY), ("What did she write?", HISTORY[:2]), ("Hello?", [])])
    # A random 2-layer model never ends with eos within 8 tokens, so it is never trusted.
    for result, question in zip(results, ["Who was her father?", "What did she write?"]):
        assert (result.text, result.note) == (question, "kept the original question: the rewrite did not end")
        assert result.rejected  # the model's unfinished output, for the turn's details
    assert results[2] == Rewrite("Hello?")


def test_rewriter_with_copy_head_decodes_like_its_pieces(tiny_gpt2):
    # With the gate forced to the copy side, greedy decoding can only emit tokens of the prompt.
    model, tok = tiny_gpt2
    head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0)
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=5), copy_head=head)
    prompt = plain_prompt_ids(tok, "Who was her father?", HISTORY)
    generated, _ = rewriter._generate([prompt])[0]
    assert len(generated) == 5 and set(generated) <= set(prompt)


# --- N-best: beam search and consensus -----------------------------------------


def _ending_gpt2(seed: int, eos_weight: float):
    """A tiny GPT-2 whose end-of-text embedding row (tied to its output row)
    is scaled, so that some hypotheses end early and others run to the limit."""
    from conftest import build_tiny_gpt2

    model, tok = build_tiny_gpt2(seed)
    with torch.no_grad():
        model.transformer.wte.weight[tok.eos_token_id] *= eos_weight
    return model, tok


def test_beam_search_finds_what_generate_finds():
    # The rewriter's own beam search (batched, rows of done prompts leaving)
    # must give model.generate's hypotheses, in its order, ended or not.
    flags = set()
    for seed, eos_weight in [(0, 2.0), (1, 3.0), (0, 1.5)]:
        model, tok = _ending_gpt2(seed, eos_weight)
        rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=10))
        prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
        found = rewriter._beam_batch(prompts, 4)
        for prompt, hypotheses in zip(prompts, found):
            out = model.generate(input_ids=torch.tensor([prompt]), num_beams=4, num_return_sequences=4, do_sample=False, max_new_tokens=10,
                                 eos_token_id=sorted(rewriter.eos_ids), pad_token_id=tok.pad_token_id, early_stopping=True)
            assert hypotheses == [rewriter._until_eos(row[len(prompt):]) for row in out.tolist()]
            flags |= {(stopped, len(ids) < 10) for ids, stopped in hypotheses}
        assert found == [rewriter._beam_batch([p], 4)[0] for p in prompts]
    assert {(True, True), (False, False)} <= flags  # hypotheses that ended early and ones cut at the limit


@pytest.mark.parametrize("copy", [False, True])
def test_one_beam_is_greedy_decoding(tiny_gpt2, copy):
    # One beam keeps the best next token at every step: greedy decoding, copy head included.
    model, tok = tiny_gpt2
    head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0) if copy else None
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=12, draft_tokens=0), copy_head=head)
    prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
    first = rewriter._generate([prompts[0]])[0][0]
    rewriter._eos_ids = frozenset({first[3]})  # so that some rows end early
    greedy = rewriter._generate_batch(prompts)
    assert any(stopped for _, stopped in greedy)
    assert rewriter._beam_batch(prompts, 1) == [[row] for row in greedy]


@pytest.mark.parametrize("copy", [False, True])
def test_greedy_rides_along_in_the_beam_search(copy):
    # With greedy=True each prompt's greedy decoding comes first, then the same
    # beams as without it, whether the greedy row ends before, with or after them.
    for seed, eos_weight in [(0, 2.0), (1, 3.0), (0, 1.5)]:
        model, tok = _ending_gpt2(seed, eos_weight)
        head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0) if copy else None
        rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=10, draft_tokens=0), copy_head=head)
        prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
        together = rewriter._beam_batch(prompts, 3, greedy=True)
        assert together == [[alone] + beams for alone, beams in zip(rewriter._generate_batch(prompts), rewriter._beam_batch(prompts, 3))]
        assert together == [rewriter._beam_batch([p], 3, greedy=True)[0] for p in prompts]


def test_nbest_batch_finishes_each_hypothesis_and_skips_first_turns(tiny_gpt2):
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=6))
    found = rewriter.nbest_batch([("Hello?", []), ("Who was her father?", HISTORY)], beams=3)
    assert found[0] == []
    # A random model's hypotheses never end within 6 tokens, so each keeps the question, with its own output as rejected.
    assert [(r.text, r.note) for r in found[1]] == [("Who was her father?", "kept the original question: the rewrite did not end")] * 3
    assert len({r.rejected for r in found[1]}) == 3
    with pytest.raises(ValueError, match="beams must be at least 1"):
        rewriter.nbest_batch([("Why?", HISTORY)], beams=0)


# A greedy rewrite and three beams' for "Who was her father?" after HISTORY:
# the beams agree on "Ada Lovelace", the greedy one does not.
SCRIPTED = [" Who was Lord Byron's father?", " Who was Ada Lovelace's father?", " Who was Ada Lovelace's real father?", " Who was Ada's father?"]


def _scripted_rewriter(tok, candidates: int) -> CausalLMRewriter:
    """A rewriter whose greedy decoding gives SCRIPTED[0] and whose beam
    search gives all of SCRIPTED (the greedy text again first), for any prompt."""
    ids = [tok.encode(text, add_special_tokens=False) for text in SCRIPTED]
    rewriter = CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain", candidates=candidates))
    rewriter._generate = lambda prompts, opening=(), reads=None, stop=None: [Decoding(ids[0], True) for _ in prompts]
    rewriter._beam_batch = lambda prompts, beams, greedy=False, stop=None: [[(ids[0], True)] * greedy + [(row, True) for row in ids][:beams]
                                                                 for _ in prompts]
    return rewriter


def test_candidates_make_the_rewrite_the_pools_consensus(tiny_gpt2):
    # With candidates on, the rewrite is the greedy one or a beam's, whichever the
    # pool's distinct texts agree with most; off, the greedy one, and no beam search runs.
    _, tok = tiny_gpt2
    texts = [text.strip() for text in SCRIPTED]
    assert _scripted_rewriter(tok, 0).rewrite("Who was her father?", HISTORY).text == texts[0]
    assert _scripted_rewriter(tok, 0).rewrite("Who was her father?", HISTORY).alternatives == ()
    picked = _scripted_rewriter(tok, 4).rewrite("Who was her father?", HISTORY)
    assert picked.text == "Who was Ada Lovelace's father?" == texts[consensus(texts)]
    # The others go with it, once each, for the search.
    assert picked.alternatives == (texts[0], texts[2], texts[3])
    # The greedy text again among the beams is one candidate, not two votes.
    assert _scripted_rewriter(tok, 1).rewrite("Who was her father?", HISTORY).text == texts[0]


def _second_look_rewriter(tok, greedy: str, second_look: int = 4, candidates: int = 0, others: str = "", confidence: float = 1.0,
                          below: float = 0.3, scripted: tuple[str, ...] = tuple(SCRIPTED[1:])):
    """A rewriter whose greedy decoding gives ``greedy`` (``others`` for a
    prompt without "her father", when given) with ``confidence`` (the others
    sure) and whose beam search gives ``scripted`` for any prompt; ``searched``
    records each search's (prompts, beams, greedy) call."""
    beams = [tok.encode(text, add_special_tokens=False) for text in scripted]
    config = RewriterConfig(prompt_format="plain", candidates=candidates, second_look=second_look, second_look_below=below)
    rewriter = CausalLMRewriter(_NoCalls(), tok, config)
    rewriter.searched = []

    def decode(prompts, opening=(), reads=None, stop=None):
        picked = [not others or "her father" in tok.decode(p) for p in prompts]
        return [Decoding(tok.encode(" " + (greedy if mine else others), add_special_tokens=False), True, confidence if mine else 1.0)
                for mine in picked]

    rewriter._generate = decode

    def search(prompts, count, greedy=False, stop=None):
        rewriter.searched.append((len(prompts), count, greedy))
        return [[(beams[0], True)] * greedy + [(row, True) for row in beams][:count] for _ in prompts]

    rewriter._beam_batch = search
    return rewriter


def test_a_follow_up_left_as_asked_gets_a_second_look(tiny_gpt2):
    # The greedy rewrite kept the question's words: the beams are searched for
    # it, and the rewrite is the consensus of the greedy one and theirs.
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "Who was her father?")
    picked = rewriter.rewrite("Who was  her father?", HISTORY)
    assert rewriter.searched == [(1, 4, False)]
    pool = ["Who was her father?", *(text.strip() for text in SCRIPTED[1:])]
    assert picked.text == pool[consensus(pool)] == "Who was Ada Lovelace's father?"
    assert picked.alternatives == (pool[0], pool[2], pool[3])  # for the search, as with candidates


def test_only_follow_ups_left_as_asked_get_a_second_look(tiny_gpt2):
    _, tok = tiny_gpt2
    # A greedy rewrite that changes the question is the rewrite; no search runs.
    changed = _second_look_rewriter(tok, "Who was Ada's father?")
    assert changed.rewrite("Who was her father?", HISTORY) == Rewrite("Who was Ada's father?")
    assert changed.searched == []
    # Off, or when candidates already search every turn: no second search.
    off = _second_look_rewriter(tok, "Who was her father?", second_look=0)
    assert off.rewrite("Who was her father?", HISTORY) == Rewrite("Who was her father?")
    assert off.searched == []
    both = _second_look_rewriter(tok, "Who was her father?", candidates=2)
    both.rewrite("Who was her father?", HISTORY)
    assert both.searched == [(1, 2, True)]
    # A first turn never reaches the model.
    assert changed.rewrite("Who was Ada Lovelace?", []) == Rewrite("Who was Ada Lovelace?")


def test_a_rewrite_the_drift_guard_rejected_gets_a_second_look_and_only_those_in_a_batch(tiny_gpt2):
    # "Who was Ada Lovelace?" repeats an earlier question: the guard keeps the
    # question, and that turn is searched again; the batch's other turn is not.
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "Who was Ada Lovelace?", others="What about Ada's mother?")
    rejected, other = rewriter.rewrite_batch([("Who was her father?", HISTORY), ("What about her mother?", HISTORY)])
    assert rewriter.searched == [(1, 4, False)]
    assert rejected.text == "Who was Ada Lovelace's father?" and rejected.note == ""
    assert other == Rewrite("What about Ada's mother?")


def test_a_changed_rewrite_the_model_was_unsure_of_gets_a_second_look_too(tiny_gpt2):
    # One of its tokens had less than second_look_below: searched again like a
    # turn left as asked, and the rewrite is the pool's consensus.
    _, tok = tiny_gpt2
    unsure = _second_look_rewriter(tok, "Who was Byron's father?", confidence=0.2)
    picked = unsure.rewrite("Who was her father?", HISTORY)
    assert unsure.searched == [(1, 4, False)]
    pool = ["Who was Byron's father?", *(text.strip() for text in SCRIPTED[1:])]
    assert picked.text == pool[consensus(pool)] != pool[0]
    assert set(picked.alternatives) == set(pool) - {picked.text}
    # At the threshold or above it, or with the threshold at 0, the greedy rewrite stands.
    for sure in (_second_look_rewriter(tok, "Who was Byron's father?", confidence=0.3),
                 _second_look_rewriter(tok, "Who was Byron's father?", confidence=0.0, below=0.0)):
        assert sure.rewrite("Who was her father?", HISTORY) == Rewrite("Who was Byron's father?")
        assert sure.searched == []
    # In a batch only the unsure one is searched.
    batch = _second_look_rewriter(tok, "Who was Byron's father?", others="What about Ada's mother?", confidence=0.2)
    first, other = batch.rewrite_batch([("Who was her father?", HISTORY), ("What about her mother?", HISTORY)])
    assert batch.searched == [(1, 4, False)] and first == picked and other == Rewrite("What about Ada's mother?")


def test_a_batch_hands_back_each_rewrite_as_soon_as_it_is_final(tiny_gpt2):
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "Who was her father?", others="What about Ada's mother?")
    handed = []
    items = [("Who was her father?", HISTORY), ("What about her mother?", HISTORY), ("Who was Ada Lovelace?", [])]
    found = rewriter.rewrite_batch(items, ready=lambda index, rewrite: handed.append((index, rewrite, len(rewriter.searched))))
    # The first turn needs no model, the changed rewrite no search: both
    # before the search runs; the searched one once it has run.
    assert handed == [(2, Rewrite("Who was Ada Lovelace?"), 0), (1, Rewrite("What about Ada's mother?"), 0), (0, found[0], 1)]
    assert found[0].text == "Who was Ada Lovelace's father?" and rewriter.searched == [(1, 4, False)]
    # Nothing searched: each is handed back all the same, once.
    handed.clear()
    sure = _second_look_rewriter(tok, "Who was Ada's father?", others="What about Ada's mother?")
    expected = [Rewrite("Who was Ada's father?"), Rewrite("What about Ada's mother?")]
    assert sure.rewrite_batch(items[:2], ready=lambda *args: handed.append(args)) == expected
    assert len(handed) == 2 and dict(handed) == dict(enumerate(expected))


def test_a_long_call_searches_its_second_looks_a_chunk_at_a_time_as_they_gather(tiny_gpt2):
    # batch_size 2 and five turns left as asked: each full chunk of them is
    # searched before the next greedy chunk runs (a call holds at most a
    # chunk's prompts for the search, whatever its length), the last one alone.
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, "Who was her father?")
    rewriter.config = replace(rewriter.config, batch_size=2)
    greedy = rewriter._generate
    rewriter._generate = lambda prompts, opening=(), reads=None, stop=None: rewriter.searched.append(("greedy", len(prompts))) or greedy(prompts, opening, reads)
    found = rewriter.rewrite_batch([("Who was her father?", HISTORY)] * 5)
    assert rewriter.searched == [("greedy", 2), (2, 4, False), ("greedy", 2), (2, 4, False), ("greedy", 1), (1, 4, False)]
    assert [rewrite.text for rewrite in found] == ["Who was Ada Lovelace's father?"] * 5


def _token_chances(model, prompt: list[int], ids: list[int]) -> list[float]:
    """The probability ``model`` gives each of ``ids`` after ``prompt``, from one plain forward pass."""
    with torch.no_grad():
        logits = model(input_ids=torch.tensor([prompt + ids])).logits[0, len(prompt) - 1 : len(prompt) + len(ids) - 1]
    return logits.float().softmax(-1).gather(-1, torch.tensor(ids)[:, None])[:, 0].tolist()


def test_a_decodings_confidence_is_its_least_likely_token_not_its_end_alone_or_batched(tiny_gpt2):
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=12))
    prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
    ids = rewriter._generate([prompts[0]])[0][0]
    chances = _token_chances(model, prompts[0], ids)
    assert rewriter._generate([prompts[0]])[0].confidence == pytest.approx(min(chances), abs=1e-5)
    # The least likely token becomes the end: the rewrite stops before it, and
    # how sure the model was to stop is not counted.
    end = min(range(1, len(ids)), key=chances.__getitem__)
    assert ids[end] not in ids[:end] and chances[end] < min(chances[:end])
    rewriter._eos_ids = frozenset({ids[end]})
    alone = [rewriter._generate([p])[0] for p in prompts]
    assert alone[0] == (ids[:end], True)
    for prompt, decoding in zip(prompts, alone):
        assert decoding.confidence == pytest.approx(min(_token_chances(model, prompt, decoding[0])), abs=1e-5)
    # In a left-padded batch whose rows end apart: the same.
    batched = rewriter._generate(prompts)
    assert batched == alone and len({len(d[0]) for d in batched}) > 1
    assert [d.confidence for d in batched] == pytest.approx([d.confidence for d in alone], abs=1e-5)
    assert Decoding([], True).confidence == 1.0  # nothing generated: nothing unsure


def test_drafts_leave_a_decodings_confidence_as_step_by_step_decoding_gives_it(tiny_gpt2):
    # The copy gate makes outputs of prompt tokens, so drafts are found, and
    # some of their tokens are kept and some dropped: only the kept count.
    model, tok = tiny_gpt2
    head = CopyHead(model.config.hidden_size, copy_dim=8, gate_bias=-30.0)
    config = RewriterConfig(prompt_format="plain", max_new_tokens=16)
    drafted = CausalLMRewriter(model, tok, config, copy_head=head)
    stepwise = CausalLMRewriter(model, tok, replace(config, draft_tokens=0), copy_head=head)
    prompts = [plain_prompt_ids(tok, q, h) for q, h in [("Why?", HISTORY), ("Who was her father?", HISTORY[:2]), ("When?", ["Hi", ""])]]
    expected = [stepwise._generate([prompt])[0] for prompt in prompts]
    assert all(decoding.confidence < 1 for decoding in expected)
    for found in ([drafted._generate([prompt])[0] for prompt in prompts], drafted._generate(prompts)):  # alone, and a batch's drafts
        assert found == expected
        assert [d.confidence for d in found] == pytest.approx([d.confidence for d in expected], abs=1e-5)


def test_consensus_is_the_candidate_closest_to_the_others():
    assert consensus(["Who wrote it?", "Who wrote Hamlet?", "Who wrote the play Hamlet?"]) == 1
    assert consensus(["a b", "c d"]) == 0  # a tie goes to the first
    with pytest.raises(ValueError):
        consensus([])


# --- copy head ----------------------------------------------------------------


def test_copy_head_gives_a_distribution_mixing_lm_and_copy():
    torch.manual_seed(0)
    head = CopyHead(hidden_size=16, copy_dim=8)
    hidden = torch.randn(2, 3, 16)
    logits = torch.randn(2, 3, 50)
    source_ids = torch.tensor([[5, 7, 7, 1], [2, 3, 4, 0]])
    mask = torch.tensor([[True, True, True, False], [True, True, True, True]])
    log_probs = head.log_probs(hidden, logits, head.keys(torch.randn(2, 4, 16)), source_ids, mask)
    probs = log_probs.exp()
    assert probs.shape == (2, 3, 50)
    assert torch.allclose(probs.sum(-1), torch.ones(2, 3), atol=1e-5)
    # Copy mass lands only on source tokens: beyond the LM's own share, nothing elsewhere.
    gate = torch.sigmoid(head.gate(hidden))
    lm = torch.softmax(logits, -1)
    extra = probs - gate * lm
    assert torch.all(extra[0][:, [5, 7]].sum(-1) > 0)
    assert torch.allclose(extra[0][:, [i for i in range(50) if i not in (5, 7)]], torch.zeros(3, 48), atol=1e-6)


def test_copy_head_without_source_is_the_lm_distribution():
    head = CopyHead(hidden_size=16, copy_dim=8)
    hidden, logits = torch.randn(1, 2, 16), torch.randn(1, 2, 30)
    none = torch.zeros(1, 3, dtype=torch.bool)
    log_probs = head.log_probs(hidden, logits, head.keys(torch.randn(1, 3, 16)), torch.tensor([[1, 2, 3]]), none)
    assert torch.allclose(log_probs.exp(), torch.softmax(logits, -1), atol=1e-6)


def test_copy_head_gradients_reach_gate_query_and_key():
    head = CopyHead(hidden_size=16, copy_dim=8)
    hidden = torch.randn(1, 2, 16)
    log_probs = head.log_probs(hidden, torch.randn(1, 2, 30), head.keys(torch.randn(1, 3, 16)), torch.tensor([[1, 2, 3]]), torch.ones(1, 3, dtype=torch.bool))
    (-log_probs[0, :, 2].sum()).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in head.parameters())


# --- loading ------------------------------------------------------------------


def test_load_rewriter_original():
    assert isinstance(load_rewriter("original"), OriginalRewriter)


def test_missing_model_path_raises_model_not_found(tmp_path):
    with pytest.raises(ModelNotFoundError, match="does not exist"):
        load_rewriter(str(tmp_path / "no-such-model"))


def test_a_mistyped_or_wrong_typed_rewriter_name_says_what_names_there_are():
    # "traned" was reported as a hub model that could not be fetched offline; a name near none
    # of the rewriters' still goes to the loader, and is then named so.
    with pytest.raises(ModelNotFoundError, match="no rewriter 'nobody': use trained, prompted, original, an adapter"):
        load_rewriter("nobody")
    with pytest.raises(TypeError, match="must be a string .*not NoneType"):
        load_rewriter(None)


@pytest.mark.parametrize("typed, meant", [("Trained", "trained"), ("trianed", "trained"), ("traned", "trained"),
                                          ("PROMPTED", "prompted"), ("orignal", "original")])
def test_a_rewriter_name_near_a_known_one_is_refused_in_one_line_naming_it(typed, meant, monkeypatch):
    # --rewriter Trained went to the model loader: "cannot load model 'Trained' offline (OSError ...)".
    monkeypatch.setattr(CausalLMRewriter, "from_pretrained", _never_loaded)
    with pytest.raises(ModelNotFoundError) as raised:
        load_rewriter(typed)
    assert str(raised.value) == (f"unknown rewriter '{typed}': did you mean '{meant}'? The rewriters: trained, "
                                 "prompted, original, or an adapter directory or a model path or hub name")


def test_a_hub_id_or_an_existing_path_near_a_name_still_goes_to_the_loader(tmp_path, monkeypatch):
    asked = []
    monkeypatch.setattr(CausalLMRewriter, "from_pretrained",
                        classmethod(lambda cls, name, **kwargs: asked.append(name) or "loaded"))
    folder = tmp_path / "Trained"
    folder.mkdir()
    monkeypatch.chdir(tmp_path)
    assert load_rewriter("Trained") == "loaded" and load_rewriter("someone/trained") == "loaded"
    assert asked == ["Trained", "someone/trained"]


def _never_loaded(*args, **kwargs):
    raise AssertionError("a misspelt rewriter's name reached the model loader")


def test_empty_model_dir_raises_model_not_found(tmp_path):
    with pytest.raises(ModelNotFoundError, match="cannot load model"):
        load_rewriter(str(tmp_path))


def test_an_adapter_folder_given_as_a_whole_model_is_named_as_an_adapter(tmp_path):
    # transformers' failure there was reported as "cannot load model offline".
    from rewriting import load_causal_lm

    (tmp_path / "adapter_config.json").write_text("{}")
    with pytest.raises(ModelNotFoundError, match=f"^{re.escape(str(tmp_path))} is a LoRA adapter, not a whole causal LM: "):
        load_causal_lm(str(tmp_path))


def test_from_pretrained_loads_a_saved_tiny_gpt2(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    rewriter = load_rewriter(str(tmp_path))
    assert isinstance(rewriter, CausalLMRewriter)
    assert rewriter.config.prompt_format == "plain"  # GPT-2 has no chat template
    assert rewriter.rewrite("Who?", []) == Rewrite("Who?")


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_from_pretrained_casts_weights_to_the_configured_dtype(tiny_gpt2, tmp_path, dtype):
    model, tok = tiny_gpt2
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    rewriter = CausalLMRewriter.from_pretrained(str(tmp_path), config=RewriterConfig(dtype=dtype, max_new_tokens=4))
    assert {p.dtype for p in rewriter.model.parameters()} == {getattr(torch, dtype)}
    result = rewriter.rewrite("What did she write?", HISTORY[:2])
    assert result.note == "kept the original question: the rewrite did not end"  # decoded 4 tokens, no eos


def test_load_rewriter_passes_the_dtype_and_candidates_on(tiny_gpt2, tmp_path):
    model, tok = tiny_gpt2
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    assert next(load_rewriter(str(tmp_path), dtype="bfloat16").model.parameters()).dtype == torch.bfloat16
    assert next(load_rewriter(str(tmp_path), dtype="float32").model.parameters()).dtype == torch.float32
    assert load_rewriter(str(tmp_path), candidates=3).config.candidates == 3
    assert load_rewriter(str(tmp_path)).config.second_look == RewriterConfig().second_look
    assert load_rewriter(str(tmp_path), second_look=0).config.second_look == 0
    assert load_rewriter(str(tmp_path)).config.second_look_below == RewriterConfig().second_look_below
    assert load_rewriter(str(tmp_path), second_look_below=0.0).config.second_look_below == 0.0


def test_cli_refuses_a_negative_draft_length(tmp_path):
    from rewriting.rewrite import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out.jsonl"), "--draft-tokens", "-1"])
    assert exit_info.value.code == 2


def test_cli_refuses_a_prompt_budget_too_small_for_the_question(tmp_path, capsys):
    from rewriting.rewrite import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out.jsonl"), "--max-input-tokens", "8"])
    assert exit_info.value.code == 2
    assert "--max-input-tokens must be at least 32" in capsys.readouterr().err


def test_configure_sets_only_what_the_rewriter_has(tiny_gpt2):
    from rewriting.rewrite import configure

    _, tok = tiny_gpt2
    causal = configure(CausalLMRewriter(_NoCalls(), tok, RewriterConfig(prompt_format="plain")), 4, None, 256)
    assert (causal.config.batch_size, causal.config.draft_tokens, causal.config.max_input_tokens, causal.config.candidates) == (4, 8, 256, 0)
    assert configure(causal, 4, None, None, 3).config.candidates == 3
    assert causal.config.second_look == 4 and configure(causal, 4, None, None, None, 0).config.second_look == 0
    assert causal.config.second_look_below == 0.3 and configure(causal, 4, None, None, None, None, 0.5).config.second_look_below == 0.5
    assert isinstance(configure(OriginalRewriter(), 4, 0, 256, 3), OriginalRewriter)


    assert inference_dtype("float32") == torch.float32
    with pytest.raises(ValueError, match="dtype must be"):
        inference_dtype("float16")


# --- batch CLI ----------------------------------------------------------------


def _saved_tiny(tiny_gpt2, path):
    model, tok = tiny_gpt2
    model.save_pretrained(path)
    tok.save_pretrained(path)
    return path


def test_cli_rewrites_a_file_in_order(tiny_gpt2, tmp_path, capsys):
    from rewriting.rewrite import main

    model_dir = _saved_tiny(tiny_gpt2, tmp_path / "model")
    lines = [
        {"id": "a", "question": "Who was Ada Lovelace?", "history": []},
        {"id": "b", "question": "Who was her father?", "history": HISTORY},
        {"id": 3, "question": "Why?", "history": HISTORY[:2]},
    ]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(line) + "\n" for line in lines) + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["--input", str(src), "--output", str(out), "--model", str(model_dir), "--batch-size", "2"]) == 0
    got = [json.loads(line) for line in out.read_text().splitlines()]
    assert [g["id"] for g in got] == ["a", "b", 3]
    assert got[0] == {"id": "a", "rewrite": "Who was Ada Lovelace?"}
    # The random model's outputs never pass the guard: the original is kept, with the reason.
    assert {k: got[1][k] for k in ("id", "rewrite", "note")} == {"id": "b", "rewrite": "Who was her father?", "note": "kept the original question: the rewrite did not end"}
    assert got[1]["rejected"]  # the model's own output, kept for inspection
    assert "wrote 3 rewrites" in capsys.readouterr().out
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []
    umask = os.umask(0)
    os.umask(umask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~umask  # permissions of any new file, not mkstemp's 0600


def test_cli_candidates_reach_the_rewriter(tiny_gpt2, tmp_path, monkeypatch):
    import rewriting
    from rewriting.rewrite import main

    _, tok = tiny_gpt2
    monkeypatch.setattr(rewriting, "load_rewriter", lambda *args, **kwargs: _scripted_rewriter(tok, 0))
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": "b", "question": "Who was her father?", "history": HISTORY}) + "\n")
    for candidates, expected in [([], "Who was Lord Byron's father?"), (["--candidates", "3"], "Who was Ada Lovelace's father?")]:
        assert main(["--input", str(src), "--output", str(out), *candidates]) == 0
        assert json.loads(out.read_text())["rewrite"] == expected
    # The other distinct candidates, as eval.retrieval --rewrites reads them.
    assert json.loads(out.read_text())["alternatives"] == ["Who was Lord Byron's father?", "Who was Ada Lovelace's real father?"]


def test_cli_second_look_reaches_the_rewriter(tiny_gpt2, tmp_path, monkeypatch):
    import rewriting
    from rewriting.rewrite import main

    _, tok = tiny_gpt2
    monkeypatch.setattr(rewriting, "load_rewriter", lambda *args, **kwargs: _second_look_rewriter(tok, "Who was her father?"))
    src, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": "b", "question": "Who was her father?", "history": HISTORY}) + "\n")
    for option, expected in [([], "Who was Ada Lovelace's father?"), (["--second-look", "0"], "Who was her father?")]:
        assert main(["--input", str(src), "--output", str(out), *option]) == 0
        assert json.loads(out.read_text())["rewrite"] == expected
    with pytest.raises(SystemExit) as exit_info:
        main(["--input", str(src), "--output", str(out), "--second-look", "-1"])
    assert exit_info.value.code == 2
    # A changed rewrite the model was unsure of (0.2): searched unless the threshold is at or under it.
    unsure = lambda *args, **kwargs: _second_look_rewriter(tok, "Who was Byron's father?", confidence=0.2)  # noqa: E731
    monkeypatch.setattr(rewriting, "load_rewriter", unsure)
    for option, expected in [([], "Who was Ada Lovelace's father?"), (["--second-look-below", "0.2"], "Who was Byron's father?")]:
        assert main(["--input", str(src), "--output", str(out), *option]) == 0
        assert json.loads(out.read_text())["rewrite"] == expected
    for bad in ("-0.1", "1.5"):
        with pytest.raises(SystemExit) as exit_info:
            main(["--input", str(src), "--output", str(out), "--second-look-below", bad])
        assert exit_info.value.code == 2


def test_cli_given_a_pretty_printed_json_file_says_it_wants_one_object_a_line(tmp_path, capsys):
    # QReCC's own .json opens with a lone "[": "line 1: not valid JSON
    # (Expecting value)" of a file that is valid JSON.
    from rewriting.rewrite import main

    src = tmp_path / "qrecc.json"
    src.write_text(json.dumps([{"Context": [], "Question": "Who?", "Rewrite": "Who?"}], indent=4))
    out = tmp_path / "out.jsonl"
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    assert capsys.readouterr().err == (
        f"error: {src}, line 1: not valid JSON (Expecting value); this looks like one JSON document "
        "(a .json file), where JSON Lines, one JSON object on each line, is wanted\n")
    assert not out.exists()
    # Saved with a UTF-8 byte order mark (Notepad's), it got no hint.
    src.write_text("\ufeff" + json.dumps([{"Context": [], "Question": "Who?", "Rewrite": "Who?"}], indent=4),
                   encoding="utf-8")
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    assert "this looks like one JSON document (a .json file)" in capsys.readouterr().err
    # A broken line of a JSON Lines file gets no such hint.
    src.write_text('{"id": "a", "question": "Who?",\n')
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    assert "looks like" not in capsys.readouterr().err


def test_cli_reads_json_lines_saved_in_utf16_or_utf32_with_a_mark(tmp_path, capsys):
    # Windows PowerShell 5's ">" writes UTF-16 with a byte order mark: each
    # line, read as UTF-8, was refused as "line 1 is not UTF-8 text".
    from rewriting.rewrite import main

    lines = "".join(json.dumps({"id": n, "question": "Who was Pelé?", "history": []}, ensure_ascii=False) + "\n"
                    for n in ("a", "b"))
    out = tmp_path / "out.jsonl"
    for encoding in ("utf-16", "utf-16-be", "utf-32"):
        src = tmp_path / f"{encoding}.jsonl"
        src.write_bytes(({"utf-16-be": "\ufeff"}.get(encoding, "") + lines).encode(encoding))
        assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 0, capsys.readouterr().err
        assert [json.loads(line)["rewrite"] for line in out.read_text(encoding="utf-8").splitlines()] == [
            "Who was Pelé?"] * 2
    torn = tmp_path / "torn.jsonl"  # a mark, then bytes no UTF-16 reads: said of the file
    torn.write_bytes(lines.encode("utf-16") + b"\x00\xd8")
    assert main(["--input", str(torn), "--output", str(out), "--model", "original"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: {torn} begins as UTF-16 text but is not; save it as UTF-8 and try again.")


def test_cli_given_qrecc_records_or_a_one_line_json_list_says_what_it_wants(tmp_path, capsys):
    # QReCC's record as a line was told "'id' must be a string or an
    # integer"; a .json list on one line only "expected an object".
    from rewriting.rewrite import main

    record = {"Context": ["Who was Pelé?", "A footballer."], "Question": "Where was he born?", "Rewrite": "x",
              "Conversation_no": 1, "Turn_no": 2}
    src, out = tmp_path / "qrecc.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps(record) + "\n")
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    assert capsys.readouterr().err == (
        f'error: {src}, line 1: this is a QReCC record; each line here is {{"id", "question", "history"}}: "id" one of '
        'your own (e.g. Conversation_no and Turn_no, "1_2"), "question" its Question, "history" its Context\n')
    src.write_text(json.dumps([record]) + "\n")
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    assert capsys.readouterr().err == (
        f'error: {src}, line 1: expected an object {{"id", "question", "history"}}; this looks like one JSON '
        "document (a .json file), where JSON Lines, one JSON object on each line, is wanted\n")


def test_cli_refuses_negative_candidates(tmp_path, capsys):
    from rewriting.rewrite import main

    with pytest.raises(SystemExit) as exit_info:
        main(["--input", str(tmp_path / "in.jsonl"), "--output", str(tmp_path / "out.jsonl"), "--candidates", "-1"])
    assert exit_info.value.code == 2 and "--candidates must be 0 or more" in capsys.readouterr().err


@pytest.mark.parametrize(
    "line, message",
    [
        ("not json", "line 2: not valid JSON"),
        ('{"id": "x", "history": []}', "line 2: 'question' must be a non-empty string"),
        ('{"id": "x", "question": "Why?", "history": "Who?"}', "line 2: 'history' must be a list of strings"),
        ('{"id": "a", "question": "Why?"}', "line 2: id 'a' occurs twice"),
        ('["a"]', "line 2: expected an object"),
    ],
)
def test_cli_bad_line_exits_2_naming_the_line(tmp_path, capsys, line, message):
    from rewriting.rewrite import main

    src = tmp_path / "in.jsonl"
    src.write_text('{"id": "a", "question": "Who?", "history": []}\n' + line + "\n")
    out = tmp_path / "out.jsonl"
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not out.exists()


def test_cli_original_model_copies_questions(tmp_path, capsys):
    from rewriting.rewrite import main

    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "q", "question": " What about  Berlin? ", "history": ["Hi", "Hello"]}) + "\n")
    out = tmp_path / "sub" / "out.jsonl"
    assert main(["--input", str(src), "--output", str(out), "--model", "original"]) == 0
    assert json.loads(out.read_text()) == {"id": "q", "rewrite": "What about  Berlin?"}
    assert f"wrote 1 rewrite to {out} in " in capsys.readouterr().out  # one, not "1 rewrites"


def _ten_questions_argv(tmp_path, out):
    """rewriting.rewrite's arguments for ten follow-ups into ``out``, in chunks of 4."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": f"q{n}", "question": f"What about {n}?", "history": ["Hi", "Hello"]}) + "\n"
                           for n in range(10)))
    return ["--input", str(src), "--output", str(out), "--model", "original", "--batch-size", "1"]


def test_cli_an_interrupted_run_goes_on_where_it_stopped(tmp_path, monkeypatch, capsys):
    # Rewrites were written only when all were made: an interrupted run of
    # thousands of turns lost them all and started again from the first.
    from rewriting.rewrite import main

    out = tmp_path / "out.jsonl"
    argv = _ten_questions_argv(tmp_path, out)
    asked, real = [], OriginalRewriter.rewrite

    def counting(self, question, history, stop_at=None):
        if question == stop_at:
            raise KeyboardInterrupt
        asked.append(question)
        return real(self, question, history)

    monkeypatch.setattr(OriginalRewriter, "rewrite", lambda self, q, h: counting(self, q, h, "What about 5?"))
    assert main(argv) == 130
    assert "the same command goes on from" in capsys.readouterr().err
    assert not out.exists() and len((tmp_path / "out.jsonl.partial").read_text().splitlines()) == 1 + 4
    asked.clear()
    monkeypatch.setattr(OriginalRewriter, "rewrite", lambda self, q, h: counting(self, q, h))
    assert main(argv) == 0
    assert "resuming: 4 of 10 rewrites were made by an interrupted run" in capsys.readouterr().err
    assert asked == [f"What about {n}?" for n in range(4, 10)]  # only the rest
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()] == [f"q{n}" for n in range(10)]
    assert not (tmp_path / "out.jsonl.partial").exists()
    # A partial run with other settings is not taken up: all are rewritten again.
    monkeypatch.setattr(OriginalRewriter, "rewrite", lambda self, q, h: counting(self, q, h, "What about 5?"))
    assert main(argv) == 130
    asked.clear()
    monkeypatch.setattr(OriginalRewriter, "rewrite", lambda self, q, h: counting(self, q, h))
    assert main([*argv[:-1], "2"]) == 0 and len(asked) == 10


def test_cli_sigterm_keeps_the_rewrites_made_and_ends_in_one_line(tmp_path, monkeypatch, capsys):
    # The command kept its own Ctrl-C handlers: SIGTERM (a scheduler, `timeout`)
    # killed it without a word, and Ctrl-C while the model loaded ended in a traceback.
    import os
    import signal

    import rewriting
    from rewriting.rewrite import main

    out = tmp_path / "out.jsonl"
    argv = _ten_questions_argv(tmp_path, out)
    real = OriginalRewriter.rewrite

    def terminated_at_5(self, question, history):
        if question == "What about 5?":
            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, question, history)

    monkeypatch.setattr(OriginalRewriter, "rewrite", terminated_at_5)
    assert main(argv) == 128 + signal.SIGTERM
    assert capsys.readouterr().err.splitlines()[-1] == f"interrupted: {out} is as it was; the same command goes on from {out}.partial"
    assert not out.exists() and len((tmp_path / "out.jsonl.partial").read_text().splitlines()) == 1 + 4
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back

    def interrupted_load(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(rewriting, "load_rewriter", interrupted_load)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert err == "interrupted: nothing was written\n"


# --- the base model's files ----------------------------------------------------


def test_pinned_special_tokens_are_the_ones_the_ids_name(tiny_gpt2):
    from rewriting import pin_special_tokens

    _, tok = tiny_gpt2
    bang = tok.convert_tokens_to_ids("!")
    pin_special_tokens(tok, {"eos": bang, "pad": bang})
    assert (tok.eos_token, tok.eos_token_id, tok.pad_token_id) == ("!", bang, bang)


def test_the_packaged_gguf_names_its_end_of_turn_token_eos():
    # What the SmolLM2 conversion pins, whichever transformers converts it
    # (5.17 would otherwise name <|im_start|> the eos).
    from rewriting import gguf_special_ids, smollm2_gguf

    try:
        gguf = smollm2_gguf()
    except ModelNotFoundError as missing:
        pytest.skip(f"missing prerequisite: {missing}")
    assert gguf_special_ids(gguf) == {"bos": 1, "eos": 2, "pad": 2, "unk": 0}


# --- the shipped adapter ------------------------------------------------------


@pytest.mark.skipif(not (TRAINED_ADAPTER / "adapter_config.json").is_file(), reason="missing prerequisite: the trained adapter (restore rewriting/adapters/ from git)")
def test_trained_rewriter_resolves_the_pronoun():
    rewriter = load_rewriter("trained")
    assert rewriter.rewrite("Who was Ada Lovelace?", []).text == "Who was Ada Lovelace?"
    result = rewriter.rewrite("What did she write about?", HISTORY[:2])
    assert "Ada Lovelace" in result.text and "write" in result.text and result.note == ""
    # Prompts at the measured inference budget; every other budget is the recipe's.
    assert rewriter.config.max_input_tokens == TRAINED_INPUT_TOKENS
    assert rewriter.config.prompt == Recipe.read(TRAINED_ADAPTER).prompt
    long_history = [text for i in range(12) for text in (f"What did Ada Lovelace write in {1830 + i}?", "Notes.")]
    assert 160 < len(rewriter.prompt_ids("And later?", long_history)) <= TRAINED_INPUT_TOKENS


def test_only_training_asks_openmp_threads_not_to_spin():
    # PASSIVE makes every small op of a rewrite wait for sleeping threads
    # (1.8x slower on 2 cores); training sets it, inference must not.
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    probe = "import os, {0}; print(os.environ.get('OMP_WAIT_POLICY'))"
    run = lambda module: subprocess.run([sys.executable, "-c", probe.format(module)], env=env, capture_output=True, text=True, check=True).stdout.strip()  # noqa: E731
    assert run("rewriting") == "None"
    assert run("rewriting.train") == "PASSIVE"


# --- unwritable output and bad text ------------------------------------------------


def _one_request(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "q", "question": "Why?", "history": ["Hi", "Hello"]}) + "\n")
    return src


def test_cli_output_under_a_file_exits_2_in_one_line(tmp_path, capsys):
    from rewriting.rewrite import main

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    out = blocker / "dir" / "x.jsonl"
    assert main(["--input", str(_one_request(tmp_path)), "--output", str(out), "--model", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write --output {out}") and err.count("\n") == 1


def test_cli_output_that_is_a_folder_exits_2_in_one_line(tmp_path, capsys):
    from rewriting.rewrite import main

    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "keep").write_text("")  # a folder rename cannot replace
    assert main(["--input", str(_one_request(tmp_path)), "--output", str(folder), "--model", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: cannot write --output {folder}") and err.count("\n") == 1
    assert sorted(p.name for p in folder.iterdir()) == ["keep"]
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_cli_output_that_is_the_input_is_refused_and_the_input_kept(tmp_path, capsys):
    from rewriting.rewrite import main

    src = _one_request(tmp_path)
    before = src.read_bytes()
    assert main(["--input", str(src), "--output", str(tmp_path / "." / src.name), "--model", "original"]) == 2
    err = capsys.readouterr().err
    assert err == f"error: --output {tmp_path / '.' / src.name} is an input of this command too; writing it would replace it: give another path\n"
    assert src.read_bytes() == before


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders, so there is nothing to refuse")
def test_cli_read_only_folder_exits_2_in_one_line(tmp_path, capsys):
    from rewriting.rewrite import main

    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        assert main(["--input", str(_one_request(tmp_path)), "--output", str(locked / "x.jsonl"), "--model", "original"]) == 2
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert err.startswith("error: cannot write --output") and err.count("\n") == 1


@pytest.mark.parametrize("field", ["question", "history"])
def test_cli_lone_surrogate_in_a_line_exits_2_naming_it(tmp_path, capsys, field):
    from rewriting.rewrite import main

    record = {"id": "q", "question": "Why?", "history": ["Hi", "Hello"]}
    record[field] = "Why\ud800?" if field == "question" else ["Hi\udcff", "Hello"]
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps(record) + "\n")  # JSON escapes the surrogate as \ud800
    assert main(["--input", str(src), "--output", str(tmp_path / "out.jsonl"), "--model", "original"]) == 2
    err = capsys.readouterr().err
    assert "line 1: a text holds a lone surrogate" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "question, history, message",
    [
        (None, HISTORY[:2], "question must be a string, not NoneType"),
        ("Why?", "Who was Ada?", "history must be a list of strings.*not str"),
        ("Why?", ["Who was Ada?", 42], "history must be a list of strings, not a list holding int"),
    ],
)
def test_a_question_or_history_of_the_wrong_type_is_refused_not_rewritten_as_its_str(tiny_gpt2, question, history, message):
    # None was rewritten as "None", a string history read letter by letter.
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=2))
    with pytest.raises(TypeError, match=message):
        rewriter.rewrite(question, history)


def test_an_empty_question_is_not_rewritten_into_one_the_model_makes_up(tiny_gpt2):
    # Called directly (the pipeline refuses it first), the trained rewriter
    # turned "" into a sentence of the history.
    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=4))
    assert rewriter.rewrite("  ", HISTORY[:2]) == Rewrite("")
    with pytest.raises(TypeError, match="question must be a string, not NoneType"):
        OriginalRewriter().rewrite(None, [])


@pytest.mark.parametrize(
    "question, history, where",
    [
        ("Why\udcff?", HISTORY[:2], "The question"),
        ("Who was Ada\ud800?", [], "The question"),  # a first turn too, though it skips the model
        ("Why?", ["Who was Ada\udc80?", "A mathematician."], "An earlier turn"),
        ("Why?", ["Who was Ada?", "A mathematician\udc80."], "An earlier turn"),
    ],
)
def test_lone_surrogates_are_refused_with_invalid_input(tiny_gpt2, question, history, where):
    from assistant.kernel import InvalidInputError

    model, tok = tiny_gpt2
    rewriter = CausalLMRewriter(model, tok, RewriterConfig(prompt_format="plain", max_new_tokens=2))
    with pytest.raises(TypeError):
        tok.encode(question + "".join(history))  # what the tokenizer alone would do
    with pytest.raises(InvalidInputError, match=f"^{where}.*not valid text"):
        rewriter.rewrite(question, history)
    with pytest.raises(InvalidInputError, match=f"^{where}"):
        rewriter.rewrite_batch([("Why?", HISTORY[:2]), (question, history)])


# --- a pronoun means the previous question's subject --------------------------

_MICHELANGELO = ["Who was Leonardo da Vinci?", "Leonardo da Vinci was an Italian painter who was active as a painter and engineer.",
                 "Where was Michelangelo born?", "He was born in the Republic of Florence."]
_PARIS = ["What is Paris?", "Paris is the capital of France.", "Which river is Paris on?", "Located on the river Seine, it is a city."]


def test_a_pronoun_put_in_for_another_name_than_the_previous_questions_subject_gets_a_second_look(tiny_gpt2):
    # The model took "he" for the conversation's first subject though the
    # previous question asked about Michelangelo: the turn is searched again,
    # and the beams naming him alone are picked from (not the mix
    # "Michelangelo da Vinci", nor the greedy one, which stay to vote).
    _, tok = tiny_gpt2
    beams = (" Where was Michelangelo da Vinci mostly active?", " Where was Michelangelo mostly active?",
             " Where was Michelangelo mainly active?")
    rewriter = _second_look_rewriter(tok, "Where was Leonardo da Vinci mostly active?", scripted=beams, second_look=3)
    picked = rewriter.rewrite("Where was he mostly active?", _MICHELANGELO)
    assert rewriter.searched == [(1, 3, False)]
    assert picked.text == "Where was Michelangelo mostly active?"
    assert picked.note == "picked a candidate naming Michelangelo: the model's rewrite named someone else"
    assert "Where was Leonardo da Vinci mostly active?" not in picked.alternatives


_CURIE = ["Who was Marie Curie?", "She was a physicist and chemist.", "Where was Marie Curie born?", "She was born in Warsaw."]


def test_a_relative_of_the_same_surname_put_in_for_the_pronoun_gets_a_second_look(tiny_gpt2):
    # Another given name before the subject's surname is another person
    # (her husband), not the subject spelt otherwise: the beams naming her are picked from.
    _, tok = tiny_gpt2
    beams = (" What did Pierre Curie discover?", " What did Marie Curie discover?")
    rewriter = _second_look_rewriter(tok, "What did Pierre Curie discover?", scripted=beams, second_look=2)
    picked = rewriter.rewrite("What did she discover?", _CURIE)
    assert rewriter.searched == [(1, 2, False)]
    assert picked.text == "What did Marie Curie discover?"
    # Her surname alone is her.
    alone = _second_look_rewriter(tok, "What did Curie discover?")
    assert alone.rewrite("What did she discover?", _CURIE) == Rewrite("What did Curie discover?") and alone.searched == []


def test_a_name_word_spelt_otherwise_or_cut_short_is_the_same_word_the_drift_guard_reads():
    # The kernel owns the word rule the second look reads a name put in for a
    # pronoun by: a model mends or cuts a name ("Graz" of "Graziano"), while
    # a short word must be the same ("Ada" is no "Adam").
    same = [("graz", "graziano"), ("graziano", "graz"), ("tchaikovski", "tchaikovsky"), ("nero", "neron"),
            ("marie", "maria"), ("curie", "curie"), ("ada", "ada")]
    other = [("ada", "adam"), ("john", "joan"), ("pierre", "marie"), ("i", "ii"), ("darwin", "charles")]
    assert all(same_name_word(word, other) for word, other in same)
    assert not any(same_name_word(word, other) for word, other in other)
    # Looser than same_name, whose words must be the same.
    assert not same_name("Rocky Graz", "Rocky Graziano")


_SOCRATES = ["Who was Socrates?", "He was a Greek philosopher from Athens.", "Where did Socrates teach?", "He taught in Athens."]


def test_the_subject_goes_in_for_a_he_where_no_candidate_names_it(tiny_gpt2):
    # The candidates named no one, or others than one another: the subject,
    # whom the history calls "he", is put in.
    _, tok = tiny_gpt2
    beams = (" How was he put to death?", " How was Xanthippe put to death?")
    rewriter = _second_look_rewriter(tok, "How was Plato put to death?", scripted=beams, second_look=2)
    picked = rewriter.rewrite("How was he put to death?", _SOCRATES)
    assert rewriter.searched == [(1, 2, False)]
    assert picked == Rewrite("How was Socrates put to death?", "put in Socrates for the pronoun, the previous question's subject",
                             "How was Plato put to death?")
    named = _second_look_rewriter(tok, "How was Socrates put to death?")
    assert named.rewrite("How was he put to death?", _SOCRATES) == Rewrite("How was Socrates put to death?") and named.searched == []


_LANDMARK = ["What is Paris?", "Paris is the capital of France.", "What is the most famous landmark of Paris?",
             "The Eiffel Tower is the most famous landmark of Paris."]


@pytest.mark.parametrize("question, history, greedy, beams", [
    # "it" is the thing the answer named, as the model and every beam say (H1).
    ("How long is it?", _PARIS, "How long is the Seine River?", (" How long is the Seine?", " How long is the river Seine?")),
    ("How tall is it?", _LANDMARK, "How tall is the Eiffel Tower?", (" How tall is the Eiffel Tower?",)),
    # Every candidate named the same other person.
    ("How was he put to death?", _SOCRATES, "How was Plato put to death?", (" How was Plato put to death?",)),
    # Nothing gives Babbage's gender: "she" may be the woman asked about before him (L1).
    ("When was she born?", ["Who was Ada Lovelace?", "Ada Lovelace was an English mathematician.", "Who was Charles Babbage?",
                            "Charles Babbage was an English polymath."], "When was Ada Lovelace born?", (" When was she born?",)),
])
def test_the_subject_is_not_put_in_against_the_candidates_or_without_a_fitting_gender(tiny_gpt2, question, history, greedy, beams):
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, greedy, scripted=beams, second_look=len(beams))
    assert rewriter.rewrite(question, history).text == greedy


def test_a_shorter_form_of_the_subject_is_no_other_name(tiny_gpt2):
    # "Leonardo" is Leonardo da Vinci (L2): no second look, nothing put in.
    _, tok = tiny_gpt2
    history = ["Who was Leonardo da Vinci?", "He was an Italian painter.", "Where was Leonardo da Vinci born?", "He was born in Vinci."]
    rewriter = _second_look_rewriter(tok, "When did Leonardo die?", scripted=(" When did Vinci die?",), second_look=1)
    assert rewriter.rewrite("When did he die?", history) == Rewrite("When did Leonardo die?") and rewriter.searched == []


@pytest.mark.parametrize("question, history, greedy", [
    # "she" cannot be Picasso, whom the history calls "he": the answer's woman stands.
    ("When did she die?", ["Who was Pablo Picasso?", "He was a Spanish painter.", "Who was Picasso's first wife?", "Olga Khokhlova."],
     "When did Olga Khokhlova die?"),
    # "its" cannot be Michelangelo (a "he"): the answer's city stands.
    ("What is its population?", _MICHELANGELO, "What is the population of Florence?"),
    # The previous question named no one ("Who founded it?"), or two.
    ("When was he born?", ["What is Apple?", "A company.", "Who founded it?", "Steve Jobs."], "When was Steve Jobs born?"),
    ("When did he die?", ["Who was Isaac Newton?", "He was a physicist.", "Did Newton know Leibniz?", "Yes."], "When did Newton die?"),
    # "he" after a place nobody asked "Who was …?" of, or a question that names someone itself.
    ("When did he die?", ["Who was Michelangelo?", "He was a sculptor.", "Which river is Florence on?", "The Arno."],
     "When did Michelangelo die?"),
    ("When did Raphael meet him?", _MICHELANGELO, "When did Raphael meet Leonardo da Vinci?"),
    # After a "Who …?" question asking for another person (M1), "he" is as often the one the answer named.
    ("When was he born?", ["Who was Socrates?", "Socrates was a Greek philosopher from Athens.", "Who was Socrates's most famous student?",
                           "Plato was Socrates's most famous student."], "When was Plato born?"),
])
def test_a_pronoun_that_cannot_mean_the_previous_questions_subject_is_left_to_the_model(tiny_gpt2, question, history, greedy):
    _, tok = tiny_gpt2
    rewriter = _second_look_rewriter(tok, greedy, scripted=(" When did Paris die?",), second_look=1)
    assert rewriter.rewrite(question, history) == Rewrite(greedy)
    assert rewriter.searched == []
