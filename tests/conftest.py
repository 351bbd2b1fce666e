"""The order of the run, and the fake comm the explorers' message tests record with."""

from __future__ import annotations

import comm
import comm.base_comm
import pytest

#: the longest test modules, about longest first, in the order make test's workers start them; then the lessons
#: under nbval, then every other module: the many short ones fill the gaps between the workers at the end (make
#: test passes --no-loadscope-reorder, so xdist keeps this order). The site's build (~40 s) is the first
#: module's: the two modules that wait for it start after two that do not. Seconds: each module's tests and
#: setups added up (junit XML) in a fresh-clone make test of 2026-12-07 (three workers, load 17); a module of
#: more than about 10 s missing here can start last and leave the other workers idle while one finishes it.
SLOW_FIRST = (
    "tests/browser/test_site.py",  # ~125 (was 140; CPU 181 -> 159 s in a -n 0 run), the site's build included
    "tests/browser/test_lab.py",  # ~175: 05 as its explorer cells (was 211; CPU 130 -> 106 s in a -n 0 run)
    "tests/hub/test_hub_isolation.py",  # ~150: 203 before shared kernels (s3hub); CPU 56 -> 44 (time_hub) -> 40 (hub7)
    "tests/browser/test_site_pages.py",  # 200: every page, its math and axe-core (math typeset at build, no MathJax:
    # the 26 pages' loads and axe 97 -> 83 CPU-s)
    "tests/hub/test_hub.py",  # ~150: 183 before lesson 09 and one kernel less (wall x0.8, CPU 50 -> 43, time_hub)
    "tests/browser/test_a11y.py",  # 95
    "tests/test_exercise_fuzz.py",  # 90 (was 161: fewer deep copies)
    "tests/hub/test_hub_web.py",  # ~83: 89 before one Chromium (wall x0.93, s3hub)
    "tests/browser/test_slides.py",  # ~55 (was 118; CPU 113 -> 53 s): decks from the site's build
    "tests/hub/test_hub_tls.py",  # ~47 (51 alone, load 4, less a Chromium launch): one hub on a real name, TLS
    "tests/test_wheel.py",  # 36
    "tests/test_learner_env.py",  # 34
    "tests/show/test_table.py",  # ~24 (was 29; CPU 45 -> 37 s in a -n 0 run): computes and chunks kept
    "tests/show/test_page.py",  # ~18 (was 32; CPU 45 -> 25 s): one table per explorer built
    "tests/test_exercise_loopholes.py",  # 24
    "tests/test_exercise_robustness.py",  # 13
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
