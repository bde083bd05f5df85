"""What a server left running for days holds: memory, disk, per-client shares."""

from __future__ import annotations

import asyncio
import collections
import gc
import shutil
from pathlib import Path

import pytest

from assistant import session as S
from assistant.kernel import DataFormatError, FairShareConfig, InvalidInputError


def test_two_apps_in_one_process_each_have_their_own_budget_of_held_text(app_services):
    # The pasted text all sessions hold was counted in one module global: a
    # second app in the same process (a test, a program serving two) was
    # refused for documents the first one's sessions held.
    text = "Ada Lovelace wrote the first published algorithm. " * 100
    size = len(text.strip().encode())  # as held: stripped
    limits = S.UploadLimits(max_held_mb=1.5 * size / 2**20)  # room for one
    first = S.Services(app_services.assistant, limits=limits)
    second = S.Services(app_services.assistant, limits=limits)
    held = S.Session()  # a session that goes lets its document go
    S.use_document(first, held, text)
    assert first.held_text.bytes == size and second.held_text.bytes == 0
    with pytest.raises(InvalidInputError, match="as many documents"):
        S.use_document(first, S.Session(), text)
    kept = S.Session()
    S.use_document(second, kept, text)
    assert second.held_text.bytes == size
    kept.close()
    assert second.held_text.bytes == 0 and first.held_text.bytes == size


async def _reads_the_body(scope, receive, send):
    """An app that reads the whole body, as Gradio's upload route does."""
    while (await receive()).get("more_body"):
        pass


def _post(middleware, path, length, client="93.184.216.34", headers=(), body_chunks=None):
    """(status, headers, text) of a POST through ``middleware``; None: passed on to the app."""
    from conftest import asgi_post

    declared = [(b"content-length", str(length).encode())] if length is not None else []
    chunks = body_chunks if body_chunks is not None else [b""]
    sent = asyncio.run(asgi_post(middleware, path, client, [*declared, *headers], chunks))
    return (sent[0]["status"], dict(sent[0]["headers"]), sent[1]["body"].decode()) if sent else None


def test_one_client_cannot_take_the_upload_route_for_everyone(tmp_path, monkeypatch):
    # One script posting to Gradio's upload route in a loop brought the disk
    # down to its floor, and then every visitor's uploads were refused (507).
    # Each client now has its share; others go on uploading.
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 10**12))
    now = [1000.0]
    limits = S.UploadLimits(client_upload_mb=1.0, client_uploads=5, client_window_s=600)
    quota = S.UploadQuota(limits, clock=lambda: now[0])
    middleware = S.BodyLimit(_reads_the_body, limit=100_000, upload_dir=tmp_path, quota=quota)
    upload = "/gradio_api/upload"
    for _ in range(3):
        assert _post(middleware, upload, 300_000) is None
    status, headers, message = _post(middleware, upload, 300_000)
    assert status == 429 and headers[b"retry-after"] == b"600"
    assert message == ("You have uploaded 1 MB in the last 10 minutes, the most one visitor may (5 uploads, 1 MB): "
                       "try again in 10 minutes. Questions are still answered.")
    assert _post(middleware, upload, 300_000, client="151.101.1.69") is None  # another visitor
    assert _post(middleware, "/gradio_api/queue/join", 300) is None  # and the script's questions
    # Through a proxy on a private network, the address it saw (the last
    # X-Forwarded-For entry; the ones before it a client may write).
    proxied = {"client": "10.0.0.2", "headers": [(b"x-forwarded-for", b"1.2.3.4, 93.184.216.34")]}
    assert _post(middleware, upload, 300_000, **proxied)[0] == 429
    assert _post(middleware, upload, 1, client="10.0.0.2", headers=[(b"x-forwarded-for", b"93.184.216.35")]) is None
    # The server's own host or network, or a proxy that hides its visitors
    # (who would all be refused together), is not counted.
    for _ in range(6):
        assert _post(middleware, upload, 300_000, client="127.0.0.1") is None
        assert _post(middleware, upload, 300_000, client="10.0.0.2") is None
    # A public peer's own X-Forwarded-For is not believed.
    assert _post(middleware, upload, 300_000, headers=[(b"x-forwarded-for", b"151.101.1.70")])[0] == 429
    # An IPv6 host's /64 is one client; small posts are bounded by their count.
    for n in range(5):
        assert _post(middleware, upload, 10, client=f"2a00:1450:4001:81b::{n + 1}") is None
    assert _post(middleware, upload, 10, client="2a00:1450:4001:81b::ffff")[2].startswith("You have made 5 uploads in")
    assert _post(middleware, upload, 10, client="2a00:1450:4001:81c::1") is None
    # A body sent without its length is counted as it arrives.
    assert _post(middleware, upload, None, client="1.1.1.1", body_chunks=[b"x" * 600_000, b"x" * 600_000]) is None
    assert _post(middleware, upload, 1, client="1.1.1.1")[2].startswith("You have uploaded 1 MB in")
    # The window moves on: the first posts leave it, and quiet clients are forgotten.
    now[0] += 601
    assert _post(middleware, upload, 300_000) is None
    assert quota.clients() == 1


