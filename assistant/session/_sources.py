"""Where a session's answers come from: the default index, uploads, one
document; and multiple choice over a document."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import re
import threading
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..kernel import (LUCENE_STOPWORDS, NO_STOP, AssistantError, InvalidInputError, StopSignal, composed_text, counted,
                      folded_text, porter_stem, tokens)
from ..pipeline import Assistant, validate_question
from ..readers import answer_multiple_choice
from ..retrieval import READ_SUFFIXES, ChunkRetriever, DeferredRescorer, split_passages
from ._serving import client_network
from ._shares import HeldShare, fair_share, together
from ._state import COLLECTION, Origin, Services, Session, Source, new_token
from ._store import enter_conversation, new_conversation
from ._uploads import MB, check_uploads, index_uploads, read_titled, shown_name
from ._views import OPTION_LETTERS


def assistant_for(services: Services, session: Session) -> Assistant:
    """The assistant that answers ``session``: the served one, or the same
    with the session's own source and that source's rescorer (its uploads'
    or its document's vectors, or none: BM25's order; the served index's
    vectors would leave each of a source's hits to be encoded during the
    turn)."""
    if session.source is None:
        return services.assistant
    return dataclasses.replace(services.assistant, retriever=session.source.retriever, rescorer=session.source.rescorer)


def _set_source(session: Session, source: Source | None) -> str:
    """Answer from ``source`` (None: the default collection) from now on;
    returns what to add to the status. A conversation under way starts
    anew: its follow-ups would be rewritten against the other source's
    subject ("When did it last erupt?" after a lighthouse document became
    "When did the Keepers of the Keepers last erupt?"). The source already
    in use changes nothing, unless the conversation waits to take another
    one again (waiting_for): "Back to the default collection" then ends
    the wait. The conversation left keeps its own source
    (Session.sources): it is answered from it again when picked again."""
    if source is session.source:
        if source is None and waiting_for(session) is not None:
            session.set_source(None)
        return ""
    started = bool(session.turns)
    if started:
        new_conversation(session)
    session.set_source(source)
    if not started:
        return ""
    return f" A new conversation starts for it (conversation {session.conversation_no}; the last one is kept in Your conversations)."


def use_uploads(services: Services, session: Session, paths: Sequence[str | Path], client: str | None = None) -> str:
    """Index the uploads for this session and answer from them from now on.
    The indexes the sessions of ``client`` (:func:`client_address`; None:
    not counted) hold at once are bounded by ``services.limits.client_indexes``,
    those of its network's clients by ``network_indexes``."""
    with _reading(session):
        return _answering(session, _uploads(services, session, paths, client))


@contextlib.contextmanager
def _reading(session: Session) -> Iterator[None]:
    """Held while files are read into ``session``'s new source, which may
    take minutes: a question asked meanwhile waits for it (:func:`await_source`),
    as one asked while a source is read again does. It was answered from the
    default collection, and the conversation it went to was then left for
    the upload's, so the question seemed lost."""
    session.taking.acquire()
    try:
        yield
    finally:
        session.taking.release()


