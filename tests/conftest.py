"""Shared test helpers: hypothesis settings and strategies for attention's inputs; the order of the run."""

from __future__ import annotations

import comm
import comm.base_comm
import pytest
import torch
from hypothesis import settings
from hypothesis import strategies as st

PROPERTY = settings(max_examples=80, deadline=None, derandomize=True, database=None)

batch_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=2).map(tuple)
sizes = st.integers(1, 9)
seeds = st.integers(0, 2**31 - 1)


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


def randn(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    return torch.randn(shape, generator=gen)


@st.composite
def attention_inputs(draw: st.DrawFn, masked: bool) -> tuple[torch.Tensor, ...]:
    batch = draw(batch_shapes)
    n_q, n_k, d_k, d_v = draw(sizes), draw(sizes), draw(st.integers(1, 16)), draw(st.integers(1, 16))
    gen = torch.Generator().manual_seed(draw(seeds))
    q, k, v = randn((*batch, n_q, d_k), gen), randn((*batch, n_k, d_k), gen), randn((*batch, n_k, d_v), gen)
    if not masked:
        return q, k, v, None
    # a mask that broadcasts: full (…, n_q, n_k), one per query/key pair shared over the batch, or per key
    kind = draw(st.sampled_from(["full", "shared", "keys"]))
    shape = {"full": (*batch, n_q, n_k), "shared": (n_q, n_k), "keys": (n_k,)}[kind]
    mask = torch.rand(shape, generator=gen) < draw(st.floats(0.2, 0.9))
    return q, k, v, mask


def ensure_visible(mask: torch.Tensor) -> torch.Tensor:
    """Let every query see at least one key (the first of its row if it saw none)."""
    mask = mask.clone()
    hidden = ~mask.any(dim=-1)
    mask[..., 0] |= hidden
    return mask


# --------------------------------------------------------------------------- the fake comm
# The explorers' message tests record with it, installed through the comm package's public hook
# (``comm.create_comm`` "is intended to be replaced"). It lives here, not in tests/show/conftest.py: a second
# conftest module shadows this one for the tests that import helpers from it (``from conftest import ...``).
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
