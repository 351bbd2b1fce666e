"""``attnlib-lessons`` (attnlib/launch.py): the learner's start without make.

- The copy: every lesson, the images and the learner's index; a second run into the same folder keeps
  every file there and adds only what is missing; a folder it cannot write gets a message, not a traceback.
- Every lesson's "Index" link opens the learner's index in the copy, and the index's links open lessons.
- End to end (browser): the installed command starts JupyterLab on the copy while its port is taken (it
  takes another), lesson 01 opens in headless Chromium and a cell runs; no "Jupyter news" pop-up.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
COMMAND = Path(sys.executable).with_name("attnlib-lessons")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _launch():
    import importlib.util

    spec = importlib.util.spec_from_file_location("attnlib_launch", REPO / "attnlib" / "launch.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(COMMAND), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_module_imports_only_the_standard_library() -> None:
    code = (
        "import importlib.util, sys; spec = importlib.util.spec_from_file_location('l', sys.argv[1]);"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m);"
        "print([n for n in ('torch', 'attnlib', 'nbformat', 'jupyterlab', 'matplotlib') if n in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code, REPO / "attnlib" / "launch.py"], capture_output=True, text=True)
    assert done.stdout.strip() == "[]", done.stderr


def test_copy_into_an_existing_folder_keeps_every_file_and_adds_the_missing_lessons(tmp_path: Path) -> None:
    assert COMMAND.exists(), "attnlib-lessons is not installed: make env installs attnlib with its scripts"
    first = _run("--dir", "mine", "--copy-only", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    lessons = tmp_path / "mine" / "lessons"
    assert sorted(p.name for p in lessons.glob("*.ipynb")) == [p.name for p in LESSONS]
    (lessons / LESSONS[0].name).write_text("my work", encoding="utf-8")
    (lessons / LESSONS[1].name).unlink()
    (tmp_path / "mine" / "notes.txt").write_text("mine too", encoding="utf-8")
    (tmp_path / "mine" / "images" / "step1_inputs.png").write_bytes(b"my drawing")
    again = _run("--dir", "mine", "--copy-only", cwd=tmp_path)
    assert again.returncode == 0 and "1 lesson(s) added" in again.stdout, again.stdout + again.stderr
    assert (lessons / LESSONS[0].name).read_text(encoding="utf-8") == "my work"
    assert (tmp_path / "mine" / "notes.txt").read_text(encoding="utf-8") == "mine too"
    assert (tmp_path / "mine" / "images" / "step1_inputs.png").read_bytes() == b"my drawing"
    restored = json.loads((lessons / LESSONS[1].name).read_text(encoding="utf-8"))
    assert not any(_launch().is_teacher_only(c) for c in restored["cells"])


def test_a_learners_own_readme_is_kept_and_the_generated_index_is_refreshed(tmp_path: Path) -> None:
    launch = _launch()
    launch.fill(tmp_path / "a")
    (tmp_path / "a" / "README.md").write_text(launch.INDEX_MARK + "\nold index", encoding="utf-8")
    launch.fill(tmp_path / "a")
    assert "| Lesson | Time |" in (tmp_path / "a" / "README.md").read_text(encoding="utf-8")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "README.md").write_text("my diary", encoding="utf-8")
    launch.fill(tmp_path / "b")
    assert (tmp_path / "b" / "README.md").read_text(encoding="utf-8") == "my diary"


@pytest.mark.parametrize("where", ["file", "proc"])
def test_a_folder_it_cannot_write_gets_a_message_naming_it(tmp_path: Path, where: str) -> None:
    if where == "file":
        (tmp_path / "a-file").write_text("x")
        target = tmp_path / "a-file" / "lessons"
    else:
        if not Path("/proc/self").exists():
            pytest.skip("no /proc")
        target = Path("/proc/attnlib-lessons-test")  # not writable, not even by root
    done = _run("--dir", target, "--copy-only", cwd=tmp_path)
    assert done.returncode == 2
    assert "cannot put the lessons in" in done.stderr and "--dir" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_index_table_comes_from_the_lessons_titles_and_durations(tmp_path: Path) -> None:
    launch = _launch()
    launch.fill(tmp_path)
    index = (tmp_path / "README.md").read_text(encoding="utf-8")
    for lesson in LESSONS:
        head = json.loads(lesson.read_text(encoding="utf-8"))["cells"][0]["source"]
        head = head if isinstance(head, str) else "".join(head)
        title = re.search(r"^# (.+)$", head, re.MULTILINE)[1].strip()
        duration = re.search(r"\*\*Duration:\*\*\s*([^.\n]+)", head)[1].strip()
        assert f"| [{title}](lessons/{lesson.name}) | {duration} |" in index


def test_every_lessons_index_link_works_in_a_learners_copy(tmp_path: Path) -> None:
    """In the copy `make learn`, the hub, Binder and Kubernetes make (build_editions.py --workspace), every
    relative link of every lesson resolves, "Index" opens the learner's index, and its links open lessons."""
    done = subprocess.run(
        [sys.executable, REPO / "scripts" / "build_editions.py", "--workspace", tmp_path],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    broken = []
    for lesson in sorted((tmp_path / "lessons").glob("*.ipynb")):
        cells = json.loads(lesson.read_text(encoding="utf-8"))["cells"]
        links = [m for c in cells if c["cell_type"] == "markdown" for m in LINK.findall("".join(c["source"]))]
        assert "../README.md" in links, f"{lesson.name} has no Index link"
        for link in links:
            url = urlparse(link)
            if not url.scheme and url.path and not (lesson.parent / unquote(url.path)).is_file():
                broken.append(f"{lesson.name} -> {link}")
    index = tmp_path / "README.md"
    targets = LINK.findall(index.read_text(encoding="utf-8"))
    assert {f"lessons/{p.name}" for p in LESSONS} <= set(targets)
    broken += [f"README.md -> {t}" for t in targets if not (tmp_path / unquote(t)).is_file()]
    assert not broken, "\n".join(broken)


# ----------------------------------------------------------------------------- end to end, in Chromium
# the first code cell's prompt shows /\[(%s)\]/ (queried afresh: JupyterLab may replace the element)
PROMPT_SHOWS = (
    "() => /\\[(%s)\\]/.test(document.querySelector("
    "'.jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt')?.textContent ?? '')"
)


@pytest.mark.browser
def test_command_starts_jupyterlab_on_another_port_and_lesson_01_runs(tmp_path: Path) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from tools.labdriver import headless_chromium

    env = {k: v for k, v in os.environ.items() if k not in ("JUPYTER_TOKEN", "JUPYTER_CONFIG_PATH")}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR", "JUPYTER_RUNTIME_DIR",
                 "IPYTHONDIR"):  # fmt: skip
        (tmp_path / name).mkdir()
        env[name] = str(tmp_path / name)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    log = tmp_path / "lab.log"
    start = time.monotonic()
    process = subprocess.Popen(
        [str(COMMAND), "--dir", "course", "--no-browser", "--port", str(port)],
        cwd=tmp_path, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline, url = time.monotonic() + 60, None
        while url is None and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()[-3000:]
            found = re.search(r"http://127\.0\.0\.1:(\d+)/lab\?token=(\w+)", log.read_text())
            url = found and (int(found[1]), found[2])
            time.sleep(0.25)
        assert url, log.read_text()[-3000:]
        served, token = url
        assert served != port  # the port was taken: it took another
        with headless_chromium() as browser:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.goto(f"http://127.0.0.1:{served}/lab/tree/lessons/{LESSONS[0].name}?reset&token={token}")
            cell = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell").first
            cell.wait_for(timeout=90_000)
            opened = time.monotonic() - start
            page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=90_000)
            prompt = cell.locator(".jp-InputArea-prompt")
            # the learner's way: select the cell, press the toolbar's run button. A press that lands while
            # the notebook is still settling can run nothing: press again while the prompt stays empty
            panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
            run = page.locator(f"{panel} [data-command='notebook:run-cell-and-select-next']")
            for _ in range(6):
                cell.locator(".jp-InputPrompt").click()
                run.first.click()
                try:
                    page.wait_for_function(PROMPT_SHOWS % r"\d+|\*", timeout=15_000)
                    break
                except PlaywrightTimeout:
                    continue
            # query the prompt afresh each time: JupyterLab may replace its element while the cell runs
            page.wait_for_function(PROMPT_SHOWS % r"\d+", timeout=120_000)
            assert re.fullmatch(r"\[\d+\]:", prompt.text_content().strip())
            assert not cell.locator("[data-mime-type='application/vnd.jupyter.error']").count()
            assert page.get_by_text("official Jupyter news").count() == 0  # etc/labconfig: no news pop-up
            print(f"\nattnlib-lessons: lesson 01 open {opened:.1f} s after the command started, a cell run at "
                  f"{time.monotonic() - start:.1f} s")  # fmt: skip
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