def _uploads(services: Services, session: Session, paths: Sequence[str | Path], client: str | None,
             token: str = "") -> Source:
    """The source of :func:`use_uploads`, its share taken; ``token``: the
    one it had, read again (see :func:`_remembered`)."""
    limits = services.limits
    # The session's own index goes when the new one replaces it (unless a
    # conversation under way keeps it), and so does the count of the one a
    # page gone (reloaded) made of the same files (Source.uncount).
    own = session.replaced()
    owns = [source for source in (own, _made_before(services, token)) if source is not None
            and source.kind == "uploads"]
    # The indexes its conversations hold go (once this one is made), if that makes room.
    spare = [source for source in session.spareable() if source.kind == "uploads"]
    claim, spared = _take_sparing(lambda freed: services.client_indexes.take(client, 1, limits.client_indexes, freed),
                                  owns, spare,
                                  lambda holders: sum(_client_share_of(holder, client) for holder in holders))
    hint = ("Close a page you no longer need (its indexes go an hour later; each of its conversations keeps the "
            "uploads it was answered from), then index these again. Questions are still answered.")
    if claim is None:
        services.refusals.refused("an index of uploads", client, f"its sessions hold {limits.client_indexes}")
        raise InvalidInputError(
            f"Your other pages or sessions already answer from {limits.client_indexes} "
            f"index{'es' if limits.client_indexes != 1 else ''} of uploads, the most one visitor may hold at once. "
            f"{hint}")
    network = client_network(client)
    ours, spared = _take_sparing(lambda freed: services.network_indexes.take(network, 1, limits.network_indexes, freed),
                                 owns, spare,
                                 lambda holders: sum(_network_share_of(holder, network) for holder in holders), spared)
    if ours is None:
        claim.give_back()
        services.refusals.refused("an index of uploads", network, f"its visitors' sessions hold {limits.network_indexes}")
        raise InvalidInputError(
            f"Visitors of your network ({network}) already answer from {limits.network_indexes} "
            f"index{'es' if limits.network_indexes != 1 else ''} of uploads, the most one network may hold at once. "
            f"{hint}")
    claim = together((claim, ours), 1, client)
    try:
        index = index_uploads(paths, limits, services.assistant.retriever_config, services.sessions_root)
    except BaseException:
        claim.give_back()
        raise
    session.spare(spare if spared else [])
    rescorer = services.assistant.rescorer_for(index.retriever, "your documents' passages")
    files = tuple(str(Path(path)) for path in paths)
    return _remembered(services, Source(Origin("uploads", index.describe(), files=files), index.retriever,
                                        index=index, rescorer=rescorer, client_share=claim), token)


def _answering(session: Session, source: Source) -> str:
    """Answer from ``source`` from now on (:func:`_set_source`); the status that says so."""
    started = _set_source(session, source)
    return f"Answering from {session.source.name}.{started}"


def _network_share_of(own, network: str | None) -> int:
    """What of ``network``'s share ``own`` holds: its client's share
    (:func:`_client_share_of`) stands for its network's too."""
    share = getattr(own, "client_share", None)
    if share is None or not share.held or share.client is None or client_network(share.client) != network:
        return 0
    return share.size


def _client_share_of(own, client: str | None) -> int:
    """What of ``client``'s share ``own`` holds (a session's source or
    replay, or None), which goes when the new one replaces it."""
    share = getattr(own, "client_share", None)
    return share.size if share is not None and share.held and share.client == client else 0


def _made_before(services: Services, token: str) -> Source | None:
    """The source made of the files of ``token`` before, by a page gone
    (reloaded): the one read again now replaces it (:meth:`Source.uncount`)."""
    before = services.uploaded.holder(token)
    return before if before is not None and before.page_gone else None


def use_document(services: Services, session: Session, text: str, name: str = "your document",
                 client: str | None = None, *, title: str = "") -> str:
    """Converse about one document: retrieval runs inside it (CoQA's setting).
    ``services.limits`` bound its size as they bound an upload's, the text
    the sessions of ``client`` (:func:`client_address`; None: not counted)
    hold in memory, and the text all of ``services``' sessions hold.
    ``title`` (an article of the collection) says how to take it again once let go."""
    return _answering(session, _document(services, session, text, name, client, title))


