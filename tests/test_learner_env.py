"""The learner set: generated, a subset of the workshop's lock, and enough to run a lesson on its own.

- Both lock files are what scripts/lock.py makes from pyproject.toml's groups (``make lock``).
- requirements-learner.lock pins the lessons' own imports and none of the workshop's tools.
- A venv made of *only* the learner lock's distributions (linked from this environment's copies, so
  nothing is downloaded) runs lesson 01 top to bottom with nbclient, serves JupyterLab's ``--version``,
  and cannot import the tools it must not carry.

The real install (``make learner-env`` into a new folder: pip, the CPU index, minutes of copying torch)
is measured, not run here: set ATTNLIB_TEST_LEARNER_INSTALL=1 to run it and check the venv's size.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
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
    """A venv whose site-packages holds links to exactly the learner lock's distributions and the checkout's attnlib."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=60)
    python = root / "bin" / "python"
    site = Path(
        subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                       capture_output=True, text=True, check=True).stdout.strip()
    )  # fmt: skip
    ours = Path(sysconfig.get_path("purelib"))
    for name in _lock("requirements-learner.lock"):
        dist = metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist.files or () if not str(f).startswith("..")}
        for top in tops:
            if (ours / top).exists() and not (site / top).exists():
                (site / top).symlink_to(ours / top)
    (site / "attnlib-checkout.pth").write_text(f"{REPO}\n", encoding="utf-8")  # as `pip install -e .` gives
    return python


def test_a_venv_of_only_the_learner_set_runs_a_lesson_and_jupyterlab(tmp_path: Path) -> None:
    python = _learner_only_venv(tmp_path / "venv")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "JUPYTER_PATH")}
    env |= {"JUPYTER_DATA_DIR": str(tmp_path / "data"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config")}
    env["IPYTHONDIR"] = str(tmp_path / "ipython")
    missing = subprocess.run(
        [python, "-c", "import importlib.util as u; print([m for m in ('pytest', 'sphinx', 'playwright', 'jupyterhub',"
         " 'nbval') if u.find_spec(m)])"], capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert missing.stdout.strip() == "[]"  # the learner venv is lean: none of the workshop's tools
    version = subprocess.run([python, "-m", "jupyterlab", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.strip()[:1].isdigit(), version.stderr[-2000:]
    lesson = tmp_path / "lessons" / LESSONS[0].name
    lesson.parent.mkdir()
    shutil.copy2(LESSONS[0], lesson)
    shutil.copytree(REPO / "images", tmp_path / "images")
    done = subprocess.run(
        [python, "-m", "nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=120",
         "--output", "executed.ipynb", str(lesson)],
        capture_output=True, text=True, env=env, cwd=lesson.parent, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    executed = json.loads((lesson.parent / "executed.ipynb").read_text(encoding="utf-8"))
    outputs = [o for c in executed["cells"] if c["cell_type"] == "code" for o in c["outputs"]]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)  # an explorer


@pytest.mark.skipif(not os.environ.get("ATTNLIB_TEST_LEARNER_INSTALL"), reason="set ATTNLIB_TEST_LEARNER_INSTALL=1")
def test_make_learner_env_installs_a_lean_venv(tmp_path: Path) -> None:
    done = subprocess.run(["make", "-C", str(REPO), "learner-env", f"VENV={tmp_path / 'venv'}"],
                          capture_output=True, text=True, timeout=1800)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    size = sum(p.lstat().st_blocks * 512 for p in (tmp_path / "venv").rglob("*"))
    assert size <= SIZE_GOAL, f"learner venv is {size / 1e9:.2f} GB"
    check = subprocess.run([tmp_path / "venv" / "bin" / "python", "-m", "pip", "check"], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout
