"""deploy/z2jh-values.yaml (Kubernetes) says what deploy/jupyterhub_config.py (one machine) says.

Installing the chart needs a Kubernetes cluster, and building the image needs Docker: neither is
here. What is checked: the values parse, agree with the one-machine configuration on authentication,
culling, memory, threads, the lessons' start page, per-learner origins and no user config; the values
pass the chart's own schema (where the chart is on the machine: ``Z2JH_CHART``); the chart is pinned,
TLS comes in the same upgrade that makes the class public, nothing is public before the teacher signs
up, scratch disk and egress are limited; the hub's files in the values are the current ones; and
repo2docker accepts ``--target-repo-dir /srv/repo`` (where the start command expects the repository)
and plans an image that copies it to that folder.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VALUES = REPO / "deploy" / "z2jh-values.yaml"
GUIDE = REPO / "deploy" / "README.md"  # the hub manual; docs/teaching-guide.md links it
CHART = "--version 4.4.0"  # the jupyterhub chart whose hub image runs JupyterHub 5.5.0
CHART_JUPYTERHUB = (5, 5, 0)  # its images/hub/requirements.txt at tag 4.4.0


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


def test_both_use_the_class_authenticator_with_the_same_rules(values: dict, one_machine: Recorder) -> None:
    hub = values["hub"]["config"]
    native = pytest.importorskip("nativeauthenticator").NativeAuthenticator
    assert hub["JupyterHub"]["authenticator_class"] == "classauth.ClassAuthenticator"
    one = one_machine.JupyterHub.authenticator_class
    assert issubclass(one, native) and one.__module__ == "classauth"  # deploy/classauth.py, the one file
    assert hub["NativeAuthenticator"] == dict(one_machine.NativeAuthenticator)
    # the same rules; only the proxies in front differ: the hub's own on one machine, an ingress's too here
    kubernetes, one = dict(hub["ClassAuthenticator"]), dict(one_machine.ClassAuthenticator)
    assert (kubernetes.pop("trusted_proxies"), one.pop("trusted_proxies")) == (2, 1)
    assert kubernetes == one
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
    assert single["cpu"]["limit"] == one_machine.Spawner.cpu_limit
    assert "lifecycleHooks" not in single  # copy-then-start instead: a failed postStart kills the pod
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE"):
        assert single["extraEnv"][name] == one_machine.Spawner.environment[name] == "1"


def test_the_chart_is_pinned_and_the_same_command_installs_and_upgrades(values: dict) -> None:
    header = VALUES.read_text(encoding="utf-8")
    guide = GUIDE.read_text(encoding="utf-8").replace("\n   ", " ")
    for text in (header, guide):
        assert CHART in text
        assert "--set-file" not in text  # lost at the first upgrade that forgets it


def test_the_charts_hub_runs_the_jupyterhub_line_the_hub_tests_run() -> None:
    """The chart's JupyterHub and the one every hub test runs (requirements.lock) are one minor line, the
    tested one no older; the manual names both, and why they differ in the last digit."""
    jupyterhub = pytest.importorskip("jupyterhub")
    tested = tuple(int(part) for part in jupyterhub.__version__.split(".")[:3])
    assert tested[:2] == CHART_JUPYTERHUB[:2] and tested >= CHART_JUPYTERHUB, (tested, CHART_JUPYTERHUB)
    guide = GUIDE.read_text(encoding="utf-8").replace("\n", " ")
    chart = ".".join(map(str, CHART_JUPYTERHUB))
    assert f"JupyterHub {chart}" in guide and f"{jupyterhub.__version__}" in guide


def test_tls_comes_with_going_public_and_nothing_is_public_before_the_teacher_signs_up(values: dict) -> None:
    """The class becomes public in one switch (the ingress) that carries its TLS: a wildcard certificate from
    a DNS-01 issuer (cert-manager) for the hub's name and every learner's; the chart's Let's Encrypt proxy
    (HTTP-01, no wildcard) is off and its service stays inside the cluster."""
    proxy, ingress = values["proxy"], values["ingress"]
    assert proxy["service"]["type"] == "ClusterIP" and proxy["https"]["enabled"] is False
    assert ingress["enabled"] is False  # until the teacher has signed up
    host = values["hub"]["config"]["JupyterHub"]["subdomain_host"].removeprefix("https://")
    assert set(ingress["hosts"]) == {host, f"*.{host}"}
    (tls,) = ingress["tls"]
    assert set(tls["hosts"]) == {host, f"*.{host}"} and tls["secretName"]
    assert ingress["annotations"]["cert-manager.io/cluster-issuer"]
    guide = GUIDE.read_text(encoding="utf-8")
    assert "port-forward service/hub 8081:8081" in guide and "ingress.enabled" in guide


def test_both_give_each_learner_their_own_origin_and_no_user_config(values: dict, one_machine: Recorder) -> None:
    """A20 and N4/N5 on Kubernetes too: per-learner origins with __Host- cookies, no ~/.jupyter config."""
    config = values["hub"]["config"]
    assert config["JupyterHub"]["subdomain_host"].startswith("https://")
    assert config["JupyterHub"]["cookie_host_prefix_enabled"] is True
    assert one_machine.JupyterHub.cookie_host_prefix_enabled is True and one_machine.JupyterHub.subdomain_host
    assert config["Spawner"]["disable_user_config"] is True and one_machine.Spawner.disable_user_config is True
    # behind the ingress controller the client's address is the hop before the chart's proxy's
    assert config["ClassAuthenticator"]["trusted_proxies"] == 2


# The chart's values.yaml and values.schema.yaml: no package registry ships them and the project may not copy them,
# so the schema check runs where a teacher or a CI with helm has the chart: `helm pull jupyterhub/jupyterhub
# --version 4.4.0 --untar --untardir DIR`, then Z2JH_CHART=DIR/jupyterhub.
CHART_FILES = Path(os.environ.get("Z2JH_CHART", "/nonexistent"))


def _merged(chart: dict, ours: dict) -> dict:
    merged = dict(chart)
    for key, value in ours.items():
        both = isinstance(value, dict) and isinstance(chart.get(key), dict)
        merged[key] = _merged(chart[key], value) if both else value
    return merged


def test_the_values_pass_the_charts_schema(values: dict) -> None:
    """The chart's own values.yaml and values.schema.yaml at 4.4.0 (``Z2JH_CHART``: the pulled chart's folder),
    merged as helm merges them."""
    if not (CHART_FILES / "values.schema.yaml").is_file():
        pytest.skip("no chart here: set Z2JH_CHART to a `helm pull --untar` of jupyterhub 4.4.0")
    jsonschema = pytest.importorskip("jsonschema")
    yaml = pytest.importorskip("ruamel.yaml").YAML(typ="safe")
    chart = yaml.load((CHART_FILES / "values.yaml").read_text(encoding="utf-8"))
    schema = yaml.load((CHART_FILES / "values.schema.yaml").read_text(encoding="utf-8"))
    validator = jsonschema.Draft7Validator(schema)
    errors = [f"{'.'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(_merged(chart, values))]
    assert not errors, errors
    broken = _merged(chart, {"ingress": {"enabled": "yes"}, "proxy": {"https": {"typo": 1}}})
    assert len(list(validator.iter_errors(broken))) >= 2  # the schema does refuse wrong values


def test_each_learners_server_sets_its_xsrf_cookie_secure_as_on_one_machine(values: dict) -> None:
    spec = importlib.util.spec_from_file_location("classhub_settings", REPO / "deploy" / "classhub.py")
    classhub = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(classhub)
    (entry,) = values["singleuser"]["extraFiles"].values()
    path = Path(entry["mountPath"])
    assert path.parent == Path("/etc/jupyter/jupyter_server_config.d") and path.suffix == ".json", path
    assert entry["data"]["ServerApp"]["tornado_settings"] == classhub.SERVER_TORNADO_SETTINGS
    assert classhub.SERVER_TORNADO_SETTINGS["xsrf_cookie_kwargs"]["secure"] is True


def test_scratch_disk_and_the_internet_are_closed_to_learners(values: dict) -> None:
    single = values["singleuser"]
    assert single["extraResource"]["limits"]["ephemeral-storage"] == "1Gi"
    assert single["networkPolicy"]["egressAllowRules"]["nonPrivateIPs"] is False


def test_the_values_hold_the_current_authenticator_and_templates(values: dict) -> None:
    """Copied by deploy/z2jh_sync.py: the values alone configure the hub pod, at install and upgrade."""
    done = subprocess.run(
        [sys.executable, str(REPO / "deploy" / "z2jh_sync.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    extra = values["hub"]["extraFiles"]
    assert extra["classauth"]["stringData"] == (REPO / "deploy" / "classauth.py").read_text(encoding="utf-8")
    templates = sorted((REPO / "deploy" / "templates").glob("*.html"))
    assert templates
    (folder,) = values["hub"]["config"]["JupyterHub"]["template_paths"]
    for template in templates:
        entry = extra[f"template-{template.stem}"]
        assert entry["stringData"] == template.read_text(encoding="utf-8")
        assert entry["mountPath"] == f"{folder}/{template.name}"


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


def spawner_settings(values: dict) -> dict[str, object]:
    """The single-user settings the chart's jupyterhub_config.py derives from these values: the
    ``singleuser`` keys it maps (defaultUrl, extraEnv, lifecycleHooks), then every ``hub.config``
    section passed through on top (KubeSpawner is a Spawner, so both sections apply)."""
    single = values["singleuser"]
    settings: dict[str, object] = {
        "default_url": single.get("defaultUrl"),
        "environment": single.get("extraEnv", {}),
        "cmd": single.get("cmd"),
        "working_dir": None,  # KubeSpawner's default: the image's WORKDIR, /srv/repo for our image
        "notebook_dir": None,
    }
    for section in ("Spawner", "KubeSpawner"):
        settings.update(values["hub"]["config"].get(section, {}))
    return settings


def test_learners_start_in_their_home_volume_on_their_first_lesson(values: dict) -> None:
    settings = spawner_settings(values)
    assert settings["working_dir"] == settings["notebook_dir"] == "/home/jovyan"
    assert settings["default_url"] == "/lab/tree/lessons/01_inputs.ipynb"
    assert settings["environment"]["PYTHONDONTWRITEBYTECODE"] == "1"
    assert not str(settings["notebook_dir"]).startswith("/srv/repo")


def test_a_simulated_pod_opens_the_learner_edition_and_hides_the_repository(values: dict, tmp_path: Path) -> None:
    """The pod as far as this machine allows: the repository where the image has it (/srv/repo → this
    checkout), an empty home volume (/home/jovyan → a temporary folder), the start command run there with
    the spawner's arguments (``jupyterhub-singleuser`` stands in: it records what it was given); then the
    default URL is resolved against the server's root folder."""
    settings = spawner_settings(values)
    home = tmp_path / "home-jovyan"
    home.mkdir()
    pod_paths = {"/srv/repo": str(REPO), "/home/jovyan": str(home)}

    def on_this_machine(path: str) -> str:
        for pod, here in pod_paths.items():
            path = path.replace(pod, here)
        return path

    command = [on_this_machine(part) for part in settings["cmd"]]
    bin_dir = tmp_path / "bin"  # the image's python and jupyterhub-singleuser, as far as the command needs them
    bin_dir.mkdir()
    (bin_dir / "python").write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    (bin_dir / "python").chmod(0o755)
    server = bin_dir / "jupyterhub-singleuser"
    server.write_text('#!/bin/sh\nprintf "%s\\n" "$@" > "$HOME/server-args"\n')
    server.chmod(0o755)
    done = subprocess.run(
        [*command, "--debug", "--SingleUserNotebookApp.default_url=/x"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert done.returncode == 0 and "not copied" not in done.stderr, done.stderr[-2000:]
    # the server started after the copy, with every argument the spawner gave
    given = (tmp_path / "server-args").read_text().split("\n")
    assert given[:2] == ["--debug", "--SingleUserNotebookApp.default_url=/x"]
    root = Path(on_this_machine(settings["notebook_dir"]))
    assert Path(on_this_machine(settings["working_dir"])) == root == home
    opened = root / settings["default_url"].removeprefix("/lab/tree/")
    assert opened.is_file(), f"the default URL opens a missing file: {opened}"
    visible = {p.name for p in root.iterdir()}
    assert "lessons" in visible and not visible & {"notebooks", "attnlib", "deploy", "tests", "scripts"}
    spec = importlib.util.spec_from_file_location("build_editions", REPO / "scripts" / "build_editions.py")
    editions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(editions)
    teacher_cells = sum(
        editions.is_teacher_only(cell)
        for lesson in (root / "lessons").glob("*.ipynb")
        for cell in json.loads(lesson.read_text())["cells"]
    )
    assert teacher_cells == 0 and len(list((root / "lessons").glob("*.ipynb"))) >= 15
    assert not list(home.rglob("__pycache__"))


def test_the_hub_pod_imports_the_class_authenticator_from_the_mounted_file(values: dict, tmp_path: Path) -> None:
    """As the chart mounts it: the values' copy of deploy/classauth.py at ``extraFiles.classauth.mountPath``,
    ``PYTHONPATH`` from ``extraEnv``; the hub's settings from the values load into the class named by
    ``authenticator_class``."""
    hub = values["hub"]
    mount = Path(hub["extraFiles"]["classauth"]["mountPath"])
    pythonpath = Path(hub["extraEnv"]["PYTHONPATH"])
    assert mount.parent == pythonpath and mount.name == "classauth.py"
    pod = tmp_path / "pod"
    (pod / mount.relative_to("/")).parent.mkdir(parents=True)
    (pod / mount.relative_to("/")).write_text(hub["extraFiles"]["classauth"]["stringData"], encoding="utf-8")
    code = (
        "import json, sys\n"
        "from traitlets.config import Config\n"
        "from traitlets.utils.importstring import import_item\n"
        "from nativeauthenticator import NativeAuthenticator\n"
        "settings = json.loads(sys.argv[1])\n"
        "cls = import_item(settings['JupyterHub']['authenticator_class'])\n"
        "auth = cls(add_new_table=False, config=Config(settings))  # no database here\n"
        "print(json.dumps({'native': issubclass(cls, NativeAuthenticator), 'file': cls.__module__,\n"
        "    'failed': auth.allowed_failed_logins, 'wait': auth.seconds_before_next_try,\n"
        "    'admin_length': auth.admin_minimum_password_length, 'open': auth.open_signup}))\n"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(pod / pythonpath.relative_to("/"))}
    run = subprocess.run(
        [sys.executable, "-c", code, json.dumps(hub["config"])],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    native = hub["config"]["NativeAuthenticator"]
    assert got == {
        "native": True,
        "file": "classauth",
        "failed": native["allowed_failed_logins"],
        "wait": native["seconds_before_next_try"],
        "open": False,
        "admin_length": hub["config"]["ClassAuthenticator"]["admin_minimum_password_length"],
    }
