"""JupyterHub for a class (deploy/), started as `make hub` starts it and driven over HTTP as a class would.

One hub on 127.0.0.1 (a free port) with its state in a temporary folder: the teacher and four
learners sign up through the form, the teacher approves three; two (as many as the checks between
learners need: each learner's server costs seconds of CPU) log in, start a server (as their own OS
account, created by the hub) and run lesson 09 through the server's kernel API — getting the stored
outputs (a whole lesson, its live view and checkers too: the lightest to run after its imports). Then
what must not work does not: unapproved or wrong-password logins, another learner's server or files,
admin actions with a learner's token, and — from code run in a learner's own kernel — reading another
learner's home or the hub's secrets, or writing into the lesson source.
Saved work survives a hub restart; a deleted lesson comes back fresh. Needs root (the hub switches
users). Every process and OS account the test created is removed at the end, even after a failure.
"""

from __future__ import annotations

import copy
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
import websocket

from harness.hubclient import LAUNCHER, REPO, Hub, Learner, comparable, execute, stored_outputs

pytestmark = pytest.mark.hub

PROXY = REPO / "node_modules" / ".bin" / "configurable-http-proxy"
LESSON = "lessons/09_module.ipynb"  # 22 stored outputs: about 1 CPU-s after its imports (02: 3)
LEARNERS = ("ada", "bo")


@pytest.fixture(scope="module")
def hub(hub: Hub) -> Hub:
    """The shared hub (conftest.py), where the admin first signs up with a password too short."""
    short = Learner(hub, "teacher", "Teacher-pass-12")  # 15 characters: enough for a learner, not the admin
    short.sign_up()
    assert not short.log_in(), "the admin's account was created with a password shorter than 16 characters"
    return hub


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
    pid = int((hub.private / "proxy.pid").read_text())
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    assert str(PROXY.resolve().parent.parent) in cmdline or "configurable-http-proxy" in cmdline
    assert "--ip 127.0.0.1" in cmdline


def test_unauthenticated_request_gets_the_login_page(hub: Hub, learners: dict[str, Learner]) -> None:
    r = requests.get(hub.route("/user/ada/lab"), timeout=30)
    assert r.status_code == 200 and "/hub/login" in r.url
    assert 'name="password"' in r.text and 'name="username"' in r.text
    assert requests.get(hub.route("/user/ada/api/contents/lessons"), timeout=30).status_code in (401, 403)


def test_sign_ups_wait_for_the_teacher(hub: Hub, teacher: Learner) -> None:
    eve = Learner(hub, "eve", "eve-long-pass-7")
    eve.sign_up()
    assert not eve.log_in()
    assert "eve" in teacher.http.get(f"{hub.url}/hub/authorize", timeout=30).text  # listed, awaiting approval


@pytest.fixture(scope="module")
def lesson_kernels(learners: dict[str, Learner]) -> Iterator[dict[str, tuple[str, websocket.WebSocket]]]:
    """Each learner's kernel that ran the lesson (its id and websocket), kept for the probe run in ada's
    (a kernel start costs a CPU-s or more); removed at the end, when the hub restart has ended them."""
    kept: dict[str, tuple[str, websocket.WebSocket]] = {}
    yield kept
    for name, (kernel_id, ws) in kept.items():
        try:
            ws.close()
            learners[name].api("DELETE", f"/user/{name}/api/kernels/{kernel_id}")
        except (OSError, requests.RequestException, websocket.WebSocketException):
            pass  # the learner's server is stopped (the hub restart): the kernel went with it


def _run_lesson(person: Learner, kept: dict[str, tuple[str, websocket.WebSocket]]) -> list[list[dict]]:
    """Every code cell of the lesson, in a fresh kernel of ``person``'s server started in its folder (as
    JupyterLab starts one), kept in ``kept``: the outputs per cell."""
    notebook = person.contents(LESSON).json()["content"]
    folder = str(Path(LESSON).parent)
    kernel = person.api("POST", f"/user/{person.name}/api/kernels", json={"name": "python3", "path": folder}).json()
    ws = person.kernel_channels(kernel["id"], 180)
    kept[person.name] = (kernel["id"], ws)
    return [execute(ws, cell["source"], 180) for cell in notebook["cells"] if cell["cell_type"] == "code"]


