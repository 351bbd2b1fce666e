"""The order of the run, and the fake comm the explorers' message tests record with."""

from __future__ import annotations

import comm
import comm.base_comm
import pytest

#: the longest test modules (tens of seconds each), in the order make test's workers start them; then the
#: lessons under nbval, then every other module: the many short ones fill the gap between the two workers
#: at the end (make test passes --no-loadscope-reorder, so xdist keeps this order)
SLOW_FIRST = (
    "tests/hub/test_hub.py",
    "tests/browser/test_lab.py",
    "tests/browser/test_site.py",
    "tests/test_wheel.py",
    "tests/test_learner_env.py",
    "tests/browser/test_slides.py",
    "tests/test_exercise_loopholes.py",
    "tests/test_exercise_robustness.py",
    "tests/test_notebook_flow.py",
    "tests/show/test_figures.py",
    "tests/hub/test_z2jh.py",
)


def pytest_collection_modifyitems(items: list) -> None:
    rank = {path: k for k, path in enumerate(SLOW_FIRST)}

    def order(item) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        if path in rank:
            return 0, rank[path]
        return (1, 0) if path.endswith(".ipynb") else (2, 0)

    items.sort(key=order)  # stable: the order within each module stays


# --------------------------------------------------------------------------- the fake comm
# The explorers' message tests record with it, installed through the comm package's public hook
# (``comm.create_comm`` "is intended to be replaced").
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