def _document(services: Services, session: Session, text: str, name: str, client: str | None, title: str = "",
              files: tuple[str, ...] = (), token: str = "", heading: str = "") -> Source:
    """A one-document source over ``text`` (see :func:`use_document`), its
    shares of the budgets taken; ``files``: the upload it was read from,
    ``token``: the one it had, read again (see :func:`_remembered`);
    ``heading``: the file's own title (read_titled), its passages' title
    in place of ``name``."""
    limits = services.limits
    # As an uploaded file's text is (read_titled): a paste from a PDF viewer
    # writes "\ufb01nance", which no question's "finance" matched.
    text = composed_text((text or "").strip())
    if not text:
        raise InvalidInputError("Paste a document, upload one, or give the title of an article first.")
    size = len(text.encode("utf-8", "replace"))
    if size > limits.max_file_bytes:
        raise InvalidInputError(
            f"{name} is {size / MB:.1f} MB of text; documents are limited to {limits.max_file_mb:g} MB."
        )
    # Given back when its source closes.
    own = session.replaced()
    held, mine = hold_text(services, own if own is not None and own.kind == "document" else None, size, client,
                           "document", session, _made_before(services, token) if token else None)
    passages = split_passages(text, re.sub(r"\W+", "-", name).strip("-") or "doc", title=heading or name)
    origin = Origin("document", f"the document “{name}” ({counted(len(passages), 'passage')})", title, files)
    rescorer = services.assistant.document_rescorer(passages, f"the passages of “{name}”")
    return Source(origin, ChunkRetriever(passages), rescorer=rescorer, text=text, held=held, client_share=mine)


def hold_text(services: Services, own, size: int, client: str | None, what: str,
              session: Session | None = None, before: Source | None = None) -> tuple[HeldShare, HeldShare]:
    """Shares of ``size`` bytes of text a session is to hold in memory, a
    one-document source's or a replayed file's (``what``: "document" or
    "file"): ``client``'s (``limits.client_held_mb``), its network's
    (:func:`client_network`, ``limits.network_held_mb``; one share with the
    client's), then the server's (``limits.max_held_mb``), with what
    ``own`` (the session's source or replay it replaces; None) held let go. Where that leaves no room, the
    documents ``session``'s conversations hold (Session.spareable) are let
    go for it, if with them let go there is room. Refused with the limit met.
    ``before``: the document a page gone made of the same upload, whose
    client's and network's shares this one replaces (:meth:`Source.uncount`;
    its text stays in the server's memory until its session ends)."""
    limits = services.limits
    owns = [own] if own is not None else []
    spare = [source for source in session.spareable() if source.held is not None] if session is not None else []
    replaced = [before] if before is not None and all(before is not held for held in owns) else []

    def client_freed(holders) -> int:
        return sum(_client_share_of(holder, client) for holder in holders + replaced)

    def network_freed(holders) -> int:
        return sum(_network_share_of(holder, network) for holder in holders + replaced)

    def server_freed(holders) -> int:
        return sum(holder.held.size for holder in holders if getattr(holder, "held", None) is not None)

    mine, spared = _take_sparing(lambda freed: services.client_text.take(client, size, limits.client_held_bytes, freed),
                                 owns, spare, client_freed)
    hint = ("Close a page you no longer need (its documents go an hour later; each of its conversations keeps the "
            "document it was answered from), or upload the file under 'Your documents', which indexes it on disk."
            if what == "document"
            else "Close a page you no longer need (what it holds goes an hour later), or try again later.")

    def refuse(key, whose: tuple[str, str], held: int, limit_mb: float, one: str) -> InvalidInputError:
        services.refusals.refused(f"a {what}", key, f"{whose[1]} hold {held / MB:.1f} MB of text, {limit_mb:g} MB "
                                                    f"at most")
        return InvalidInputError(
            f"{whose[0]} hold {held / MB:.1f} MB of documents and conversations files in memory; {one} may hold "
            f"{limit_mb:g} MB at once, so this {what} ({size / MB:.1f} MB) is not taken. {hint}")

    if mine is None:
        raise refuse(client, ("Your other pages or sessions", "its sessions"), services.client_text.held(client),
                      limits.client_held_mb, "one visitor")
    network = client_network(client)
    ours, spared = _take_sparing(
        lambda freed: services.network_text.take(network, size, limits.network_held_bytes, freed),
        owns, spare, network_freed, spared)
    if ours is None:
        mine.give_back()
        raise refuse(network, (f"Visitors of your network ({network})", "its visitors' sessions"),
                     services.network_text.held(network), limits.network_held_mb, "one network")
    if network is not None:
        def past_fair_share(holders):
            """What the server holds, and the network, with this text and
            without what ``holders`` held; the fair share past which that is."""
            used = services.held_text.bytes - server_freed(holders)
            theirs = services.network_text.held(network) - size - network_freed(holders)
            return used, theirs, fair_share(used, size, limits.max_held_bytes, theirs,
                                            services.network_text.clients(), limits.fair.fair_reserve,
                                            limits.fair_held_bytes)

        # As every other limit: the documents the page's other conversations hold let go where that makes room.
        used, theirs, fair = past_fair_share(owns + spare if spared else owns)
        if fair is not None and spare and not spared:
            sparing = past_fair_share(owns + spare)
            if sparing[2] is None:
                (used, theirs, fair), spared = sparing, True
        if fair is not None:
            mine.give_back()
            ours.give_back()
            services.refusals.refused(f"a {what} (its fair share)", network,
                                      f"its visitors' sessions hold {theirs / MB:.1f} MB of text, the server "
                                      f"{used / MB:.1f} MB of {limits.max_held_mb:g}")
            raise InvalidInputError(
                f"The server's room for documents and conversations files in memory is nearly all taken "
                f"({used / MB:.0f} of {limits.max_held_mb:g} MB), and the rest is kept for networks that hold less. "
                f"Visitors of your network ({network}) hold {theirs / MB:.1f} MB, their fair share while "
                f"{services.network_text.clients()} networks hold some ({fair / MB:.1f} MB each), so this {what} "
                f"({size / MB:.1f} MB) is not taken. {hint}")
    mine = together((mine, ours), size, client)
    held, spared = _take_sparing(lambda freed: services.held_text.take(size, limits.max_held_bytes, freed=freed),
                                 owns, spare, server_freed, spared)
    if held is None:
        mine.give_back()
        services.refusals.refused(f"a {what}", "every visitor", f"the sessions hold {services.held_text.bytes / MB:.1f} "
                                                                 f"MB of text, {limits.max_held_mb:g} MB at most")
        where = ("or upload the file under 'Your documents', which indexes it on disk" if what == "document"
                 else "or replay a shorter file")
        raise InvalidInputError(
            f"The server holds as many documents and conversations files in memory as it can for now "
            f"({limits.max_held_mb:g} MB across all visitors), so it cannot take this {what}: try again in a while, "
            f"{where}.")
    if spared:
        session.spare(spare)
    return held, mine


