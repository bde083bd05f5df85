"""scripts/load_test.py: both of its clients play real sessions against the app."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "load_test.py"


@pytest.fixture(scope="module")
def load_test():
    spec = importlib.util.spec_from_file_location("load_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("client", ["lean", "gradio"])
def test_every_turn_of_every_session_is_answered_in_its_own_conversation(load_test, app_server, client):
    url, _ = app_server
    result = load_test.run(url, sessions=3, turns=2, timeout=120, client=client)
    assert result["client"] == client
    assert (result["turns_requested"], result["turns_completed"], result["lost_turns"], result["errors"]) == (6, 6, 0, 0)
    assert result["sessions_isolated"] is True
    assert result["p50_s"] <= result["p95_s"] <= result["max_s"] and result["client_cpu_s"] >= 0


def test_the_lean_client_gets_the_reply_gradio_client_gets(load_test, app_server):
    import httpx
    from gradio_client import Client

    url, _ = app_server
    question = "Who was Ada Lovelace?"
    expected = Client(url, verbose=False).predict(question, api_name="/chat")

    async def lean():
        async with httpx.AsyncClient(timeout=120) as http:
            return await load_test._lean_turn(http, url, load_test._chat_endpoint(url), "lean-test-session", question)

    reply = asyncio.run(lean())
    assert reply["turn"] == expected["turn"] == 1
    for key in ("question", "rewrite", "answer", "sources"):
        assert reply[key] == expected[key]