def test_each_learner_runs_a_lesson_and_gets_the_stored_outputs(
    learners: dict[str, Learner], lesson_kernels: dict[str, tuple[str, websocket.WebSocket]]
) -> None:
    with ThreadPoolExecutor(len(learners)) as pool:
        runs = dict(zip(learners, pool.map(lambda p: _run_lesson(p, lesson_kernels), learners.values())))
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
    page = ada.http.get(hub.route(f"/user/bo/api/contents/{LESSON}"), timeout=30)  # ada's cookies
    assert page.status_code in (401, 403, 404) and '"cells"' not in page.text
    lab = ada.http.get(hub.route("/user/bo/lab"), timeout=30)
    assert lab.status_code in (403, 404) or "/user/bo/lab" not in lab.url


def test_a_learner_token_is_refused_for_admin_actions(teacher: Learner, learners: dict[str, Learner]) -> None:
    ada = learners["ada"]
    assert teacher.api("GET", "/hub/api/users").status_code == 200  # the admin may
    assert ada.api("GET", "/hub/api/users").status_code == 403
    assert ada.api("POST", "/hub/api/users/mallory").status_code == 403
    assert ada.api("DELETE", "/hub/api/users/bo/server").status_code in (403, 404)
    assert ada.api("POST", "/hub/api/users/bo/tokens", json={}).status_code in (403, 404)
    assert ada.approve("eve").status_code == 403


def test_a_blocked_learner_is_told_so_and_for_how_long(hub: Hub, teacher: Learner) -> None:
    dan = Learner(hub, "dan", "dan-long-pass-7")
    dan.sign_up()
    teacher.approve("dan")
    for attempt in (1, 2):
        assert not dan.log_in(f"wrong-password-{attempt}")
        assert "Invalid username or password" in dan.last.text
        dan.http.cookies.clear()
    assert not dan.log_in("wrong-password-3")
    assert dan.last.status_code == 429 and "Too many failed attempts for dan from your address" in dan.last.text
    assert not dan.log_in(), "after 3 failed logins the right password is refused for a while"
    assert dan.last.status_code == 429
    seconds = int(dan.last.text.split("try again in ")[1].split(" s")[0])
    assert 100 <= seconds <= 120


def test_wrong_passwords_never_lock_the_teacher_out(hub: Hub, teacher: Learner) -> None:
    for attempt in range(5):
        stranger = Learner(hub, "teacher", f"not-the-password-{attempt}")
        assert not stranger.log_in()
        assert stranger.last.status_code == 200 and "Invalid username or password" in stranger.last.text
    again = Learner(hub, "teacher", teacher.password)
    assert again.log_in(), "the teacher was locked out by wrong passwords"


def test_the_teacher_finds_the_approval_page_on_the_home_page(
    hub: Hub, teacher: Learner, learners: dict[str, Learner]
) -> None:
    home = teacher.http.get(f"{hub.url}/hub/home", timeout=30)
    assert home.status_code == 200 and 'href="/hub/authorize"' in home.text
    assert 'href="/hub/authorize"' not in learners["ada"].http.get(f"{hub.url}/hub/home", timeout=30).text


def _processes_of(uid: int) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and proc.stat().st_uid == uid:
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:
            pass
    return found


