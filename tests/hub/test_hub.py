"""JupyterHub for a class (deploy/jupyterhub_config.py), driven over HTTP as a class would use it.

One hub on 127.0.0.1 (a free port) with its state in a temporary folder: the teacher and four
learners sign up through the form, the teacher approves three, each logs in, starts a server and runs
lesson 02 through the server's kernel API — getting the stored outputs. Then what must not work does
not: unapproved or wrong-password logins, another learner's server or files, admin actions with a
learner's token. Saved work survives a hub restart; a deleted lesson comes back fresh. Every process
the test started is stopped at the end.
"""

from __future__ import annotations

import copy
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from hubclient import REPO, Hub, Learner, comparable, stored_outputs

pytestmark = pytest.mark.hub

PROXY = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
LESSON = "lessons/02_weights.ipynb"
LEARNERS = ("ada", "bo", "cy")


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory):
    pytest.importorskip("jupyterhub", reason="JupyterHub is not installed (make env installs requirements.lock)")
    pytest.importorskip("nativeauthenticator", reason="NativeAuthenticator is not installed")
    if not PROXY.exists():
        if shutil.which("npm") is None:
            pytest.skip("no configurable-http-proxy in node_modules/ and no npm to install it (package.json)")
        import subprocess

        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=REPO, check=True, capture_output=True)
    running = Hub(state=tmp_path_factory.mktemp("hub")).start()
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def teacher(hub: Hub) -> Learner:
    person = Learner(hub, "teacher", "a-Teacher-pass-4")
    person.sign_up()
    assert person.log_in(), "the admin is approved automatically on sign-up"
    person.request_token()
    return person


@pytest.fixture(scope="module")
def learners(hub: Hub, teacher: Learner) -> dict[str, Learner]:
    people = {name: Learner(hub, name, f"{name}-long-pass-7") for name in LEARNERS}
    for person in people.values():
        person.sign_up()
        assert not person.log_in(), f"{person.name} logged in before the teacher approved the sign-up"
        assert teacher.approve(person.name).status_code == 200
        assert person.log_in(), f"{person.name} cannot log in after approval"
        person.request_token()
    with ThreadPoolExecutor(len(people)) as pool:  # the class starts at once
        list(pool.map(Learner.start_server, people.values()))
    return people


def test_the_proxy_is_configurable_http_proxy_from_npm(hub: Hub) -> None:
    pid = int((hub.state / "proxy.pid").read_text())
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert str(PROXY.resolve().parent.parent) in cmdline or "configurable-http-proxy" in cmdline
    assert "--ip 127.0.0.1" in cmdline


def test_unauthenticated_request_gets_the_login_page(hub: Hub, learners: dict[str, Learner]) -> None:
    r = requests.get(f"{hub.url}/user/ada/lab", timeout=30)
    assert r.status_code == 200 and "/hub/login" in r.url
    assert 'name="password"' in r.text and 'name="username"' in r.text
    assert requests.get(f"{hub.url}/user/ada/api/contents/lessons", timeout=30).status_code in (401, 403)


def test_sign_ups_wait_for_the_teacher(hub: Hub, teacher: Learner) -> None:
    eve = Learner(hub, "eve", "eve-long-pass-7")
    eve.sign_up()
    assert not eve.log_in()
    assert "eve" in teacher.http.get(f"{hub.url}/hub/authorize", timeout=30).text  # listed, awaiting approval


def test_each_learner_runs_a_lesson_and_gets_the_stored_outputs(learners: dict[str, Learner]) -> None:
    with ThreadPoolExecutor(len(learners)) as pool:
        runs = dict(zip(learners, pool.map(lambda p: p.run_notebook(LESSON), learners.values())))
    for name, got in runs.items():
        notebook = learners[name].contents(LESSON).json()["content"]
        want = stored_outputs(notebook)
        assert len(got) == len(want)
        compared = [(i, comparable(g), comparable(w)) for i, (g, w) in enumerate(zip(got, want)) if w is not None]
        assert sum(bool(w) for _, _, w in compared) >= 5, "too few stored outputs to compare"
        different = [i for i, g, w in compared if g != w]
        assert not different, f"{name}: code cells {different} differ from the stored outputs"


def test_a_learner_cannot_open_another_learners_server_or_files(hub: Hub, learners: dict[str, Learner]) -> None:
    ada, bo = learners["ada"], learners["bo"]
    assert bo.contents(LESSON).status_code == 200  # bo's own token opens bo's files
    assert ada.contents(LESSON, owner="bo").status_code in (403, 404)  # ada's token does not
    assert ada.api("GET", "/user/bo/api/kernels").status_code in (403, 404)
    page = ada.http.get(f"{hub.url}/user/bo/api/contents/{LESSON}", timeout=30)  # ada's cookies
    assert page.status_code in (401, 403, 404) and '"cells"' not in page.text
    lab = ada.http.get(f"{hub.url}/user/bo/lab", timeout=30)
    assert lab.status_code in (403, 404) or "/user/bo/lab" not in lab.url


def test_a_learner_token_is_refused_for_admin_actions(teacher: Learner, learners: dict[str, Learner]) -> None:
    ada = learners["ada"]
    assert teacher.api("GET", "/hub/api/users").status_code == 200  # the admin may
    assert ada.api("GET", "/hub/api/users").status_code == 403
    assert ada.api("POST", "/hub/api/users/mallory").status_code == 403
    assert ada.api("DELETE", "/hub/api/users/bo/server").status_code in (403, 404)
    assert ada.api("POST", "/hub/api/users/bo/tokens", json={}).status_code in (403, 404)
    assert ada.http.get(f"{teacher.hub.url}/hub/authorize/eve", timeout=30).status_code == 403


def test_wrong_password_refused_and_repeated_failures_blocked(hub: Hub, teacher: Learner) -> None:
    dan = Learner(hub, "dan", "dan-long-pass-7")
    dan.sign_up()
    teacher.approve("dan")
    assert not dan.log_in("wrong-password-1")
    dan.http.cookies.clear()
    for attempt in range(2, 4):
        assert not dan.log_in(f"wrong-password-{attempt}")
    assert not dan.log_in(), "after 3 failed logins the right password is refused for a while"


def test_the_idle_culler_runs_as_a_service(teacher: Learner) -> None:
    services = teacher.api("GET", "/hub/api/services").json()
    assert "idle-culler" in services and services["idle-culler"]["pid"]


def test_each_learner_has_their_own_copy_and_gets_a_fresh_one(learners: dict[str, Learner]) -> None:
    ada, bo = learners["ada"], learners["bo"]
    first = "lessons/01_inputs.ipynb"
    model = ada.contents(first).json()
    edited = copy.deepcopy(model["content"])
    edited["cells"][0]["source"] = "ada was here"
    assert ada.api("PUT", f"/user/ada/api/contents/{first}", json={"type": "notebook", "content": edited}).ok
    assert bo.contents(first).json()["content"]["cells"][0]["source"] != "ada was here"  # not bo's copy
    assert ada.api("DELETE", f"/user/ada/api/contents/{LESSON}").status_code == 204  # ada breaks lesson 02 ...
    ada.stop_server()
    ada.start_server()  # ... and restarts: the missing lesson comes back, the edited one is kept
    assert ada.contents(LESSON).status_code == 200
    assert ada.contents(first).json()["content"]["cells"][0]["source"] == "ada was here"


def test_saved_work_survives_a_hub_restart(hub: Hub, learners: dict[str, Learner]) -> None:
    cy = learners["cy"]
    work = {"type": "file", "format": "text", "content": "my notes on attention\n"}
    assert cy.api("PUT", "/user/cy/api/contents/notes.txt", json=work).status_code in (200, 201)
    hub.stop()
    hub.start()
    assert cy.log_in()
    cy.request_token()
    cy.start_server()
    assert cy.api("GET", "/user/cy/api/contents/notes.txt").json()["content"] == "my notes on attention\n"
