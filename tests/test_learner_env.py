"""The learner set: generated, a subset of the workshop's lock, and enough to run a lesson on its own.

- Both lock files are what scripts/lock.py makes from pyproject.toml's groups (``make lock``).
- requirements-learner.lock pins the lessons' own imports and none of the workshop's tools.
- A venv made of *only* the learner lock's distributions (linked from this environment's copies, so
  nothing is downloaded) cannot import the tools it must not carry, and starts the lessons as a learner
  does: ``attnlib-lessons`` copies them and opens JupyterLab, where lesson 01 runs top to bottom in
  headless Chromium.

The real install (``make learner-env`` into a new folder: pip, the CPU index, copying torch)
is measured, not run here: set ATTNLIB_TEST_LEARNER_INSTALL=1 to run it and check the venv's size.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from importlib import metadata
from pathlib import Path

import pytest
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
WORKSHOP_ONLY = {"pytest", "nbval", "sphinx", "myst-nb", "furo", "playwright", "jupyterhub", "ruff", "hypothesis"}
SIZE_GOAL = 1.2e9  # bytes on disk of a learner's .venv


def _lock(name: str) -> dict[str, str]:
    lines = (REPO / name).read_text(encoding="utf-8").splitlines()
    pins = (line.split("==", 1) for line in lines if line.strip() and not line.startswith("#"))
    return {canonicalize_name(n): v for n, v in pins}


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_both_locks_are_generated_from_the_groups() -> None:
    lock = _script("lock")
    for name, groups in lock.LOCKS.items():
        assert (REPO / name).read_text(encoding="utf-8") == lock.render(groups), f"{name} is stale: run `make lock`"


def test_learner_lock_is_the_lessons_set_within_the_full_lock() -> None:
    learner, full = _lock("requirements-learner.lock"), _lock("requirements.lock")
    assert learner.items() <= full.items()  # same versions as the workshop, a subset of it
    assert {"torch", "jupyterlab", "ipywidgets", "anywidget", "matplotlib", "seaborn", "tqdm", "ipykernel"} <= set(
        learner
    )
    assert not WORKSHOP_ONLY & set(learner), WORKSHOP_ONLY & set(learner)
    assert WORKSHOP_ONLY - {"hypothesis"} <= set(full)


def _imports(source: str) -> set[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a cell with IPython magics
        return set()
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module.split(".")[0])
    return found


def test_every_module_the_lessons_and_attnlib_import_is_in_the_learner_lock() -> None:
    modules = set()
    for lesson in LESSONS:
        nb = json.loads(lesson.read_text(encoding="utf-8"))
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                modules |= _imports("".join(cell["source"]))
    for path in (REPO / "attnlib").rglob("*.py"):
        modules |= _imports(path.read_text(encoding="utf-8"))
    owners = metadata.packages_distributions()
    learner = _lock("requirements-learner.lock")
    missing = {}
    for module in sorted(modules - set(sys.stdlib_module_names) - {"attnlib", "__future__"}):
        dists = {canonicalize_name(d) for d in owners.get(module, [])}
        if not dists & set(learner):
            missing[module] = sorted(dists) or "not installed"
    assert not missing, f"imported by the lessons or attnlib, not in requirements-learner.lock: {missing}"


def _learner_only_venv(root: Path) -> Path:
    """A venv holding links to exactly the learner lock's distributions (their modules, and the data files of
    share/ and etc/ they install) and the checkout's attnlib."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = Path(sysconfig.get_path("purelib"))
    for name in _lock("requirements-learner.lock"):
        dist = metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}
        for top in tops:
            if (ours / top).exists() and not (site / top).exists():
                (site / top).symlink_to(ours / top)
        for file in dist.files or ():  # JupyterLab's app and the widgets' lab extensions, the server's settings
            found = Path(os.path.normpath(ours / file))
            inside = found.relative_to(sys.prefix) if found.is_relative_to(sys.prefix) else None
            if inside and inside.parts[0] in ("share", "etc") and found.is_file():
                (root / inside).parent.mkdir(parents=True, exist_ok=True)
                if not (root / inside).exists():  # a copy: the server serves no link out of its static folder
                    shutil.copy2(found, root / inside)
    (site / "attnlib-checkout.pth").write_text(f"{REPO}\n", encoding="utf-8")  # as `pip install -e .` gives
    return python


# the first code cell's prompt shows /\[(%s)\]/ (queried afresh: JupyterLab may replace the element)
PROMPT_SHOWS = (
    "() => /\\[(%s)\\]/.test(document.querySelector("
    "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')?.textContent ?? '')"
)
# how often the waits on the page look again, in ms: Playwright's default looks at every animation frame, which
# keeps the renderer drawing frames at 60 Hz through the ~45 s of waits (Chromium renderer: 10.5 -> 7.2 CPU-s)
POLL_MS = 250
# every code cell of the open notebook has run: {cells, numbered, errors, views}
RUN_STATE_JS = """
() => {
  const panel = document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden)');
  const prompts = [...panel.querySelectorAll('.jp-CodeCell .jp-InputArea-prompt')].map(p => p.textContent.trim());
  return {
    cells: prompts.length,
    numbered: prompts.filter(p => /^\\[\\d+\\]:$/.test(p)).length,
    errors: panel.querySelectorAll('[data-mime-type="application/vnd.jupyter.error"]').length,
    views: panel.querySelectorAll('.attn-heatmap svg').length,
  };
}
"""


