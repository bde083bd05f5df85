"""Two tabs of one browser, which share the copy of the conversations the
browser keeps: each saves all of its own over it, and folds in what the other
saved (merge_saved), so that neither loses the other's turns."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import seal_browser_copy

from assistant import session as S
from assistant.kernel import DataFormatError

ADA = "Who was Ada Lovelace?"
# The key a page's copy is encrypted with (the server's, given to the page).
SECRET = "test-secret"


def play(services, session, question):
    for _ in S.ask(services, session, question):
        pass


def written(session):
    """What the tab's save writes to the browser: plain JSON."""
    return json.loads(json.dumps(S.saved_state(session)))


def tab(copy_):
    """A tab opened on the browser's copy."""
    session = S.Session()
    S.restore_state(session, copy_)
    return session


def sealed(copy_):
    """A copy as the browser keeps it, and the page hands it to the server."""
    return seal_browser_copy(SECRET, copy_)


def questions(copy_):
    """Every conversation's questions in a browser's copy, as a set of tuples."""
    return {tuple(t["turn"]["question"] for t in turns) for turns in copy_["conversations"].values()}


def test_two_tabs_that_both_saved_keep_every_turn_of_both(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    start = written(opened)
    first, second = tab(start), tab(start)
    # The first tab asks two questions in the conversation both show; the
    # second (opened earlier) asks one there, then one in a new conversation.
    play(app_services, first, "Who was her father?")
    play(app_services, first, "What did she write about?")
    play(app_services, second, "When was she born?")
    S.new_conversation(second)
    play(app_services, second, "What is Paris?")
    # Both saved before either heard of the other: the second's copy is the browser's.
    first_copy, second_copy = written(first), written(second)
    assert S.merge_saved(first, second_copy) == (
        "Another tab of this browser saved: conversations 2, 3 added to Your conversations.")
    assert S.merge_saved(second, first_copy) == (
        "Another tab of this browser saved: conversation 3 added to Your conversations.")
    every = {(ADA, "Who was her father?", "What did she write about?"), (ADA, "When was she born?"), ("What is Paris?",)}
    assert questions(written(first)) == questions(written(second)) == every
    # Each hears of the other's save of that: nothing changes, nothing more to save.
    assert S.merge_saved(first, written(second)) == "" and S.merge_saved(second, written(first)) == ""
    # Each tab goes on with its own conversation.
    assert [t.turn.question for t in first.turns][-1] == "What did she write about?"
    assert second.conversation_no == 2 and [t.turn.question for t in second.turns] == ["What is Paris?"]
    # A reload reads back all of it.
    assert questions(written(tab(written(first)))) == every


def test_a_tab_that_changed_nothing_takes_the_other_tabs_turns_thumbs_and_undo(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    play(app_services, opened, "Who was her father?")
    S.new_conversation(opened)
    play(app_services, opened, "What is Paris?")
    start = written(opened)
    first, second = tab(start), tab(start)
    S.switch_conversation(first, 1)
    S.judge(app_services, first, 0, 1)
    S.undo(first)
    play(app_services, first, "What did she write about?")
    assert S.merge_saved(second, written(first)) == (
        "Another tab of this browser saved: conversation 1 brought up to date.")
    [one] = [turns for key, turns in written(second)["conversations"].items() if key == "1"]
    assert [t["turn"]["question"] for t in one] == [ADA, "What did she write about?"]  # undone, asked anew
    assert one[0]["info"]["judgement"] == 1
    # The conversation the second tab shows is brought up to date in place.
    play(app_services, first, "When was she born?")
    S.switch_conversation(second, 1)
    assert S.merge_saved(second, written(first)) == (
        "Another tab of this browser saved: this conversation was brought up to date.")
    assert [t.turn.question for t in second.turns] == [ADA, "What did she write about?", "When was she born?"]
    # The turn its correction box and thumbs act on (the last, before) stays
    # that turn: a correction being typed is not applied to the other's turn.
    assert S.target_turn(second) == 1
    assert S.merge_saved(second, written(first)) == ""


def test_a_conversation_both_tabs_changed_is_kept_twice_and_a_running_turns_is_not_replaced(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    start = written(opened)
    first, second = tab(start), tab(start)
    S.judge(app_services, first, 0, 1)
    S.judge(app_services, second, 0, 0)
    status = S.merge_saved(first, written(second))
    assert status == "Another tab of this browser saved: conversation 2 added to Your conversations."
    judged = sorted(turns[0]["info"]["judgement"] for turns in written(first)["conversations"].values())
    assert judged == [0, 1]
    # Theirs goes on from the conversation this tab shows, but a turn of this
    # tab runs in it: theirs is kept beside it, not put in its place.
    third = tab(start)
    play(app_services, first, "Who was her father?")
    third.running = 1
    assert S.merge_saved(third, written(first)).endswith("added to Your conversations.")
    assert [t.turn.question for t in third.turns] == [ADA]
    assert (ADA, "Who was her father?") in questions(written(third))


def test_what_another_tab_had_and_this_one_dropped_or_moved_on_from_stays_out(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    start = written(opened)
    first, second = tab(start), tab(start)
    S.undo(first)  # its only turn: the conversation is empty, and not saved
    assert S.merge_saved(first, written(second)) == ""  # the second still has it, as read
    assert written(first)["conversations"] == {"1": []}
    play(app_services, second, "Who was her father?")
    assert S.merge_saved(second, start) == ""  # an older copy: what it had read
    assert questions(written(second)) == {(ADA, "Who was her father?")}
    # The tab whose page opened on no copy (it never read one) went on from
    # what the other has: only the other's new conversation is added.
    play(app_services, opened, "When was she born?")
    third = tab(start)
    S.new_conversation(third)
    play(app_services, third, "What is Paris?")
    assert S.merge_saved(opened, written(third)) == (
        "Another tab of this browser saved: conversation 2 added to Your conversations.")
    assert questions(written(opened)) == {(ADA, "When was she born?"), ("What is Paris?",)}


def test_merged_conversations_keep_to_the_copys_limits_oldest_first(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    [turn] = written(opened)["conversations"]["1"]

    def conversations(numbers, tag):
        made = {}
        for number in numbers:
            entry = copy.deepcopy(turn)
            entry["turn"]["question"], entry["info"]["uid"] = f"{tag} {number}?", f"{tag}{number}"
            made[str(number)] = [entry]
        return {"version": 1, "id": "abc", "current": max(numbers), "conversations": made}

    mine, theirs = tab(conversations(range(1, 16), "mine")), conversations(range(1, 16), "theirs")
    assert S.merge_saved(mine, theirs).startswith("Another tab of this browser saved: conversations ")
    kept = written(mine)["conversations"]
    assert len(kept) == S.MAX_CONVERSATIONS
    # The ten oldest of this tab's went first; its current one stays.
    assert {turns[0]["turn"]["question"] for turns in kept.values()} == (
        {f"mine {n}?" for n in range(11, 16)} | {f"theirs {n}?" for n in range(1, 16)})
    assert mine.conversation_no == 15 and mine.turns[0].turn.question == "mine 15?"
    # Room for fewer: the oldest go first, within the characters a browser keeps.
    small = tab(conversations(range(1, 6), "mine"))
    limit = len(json.dumps(written(small)))
    S.merge_saved(small, conversations(range(1, 6), "theirs"))
    assert len(json.dumps(S.saved_state(small, limit))) <= limit


def test_an_unreadable_copy_from_another_tab_is_refused_and_changes_nothing(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    before = written(opened)
    for bad in ("text", {"version": 1}, {"version": 1, "current": 1, "conversations": {"1": [{"turn": {}}]}}):
        with pytest.raises(DataFormatError):
            S.merge_saved(opened, bad)
    assert written(opened) == before


def test_a_copy_cut_to_the_browsers_room_is_the_same_conversation(app_services):
    # Near its size limit a copy drops the sources of the current
    # conversation's oldest turns: the other tab read that as a conversation
    # changed in both, and kept it twice.
    opened = S.Session()
    play(app_services, opened, ADA)
    play(app_services, opened, "Who was her father?")
    whole = written(opened)
    cut = json.loads(json.dumps(S.saved_state(opened, len(json.dumps(whole)) - 10)))
    assert cut["conversations"]["1"][0]["turn"]["sources"] == [] != whole["conversations"]["1"][0]["turn"]["sources"]
    other = tab(whole)
    play(app_services, other, "What did she write about?")
    assert S.merge_saved(other, cut) == ""
    assert questions(written(other)) == {(ADA, "Who was her father?", "What did she write about?")}


def test_the_page_saves_after_another_tabs_save_only_when_it_brought_something(app_services, tmp_path):
    # Each tab's save is the other's storage event: a save of nothing new
    # would have the two answer each other for ever.
    import app

    act = app.Actions(app_services, str(tmp_path))
    first, second = S.Session(), S.Session()
    act.restore(None, first)
    act.take(ADA, first)
    *_, views = act.ask(first, None)
    act.restore(views[-1], second)
    assert act.other_tab_saved(sealed(written(second)), first, None, secret=SECRET) == act.unchanged()
    act.take("Who was her father?", first)
    *_, views = act.ask(first, None)
    chat, status, _, _, box, _, _, saved = act.other_tab_saved(sealed(views[-1]), second, None, secret=SECRET)
    assert "this conversation was brought up to date" in status and len(chat["value"]) == 6  # 3 messages a turn
    # The correction box corrects the turn it did (the last before), and
    # keeps what is typed in it: that turn's rewrite did not change.
    assert "value" not in box and box["label"] == "Correct the rewrite of turn 1"
    assert questions(saved) == {(ADA, "Who was her father?")}
    assert act.other_tab_saved(sealed(saved), first, None, secret=SECRET) == act.unchanged()
    S.correct(app_services, first, 0, "Who was Ada Lovelace, the mathematician?")
    *_, box, _, _, _ = act.other_tab_saved(sealed(act.views(first)[-1]), second, None, secret=SECRET)
    assert box["value"] == "Who was Ada Lovelace, the mathematician?"  # that rewrite changed: shown as it is now
    # A turn of this tab under way: the chat it streams into and the copy it saves at its end are left to it.
    second.running = 1
    S.new_conversation(first)
    act.take("What is Paris?", first)
    *_, views = act.ask(first, None)
    chat, status, *_, choices, saved = act.other_tab_saved(sealed(views[-1]), second, None, secret=SECRET)
    assert chat == saved == app.gr.skip() and "added to Your conversations" in status
    assert [label for label, _ in choices["choices"]] == [f"1: {ADA}", "2: What is Paris?"]
    # What this tab cannot read is said, and nothing is saved over it.
    chat, status, *_, saved = act.other_tab_saved(sealed({**views[-1], "version": 99}), first, None, secret=SECRET)
    assert status.replace("\\", "") == ("⚠️ What another tab of this browser saved could not be read: saved conversations "
                                        "are from another version of the app. Reload this page before going on: what it "
                                        "saves next would replace it.")
    assert chat == saved == app.gr.skip()


def test_turns_saved_before_turns_had_uids_are_matched_by_the_turn(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    play(app_services, opened, "Who was her father?")
    longer = written(opened)
    for turn in longer["conversations"]["1"]:
        turn["info"]["uid"] = ""
    shorter = copy.deepcopy(longer)
    shorter["conversations"]["1"].pop()
    reader = tab(shorter)
    assert S.merge_saved(reader, longer) == "Another tab of this browser saved: this conversation was brought up to date."
    assert questions(written(reader)) == {(ADA, "Who was her father?")}


def test_a_conversation_undone_to_nothing_in_one_tab_goes_from_the_others_and_stays_gone(app_services):
    # Merging only added: the other tab still held the conversation, and
    # its next save (or a reload after it) brought it back.
    opened = S.Session()
    play(app_services, opened, ADA)
    S.new_conversation(opened)
    play(app_services, opened, "What is Paris?")
    start = written(opened)
    first, second, third, showing, going_on = (tab(start) for _ in range(5))
    S.switch_conversation(first, 1)
    S.undo(first)
    undone = written(first)
    assert questions(undone) == {("What is Paris?",)} and undone["removed"] == [start["conversations"]["1"][0]["info"]["uid"]]
    assert S.merge_saved(second, undone) == "Another tab of this browser saved: conversation 1 removed, as in that tab."
    assert questions(written(second)) == {("What is Paris?",)}
    assert questions(written(tab(written(second)))) == {("What is Paris?",)}  # a reload
    # A tab that hears only the second's save (the latest is all a page hands on) drops it too.
    assert S.merge_saved(third, written(second)).endswith("conversation 1 removed, as in that tab.")
    # The conversation a tab shows is emptied, as in the tab that undid it.
    S.switch_conversation(showing, 1)
    assert S.merge_saved(showing, undone) == "Another tab of this browser saved: this conversation was brought up to date."
    assert showing.turns == [] and questions(written(showing)) == {("What is Paris?",)}
    # A tab that went on with it keeps it, and so, back from it, does the
    # tab that undid it: in the empty conversation it shows, which had its number.
    S.switch_conversation(going_on, 1)
    play(app_services, going_on, "Who was her father?")
    assert S.merge_saved(going_on, undone) == ""
    assert S.merge_saved(first, written(going_on)) == (
        "Another tab of this browser saved: this conversation was brought up to date.")
    assert "removed" not in written(first) and (ADA, "Who was her father?") in questions(written(first))
    assert first.conversation_no == 1 and [t.turn.question for t in first.turns] == [ADA, "Who was her father?"]


def test_the_removed_conversations_a_copy_keeps_are_bounded_checked_and_optional(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    before = written(opened)  # as a copy from before copies kept what was removed
    assert "removed" not in before
    assert questions(written(tab(before))) == {(ADA,)}
    many = {**before, "removed": [f"gone{n}" for n in range(S.MAX_REMOVED + 10)]}
    reader = tab(many)
    assert written(reader)["removed"] == many["removed"][-S.MAX_REMOVED:]
    S.undo(reader)
    removed = written(reader)["removed"]
    assert len(removed) == S.MAX_REMOVED and removed[-1] == before["conversations"]["1"][0]["info"]["uid"]
    for bad in ("gone1", [1], {"a": 1}):
        with pytest.raises(DataFormatError, match="wrong type"):
            tab({**before, "removed": bad})


def test_the_server_opens_the_copy_as_the_browser_keeps_it_with_its_own_key_only(app_services):
    opened = S.Session()
    play(app_services, opened, ADA)
    copy_ = written(opened)
    assert S.open_browser_copy(sealed(copy_), SECRET) == copy_
    kept = sealed(copy_)
    for bad in (seal_browser_copy("another secret", copy_), "not a copy", kept[:-8], kept.replace(":", ":x", 1),
                seal_browser_copy(SECRET, "x" * (3 * S.MAX_RESTORED_CHARS + 10))):
        with pytest.raises(DataFormatError, match="not a copy this app saved with this server's key"):
            S.open_browser_copy(bad, SECRET)


VOLCANO = "Mount Kessel is a dormant volcano. It last erupted in 1723."


def test_an_empty_tab_takes_another_tabs_first_conversation_as_its_own_first(app_services):
    # A tab opened empty filed the other tab's conversation 1 as "conversation
    # 2 added", beside an empty conversation 1 of its own.
    asking, empty = S.Session(), S.Session()
    S.restore_state(asking, None)
    S.restore_state(empty, None)
    play(app_services, asking, ADA)
    assert S.merge_saved(empty, written(asking)) == (
        "Another tab of this browser saved: this conversation was brought up to date.")
    assert empty.conversation_no == 1 and [t.turn.question for t in empty.turns] == [ADA]
    assert S.conversation_choices(empty) == [(f"1: {ADA}", 1)]
    assert written(empty)["conversations"] == written(asking)["conversations"]
    assert S.merge_saved(asking, written(empty)) == ""  # nothing new either way
    # An empty tab answering from another source keeps its own, and theirs beside it.
    other = S.Session()
    S.restore_state(other, None)
    S.use_document(app_services, other, VOLCANO, "Volcano")
    assert S.merge_saved(other, written(asking)) == (
        "Another tab of this browser saved: conversation 2 added to Your conversations.")
    assert other.turns == [] and other.source.name == "the document “Volcano” (1 passage)"
    assert S.switch_conversation(other, 2, app_services).endswith(f"Its answers come from {app_services.collection_name}.")
    # So does a tab whose question waits to be asked in it.
    waiting = S.Session()
    S.restore_state(waiting, None)
    S.take_question(app_services, waiting, "What is Paris?")
    assert S.merge_saved(waiting, written(asking)).endswith("conversation 2 added to Your conversations.")


def test_a_conversation_another_tab_removed_lets_go_of_its_document(app_services):
    opened = S.Session()
    S.restore_state(opened, None)
    S.use_document(app_services, opened, VOLCANO, "Volcano")
    play(app_services, opened, "When did Mount Kessel last erupt?")
    S.use_default_collection(app_services, opened)  # conversation 2
    play(app_services, opened, ADA)
    start = written(opened)
    assert start["sources"]["1"] == {"kind": "document", "name": "the document “Volcano” (1 passage)"}
    assert S.merge_saved(opened, start) == ""  # as the page hears its own save back: read
    undoing = tab(start)
    S.switch_conversation(undoing, 1)
    S.undo(undoing)
    assert app_services.held_text.bytes == len(VOLCANO)
    assert S.merge_saved(opened, written(undoing)) == (
        "Another tab of this browser saved: conversation 1 removed, as in that tab.")
    assert app_services.held_text.bytes == 0 and opened.sources == {}