def test_a_client_may_have_its_share_of_the_queue_and_every_request_names_its_client():
    seen = []

    async def joined(scope, receive, send):
        seen.append(S.request_client())

    waiting = {"93.184.216.34": 2, "151.101.1.69": 1}
    # who: a client, or a client and its network.
    middleware = S.QueueShare(joined, waiting=lambda *who: [waiting.get(key, 0) for key in who], limit=2)
    status, headers, message = _post(middleware, "/gradio_api/queue/join", 10)
    assert (status, headers[b"content-type"], headers[b"retry-after"]) == (429, b"application/json", b"5")
    assert message.startswith('{"detail": "You already have 2 requests waiting in line, the most one visitor may')
    assert _post(middleware, "/gradio_api/call/chat", 10)[0] == 429  # the simple API joins the queue too
    assert _post(middleware, "/gradio_api/upload", 10) is None  # other routes are not the queue's
    assert _post(middleware, "/gradio_api/queue/join", 10, client="151.101.1.69") is None  # another visitor
    assert _post(middleware, "/gradio_api/queue/join", 10, client="127.0.0.1") is None  # the server's own host
    assert seen == ["93.184.216.34", "151.101.1.69", None] and S.request_client() is None


def test_reading_an_upload_leaves_no_empty_file_in_gradios_folder(tmp_path):
    # Gradio's File made an empty temporary file in its upload folder for
    # each file an event read, kept until the server stopped: one per upload,
    # for good, on a server left running.
    import app
    from gradio.data_classes import FileData

    # A subclass of a Gradio component had Gradio write app.pyi into the checkout.
    assert not (Path(app.__file__).parent / "app.pyi").exists()

    upload = tmp_path / "abc" / "notes.txt"
    upload.parent.mkdir()
    upload.write_text("Ada wrote notes.")
    for field in (app.upload_field(file_types=[".txt"]), app.upload_field()):
        field.GRADIO_CACHE = str(tmp_path)
        assert field.preprocess(FileData(path=str(upload), orig_name="notes.txt")) == str(upload)
    assert [str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")] == ["abc", "abc/notes.txt"]
    odd = tmp_path / "abc" / "notes.exe"
    odd.write_text("x")
    # Said as check_uploads says it: it was Gradio's "Invalid file type ... formats: ['.txt']", no file named.
    with pytest.raises(app.gr.Error) as info:
        app.upload_field(file_types=[".txt", ".md"]).preprocess(FileData(path=str(odd), orig_name="notes.exe"))
    assert info.value.message == "notes.exe: unsupported file type '.exe'; upload .txt, .md files."


def test_gradios_records_of_files_forget_those_deleted(app_services, tmp_path):
    # A session's uploads and export are deleted when it ends; Gradio kept
    # each one's path in the records its delete_cache walks, for good.
    import app

    demo = app.build_app(app_services, export_dir=str(tmp_path))
    kept, deleted = tmp_path / "kept.txt", tmp_path / "deleted.txt"
    kept.write_text("x")
    demo.upload_file_set.update({str(kept), str(deleted)})
    export_files = next(paths for paths in demo.temp_file_sets if paths is not demo.upload_file_set)
    export_files.add(str(tmp_path / "export.json"))
    assert S.forget_deleted_files(demo) == 2
    assert demo.upload_file_set == {str(kept)} and str(tmp_path / "export.json") not in export_files
    assert S.forget_deleted_files(demo) == 0


def test_gradio_serves_an_export_without_a_copy_that_outlives_it(app_services, tmp_path, monkeypatch):
    # Gradio copied each export into its upload folder to serve it, and the
    # copy stayed a day after the session deleted its own export.
    import app
    import server

    monkeypatch.setenv("GRADIO_TEMP_DIR", str(tmp_path / "gradio"))
    with server.export_folder() as folder:
        demo = app.build_app(app_services, export_dir=folder)
        export = Path(folder) / "conversation.json"
        export.write_text("{}")
        field = next(block for block in demo.blocks.values() if getattr(block, "elem_id", None) == "export-file")
        field.GRADIO_CACHE = str(tmp_path / "gradio")  # as a server started with this GRADIO_TEMP_DIR has it
        assert field.move_resource_to_block_cache(str(export)) == str(export)  # served where it is
        export.unlink()
        assert [p.name for p in (tmp_path / "gradio").rglob("*") if p.is_file()] == []
    assert not Path(folder).exists()
    # Handlers made without a folder (build_app's default) make theirs the same
    # way: it was a folder of the system's temporary folder, served by copy
    # and left behind when the program ended.
    actions = app.Actions(app_services)
    own = Path(actions.export_dir)
    assert own.parent == tmp_path / "gradio" and own.is_dir()
    del actions
    gc.collect()
    assert not own.exists()


def test_one_client_opening_many_sessions_holds_a_bounded_number_of_upload_indexes(app_services, tmp_path):
    # The upload route's quota counts what a client posts, not how often one
    # posted file is indexed: a script calling the app's index event from
    # many sessions (Gradio keeps up to 1,000) held that many indexes.
    import dataclasses

    services = dataclasses.replace(app_services, limits=S.UploadLimits(client_indexes=2),
                                   sessions_root=tmp_path / "sessions")
    notes = tmp_path / "notes.txt"
    notes.write_text("Mara studied medicine in the capital. She later taught music in the north.")
    folders = lambda: len(list((tmp_path / "sessions").glob("session-*")))  # noqa: E731
    visitor, other = "93.184.216.34", "151.101.1.69"
    first, second, third = S.Session(), S.Session(), S.Session()
    S.use_uploads(services, first, [notes], visitor)
    S.use_uploads(services, second, [notes], visitor)
    with pytest.raises(InvalidInputError, match=r"already answer from 2 indexes of uploads, the most one visitor may "
                                                r"hold at once\. Close a page you no longer need \(its indexes go "
                                                r"an hour later; each of its conversations keeps the uploads it was "
                                                r"answered from\)"):
        S.use_uploads(services, third, [notes], visitor)
    assert folders() == 2 and third.source is None  # refused before anything was indexed
    assert services.client_indexes.held(visitor) == 2
    # A session indexing again replaces its own index; another visitor, and
    # the server's own host (no client), have their own room.
    S.use_uploads(services, second, [notes], visitor)
    S.use_uploads(services, third, [notes], other)
    local = S.Session()
    S.use_uploads(services, local, [notes], None)
    assert services.client_indexes.held(visitor) == 2 and services.client_indexes.held(other) == 1
    # A page going back to the collection, or closed, lets its index go; so
    # does a session Gradio drops unclosed, when it is collected.
    S.use_default_collection(services, first)
    fourth = S.Session()
    S.use_uploads(services, fourth, [notes], visitor)
    second.close()
    dropped = S.Session()
    S.use_uploads(services, dropped, [notes], visitor)
    del dropped
    gc.collect()
    assert services.client_indexes.held(visitor) == 1 and folders() == 3  # fourth's, third's, local's
    # A failed indexing takes nothing.
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    with pytest.raises(InvalidInputError, match="empty"):
        S.use_uploads(services, S.Session(), [empty], visitor)
    assert services.client_indexes.held(visitor) == 1
    third.close()
    assert services.client_indexes.clients() == 1  # the visitors holding nothing are forgotten


def test_the_index_document_and_replay_events_count_the_client_the_request_came_from(app_services, tmp_path,
                                                                                     qrecc_conversations):
    # Behind a Space's proxy (a private peer) the visitor is the address it
    # forwards, as the upload route's quota counts visitors.
    import dataclasses
    from types import SimpleNamespace

    import app

    services = dataclasses.replace(app_services, limits=S.UploadLimits(client_indexes=1),
                                   sessions_root=tmp_path / "sessions")
    act = app.Actions(services, str(tmp_path))
    notes = tmp_path / "notes.txt"
    notes.write_text("Mara studied medicine in the capital.")

    def request(peer, forwarded=None):
        headers = {"x-forwarded-for": forwarded} if forwarded else {}
        return SimpleNamespace(session_hash=None, client=SimpleNamespace(host=peer), headers=headers)

    sessions = [S.Session() for _ in range(3)]  # as Gradio holds them
    statuses = [act.upload([str(notes)], session, request("10.0.0.2", "1.2.3.4, 93.184.216.34"))[0]
                for session in sessions[:2]]
    assert "Answering from your upload" in statuses[0] and "already answer from 1 index" in statuses[1]
    assert services.client_indexes.held("93.184.216.34") == 1
    # The server's own host forwarding nothing is not counted.
    assert "Answering from" in act.upload([str(notes)], sessions[2], request("127.0.0.1"))[0]
    # A pasted document is counted as the visitor's too.
    text = "The zorblax flower grows only on Mount Quillon."
    pasted = S.Session()
    assert "Answering from" in act.document(None, text, "", pasted, request("10.0.0.2", "93.184.216.34"))[0]
    assert services.client_text.held("93.184.216.34") == len(text)
    replayed = S.Session()
    assert "Loaded 2 conversations" in act.replay_load(str(qrecc_conversations), "", replayed,
                                                       request("10.0.0.2", "93.184.216.34"))[1]
    assert services.client_text.held("93.184.216.34") == len(text) + qrecc_conversations.stat().st_size


def test_one_client_cannot_take_the_document_text_all_visitors_share(app_services):
    # One script pasting a long document in many sessions took all of the
    # server's budget of document text, and every other visitor's document
    # was refused.
    import dataclasses

    text = "Ada Lovelace wrote the first published algorithm. " * 100
    size = len(text.strip().encode())
    limits = S.UploadLimits(max_held_mb=4.5 * size / 2**20, client_held_mb=2.5 * size / 2**20)
    services = dataclasses.replace(app_services, limits=limits)
    visitor, other = "93.184.216.34", "2a00:1450:4001:81b::1"
    first, second, third = S.Session(), S.Session(), S.Session()
    S.use_document(services, first, text, "one", visitor)
    S.use_document(services, second, text, "two", visitor)
    with pytest.raises(InvalidInputError, match=r"Your other pages or sessions hold 0\.0 MB of documents and conversations "
                                                r"files in memory; one visitor may hold 0\.0\d* MB at once, so this "
                                                r"document \(0\.0 MB\) is "
                                                r"not taken\. Close a page you no longer need \(its documents go an "
                                                r"hour later; each of its conversations keeps the document it was "
                                                r"answered from\)"):
        S.use_document(services, third, text, "three", visitor)
    assert third.source is None and services.held_text.bytes == 2 * size  # nothing taken
    # A session replacing its own document, another visitor, and the
    # server's own host have their own room, up to the server's budget.
    S.use_document(services, second, text, "two again", visitor)
    others = [S.Session() for _ in range(2)]
    for session in others:
        S.use_document(services, session, text, "theirs", other)
    with pytest.raises(InvalidInputError, match="as many documents and conversations files in memory as it can"):
        S.use_document(services, third, text, "three", None)
    assert services.client_text.held(None) == 0 and services.client_text.held(other) == 2 * size
    # A page going back to the collection lets its share go.
    S.use_default_collection(services, first)
    S.use_document(services, third, text, "three", visitor)
    assert services.client_text.held(visitor) == 2 * size and services.held_text.bytes == 4 * size


def test_the_clients_of_one_network_hold_their_share_of_upload_indexes_together(app_services, tmp_path):
    # Each client's bound is one address's: a script spread over a
    # network's addresses held that many times its indexes.
    import dataclasses

    services = dataclasses.replace(app_services, limits=S.UploadLimits(client_indexes=2, network_indexes=3),
                                   sessions_root=tmp_path / "sessions")
    notes = tmp_path / "notes.txt"
    notes.write_text("Mara studied medicine in the capital. She later taught music in the north.")
    folders = lambda: len(list((tmp_path / "sessions").glob("session-*")))  # noqa: E731
    one, two, elsewhere = "93.184.216.1", "93.184.216.2", "93.184.217.1"
    sessions = [S.Session() for _ in range(5)]
    for session, client in zip(sessions, (one, one, two)):  # each client within its share; the /24 at three
        S.use_uploads(services, session, [notes], client)
    with pytest.raises(InvalidInputError, match=r"^Visitors of your network \(93\.184\.216\.0/24\) already answer "
                                                r"from 3 indexes of uploads, the most one network may hold at once\. "
                                                r"Close a page you no longer need"):
        S.use_uploads(services, sessions[3], [notes], two)
    assert folders() == 3 and sessions[3].source is None  # refused before anything was indexed
    assert services.client_indexes.held(two) == 1 and services.network_indexes.held("93.184.216.0/24") == 3
    S.use_uploads(services, sessions[2], [notes], two)  # a session indexing again replaces its own
    S.use_uploads(services, sessions[4], [notes], elsewhere)  # the next /24 is another network
    # A page going back to the collection lets its network's share go with its own.
    S.use_default_collection(services, sessions[0])
    assert services.network_indexes.held("93.184.216.0/24") == 2 and services.client_indexes.held(one) == 1
    S.use_uploads(services, sessions[3], [notes], two)
    assert services.network_indexes.held("93.184.216.0/24") == 3


def test_the_clients_of_one_network_hold_their_share_of_the_document_text_together(app_services, caplog):
    # One person may be many clients (a /48 holds 65,536 /64s): each
    # within its own share, eight of them held every visitor's room for
    # pasted documents.
    import dataclasses

    text = "Ada Lovelace wrote the first published algorithm. " * 100
    size = len(text.strip().encode())
    limits = S.UploadLimits(client_held_mb=2.5 * size / 2**20, network_held_mb=3.5 * size / 2**20)
    services = dataclasses.replace(app_services, limits=limits)
    one, two, three, elsewhere = "2001:db8:1:1::/64", "2001:db8:1:2::/64", "2001:db8:1:3::/64", "2001:db8:2:1::/64"
    sessions = [S.Session() for _ in range(6)]
    S.use_document(services, sessions[0], text, "one", one)
    S.use_document(services, sessions[1], text, "two", one)
    S.use_document(services, sessions[2], text, "three", two)  # each client within its share; the /48 at three
    with caplog.at_level("WARNING", logger="convqa.serving"), pytest.raises(InvalidInputError) as refused:
        S.use_document(services, sessions[3], text, "four", three)
    assert str(refused.value) == (
        "Visitors of your network (2001:db8:1::/48) hold 0.0 MB of documents and conversations files in memory; one "
        f"network may hold {limits.network_held_mb:g} MB at once, so this document (0.0 MB) is not taken. Close a "
        "page you no longer need (its documents go an hour later; each of its conversations keeps the document it "
        "was answered from), or upload the file under 'Your documents', which indexes it on disk.")
    assert [r.getMessage().split(":")[0] for r in caplog.records] == ["refused a document to 2001"]
    assert sessions[3].source is None and services.client_text.held(three) == 0  # nothing taken
    assert services.network_text.held("2001:db8:1::/48") == 3 * size and services.held_text.bytes == 3 * size
    # A session replacing its own document, another network and the server's own host have their own room.
    S.use_document(services, sessions[2], text, "three again", two)
    S.use_document(services, sessions[4], text, "theirs", elsewhere)
    S.use_document(services, sessions[5], text, "own", None)
    # A page going back to the collection lets its network's share go with its own.
    S.use_default_collection(services, sessions[0])
    assert services.network_text.held("2001:db8:1::/48") == 2 * size and services.client_text.held(one) == size
    S.use_document(services, sessions[3], text, "four", three)
    assert services.network_text.held("2001:db8:1::/48") == 3 * size


def test_the_clients_of_one_network_post_their_share_of_the_upload_route_together(tmp_path, monkeypatch):
    # Each client's quota bounds one address: a script spread over a
    # network's addresses posted until the disk was at its floor.
    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, 10**12))
    now = [1000.0]
    limits = S.UploadLimits(client_upload_mb=1.0, client_uploads=5, network_upload_mb=2.0, network_uploads=8,
                            client_window_s=600)
    quota = S.UploadQuota(limits, clock=lambda: now[0])
    middleware = S.BodyLimit(_reads_the_body, limit=100_000, upload_dir=tmp_path, quota=quota)
    upload = "/gradio_api/upload"
    for n in range(6):  # two MB from six clients of one /24, each within its own share
        assert _post(middleware, upload, 349_525, client=f"93.184.216.{n + 1}") is None
    status, headers, message = _post(middleware, upload, 10, client="93.184.216.99")
    assert status == 429 and headers[b"retry-after"] == b"600"
    assert message == ("Visitors of your network (93.184.216.0/24) have uploaded 2 MB in the last 10 minutes, the "
                       "most one network may (8 uploads, 2 MB): try again in 10 minutes. Questions are still answered.")
    assert _post(middleware, upload, 300_000, client="93.184.217.1") is None  # the next /24 is another network
    # Small posts are bounded by their count: an IPv6 /48's /64s.
    for n in range(8):
        assert _post(middleware, upload, 10, client=f"2a00:1450:4001:{n + 1}::1") is None
    assert _post(middleware, upload, 10, client="2a00:1450:4001:ff::1")[2].startswith(
        "Visitors of your network (2a00:1450:4001::/48) have made 8 uploads in the last 10 minutes")
    assert quota.clients() == 15 and quota.networks() == 3
    # The window moves on: the network may post again, and quiet clients and networks are forgotten.
    now[0] += 601
    assert _post(middleware, upload, 10, client="93.184.216.99") is None
    assert quota.clients() == 1 and quota.networks() == 1


