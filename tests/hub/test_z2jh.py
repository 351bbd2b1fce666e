"""deploy/z2jh-values.yaml (Kubernetes) says what deploy/jupyterhub_config.py (one machine) says.

Installing the chart needs a Kubernetes cluster, and building the image needs Docker: neither is
here. What is checked: the values parse, agree with the one-machine configuration on authentication,
culling, memory and the lessons' start page, and repo2docker accepts ``--target-repo-dir /srv/repo``
(where the postStart hook expects the repository) and plans an image that copies it to that folder.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VALUES = REPO / "deploy" / "z2jh-values.yaml"


class Recorder:
    """Stands in for JupyterHub's config object: records every ``c.Section.name = value``."""

    def __init__(self) -> None:
        self.sections: dict[str, dict[str, object]] = {}

    def __getattr__(self, section: str):
        return self.sections.setdefault(section, _Section())


class _Section(dict):
    def __setattr__(self, name: str, value: object) -> None:
        self[name] = value

    def __getattr__(self, name: str) -> object:
        return self[name]


@pytest.fixture(scope="module")
def values() -> dict:
    yaml = pytest.importorskip("ruamel.yaml")
    return yaml.YAML(typ="safe").load(VALUES.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def one_machine(tmp_path_factory: pytest.TempPathFactory) -> Recorder:
    config = Recorder()
    state = tmp_path_factory.mktemp("state")
    import os

    saved = os.environ.get("HUB_STATE_DIR")
    os.environ["HUB_STATE_DIR"] = str(state)
    try:
        source = (REPO / "deploy" / "jupyterhub_config.py").read_text(encoding="utf-8")
        exec(
            compile(source, "jupyterhub_config.py", "exec"),
            {"get_config": lambda: config, "__file__": str(REPO / "deploy" / "jupyterhub_config.py")},
        )
    finally:
        if saved is None:
            os.environ.pop("HUB_STATE_DIR")
        else:
            os.environ["HUB_STATE_DIR"] = saved
    return config


def test_both_use_native_authenticator_with_the_same_rules(values: dict, one_machine: Recorder) -> None:
    hub = values["hub"]["config"]
    assert hub["JupyterHub"]["authenticator_class"] == one_machine.JupyterHub.authenticator_class
    assert hub["NativeAuthenticator"] == dict(one_machine.NativeAuthenticator)
    assert hub["Authenticator"]["admin_users"] == sorted(one_machine.Authenticator.admin_users)
    assert hub["Authenticator"]["allow_all"] is one_machine.Authenticator.allow_all is True


def test_both_cull_idle_servers_after_an_hour(values: dict, one_machine: Recorder) -> None:
    command = one_machine.JupyterHub.services[0]["command"]
    assert values["cull"]["enabled"] is True
    assert f"--timeout={values['cull']['timeout']}" in command
    assert f"--cull-every={values['cull']['every']}" in command


def test_both_open_the_first_lesson_with_the_same_memory_limit(values: dict, one_machine: Recorder) -> None:
    single = values["singleuser"]
    assert single["defaultUrl"] == one_machine.Spawner.default_url
    assert single["memory"]["limit"] == one_machine.Spawner.mem_limit
    hook = single["lifecycleHooks"]["postStart"]["exec"]["command"]
    assert hook[1:] == ["/srv/repo/scripts/build_editions.py", "--workspace", "/home/jovyan"]


def test_repo2docker_plans_the_image_with_the_repository_in_srv(tmp_path: Path) -> None:
    pytest.importorskip("repo2docker", reason="jupyter-repo2docker is not installed (make env installs it)")
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout to copy the tracked files")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        if (REPO / name).is_file() and name.startswith(("binder/", "scripts/", "pyproject.toml")):
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tmp_path / name)
    r2d = Path(sys.executable).with_name("jupyter-repo2docker")
    done = subprocess.run(
        [
            str(r2d),
            "--no-build",
            "--debug",
            "--user-name",
            "jovyan",
            "--user-id",
            "1000",
            "--target-repo-dir",
            "/srv/repo",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    plan = done.stdout + done.stderr
    # the folder is a build argument (given to `docker build` with --target-repo-dir), not plan text:
    # the plan must copy the repository and run postBuild relative to it
    assert "ARG REPO_DIR=${HOME}" in plan and "COPY --chown=1000:1000 src/ ${REPO_DIR}/" in plan
    assert "./binder/postBuild" in plan