@pytest.mark.browser
def test_the_learner_set_starts_the_lessons_and_runs_lesson_01_in_jupyterlab(tmp_path: Path) -> None:
    """A learner's start, end to end, from a venv of only the learner set: ``attnlib-lessons`` copies the
    lessons and starts JupyterLab while its port is taken (it takes another); lesson 01 opens in headless
    Chromium, a cell runs from the toolbar, then Run All runs every cell with no error and draws the live
    views; no "Jupyter news" pop-up (etc/labconfig)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from harness.labdriver import headless_chromium

    python = _learner_only_venv(tmp_path / "venv")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_TOKEN", "JUPYTER_CONFIG_PATH")
    }
    for name in (
        "JUPYTER_CONFIG_DIR",
        "JUPYTER_DATA_DIR",
        "JUPYTERLAB_SETTINGS_DIR",
        "JUPYTERLAB_WORKSPACES_DIR",
        "JUPYTER_RUNTIME_DIR",
        "IPYTHONDIR",
    ):
        (tmp_path / name).mkdir()
        env[name] = str(tmp_path / name)
    missing = subprocess.run(
        [
            python,
            "-c",
            "import importlib.util as u; print([m for m in ('pytest', 'sphinx', 'playwright', 'jupyterhub',"
            " 'nbval') if u.find_spec(m)])",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert missing.stdout.strip() == "[]"  # the learner venv is lean: none of the workshop's tools
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    log = tmp_path / "lab.log"
    start = time.monotonic()
    # attnlib-lessons as the learner runs it (the installed script calls the same main)
    process = subprocess.Popen(
        [python, "-m", "attnlib_lessons", "--dir", "course", "--no-browser", "--port", str(port)],
        cwd=tmp_path,
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline, url = time.monotonic() + 90, None
        while url is None and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()[-3000:]
            found = re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=(\w+)", log.read_text())
            url = found and (int(found[1]), found[2])
            time.sleep(0.25)
        assert url, log.read_text()[-3000:]
        served, token = url
        assert served != port  # the port was taken: it took another
        assert (tmp_path / "course" / "lessons" / LESSONS[0].name).is_file()
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{served}/lab/tree/lessons/{LESSONS[0].name}?reset&token={token}")
            panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
            cell = page.locator(f"{panel} .jp-CodeCell").first
            cell.wait_for(timeout=90_000)
            opened = time.monotonic() - start
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
            # the learner's way: select the cell, press the toolbar's run button. A press that lands while
            # the notebook is still settling can run nothing: press again while the prompt stays empty
            run = page.locator(f"{panel} [data-command='notebook:run-cell-and-select-next']")
            for _ in range(6):
                cell.locator(".jp-InputPrompt").click()
                run.first.click()
                try:
                    page.wait_for_function(PROMPT_SHOWS % r"\d+|\*", timeout=15_000, polling=POLL_MS)
                    break
                except PlaywrightTimeout:
                    continue
            page.wait_for_function(PROMPT_SHOWS % r"\d+", timeout=120_000, polling=POLL_MS)
            first_cell = time.monotonic() - start
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            page.wait_for_function(
                f"() => {{ const s = ({RUN_STATE_JS})(); return s.cells > 0 && s.numbered === s.cells; }}",
                timeout=180_000,
                polling=POLL_MS,
            )
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=60_000)
            state = page.evaluate(RUN_STATE_JS)
            assert state["errors"] == 0, state
            assert state["views"] > 0, state  # the explorer's live views are drawn
            assert page.get_by_text("official Jupyter news").count() == 0  # etc/labconfig: no news pop-up
            print(
                f"\nlearner set: lesson 01 open {opened:.1f} s after attnlib-lessons started, a cell run at "
                f"{first_cell:.1f} s, every cell at {time.monotonic() - start:.1f} s"
            )
            page.close()
    finally:
        taken.close()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=5)


@pytest.mark.skipif(not os.environ.get("ATTNLIB_TEST_LEARNER_INSTALL"), reason="set ATTNLIB_TEST_LEARNER_INSTALL=1")
def test_make_learner_env_installs_a_lean_venv(tmp_path: Path) -> None:
    done = subprocess.run(
        ["make", "-C", str(REPO), "learner-env", f"VENV={tmp_path / 'venv'}"],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    size = sum(p.lstat().st_blocks * 512 for p in (tmp_path / "venv").rglob("*"))
    assert size <= SIZE_GOAL, f"learner venv is {size / 1e9:.2f} GB"
    check = subprocess.run([tmp_path / "venv" / "bin" / "python", "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