def _take_sparing(take, owns: list, spare: list, freed, sparing: bool = False) -> tuple[HeldShare | None, bool]:
    """A share taken with ``take(room freed)``: with the room ``owns`` (the
    source or replay replaced) leaves, and where that is not enough, or
    with ``sparing`` (an earlier share needed them already), the room
    ``spare`` (what the page's other conversations hold) leaves too;
    ``freed(holders)`` is that room. Returns the share (None: no room)
    and whether it counts on ``spare`` going."""
    if not sparing:
        share = take(freed(owns))
        if share is not None or not spare:
            return share, False
    return take(freed(owns + spare)), True


def use_document_file(services: Services, session: Session, path: str | Path, client: str | None = None) -> str:
    """Single-document mode over one uploaded .txt/.md/.html/.pdf file,
    checked against ``services.limits`` like every upload."""
    with _reading(session):
        return _answering(session, _document_file(services, session, path, client))


def _document_file(services: Services, session: Session, path: str | Path, client: str | None,
                   token: str = "") -> Source:
    """The source of :func:`use_document_file`, its shares taken; ``token``:
    the one it had, read again (see :func:`_remembered`)."""
    [path] = check_uploads([path], dataclasses.replace(services.limits, max_files=1), READ_SUFFIXES)
    # Titled as an index titles an upload: a Markdown file's '# Ada Lovelace'
    # stayed in its text here and was read out glued to the first sentence.
    heading, text = read_titled(path)
    return _remembered(services, _document(services, session, text, shown_name(path.stem), client,
                                           files=(str(path),), token=token, heading=heading), token)