def test_each_learner_runs_as_their_own_account_never_root(hub: Hub, learners: dict[str, Learner]) -> None:
    for name in learners:
        entry = hub.account(name)
        assert entry.pw_uid >= 1000 and entry.pw_dir == str(hub.state / "homes" / name)
        home = Path(entry.pw_dir).stat()
        assert home.st_uid == entry.pw_uid and home.st_mode & 0o777 == 0o700
        assert any("learner_server.py" in cmd for cmd in _processes_of(entry.pw_uid)), f"{name}'s server"
        # matplotlib's font list is theirs before their first lesson (built there, it can print a warning)
        fonts = list((Path(entry.pw_dir) / ".cache" / "matplotlib").glob("fontlist-*.json"))
        assert fonts and all(f.stat().st_uid == entry.pw_uid for f in fonts), (name, fonts)
    assert hub.private.stat().st_mode & 0o777 == 0o700 and hub.private.stat().st_uid == 0
    for proc in Path("/proc").iterdir():  # no learner's server runs as root
        try:
            cmd = (proc / "cmdline").read_bytes().decode(errors="replace")
            if proc.name.isdigit() and "learner_server.py" in cmd and str(hub.state) in cmd:
                assert proc.stat().st_uid != 0, cmd
            assert "--allow-root" not in cmd or "singleuser" not in cmd
        except OSError:
            pass


PROBE = """
import json, os, subprocess
def attempt(action):
    try:
        action()
        return "done"
    except (PermissionError, FileNotFoundError) as error:
        return type(error).__name__
def write(path):
    with open(path, "w") as f:
        f.write("pwned")
def read(path):
    with open(path, "rb") as f:
        f.read(1)
print(json.dumps({
    "uid": os.getuid(), "euid": os.geteuid(),
    "id -u": subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip(),
    "list other home": attempt(lambda: os.listdir(OTHER_HOME)),
    "read other lesson": attempt(lambda: read(OTHER_HOME + "/lessons/01_inputs.ipynb")),
    "read hub database": attempt(lambda: read(PRIVATE + "/jupyterhub.sqlite")),
    "read cookie secret": attempt(lambda: read(PRIVATE + "/jupyterhub_cookie_secret")),
    "read proxy token": attempt(lambda: read("/proc/" + PROXY_PID + "/environ")),
    "write lesson source": attempt(lambda: write(REPO + "/notebooks/01_inputs.ipynb")),
    "new file in lesson source": attempt(lambda: write(REPO + "/notebooks/pwned.txt")),
    "write library": attempt(lambda: write(REPO + "/attnlib/pwned.py")),
    "write own home": attempt(lambda: write(os.path.expanduser("~/mine.txt"))),
}))
"""


def test_a_learners_kernel_cannot_reach_others_or_the_hub(
    hub: Hub, learners: dict[str, Learner], lesson_kernels: dict[str, tuple[str, websocket.WebSocket]]
) -> None:
    """Run in ada's kernel that ran the lesson (``lesson_kernels``), or in a new one when that test did not run."""
    ada = learners["ada"]
    if "ada" not in lesson_kernels:
        kernel = ada.api("POST", "/user/ada/api/kernels", json={"name": "python3"}).json()
        lesson_kernels["ada"] = (kernel["id"], ada.kernel_channels(kernel["id"]))
    ws = lesson_kernels["ada"][1]
    names = {
        "OTHER_HOME": str(hub.state / "homes" / "bo"),
        "PRIVATE": str(hub.private),
        "REPO": str(REPO),
        "PROXY_PID": (hub.private / "proxy.pid").read_text().strip(),
    }
    outputs = execute(ws, "".join(f"{k} = {v!r}\n" for k, v in names.items()) + PROBE)
    text = "".join(o.get("text", "") for o in outputs if o["output_type"] == "stream")
    assert not [o for o in outputs if o["output_type"] == "error"], outputs
    seen = json.loads(text)
    uid = hub.account("ada").pw_uid
    assert seen["uid"] == seen["euid"] == uid != 0 and seen["id -u"] == str(uid)
    # the proxy's process is not even listed to a learner (their own /proc: deploy/confine.py)
    assert seen.pop("read proxy token") in ("PermissionError", "FileNotFoundError")
    refused = {key: value for key, value in seen.items() if key not in ("uid", "euid", "id -u", "write own home")}
    assert set(refused.values()) == {"PermissionError"}, refused
    assert seen["write own home"] == "done"
    assert not (REPO / "notebooks" / "pwned.txt").exists()