def test_what_the_server_refuses_for_want_of_room_is_in_its_log_a_line_a_minute_at_most(tmp_path, monkeypatch, caplog):
    # A client throttled, a body too large, the disk near its floor: the
    # server said so to the client only, and its operator saw nothing.
    # Logged a line per refusal, a script hammering a limit would grow the
    # log without bound.
    import logging

    usage = collections.namedtuple("usage", "total used free")
    free = [10**12]
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**12, 0, free[0]))
    now = [1000.0]
    refusals = S.RefusalLog(every_s=60, clock=lambda: now[0])
    quota = S.UploadQuota(S.UploadLimits(client_uploads=1, client_window_s=3600), clock=lambda: now[0])
    middleware = S.BodyLimit(_reads_the_body, limit=100, upload_dir=tmp_path, quota=quota, refusals=refusals)
    upload = "/gradio_api/upload"
    caplog.set_level(logging.WARNING, logger="convqa.serving")
    assert _post(middleware, upload, 10) is None
    for _ in range(4):
        assert _post(middleware, upload, 10)[0] == 429
    assert _post(middleware, "/gradio_api/queue/join\n", 101)[0] == 413
    lines = [record.getMessage() for record in caplog.records]
    assert lines == ["refused uploads (429) to 93.184.216.34: You have made 1 uploads in the last 60 minutes, the most "
                     "one visitor may (1 uploads, 200 MB): try again in 60 minutes. Questions are still answered.",
                     "refused a request body (413) to 93.184.216.34: 101 bytes declared to '/gradio_api/queue/join\\n', "
                     "over 100"]
    caplog.clear()
    now[0] += 61
    assert _post(middleware, upload, 10)[0] == 429
    free[0] = 0
    assert _post(middleware, upload, 10, client="151.101.1.69")[0] == 507
    assert _post(middleware, upload, 10, client="151.101.1.70")[0] == 507  # the server's state: said once
    assert [record.getMessage() for record in caplog.records] == [
        "refused uploads (429) to 93.184.216.34: You have made 1 uploads in the last 60 minutes, the most one visitor "
        "may (1 uploads, 200 MB): try again in 59 minutes. Questions are still answered. (3 more since the last line)",
        f"refused uploads (507) to every visitor: the disk of {tmp_path} is near its floor of 256 MB free"]
    # Keys quiet for a minute are forgotten, and what they left unsaid is said then.
    caplog.clear()
    now[0] += 120
    refusals.refused("a document", "1.2.3.4", "its sessions hold 50.0 MB of text, 50 MB at most")
    assert [record.getMessage() for record in caplog.records] == [
        "refused uploads (507) to every visitor 1 more time",
        "refused a document to 1.2.3.4: its sessions hold 50.0 MB of text, 50 MB at most"]
    assert refusals.keys() == 1


