"""Sessions: one browser tab's conversation and what its user does with it.

Nothing here imports gradio: ``app.py`` keeps a :class:`Session` per tab and
calls these functions with it and with the server-wide :class:`Services`.
"""

from ._labels import (
    LabelStore,
)
from ._language import NOT_ENGLISH, language_notice
from ._replay import load_replay, replay_step, shared_data_file, start_replay
from ._sources import (
    multiple_choice,
    search_notice,
    source_status,
    track_uploads,
    use_collection_document,
    use_default_collection,
    use_document,
    use_document_file,
    use_uploads,
)
from ._state import METRICS, Pending, Scorer, Services, Session, SessionTurn, TurnInfo
from ._store import (
    MAX_CONVERSATIONS,
    conversation_choices,
    restore_state,
    saved_state,
    switch_conversation,
)
from ._turns import (
    ask,
    ask_json,
    correct,
    export_qrecc,
    judge,
    new_conversation,
    rewrite_json,
    select_turn,
    target_turn,
    turn_notice,
    undo,
    write_export,
)
from ._uploads import (
    UPLOAD_SUFFIXES,
    SessionIndex,
    UploadLimits,
    check_uploads,
    index_uploads,
    read_passages,
    read_text,
    remove_stale_sessions,
    sessions_dir,
)
from ._views import (
    chat_messages,
    choice_html,
    escape_markdown,
    metrics_points,
    metrics_rows,
    notice_html,
    turn_of_message,
)

__all__ = [
    "MAX_CONVERSATIONS",
    "METRICS",
    "NOT_ENGLISH",
    "UPLOAD_SUFFIXES",
    "LabelStore",
    "Pending",
    "Scorer",
    "Services",
    "Session",
    "SessionIndex",
    "SessionTurn",
    "TurnInfo",
    "UploadLimits",
    "ask",
    "ask_json",
    "chat_messages",
    "check_uploads",
    "choice_html",
    "conversation_choices",
    "correct",
    "escape_markdown",
    "export_qrecc",
    "index_uploads",
    "judge",
    "language_notice",
    "load_replay",
    "metrics_points",
    "metrics_rows",
    "multiple_choice",
    "new_conversation",
    "notice_html",
    "read_passages",
    "read_text",
    "remove_stale_sessions",
    "replay_step",
    "restore_state",
    "rewrite_json",
    "saved_state",
    "select_turn",
    "sessions_dir",
    "shared_data_file",
    "search_notice",
    "source_status",
    "start_replay",
    "switch_conversation",
    "target_turn",
    "turn_notice",
    "track_uploads",
    "turn_of_message",
    "undo",
    "use_collection_document",
    "use_default_collection",
    "use_document",
    "use_document_file",
    "use_uploads",
    "write_export",
]
