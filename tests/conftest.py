"""Shared fixtures: a real Lucene index over a tiny collection, real encoders."""

from __future__ import annotations

import json
import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

# Five short passages: enough to pin BM25's exact ranking by hand.
TINY_COLLECTION = [
    {"id": "ada", "title": "Ada Lovelace", "url": "https://en.wikipedia.org/wiki/Ada_Lovelace",
     "contents": "Ada Lovelace was an English mathematician and writer. She wrote the first "
                 "published algorithm for Charles Babbage's Analytical Engine. Her father was "
                 "the poet Lord Byron."},
    {"id": "babbage", "title": "Charles Babbage", "url": "",
     "contents": "Charles Babbage was an English mathematician and mechanical engineer who "
                 "originated the concept of a digital programmable computer."},
    {"id": "byron", "title": "Lord Byron", "url": "",
     "contents": "George Gordon Byron was an English poet. He was one of the leading figures "
                 "of the Romantic movement."},
    {"id": "paris", "title": "Paris", "url": "",
     "contents": "Paris is the capital and largest city of France. The Eiffel Tower stands on "
                 "the Champ de Mars in Paris."},
    {"id": "python", "title": "Python (programming language)", "url": "",
     "contents": "Python is a high-level programming language. Its design emphasises code "
                 "readability."},
]


@pytest.fixture(scope="session")
def tiny_collection(tmp_path_factory):
    path = tmp_path_factory.mktemp("collection") / "tiny.jsonl"
    path.write_text("".join(json.dumps(p) + "\n" for p in TINY_COLLECTION))
    return path


@pytest.fixture(scope="session")
def tiny_index(tiny_collection, tmp_path_factory):
    from assistant._collection import read_collection
    from assistant.index import build_index

    index_dir = tmp_path_factory.mktemp("index") / "tiny"
    build_index(read_collection(tiny_collection), index_dir, progress=False)
    return index_dir


@pytest.fixture(scope="session")
def retriever(tiny_index):
    from assistant._retriever import BM25Retriever

    return BM25Retriever.from_index(tiny_index)


@pytest.fixture(scope="session")
def minilm():
    from eval.encoders import load_minilm

    return load_minilm()
