"""What a server left running for days holds: memory, disk, per-client shares."""

from __future__ import annotations

import pytest

from assistant import session as S
from assistant.kernel import InvalidInputError


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