def _remembered(services: Services, source: Source, token: str = "") -> Source:
    """``source``, made of uploads, given its token (``token``, the one it
    had when read again; else a new one) and its files remembered by it for
    a reload of its page (Services.uploaded): the browser's sealed copy
    alone carries the token, so no other visitor can name these files."""
    source.origin = dataclasses.replace(source.origin, token=token or new_token())
    services.uploaded.remember(source.origin, source)
    return source


def track_uploads(session: Session, paths) -> None:
    """Remember files uploaded through the UI, to delete them when the session ends."""
    session.on_disk().add_uploads(str(p if isinstance(p, (str, Path)) else p.name) for p in paths or () if p)


# Characters of an article title at most: the collection's longest are far shorter.
MAX_TITLE_CHARS = 300


def use_collection_document(services: Services, session: Session, title: str, client: str | None = None) -> str:
    """Single-document mode over one article of the default collection,
    named by its title (any case); a wrong title gets those close to it, if any."""
    return _answering(session, _collection_document(services, session, title, client))


def _collection_document(services: Services, session: Session, title: str, client: str | None) -> Source:
    """The source of :func:`use_collection_document`, its shares taken."""
    passage = _article(services, title)
    title = passage.title or passage.id
    return _document(services, session, passage.text, title, client, title=title)


def _article(services: Services, title: str):
    """The passage of the collection's article titled ``title`` (any case, any accents)."""
    title = " ".join((title or "").split())
    if not title:
        raise InvalidInputError("Type the title of an article of the collection.")
    if len(title) > MAX_TITLE_CHARS:  # searched for, and quoted back, whole
        raise InvalidInputError(f"That is {len(title):,} characters; an article's title has at most {MAX_TITLE_CHARS}. "
                                "To converse about a text, paste it in the box above instead.")
    retriever = services.assistant.retriever
    found = retriever.documents([title]) if hasattr(retriever, "documents") else []
    if not found and hasattr(retriever, "ids"):
        # The default collection's ids are its titles: looked up in any case
        # and any accents among them all. Among a search's first hits alone,
        # "germany" was refused (History of Germany and others outrank it)
        # and "hue" was not Huế.
        found = retriever.documents(_titled(_ids_by_title(retriever), title)[:1])
    if not found:
        hits = retriever.search(title, 5)
        # Any case and, as the search itself, any accents: "Pele" is Pelé's
        # title typed on a keyboard without them (it was told no article has it).
        found = [hits[n] for n in _titled([p.title or p.id for p in hits], title)]
        if not found:
            close = ", ".join(f"“{name}”" for name in _close_titles(title, [p.title or p.id for p in hits]))
            raise InvalidInputError(f"No article is titled “{title}”." + (
                f" Close titles: {close}." if close else
                " Check its spelling, or ask about it in the chat: it searches every article, and each answer "
                "names the articles it comes from."))
    return found[0]


def _titled(titles, title: str) -> list:
    """Where ``title`` is among ``titles`` (a list: the places; a mapping
    from :func:`_ids_by_title`: the ids), in any case and any accents;
    those equal to it in its own accents first ("Pere" is Pere's before
    Père's)."""
    typed = folded_text(title).casefold()
    if isinstance(titles, dict):
        matches = titles.get(typed, [])
    else:
        matches = [(n, name) for n, name in enumerate(titles) if folded_text(name).casefold() == typed]
    exact = [match for match in matches if match[1].casefold() == title.casefold()]
    return [found for found, _ in exact + [match for match in matches if match not in exact]]


# The ids of each retriever's index by their folded, casefolded spelling:
# read once, when a title is first typed that is no id as it is.
_TITLES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_TITLES_LOCK = threading.Lock()


