"""Twelve three-turn conversations about people and places, end to end.

    python scripts/bench_conversations.py [--set FIELD=VALUE ...] [--rewriter trained]

Each conversation opens with a definitional question ("Who was Pablo
Picasso?", "What is Tokyo?") and goes on with two follow-ups that name the
subject only by a pronoun ("When did he die?", "What river is it on?").
Every fact an answer must contain is a word or number of the subject's own
article in the default collection (the Wikipedia vital-article summaries);
the script checks that before it runs, so a changed collection fails loudly
instead of scoring misses. The turns go through
:func:`assistant.pipeline.build_assistant` (the trained rewriter, the
default index) and the script prints, as JSON, the answers containing their
fact (of 36), the follow-up rewrites naming the subject (of 24), and each
miss. ``--set`` overrides a :class:`~assistant.kernel.ReaderConfig` field
(``--set definitions=true --set short_answers=true``), parsed as its
``CONVQA_*`` variable is.

``--conversations FILE`` asks another set instead: a JSONL file, one
conversation a line, ``{"title": ARTICLE, "name": NAME, "turns": [[QUESTION,
FACT], ...]}`` (the tuples below), checked against the articles the same way.
A turn about another subject than the conversation's (a long conversation
that moves on to a new person or place and comes back) says which:
``[QUESTION, FACT, ARTICLE, NAME]``, its fact checked against that article
and its rewrite against that name; NAME may be a list of names, all of
which the rewrite must hold (a comparison: "Which of the two was older?").

``--compare FIELD=VALUE[,FIELD=VALUE]`` (repeatable) also reads every turn
with a variant sentence reader (the same encoder, the run's ReaderConfig
with those fields changed) on the same rewrite and the same retrieved
passages, and counts its answers with their fact: one pass of the
rewriter for several reader settings. The follow-ups' rewrites then rest
on the main run's answers, not the variant's, so a variant's count is a
reader comparison at fixed rewrites; a ``--set`` run is the full one.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from pathlib import Path

# Run as a file (python scripts/bench_conversations.py): the repository root is not on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assistant.kernel import (  # noqa: E402
    CommandParser,
    ConfigError,
    Conversation,
    DataFormatError,
    ReaderConfig,
    from_env,
    json_lines,
    run_cli,
)

# (article title, the name a follow-up's rewrite must contain, [(question, fact), ...]).
# The facts were read off the articles (read_collection()), not off answers.
CONVERSATIONS = [
    ("Pablo Picasso", "Picasso", [
        ("Who was Pablo Picasso?", "painter"),
        ("What is his most famous anti-war painting?", "Guernica"),
        ("When did he die?", "1973"),
    ]),
    ("William Shakespeare", "Shakespeare", [
        ("Who was William Shakespeare?", "playwright"),
        ("How many plays did he write?", "39"),
        ("How many sonnets did he write?", "154"),
    ]),
    ("Cleopatra", "Cleopatra", [
        ("Who was Cleopatra?", "Egypt"),
        ("What was her first language?", "Greek"),
        ("What did Egypt become after her death?", "Roman"),
    ]),
    ("Marie Curie", "Curie", [
        ("Who was Marie Curie?", "physicist"),
        ("With whom did she share the Nobel Prize in Physics?", "Pierre"),
        ("Which elements did she discover?", "polonium"),
    ]),
    ("Albert Einstein", "Einstein", [
        ("Who was Albert Einstein?", "physicist"),
        ("What is he best known for?", "relativity"),
        ("When did he receive the Nobel Prize in Physics?", "1921"),
    ]),
    ("Queen Victoria", "Victoria", [
        ("Who was Queen Victoria?", "United Kingdom"),
        ("When did she die?", "1901"),
        ("What title did she get in 1876?", "Empress of India"),
    ]),
    ("Abraham Lincoln", "Lincoln", [
        ("Who was Abraham Lincoln?", "president"),
        ("When was he assassinated?", "1865"),
        ("Which war did he lead the country through?", "Civil War"),
    ]),
    ("Nelson Mandela", "Mandela", [
        ("Who was Nelson Mandela?", "apartheid"),
        ("When did he become president?", "1994"),
        ("Which party did he lead?", "African National Congress"),
    ]),
    ("Galileo Galilei", "Galileo", [
        ("Who was Galileo Galilei?", "astronomer"),
        ("Where was he born?", "Pisa"),
        ("What has he been called the father of?", "observational astronomy"),
    ]),
    ("Paris", "Paris", [
        ("What is Paris?", "capital"),
        ("Which river is it on?", "Seine"),
        ("What is its nickname?", "City of Light"),
    ]),
    ("Tokyo", "Tokyo", [
        ("What is Tokyo?", "Japan"),
        ("What is its population?", "14 million"),
        ("How many people live in its greater area?", "33 million"),
    ]),
    ("Mount Everest", "Everest", [
        ("What is Mount Everest?", "highest mountain"),
        ("Which border does it mark?", "Nepal"),
        ("How high is it?", "8,848"),
    ]),
]


def check_facts(conversations=CONVERSATIONS, collection=None) -> None:
    """Raise DataFormatError unless every fact is in its subject's article."""
    from assistant.retrieval import read_collection

    articles: dict[str, str] = {}
    for passage in read_collection(collection):
        articles[passage["title"]] = articles.get(passage["title"], "") + " " + passage["contents"]
    for title, name, turns in conversations:
        for question, fact, *subject in turns:
            article, _ = turn_subject(title, name, subject)
            if article not in articles:
                raise DataFormatError(f"the collection has no article titled {article!r}; pick another subject")
            if fact.lower() not in articles[article].lower():
                raise DataFormatError(f"{article!r}: the fact {fact!r} for {question!r} is not in its article")


def turn_subject(title: str, name: str, subject) -> tuple[str, list[str]]:
    """A turn's article and the names its rewrite must hold: the
    conversation's, or the turn's own ``[ARTICLE, NAME]`` (NAME a name or a
    list of names)."""
    if subject:
        title, name = subject
    return title, [name] if isinstance(name, str) else list(name)


def read_conversations(path) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The conversations of a JSONL file (see the module's docstring), as
    :data:`CONVERSATIONS` holds them; :class:`DataFormatError` names the line
    of one that is not in that shape."""
    conversations = []
    for where, record in json_lines(path):
        turns = record.get("turns") if isinstance(record, dict) else None
        texts = [record.get("title"), record.get("name")] if isinstance(record, dict) else [None]
        if not (all(_text(t) for t in texts) and isinstance(turns, list) and turns and all(map(_turn, turns))):
            raise DataFormatError(f'{where}: give {{"title": ARTICLE, "name": NAME, "turns": [[QUESTION, FACT], ...]}}, '
                                  'a turn about another subject [QUESTION, FACT, ARTICLE, NAME or [NAME, ...]]')
        conversations.append((record["title"], record["name"], [tuple(t) for t in turns]))
    if not conversations:
        raise DataFormatError(f"{path}: no conversations in it")
    return conversations


def _text(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _turn(turn) -> bool:
    if not (isinstance(turn, list) and len(turn) in (2, 4) and all(_text(x) for x in turn[:3])):
        return False
    if len(turn) == 2:
        return True
    names = turn[3]
    return _text(names) or (isinstance(names, list) and bool(names) and all(_text(n) for n in names))


def reader_settings(pairs: list[str], flag: str = "--set") -> dict[str, str]:
    """``FIELD=VALUE`` pairs as ``CONVQA_FIELD`` variables: the kernel's
    ``from_env`` parses and checks them, as it does for the app. A bad pair
    is refused here, before anything loads, naming ``flag`` and the pair
    (not the variable, which the user never typed)."""
    fields = {f.name for f in dataclasses.fields(ReaderConfig)}
    variables = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            raise ConfigError(f"{flag} {pair!r}: give FIELD=VALUE with FIELD one of {', '.join(sorted(fields))}")
        variable = f"CONVQA_{name.upper()}"
        try:
            _from_variables(ReaderConfig(), {variable: value})
        except ConfigError as error:
            reason = str(error)
            if reason.startswith(f"{variable}="):  # the parser's "CONVQA_X='v': x must be ..."
                reason = reason.partition(": ")[2]
            reason = reason.removesuffix(f" (from its command-line flag, or {variable})")  # the range check's
            raise ConfigError(f"{flag} {pair!r}: {reason}") from None
        variables[variable] = value
    return variables


def variant_config(base: ReaderConfig, pairs: list[str]) -> ReaderConfig:
    """``base`` with the ``FIELD=VALUE`` pairs applied, parsed by ``from_env``."""
    return _from_variables(base, reader_settings(pairs, "--compare"))


def _from_variables(base: ReaderConfig, variables: dict[str, str]) -> ReaderConfig:
    saved = {name: os.environ.get(name) for name in variables}
    os.environ.update(variables)
    try:
        return from_env(base)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name)
            else:
                os.environ[name] = value


def score(assistant, conversations=CONVERSATIONS, *, variants=(), progress=lambda it, **_: it) -> dict:
    """Run the conversations; count answers with their fact and follow-up
    rewrites naming their subject (both case-insensitive), and list misses.
    ``variants``: (label, reader) pairs that also read each turn's rewrite
    and passages."""
    found = named = follow_ups = answers = 0
    misses = []
    compared = [{"set": label, "answers_with_fact": 0, "misses": []} for label, _ in variants]
    for title, name, turns in progress(conversations, desc="conversations", unit="conversation"):
        conversation = Conversation()
        for number, (question, fact, *subject) in enumerate(turns, start=1):
            article, names = turn_subject(title, name, subject)
            turn = assistant.ask(question, conversation)
            conversation.add(turn)
            answers += 1
            record = {"subject": article, "turn": number, "question": question, "rewrite": turn.rewrite.text,
                      "answer": turn.answer.text}
            if fact.lower() in turn.answer.text.lower():
                found += 1
            else:
                misses.append({"miss": "fact", "expected": fact, **record})
            for (_, reader), tally in zip(variants, compared):
                answer = reader.read(turn.rewrite.text, turn.sources).text
                if fact.lower() in answer.lower():
                    tally["answers_with_fact"] += 1
                else:
                    tally["misses"].append({"miss": "fact", "expected": fact, **record, "answer": answer})
            if number > 1:
                follow_ups += 1
                if all(n.lower() in turn.rewrite.text.lower() for n in names):
                    named += 1
                else:
                    misses.append({"miss": "rewrite", "expected": " and ".join(names), **record})
    return {"answers_with_fact": found, "answers": answers, "rewrites_naming_subject": named,
            "follow_ups": follow_ups, "misses": misses, "variants_at_fixed_rewrites": compared}


def main(argv=None) -> int:
    return run_cli(_main, argv, interrupted="nothing was scored")


def _main(argv) -> int:
    parser = CommandParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                        help="override a ReaderConfig field (repeatable), e.g. definitions=true")
    parser.add_argument("--rewriter", default="trained", help="trained (default), prompted, original or a model path")
    parser.add_argument("--compare", action="append", default=[], metavar="FIELD=VALUE[,FIELD=VALUE]",
                        help="also read each turn with these reader settings, at the same rewrites (repeatable)")
    parser.add_argument("--conversations", metavar="FILE",
                        help="ask the conversations of this JSONL file instead of the twelve (see the docstring)")
    args = parser.parse_args(argv)
    os.environ.update(reader_settings(args.set))
    wanted = [[pair for pair in group.split(",") if pair.strip()] for group in args.compare]
    for group in wanted:
        reader_settings(group, "--compare")  # refuse a bad --compare before loading anything
    conversations = read_conversations(args.conversations) if args.conversations else CONVERSATIONS
    check_facts(conversations)

    from tqdm import tqdm

    from assistant.pipeline import build_assistant
    from assistant.readers import SentenceReader

    assistant = build_assistant(rewriter=args.rewriter)
    if wanted and not isinstance(assistant.reader, SentenceReader):
        raise ConfigError("--compare varies the sentence reader; run with the sentence reader")
    variants = [
        (",".join(group), SentenceReader(assistant.reader.encoder, variant_config(assistant.reader.config, group)))
        for group in wanted
    ]
    result = score(assistant, conversations, variants=variants, progress=lambda it, **kw: tqdm(it, file=sys.stderr, **kw))
    reading = assistant.reader.config if hasattr(assistant.reader, "config") else None
    settings = {"rewriter": args.rewriter, "reader": assistant.config.reader,
                "reader_config": dataclasses.asdict(reading) if isinstance(reading, ReaderConfig) else None}
    print(json.dumps({**settings, **result}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
