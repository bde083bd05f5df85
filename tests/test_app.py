"""The served app through its API (gradio_client), and its command line."""

from __future__ import annotations

import pytest

import app


@pytest.fixture(scope="module")
def client_factory(app_server):
    from gradio_client import Client

    url, _ = app_server
    return lambda: Client(url, verbose=False)


def test_only_the_documented_endpoints_are_public(client_factory):
    api = client_factory().view_api(print_info=False, return_format="dict")
    assert sorted(api["named_endpoints"]) == ["/chat", "/new"]
    assert [p["parameter_name"] for p in api["named_endpoints"]["/chat"]["parameters"]] == ["question"]


def test_chat_api_keeps_one_conversation_per_client(client_factory):
    alice, bob = client_factory(), client_factory()
    first = alice.predict("Who was Ada Lovelace?", api_name="/chat")
    assert first["answer"] == "Ada Lovelace was an English mathematician and writer."
    assert first["rewrite"] == "Who was Ada Lovelace?"
    assert [s["id"] for s in first["sources"]] == ["ada", "babbage"]
    assert set(first["timings_ms"]) == {"rewrite", "retrieve", "read", "total"}
    assert (first["turn"], first["conversation"]) == (1, 1)
    assert bob.predict("What is Paris?", api_name="/chat")["turn"] == 1
    second = alice.predict("Who was her father?", api_name="/chat")
    assert second["turn"] == 2 and "Lord Byron" in second["answer"]
    assert alice.predict("   ", api_name="/chat") == {"question": "   ", "error": "Please type a question."}
    assert alice.predict(api_name="/new") == {"conversation": 2}
    assert alice.predict("What is Paris?", api_name="/chat")["turn"] == 1


def test_port_and_host_come_from_flags_and_environment(monkeypatch):
    for name in ("PORT", "GRADIO_SERVER_PORT", "GRADIO_SERVER_NAME"):
        monkeypatch.delenv(name, raising=False)
    args = app._parser().parse_args([])
    assert (args.port, args.host) == (7860, "127.0.0.1")
    monkeypatch.setenv("GRADIO_SERVER_PORT", "9000")
    assert app._parser().parse_args([]).port == 9000
    monkeypatch.setenv("PORT", "8080")
    assert app._parser().parse_args([]).port == 8080
    assert app._parser().parse_args(["--port", "7000", "--host", "0.0.0.0"]).port == 7000


def test_a_missing_index_is_a_one_line_error(tmp_path, capsys):
    assert app.main(["--index", str(tmp_path / "nowhere"), "--rewriter", "original"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: No index at") and err.count("\n") == 1


def test_a_null_question_through_the_api_is_a_message_and_the_conversation_goes_on(client_factory):
    client = client_factory()
    result = client.predict(None, api_name="/chat")
    assert result["error"] == "Please type a question."
    assert client.predict("Who was Ada Lovelace?", api_name="/chat")["turn"] == 1


def test_the_browser_secret_is_made_once_and_kept(tmp_path):
    path = tmp_path / "cache" / "app-secret"
    secret = app.browser_secret(path)
    assert len(secret) >= 32 and app.browser_secret(path) == secret
    assert path.stat().st_mode & 0o077 == 0