def _ids_by_title(retriever) -> dict[str, list[tuple[str, str]]]:
    with _TITLES_LOCK:
        if retriever not in _TITLES:
            by_title: dict[str, list[tuple[str, str]]] = {}
            for doc_id in retriever.ids():
                by_title.setdefault(folded_text(doc_id).casefold(), []).append((doc_id, doc_id))
            _TITLES[retriever] = by_title
        return _TITLES[retriever]


# How alike (difflib's ratio) a title spelled differently must be to be
# offered: a typo's, not any title of a few shared letters.
CLOSE_TITLE_RATIO = 0.8


def _close_titles(title: str, titles: Sequence[str]) -> list[str]:
    """Those of ``titles`` (the articles a search for ``title`` found) close
    to ``title``: sharing a word with it (its stem; not a stop word), or
    spelled nearly alike. The search reads the articles' text, so an unknown
    title was offered articles that merely use its words ("Nonexistent Article
    Qwerty": Existence, Encyclopedia, Savanna)."""

    def words(text: str) -> set[str]:
        return {porter_stem(word) for word in tokens(text, "lucene") if word not in LUCENE_STOPWORDS}

    typed = words(title)
    return [name for name in dict.fromkeys(titles)
            if typed & words(name) or difflib.SequenceMatcher(None, title.casefold(), name.casefold()).ratio()
            >= CLOSE_TITLE_RATIO]


def abandon(session: Session) -> None:
    """The page of ``session`` was closed or reloaded: stop encoding its
    uploads' passages, which only its next question could use and which
    hold up every other upload on the one worker (a reload starts a new
    session; a page that comes back keeps its uploads, searched by BM25).
    Those of its other conversations too. Each counts in its client's and
    network's shares until a page reads its files again (Source.uncount)."""
    for source in session.held_sources():
        if isinstance(source.rescorer, DeferredRescorer):
            source.rescorer.cancel()
        source.page_gone = True
        source.uncount()  # read again for the page after it already


def switch_conversation(session: Session, number: int, services: Services | None = None,
                        client: str | None = None, *, later: bool = False) -> str:
    """Make conversation ``number`` the current one, answered from its own
    source again (:func:`take_back`, ``later`` as there); the one left keeps
    its own. Returns a status that says where its answers come from."""
    same = number == session.conversation_no
    status = enter_conversation(session, number)
    return status if same else status + take_back(services, session, client, later=later)


def take_back(services: Services | None, session: Session, client: str | None = None, who: str = "It", *,
              later: bool = False) -> str:
    """Answer the current conversation from its own source again (as
    ``session.sources`` keeps it under its number); returns what to add to
    the status. An article of the collection, and an uploaded document or
    uploads indexed together whose copies are still on the server, are
    taken again when the session no longer holds them (after a reload, or
    let go for room); a source that cannot be (a pasted text, a file
    deleted) leaves it answered from the default collection, and the
    status says why. ``later``: one read from its files (an index built
    again takes minutes) is left waiting, for :func:`take_waiting` (the
    app's next queued event) to read. A conversation saved before
    conversations kept their source goes on with the source chosen last,
    as the status says. ``who``: what the status calls the conversation
    ("It" after "Back to conversation 2")."""
    collection = services.collection_name if services is not None else "the default collection"
    its = "Its" if who == "It" else f"{who}'s"
    key = str(session.conversation_no)
    kept = session.sources.pop(key, None)
    if kept is None:  # not known
        if session.source is None:
            return ""
        return (f" {its} next answers come from {session.source.name}, the source chosen last; to go on with it "
                "from the default collection, press “Back to the default collection” under Your documents "
                "and pick it again.")
    if isinstance(kept, Origin) and kept != COLLECTION:
        origin = services.uploaded.recall(kept) if services is not None else kept
        session.set_source(None)  # let go first: its room may be needed to take this one again
        for number in [key, *_waiting_for_it(session, kept)]:  # a conversation started from it waits too
            session.sources[number] = origin  # waiting: a switch away meanwhile keeps it
        if later and origin.files:
            return (f" {who} was answered from {origin.name}, which is being read again from the files on the "
                    f"server: {its.lower()} answers come from it once it is (a question asked meanwhile waits for it).")
        try:
            source = _taken_again(services, session, origin, client)
        except AssistantError as error:
            for waiting in _waiting_for_it(session, origin):
                del session.sources[waiting]
            return (f" {who} was answered from {origin.name}, which cannot be taken again: {error} Its answers now "
                    f"come from {collection}; to ask about that source again, give it under Your documents (a new "
                    "conversation starts for it).")
        # Each conversation still waiting for it gets it: this one, unless it
        # was given another source or removed meanwhile, and a new one
        # started from it meanwhile (new_conversation), which waits for it too.
        waiting = _waiting_for_it(session, origin)
        if not waiting:
            source.close()
            return ""
        for number in waiting:
            session.sources[number] = source
        if str(session.conversation_no) not in waiting:  # left meanwhile: the one shown waits for none
            return ""
        kept = source
    source = kept if isinstance(kept, Source) else None
    session.set_source(source)
    return f" {its} answers come from {collection if source is None else source.name}."


def _waiting_for_it(session: Session, origin: Origin) -> list[str]:
    """The conversations of ``session`` that wait to take ``origin`` again."""
    return [number for number, kept in session.sources.items() if kept is origin]


def waiting_for(session: Session) -> Origin | None:
    """The source the current conversation waits to take again (left by
    :func:`take_back`, or read from the browser's copy), None if none."""
    kept = session.sources.get(str(session.conversation_no))
    return kept if isinstance(kept, Origin) and kept != COLLECTION else None


def take_waiting(services: Services, session: Session, client: str | None = None,
                 stop: StopSignal = NO_STOP) -> str:
    """Take again the source the current conversation waits for
    (:func:`waiting_for`): uploads indexed again, a document read again,
    which may take minutes (the app does it in a queued event with its
    progress). Returns the status ("" when it waits for none). One at a
    time per session: a question asked meanwhile (the app calls this
    before asking) waits for it, then finds its source taken; or, once
    ``stop`` is set (Stop pressed: the turn's signal, which wakes the wait),
    waits no more and returns "" (the reading goes on)."""
    if not session.taking.acquire(stop):
        return ""
    try:
        if waiting_for(session) is None:
            return ""
        return take_back(services, session, client).strip()
    finally:
        session.taking.release()


def await_source(services: Services, session: Session, client: str | None = None,
                 stop: StopSignal = NO_STOP) -> None:
    """Before a turn of the current conversation (a question, a re-run with
    a correction, a multiple choice about its document): the source it is
    being read again from (:func:`waiting_for`) is waited for, or read,
    rather than the turn answered from the default collection meanwhile;
    what the reading says is among ``session.notes``. ``stop``: as
    :func:`take_waiting` gives up waiting."""
    if waiting_for(session) is not None:
        status = take_waiting(services, session, client, stop)
        if status:
            session.notes.append(status)
    elif session.taking.acquire(stop):  # files being read into a new source (_reading): waited for
        session.taking.release()


def _taken_again(services: Services | None, session: Session, origin: Origin, client: str | None) -> Source:
    """The source ``origin`` names, taken again; an AssistantError that
    says why where it cannot be. The files it is read from are then
    ``session``'s too (an upload is deleted when the last session that
    holds it ends: the page's before a reload did)."""
    if services is not None and origin.title:
        return _collection_document(services, session, origin.title, client)
    if services is not None and origin.files:
        paths = [Path(file) for file in origin.files]
        missing = next((path for path in paths if not path.is_file()), None)

        def gone(path: Path) -> InvalidInputError:
            return InvalidInputError(f"the file {path.name} is no longer on the server (an upload is deleted when "
                                     "its page closes, or when the server clears its old uploads).")

        if missing is not None:
            raise gone(missing)
        # Held before they are read: the page before the reload, ending
        # meanwhile, deleted them under the reading.
        files = session.on_disk()
        claimed = [file for file in origin.files if file not in files.uploads]
        files.add_uploads(claimed)
        try:
            if origin.kind == "uploads":
                return _uploads(services, session, paths, client, origin.token)
            return _document_file(services, session, paths[0], client, origin.token)
        except BaseException as error:
            files.drop_uploads(claimed)
            if isinstance(error, OSError):  # deleted meanwhile
                raise gone(next((path for path in paths if not path.is_file()), paths[0])) from None
            raise
    raise InvalidInputError("documents are not kept across a reload or a server restart, nor once their room is "
                            "needed for another.")