def test_a_source_refused_for_want_of_room_is_in_the_servers_log(app_services, tmp_path, caplog):
    import dataclasses
    import logging

    limits = S.UploadLimits(client_indexes=0, client_held_mb=0.0)
    services = dataclasses.replace(app_services, limits=limits, sessions_root=tmp_path / "sessions")
    notes = tmp_path / "notes.txt"
    notes.write_text("Mara studied medicine in the capital.")
    caplog.set_level(logging.WARNING, logger="convqa.serving")
    with pytest.raises(InvalidInputError):
        S.use_uploads(services, S.Session(), [notes], "93.184.216.34")
    with pytest.raises(InvalidInputError):
        S.use_document(services, S.Session(), "Mara studied medicine.", client="93.184.216.34")
    services.limits = S.UploadLimits(max_held_mb=0.0)
    with pytest.raises(InvalidInputError):
        S.use_document(services, S.Session(), "Mara studied medicine.", client="93.184.216.34")
    assert [record.getMessage() for record in caplog.records] == [
        "refused an index of uploads to 93.184.216.34: its sessions hold 0",
        "refused a document to 93.184.216.34: its sessions hold 0.0 MB of text, 0 MB at most",
        "refused a document to every visitor: the sessions hold 0.0 MB of text, 0 MB at most"]


