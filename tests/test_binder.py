"""Binder builds with the project's pins: binder/ is current, and repo2docker's own build plan uses it.

repo2docker installs ``binder/requirements.txt`` before it copies the repository (so that file must
hold every pin itself) and runs ``binder/postBuild`` after. ``jupyter-repo2docker --no-build --debug``
prints the Dockerfile it would build without needing Docker; the test reads that plan. What it cannot
check here: that the image builds and launches on mybinder.org (no Docker, no internet).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
BINDER = REPO / "binder"


def _script(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def lock_pins(name: str = "requirements-learner.lock") -> dict[str, str]:
    lines = (REPO / name).read_text(encoding="utf-8").splitlines()
    return dict(line.split("==", 1) for line in lines if line.strip() and not line.startswith("#"))


def test_binder_requirements_are_the_learner_lock_with_cpu_torch() -> None:
    generator = _script(REPO / "scripts" / "binder_requirements.py")
    text = (BINDER / "requirements.txt").read_text(encoding="utf-8")
    learner, full = (
        (REPO / name).read_text(encoding="utf-8") for name in ("requirements-learner.lock", "requirements.lock")
    )
    assert text == generator.render(learner, full), "binder/requirements.txt is stale: run `make binder` and commit it"
    lines = [line for line in text.splitlines() if line and not line.startswith("#")]
    options = [line for line in lines if line.startswith("-")]
    # no -r, no -e: when repo2docker installs this file, nothing else of the repository is there yet
    assert options == ["--extra-index-url https://download.pytorch.org/whl/cpu"]
    pins = dict(line.split("==", 1) for line in lines if not line.startswith("-"))
    want = lock_pins()
    # the learner set, and repo2docker's base-environment `notebook` at a version that fits our JupyterLab
    assert set(pins) == set(want) | {"notebook"}
    assert {k: v for k, v in pins.items() if k not in ("torch", "notebook")} == {
        k: v for k, v in want.items() if k != "torch"
    }
    assert pins["notebook"] == lock_pins("requirements.lock")["notebook"]
    assert pins["torch"] == want["torch"].split("+")[0] + "+cpu"
    # none of the workshop: tests, site, hub, repo2docker
    assert not {"pytest", "nbval", "Sphinx", "playwright", "jupyterhub", "jupyter-repo2docker", "ruff"} & set(pins)


def test_the_generator_refuses_a_lock_line_that_is_not_a_pin() -> None:
    generator = _script(REPO / "scripts" / "binder_requirements.py")
    with pytest.raises(SystemExit, match="not an exact pin"):
        generator.render("numpy>=2\n")
    with pytest.raises(SystemExit, match="not an exact pin"):
        generator.render("numpy==2.0\n", "-e .\n")


def test_post_build_installs_attnlib_alone_and_the_learner_edition() -> None:
    post_build = BINDER / "postBuild"
    assert os.access(post_build, os.X_OK)
    text = post_build.read_text(encoding="utf-8")
    assert "set -euo pipefail" in text
    assert "pip install --no-cache-dir --no-deps --no-build-isolation -e ." in text
    assert "scripts/build_editions.py --workspace my-lessons" in text
    assert "\npython scripts/install_server_config.py\n" in text  # the image's servers get our settings
    assert "cp etc/labconfig/default_setting_overrides.json" in text  # and JupyterLab its news-off setting
    assert (BINDER / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"


def test_the_server_settings_install_where_every_server_of_the_environment_reads_them(tmp_path: Path) -> None:
    jupyter_paths = pytest.importorskip("jupyter_core.paths")
    from traitlets.config import PyFileConfigLoader

    installer = _script(REPO / "scripts" / "install_server_config.py")
    target = installer.install(tmp_path)
    assert target == tmp_path / "etc" / "jupyter" / "jupyter_server_config.py"
    assert target.read_bytes() == (REPO / "etc" / "jupyter_server_config.py").read_bytes()
    config = PyFileConfigLoader(target.name, path=str(target.parent)).load_config()
    assert "comm_msg" in config.MappingKernelManager.untracked_message_types
    assert config.ServerApp.kernel_websocket_connection_class.__name__ == "NoDelayWebsocketConnection"
    # under the image's sys.prefix, that folder is one every Jupyter server of the environment reads
    assert str(Path(sys.prefix) / "etc" / "jupyter") in jupyter_paths.jupyter_config_path()
    assert installer.install(tmp_path) == target  # again (a rebuilt image): the same file, nothing to do
    target.write_text("c.ServerApp.ip = '0.0.0.0'\n")
    with pytest.raises(FileExistsError, match="exists with other settings"):
        installer.install(tmp_path)
    assert target.read_text() == "c.ServerApp.ip = '0.0.0.0'\n"  # someone else's settings kept


def test_readme_badge_opens_the_first_lesson_of_the_repository_in_pyproject() -> None:
    url = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    slug = url.removeprefix("https://github.com/")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"https://mybinder.org/v2/gh/{slug}/HEAD?labpath=my-lessons%2Flessons%2F01_inputs.ipynb" in readme


@pytest.fixture(scope="module")
def build_plan(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Dockerfile repo2docker would build for a clean copy of the tracked files."""
    pytest.importorskip("repo2docker", reason="jupyter-repo2docker is not installed (make env installs it)")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout to copy the tracked files")
    copy = tmp_path_factory.mktemp("binder") / "repo"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, copy / name)
    r2d = Path(sys.executable).with_name("jupyter-repo2docker")
    done = subprocess.run(
        [str(r2d), "--no-build", "--debug", "--user-id", "1000", "--user-name", "jovyan", str(copy)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout + done.stderr


def test_repo2docker_plans_python_311_our_pins_then_post_build(build_plan: str) -> None:
    assert "Building conda environment for python=3.11" in build_plan
    install = build_plan.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    copy_repo = build_plan.index("COPY --chown=1000:1000 src/ ${REPO_DIR}/")
    post_build = build_plan.index("./binder/postBuild")
    assert install < copy_repo < post_build  # the pins first (only that file is there), the repository, then postBuild
    assert "environment.yml" not in build_plan  # binder/ wins: root-level environment.yml is not used
