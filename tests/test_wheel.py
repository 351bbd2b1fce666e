"""attnlib's wheel carries everything a learner needs: the live views' JavaScript and CSS, the trained
checkpoints, the learner edition with its images, and the server and lab settings.

The wheel is built from this checkout (``pip wheel --no-deps``, setup.py adds ``attnlib/data/``) and
installed into a new venv outside the repository. To stay within make test's budget that venv does not
download attnlib's dependencies again: a ``.pth`` file lends it the test environment's site-packages,
where attnlib itself is only an editable finder that a ``.pth`` path does not run. So every ``attnlib``
file the checks use comes from the wheel (asserted), run from a temporary folder, never the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# a lesson with a live view (TiledExplorer) that loads a trained checkpoint (pretrained.load): the lightest of
# those under nbval (about 11 s; lesson 16's ReferentExplorer, 27 s)
LIVE_VIEW_AND_CHECKPOINT = "15_attention_at_scale.ipynb"


def _run(*args: str | Path, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{args}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    _run(
        sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", dist, REPO, cwd=dist
    )
    (built,) = dist.glob("attnlib-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside the repository with the wheel installed (and the test environment's packages lent)."""
    root = tmp_path_factory.mktemp("wheel-venv")
    _run(sys.executable, "-m", "venv", "--without-pip", root / "venv", cwd=root)
    python = root / "venv" / "bin" / "python"
    _run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", wheel, cwd=root)
    site = Path(_run(python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))", cwd=root).stdout.strip())
    (site / "lent-test-environment.pth").write_text(sysconfig.get_path("purelib") + "\n", encoding="utf-8")
    return root / "venv"


def test_the_wheel_holds_the_views_checkpoints_lessons_and_settings(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    assert any(n.endswith("static/heatmap.js") for n in names) and any(n.endswith("static/heatmap.css") for n in names)
    assert {f"attnlib/checkpoints/{p.name}" for p in (REPO / "attnlib" / "checkpoints").glob("*.pt")} <= names
    assert {f"attnlib/corpus/{p.name}" for p in (REPO / "attnlib" / "corpus").iterdir()} <= names  # lesson 17's text
    assert {f"attnlib/data/lessons/{p.name}" for p in LESSONS} <= names
    assert {f"attnlib/data/images/{p.name}" for p in (REPO / "images").iterdir()} <= names
    assert "attnlib/data/etc/jupyter_server_config.py" in names
    assert "attnlib/data/etc/labconfig/default_setting_overrides.json" in names
    with zipfile.ZipFile(wheel) as archive:
        entry_points = archive.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
        lesson = json.loads(archive.read(f"attnlib/data/lessons/{LESSONS[0].name}"))
    assert "attnlib-lessons = attnlib_lessons:main" in entry_points
    assert not any(  # the learner edition: no speaker notes, no teacher cells
        c.get("metadata", {}).get("slideshow", {}).get("slide_type") == "notes"
        or "teacher" in c.get("metadata", {}).get("tags", [])
        for c in lesson["cells"]
    )


LOAD_ALL = """
import json, pathlib, sys
import attnlib
from attnlib import pretrained
package = pathlib.Path(attnlib.__file__).parent
from attnlib.training import CHECKPOINTS, load_checkpoint
loaded = {name: type(pretrained.load(name)).__name__ for name in pretrained.RECIPES}
# checkpoints outside the recipes (lesson 17's writer) load with the config stored in them
loaded.update({p.stem: type(load_checkpoint(p)).__name__ for p in CHECKPOINTS.glob("*.pt") if p.stem not in loaded})
static = sorted(p.name for p in package.rglob("static/*") if p.suffix in (".js", ".css"))
print(json.dumps({"package": str(package), "loaded": loaded, "static": static}))
"""


def test_installed_wheel_loads_every_checkpoint_and_finds_its_static_files(venv: Path, tmp_path: Path) -> None:
    done = _run(venv / "bin" / "python", "-c", LOAD_ALL, cwd=tmp_path)
    found = json.loads(done.stdout.splitlines()[-1])
    assert Path(found["package"]).is_relative_to(venv), found["package"]  # the wheel's attnlib, not the checkout
    assert found["loaded"] and set(found["loaded"]) == {p.stem for p in (REPO / "attnlib" / "checkpoints").glob("*.pt")}
    assert {"heatmap.js", "heatmap.css"} <= set(found["static"])


def test_installed_command_copies_the_lessons_and_one_runs_under_nbval(venv: Path, tmp_path: Path) -> None:
    _run(venv / "bin" / "attnlib-lessons", "--dir", "course", "--copy-only", cwd=tmp_path)
    lessons = tmp_path / "course" / "lessons"
    assert sorted(p.name for p in lessons.glob("*.ipynb")) == [p.name for p in LESSONS]
    index = (tmp_path / "course" / "README.md").read_text(encoding="utf-8")
    assert [line.split("](")[1].split(")")[0] for line in index.splitlines() if line.startswith("| [")] == [
        f"lessons/{p.name}" for p in LESSONS
    ]
    assert sorted(p.name for p in (tmp_path / "course" / "images").iterdir()) == sorted(
        p.name for p in (REPO / "images").iterdir()
    )
    _run(
        venv / "bin" / "python",
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--nbval",
        "--nbval-current-env",
        "--nbval-sanitize-with",
        REPO / "tests" / "sanitize.cfg",
        lessons / LIVE_VIEW_AND_CHECKPOINT,
        cwd=tmp_path,
    )