def test_a_crowd_over_many_networks_leaves_room_for_a_quiet_networks_document(app_services, caplog):
    # Each network within its own share, a crowd spread over three of them
    # took the server's room for documents first come, first served, and
    # a visitor of a fourth network was told the server holds all it can.
    import dataclasses

    # Over a tenth of a MB each, so that every figure the refusal prints is told from 0.0.
    text = "Ada Lovelace wrote the first published algorithm. " * 2500
    size = len(text.strip().encode())
    limits = S.UploadLimits(max_held_mb=8 * size / 2**20, fair=FairShareConfig(fair_held_mb=size / 2**20))
    crowd = [f"198.51.{net}.{n}" for net in (1, 2, 3) for n in (1, 2)]
    for fair, refused in ((limits, 3), (dataclasses.replace(limits, fair=FairShareConfig(fair_reserve=0.0)), 1)):
        services = dataclasses.replace(app_services, limits=fair, held_text=S.HeldText(),
                                       client_text=S.ClientShares(), network_text=S.ClientShares())
        kept = [S.Session() for _ in crowd]
        for session, client in zip(kept, crowd):
            S.use_document(services, session, text, "theirs", client)
        said = []
        for client in crowd[::2]:  # one more from each network: each holds 2 of 8, past 8 / 3
            try:
                kept.append(S.Session())
                S.use_document(services, kept[-1], text, "more", client)
            except InvalidInputError as error:
                said.append(error)  # kept, with its traceback's frames: what they took is given back all the same
        assert len(said) == refused
        if refused == 3:
            assert str(said[0]) == (
                "The server's room for documents and conversations files in memory is nearly all taken (1 of "
                f"{limits.max_held_mb:g} MB), and the rest is kept for networks that hold less. Visitors of your network (198.51.1.0/24) "
                "hold 0.2 MB, their fair share while 3 networks hold some (0.2 MB each), so this document (0.1 MB) "
                "is not taken. Close a page you no longer need (its documents go an hour later; each of its "
                "conversations keeps the document it was answered from), or upload the file under 'Your "
                "documents', which indexes it on disk.")
            assert services.held_text.bytes == 6 * size and services.network_text.held("198.51.1.0/24") == 2 * size
            # The newcomer's document is taken.
            kept.append(S.Session())
            S.use_document(services, kept[-1], text, "mine", "93.184.216.34")
            assert services.network_text.held("93.184.216.0/24") == size
        else:  # without a reserve the crowd takes it all, and the newcomer is refused
            assert "as many documents and conversations files in memory as it can" in str(said[0])
            with pytest.raises(InvalidInputError, match="as many documents and conversations files in memory as it"):
                S.use_document(services, S.Session(), text, "mine", "93.184.216.34")
    assert "refused a document (its fair share) to 198.51.1.0/24: its visitors' sessions hold 0.2 MB of text" in \
        caplog.text