def _taken_after_a_free_port(taken: socket.socket) -> int:
    """Bind ``taken`` to a port whose predecessor is free (the hub's first port), and return it."""
    for _ in range(50):
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        with socket.socket() as before:
            try:
                before.bind(("127.0.0.1", port - 1))
            except OSError:
                continue  # taken by something else: the hub would stop there, not at ours
        try:
            taken.bind(("127.0.0.1", port))
        except OSError:
            continue
        return port
    raise RuntimeError("no port with a free predecessor in 50 tries")


def test_a_taken_port_stops_the_start_before_anything_runs(hub: Hub) -> None:
    with socket.socket() as taken:
        port = _taken_after_a_free_port(taken)
        env = {
            **os.environ,
            "HUB_STATE_DIR": str(hub.state / "unused"),
            "HUB_PORT": str(port - 1),
            "HUB_ACCOUNT_PREFIX": f"{hub.prefix}x-",
        }  # another class: a start ends its own leftovers
        done = subprocess.run([sys.executable, str(LAUNCHER)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"port {port} on 127.0.0.1 is taken" in done.stderr and f"needs {port - 1} (learners)" in done.stderr
    assert not (hub.state / "unused").exists(), "the failed start created its state folder"


def test_the_idle_culler_runs_as_a_service(teacher: Learner) -> None:
    services = teacher.api("GET", "/hub/api/services").json()
    assert "idle-culler" in services and services["idle-culler"]["pid"]


FIRST = "lessons/01_inputs.ipynb"
NOTES = {"type": "file", "format": "text", "content": "my notes on attention\n"}


@pytest.fixture(scope="module")
def restarted(hub: Hub, learners: dict[str, Learner]) -> dict[str, object]:
    """One hub restart for the module's last two tests (a restart and the server start after it cost
    seconds of CPU each): before it, ada saves notes, edits lesson 01 and deletes lesson 09, and bo's copy
    of lesson 01 is read; the hub stops (stopping every learner's server) and starts; ada logs in again
    and starts her server. What each step answered is recorded; each test asserts its part. Every
    learner's server but ada's stays stopped: the tests that use it run last."""
    ada, bo = learners["ada"], learners["bo"]
    found: dict[str, object] = {}
    found["notes saved"] = ada.api("PUT", "/user/ada/api/contents/notes.txt", json=NOTES).status_code
    edited = copy.deepcopy(ada.contents(FIRST).json()["content"])
    edited["cells"][0]["source"] = "ada was here"
    found["edit saved"] = ada.api(
        "PUT", f"/user/ada/api/contents/{FIRST}", json={"type": "notebook", "content": edited}
    ).ok
    found["bo's first cell"] = bo.contents(FIRST).json()["content"]["cells"][0]["source"]
    found["lesson deleted"] = ada.api("DELETE", f"/user/ada/api/contents/{LESSON}").status_code  # ada breaks it ...
    hub.stop()
    hub.start()
    found["logged in again"] = ada.log_in()
    ada.request_token()
    ada.start_server()  # ... and starts again: the missing lesson comes back, the edited one is kept
    return found


def test_each_learner_has_their_own_copy_and_gets_a_fresh_one(
    learners: dict[str, Learner], restarted: dict[str, object]
) -> None:
    """Runs last (with the next test): its ``restarted`` fixture restarts the hub."""
    ada = learners["ada"]
    assert restarted["edit saved"]
    assert restarted["bo's first cell"] != "ada was here"  # not bo's copy
    assert restarted["lesson deleted"] == 204
    assert ada.contents(LESSON).status_code == 200
    assert ada.contents(FIRST).json()["content"]["cells"][0]["source"] == "ada was here"


def test_saved_work_survives_a_hub_restart(learners: dict[str, Learner], restarted: dict[str, object]) -> None:
    """The module's last test: its ``restarted`` fixture restarts the hub (every learner's server stops)."""
    ada = learners["ada"]
    assert restarted["notes saved"] in (200, 201)
    assert restarted["logged in again"]
    assert ada.api("GET", "/user/ada/api/contents/notes.txt").json()["content"] == NOTES["content"]
