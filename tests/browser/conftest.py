"""What the browser test modules share: one headless Chromium per module; the kernels
:func:`harness.static_pages.python_states` keeps (one per lesson, the lesson run once in it) end with the module
that started them, and its answers, kept in the run's shared temporary folder, serve every module and worker
that asks the same (test_slides.py's decks ask what test_site.py's pages asked); the site, built once per run
for test_site.py, test_site_pages.py, test_a11y.py and test_slides.py (``make site``'s code, into a temporary
folder; the decks are built from its executed lessons), whichever worker asks first."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from filelock import FileLock

from harness.labdriver import headless_chromium, load_module
from harness.static_pages import close_kernels, share_answers

REPO = Path(__file__).resolve().parents[2]
# the lessons executed with widget state for the site (`make site`: all of them)
LIVE = os.environ.get("BROWSER_LESSONS", "all").replace(" ", "") or "all"


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium per test module (each module's pages share it)."""
    with headless_chromium() as chromium:
        yield chromium


def _shared_folder(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """One folder for every worker of this run: xdist gives each a folder of the run's own."""
    return tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent


@pytest.fixture(scope="session", autouse=True)
def _shared_python_states(tmp_path_factory: pytest.TempPathFactory, worker_id: str):
    """python_states' answers in one folder of the run, for every module and worker."""
    share_answers(_shared_folder(tmp_path_factory, worker_id) / "python-states")
    yield
    share_answers(None)


@pytest.fixture(scope="module", autouse=True)
def _lesson_kernels():
    yield
    close_kernels()


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """The site as `make site` builds it (the lessons of BROWSER_LESSONS executed with their widget state), in
    ``<tmp>/site/html`` beside its Sphinx sources ``<tmp>/site/src``: built once per test run, by the first
    pytest-xdist worker that needs it (the others wait for it and share it)."""
    pytest.importorskip("sphinx", reason="Sphinx is not installed (make env installs requirements.lock)")
    pytest.importorskip("myst_nb", reason="myst-nb is not installed (make env installs requirements.lock)")
    if not (REPO / "node_modules" / "mathjax-full" / "package.json").is_file() and shutil.which("npm") is None:
        pytest.skip("no npm to fetch MathJax into node_modules/ (package-lock.json)")
    shared = _shared_folder(tmp_path_factory, worker_id)
    root = shared / "site"
    with FileLock(str(shared / "site.lock")):
        if not (root / "built").is_file():
            shutil.rmtree(root, ignore_errors=True)
            load_module(REPO / "site" / "build.py").build(root / "html", root / "src", live=LIVE)
            (root / "built").touch()
    return root / "html"