def test_a_documents_fair_share_counts_the_room_its_pages_other_conversations_let_go(app_services):
    # The fair share of the text held counted only the source a document
    # replaces: a visitor was refused for the document its own page's other
    # conversation holds, which every other limit lets go for the room.
    import dataclasses

    text = "Ada Lovelace wrote the first published algorithm. " * 100
    size = len(text.strip().encode())
    limits = S.UploadLimits(max_held_mb=8 * size / 2**20, fair=FairShareConfig(fair_held_mb=size / 2**20))
    services = dataclasses.replace(app_services, limits=limits, held_text=S.HeldText(),
                                   client_text=S.ClientShares(), network_text=S.ClientShares())
    kept = [S.Session() for _ in range(4)]
    for session, client in zip(kept, ("198.51.1.1", "198.51.1.2", "198.51.2.1", "198.51.2.2")):
        S.use_document(services, session, text, "theirs", client)
    visitor, page = "93.184.216.34", S.Session()
    kept.append(S.Session())
    S.use_document(services, kept[-1], text, "elsewhere", visitor)  # another page of the visitor's
    S.use_document(services, page, text, "first", visitor)
    list(S.ask(services, page, "Who wrote the first published algorithm?"))
    # Three networks hold 6 of 8, two each: the visitor's next document would
    # be past its fair share (6 / 3), but not with its first one let go.
    said = S.use_document(services, page, text, "second", visitor)
    assert said.startswith("Answering from the document “second”")
    assert services.network_text.held("93.184.216.0/24") == 2 * size and services.held_text.bytes == 6 * size
    assert len(page.held_sources()) == 1