def use_default_collection(services: Services, session: Session) -> str:
    return f"Answering from {services.collection_name}.{_set_source(session, None)}"


def source_status(services: Services, session: Session) -> str:
    waiting = waiting_for(session)
    if waiting is not None and waiting.files:
        return f"Reading {waiting.name} again from the files on the server…"
    name = services.collection_name if session.source is None else session.source.name
    return " ".join(filter(None, [f"Answering from {name}.", search_notice(services, session)]))


def search_notice(services: Services, session: Session) -> str:
    """What the session's search lacks for now ("" when nothing): the
    passages of the served collection (at a first start) or of its uploads
    still being encoded for the rescoring."""
    return assistant_for(services, session).search_notice()


# ---------------------------------------------------------------- multiple choice


# Characters of a document multiple choice reads at most: it encodes every
# sentence before it answers, and a pasted book held a turn slot for minutes.
MAX_CHOICE_CHARS = 100_000


def multiple_choice(services: Services, session: Session, document: str, question: str, options: Sequence[str],
                    client: str | None = None):
    """Answer a multiple-choice question about ``document`` (or the session's
    single document when empty; ``client`` as :func:`await_source` counts
    it). Returns (choice, options used)."""

    document = (document or "").strip()
    if not document:
        await_source(services, session, client)
        document = session.source.text if session.source else ""
    if not document:
        raise InvalidInputError("Paste the document (or choose one under 'Your documents') first.")
    if len(document) > MAX_CHOICE_CHARS:
        raise InvalidInputError(f"The document is {len(document):,} characters long; multiple choice reads at most "
                                f"{MAX_CHOICE_CHARS:,} (a long article). Ask about a longer one in the chat instead.")
    max_chars = services.assistant.config.max_question_chars
    question = validate_question(question, max_chars)
    given = [(o or "").strip() for o in options]
    if len(given) > len(OPTION_LETTERS):
        raise InvalidInputError(f"Give at most {len(OPTION_LETTERS)} options.")
    while given and not given[-1]:
        given.pop()  # fewer options than boxes: the last ones stay empty
    letters = OPTION_LETTERS  # as the answer names them
    if "" in given:
        # The answer is named by its letter: an empty box in between would
        # shift the letters of the options after it.
        gap = letters[given.index("")]
        raise InvalidInputError(f"Option ({gap}) is empty but a later one is not: fill the options in order.")
    long = next((i for i, o in enumerate(given) if len(o) > max_chars), None)
    if long is not None:  # each is encoded as a question is, and bounded as one
        raise InvalidInputError(f"Option ({letters[long]}) is {len(given[long]):,} characters long; options are "
                                f"limited to {max_chars:,}, as questions are.")
    repeated = next((o for i, o in enumerate(given) if o.casefold() in [p.casefold() for p in given[:i]]), None)
    if repeated is not None:
        first, second = [letters[i] for i, o in enumerate(given) if o.casefold() == repeated.casefold()][:2]
        raise InvalidInputError(f"Options ({first}) and ({second}) are the same: give different options.")
    options = given
    if len(options) < 2:
        raise InvalidInputError("Give at least two options.")
    return answer_multiple_choice(document, question, options, reader=services.multiple_choice_reader()), options
