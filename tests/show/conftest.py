"""The fake comm the explorers' message tests record with (installed through the comm package's public hook:
``comm.create_comm`` "is intended to be replaced")."""

from __future__ import annotations

import comm
import comm.base_comm
import pytest


class RecordingComm(comm.base_comm.BaseComm):
    """Keeps every ``comm_msg`` (the widget's updates and custom messages) as ``(comm_id, data)``."""

    def __init__(self, *args, log: list[tuple[str, dict]], **kwargs) -> None:
        self.log = log
        super().__init__(*args, **kwargs)

    def publish_msg(self, msg_type, data=None, metadata=None, buffers=None, **keys) -> None:
        if msg_type == "comm_msg":
            self.log.append((self.comm_id, data or {}))


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, dict]]:
    """The messages widgets built in the test send to the browser, in order: ``(model_id, message)``."""
    log: list[tuple[str, dict]] = []
    monkeypatch.setattr(comm, "create_comm", lambda *args, **kwargs: RecordingComm(*args, log=log, **kwargs))
    return log