def test_one_uploaded_conversations_file_loaded_in_many_sessions_counts_in_what_they_hold(app_services, tmp_path,
                                                                                          qrecc_conversations):
    # Each session keeps the whole replayed file read (about twice its
    # size): one 10 MB upload loaded from many sessions (a script, a new
    # session hash each time) held a copy per session, unbounded.
    import dataclasses

    size = qrecc_conversations.stat().st_size
    limits = S.UploadLimits(max_held_mb=3.5 * size / 2**20, client_held_mb=2.5 * size / 2**20)
    services = dataclasses.replace(app_services, limits=limits)
    visitor = "93.184.216.34"
    sessions = [S.Session() for _ in range(4)]
    for session in sessions[:2]:
        assert S.load_replay(session, qrecc_conversations, "q.json", services, visitor) == ["7", "9"]
    S.load_replay(sessions[1], qrecc_conversations, "again.json", services, visitor)  # replaces its own
    with pytest.raises(InvalidInputError, match=r"documents and conversations files in memory; one visitor may hold "
                                                r"0\.0\d* MB at once, so this file \(0\.0 MB\) is not taken\. Close a "
                                                r"page you no longer need"):
        S.load_replay(sessions[2], qrecc_conversations, "q.json", services, visitor)
    assert sessions[2].replay is None and services.held_text.bytes == 2 * size
    S.load_replay(sessions[2], qrecc_conversations, "q.json", services, "151.101.1.69")
    with pytest.raises(InvalidInputError, match=r"as many documents and conversations files in memory as it can .* "
                                                r"replay a shorter file"):
        S.load_replay(sessions[3], qrecc_conversations, "q.json", services, None)
    # A file refused for its format takes nothing; one started keeps its share.
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    with pytest.raises(DataFormatError):
        S.load_replay(sessions[2], bad, "bad.json", services, "151.101.1.69")
    assert services.client_text.held("151.101.1.69") == size
    S.start_replay(sessions[0], "7")
    assert services.held_text.bytes == 3 * size
    # A session closed, or dropped and collected, lets its file go.
    sessions[0].close()
    del sessions[1], session
    gc.collect()
    assert services.client_text.held(visitor) == 0 and services.held_text.bytes == size


def test_ipv4_visitors_of_a_server_listening_on_ipv6_too_are_each_their_own_client():
    # Served on "::", an IPv4 visitor's address is IPv4-mapped
    # (::ffff:a.b.c.d); read as IPv6, all of them were one /64, sharing one
    # upload quota and one share of indexes and documents.
    assert S.client_address("::ffff:93.184.216.34") == "93.184.216.34"
    assert S.client_address("::ffff:93.184.216.35") == "93.184.216.35"
    assert S.client_address("::ffff:127.0.0.1") is None  # the server's own host
    assert S.client_address("::ffff:10.0.0.2", "1.2.3.4, ::ffff:151.101.1.69") == "151.101.1.69"
    assert S.client_address("2a00:1450:4001:81b::1") == "2a00:1450:4001:81b::/64"


def test_the_server_hands_the_memory_its_allocator_keeps_free_back_now_and_then(app_server, monkeypatch):
    # The sessions Gradio drops past its capacity leave their memory free
    # but kept by glibc's allocator: the resident memory stayed at its
    # highest. A served app hands it back every FREE_MEMORY_S seconds.
    import platform
    import threading
    import time
    from types import SimpleNamespace

    import server

    assert any(thread.name == "release-free-memory" for thread in threading.enumerate())  # app_server's
    assert S.release_free_memory() is (platform.libc_ver()[0] == "glibc")
    calls = []
    monkeypatch.setattr(S, "release_free_memory", lambda: calls.append(time.monotonic()) or True)
    demo = SimpleNamespace(is_running=True)
    server._release_free_memory_periodically(demo, every_s=0.01)
    deadline = time.monotonic() + 30
    while len(calls) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    demo.is_running = False
    assert len(calls) >= 2


# ---------------------------------------------------------------- one client's share of Gradio's store and queue

