"""What the browser test modules share: the kernels :func:`harness.static_pages.python_states` keeps (one per
lesson, the lesson run once in it) end with the module that started them."""

from __future__ import annotations

import pytest

from harness.static_pages import close_kernels


@pytest.fixture(scope="module", autouse=True)
def _lesson_kernels():
    yield
    close_kernels()
