"""Where the page shows a queued event's progress: on the one panel it is
for, not as a spinner and timer over every output it redraws."""

from __future__ import annotations

import app


def test_a_turns_progress_is_shown_on_the_chat_alone_and_a_documents_where_its_outcome_is_said(app_services, tmp_path):
    # A turn covered the metrics table and plot, the correction box and the
    # conversations list with a spinner each, for the whole turn.
    demo = app.build_app(app_services, export_dir=str(tmp_path))
    queued = [fn for fn in demo.fns.values() if fn.concurrency_id == "turn" and fn.api_visibility == "private"]
    shown = {fn.name: [block.elem_id for block in fn.show_progress_on or []] for fn in queued}
    for fn in queued:  # each on one panel it redraws; on the chat where it redraws the chat
        assert len(fn.show_progress_on or []) == 1 and fn.show_progress_on[0] in fn.outputs, fn.name
        assert shown[fn.name] == ["chat"] or "chat" not in [block.elem_id for block in fn.outputs], fn.name
    assert {name: shown[name] for name in ("ask", "rerun", "replay_next", "replay_all", "upload", "document", "choice")} == {
        "ask": ["chat"], "rerun": ["chat"], "replay_next": ["chat"], "replay_all": ["chat"],
        "upload": ["docs-status"], "document": ["docs-status"], "choice": ["mc-result"]}