VISITOR, OTHER = {"x-forwarded-for": "93.184.216.34"}, {"x-forwarded-for": "151.101.1.69"}  # through a local proxy


@pytest.fixture(scope="module")
def small_server(retriever, minilm, tmp_path_factory):
    """The app with a small store and queue, one turn at a time, and turns
    that wait for the rewriter's gate. Yields (url, demo, rewriter, load_test)."""
    import importlib.util

    from conftest import GatedRewriter, serve_app

    import app
    import server
    from assistant.pipeline import Assistant
    from assistant.readers import SentenceReader

    spec = importlib.util.spec_from_file_location("load_test", Path(__file__).parents[1] / "scripts" / "load_test.py")
    load_test = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(load_test)  # its lean client speaks Gradio's queue protocol
    rewriter = GatedRewriter()
    with pytest.MonkeyPatch.context() as patch:
        for module, name, value in [(server, "STATE_SESSIONS", 8), (app, "QUEUE_SIZE", 4), (app, "TURN_CONCURRENCY", 1)]:
            patch.setattr(module, name, value)
        url, _, demo = serve_app(Assistant(rewriter, retriever, SentenceReader(minilm)), tmp_path_factory.mktemp("small"),
                                 limits=S.UploadLimits(client_sessions=3, client_queued=2))
    try:
        yield url, demo, rewriter, load_test
    finally:
        rewriter.gate.set()
        demo.close()


def test_one_client_opening_many_sessions_pushes_out_only_its_own(small_server, caplog):
    # Gradio made a session for every new session hash and dropped the least
    # recently used past its capacity: one script calling with a new hash
    # each time pushed every other visitor's conversation out of the store.
    import httpx

    import server

    url, demo, rewriter, load_test = small_server
    rewriter.gate.set()
    endpoint = load_test._chat_endpoint(url)

    async def visit():
        async with httpx.AsyncClient(timeout=120, headers=OTHER) as other, \
                httpx.AsyncClient(timeout=120, headers=VISITOR) as script:
            first = await load_test._lean_turn(other, url, endpoint, "other-page", "Who was Ada Lovelace?")
            for n in range(20):  # over twice the store's 8 sessions
                await load_test._lean_turn(script, url, endpoint, f"script-{n}", "What is Paris?")
            return first, await load_test._lean_turn(other, url, endpoint, "other-page", "Who was her father?")

    with caplog.at_level("WARNING", logger="convqa.serving"):
        first, second = asyncio.run(visit())
    assert (first["turn"], second["turn"]) == (1, 2)  # the other visitor's conversation is still there
    store = demo.state_holder
    assert isinstance(store, server.ClientStore) and "other-page" in store.session_data
    assert store.shares.held("93.184.216.34") == 3
    assert sorted(key for key in store.session_data if key.startswith("script-")) == ["script-17", "script-18",
                                                                                       "script-19"]
    assert [r.getMessage() for r in caplog.records if "new session" in r.getMessage()] == [
        "refused a new session (its oldest dropped) to 93.184.216.34: it holds 3 sessions in the server's store, "
        "the most one visitor may"]  # one line a minute


def test_one_client_cannot_fill_the_queue_for_everyone(small_server, caplog):
    # One script sending events from many sessions filled Gradio's queue
    # (QUEUE_SIZE), and every other visitor was told the server is busy (503).
    import httpx

    url, demo, rewriter, load_test = small_server
    rewriter.gate.clear()  # the one turn at a time waits: the others wait in line
    endpoint = load_test._chat_endpoint(url)
    fn_index, state = endpoint

    def join(http, page):
        data = [None if is_state else "What is Paris?" for is_state in state]
        return http.post(url + "gradio_api/queue/join",
                         json={"data": data, "fn_index": fn_index, "session_hash": page, "event_data": None})

    async def visit():
        async with httpx.AsyncClient(timeout=120, headers=OTHER) as other, \
                httpx.AsyncClient(timeout=120, headers=VISITOR) as script:
            sent = await asyncio.gather(*(join(script, f"line-{n}") for n in range(8)))  # a burst, sent at once
            asked = asyncio.create_task(load_test._lean_turn(other, url, endpoint, "other-in-line", "What is Paris?"))
            while demo._queue.pending_event_ids_session.get("other-in-line") is None and not asked.done():
                await asyncio.sleep(0.05)
            rewriter.gate.set()
            return sent, await asked

    with caplog.at_level("WARNING", logger="convqa.serving"):
        sent, answer = asyncio.run(visit())
    assert answer["turn"] == 1  # the other visitor was answered
    statuses = [response.status_code for response in sent]
    # At most 2 of the script's are in line at once (one more once the queue
    # takes one up to run); the rest are refused, not the other visitor's.
    assert 2 <= statuses.count(200) <= 3 and statuses.count(429) == 8 - statuses.count(200)
    refused = next(response for response in sent if response.status_code == 429)
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["detail"] == ("You already have 2 requests waiting in line, the most one visitor may: try "
                                        "again in a few seconds, when they have been answered.")
    assert any("refused queued events (429) to 93.184.216.34" in r.getMessage() for r in caplog.records)
