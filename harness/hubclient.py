"""Drive deploy/jupyterhub_config.py as a class would: start the hub, sign up, approve, log in, start a
server, run a lesson through the server's API. Used by tests/hub/ and bench/bench_hub.py.

Everything goes through HTTP and the kernel websocket, as a browser would: the sign-up and login forms
(with their XSRF tokens), the teacher's approval page, the hub's REST API, the server's contents and
kernels APIs.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import requests
import websocket

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "deploy" / "classhub.py"
_SPEC = importlib.util.spec_from_file_location("classhub", LAUNCHER)  # deploy/ is not a package
classhub = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(classhub)
learner_accounts = classhub.learner_accounts  # the accounts a hub created, by prefix and mark

XSRF_INPUT = re.compile(r'name="_xsrf"\s+value="([^"]+)"')


def free_port_block(size: int = 3) -> int:
    """A port p with p … p + size − 1 all free on 127.0.0.1 (the hub uses PORT, PORT+1, PORT+2)."""
    for _ in range(200):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + size >= 65535:
            continue
        try:
            for offset in range(size):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", base + offset))
            return base
        except OSError:
            continue
    raise RuntimeError("no block of free ports")


def class_folder() -> Path:
    """A state folder learner accounts can pass through (pytest's own temporary folders are 0700)."""
    return Path(tempfile.mkdtemp(prefix="hubtest-", dir="/tmp"))


def account_prefix() -> str:
    """A fresh OS-account prefix for one hub under test: its accounts, and only they, are removed after."""
    return f"hubt{secrets.token_hex(2)}-"


@dataclass
class Hub:
    """A running hub started as `make hub` starts it (deploy/classhub.py): ``start()``, ``stop()``,
    ``remove()``; ``url`` is what a learner opens. Its learners run as OS accounts named ``prefix<name>``."""

    state: Path = field(default_factory=class_folder)
    port: int = field(default_factory=free_port_block)
    prefix: str = field(default_factory=account_prefix)
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def private(self) -> Path:
        return self.state / "hub"

    def account(self, learner: str) -> pwd.struct_passwd:
        return pwd.getpwnam(f"{self.prefix}{learner}")

    def start(self, timeout: float = 120) -> Hub:
        env = {**os.environ, "HUB_STATE_DIR": str(self.state), "HUB_PORT": str(self.port),
               "HUB_ACCOUNT_PREFIX": self.prefix, **self.env}  # fmt: skip
        self.private.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = open(self.private / "hub.log", "ab")  # the hub writes it until it stops
        self.process = subprocess.Popen(
            [sys.executable, str(LAUNCHER)], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the hub exited ({self.process.returncode}): {self.log()[-1500:]}")
            try:
                if requests.get(f"{self.url}/hub/login", timeout=2).status_code == 200:
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"the hub did not answer within {timeout} s; see {self.private / 'hub.log'}")

    def stop(self) -> None:
        """Stop the hub (it stops the learners' servers and the proxy), then anything left of ours."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)  # the launcher passes it on to the hub
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None
        kill_processes_under(self.state)
        kill_processes_of(self.prefix)

    def remove(self) -> None:
        """Stop, then delete every OS account (with its home) and file this hub created."""
        self.stop()
        remove_accounts(self.prefix)
        shutil.rmtree(self.state, ignore_errors=True)

    def log(self) -> str:
        return (self.private / "hub.log").read_text(errors="replace")


def kill_processes_under(folder: Path) -> list[int]:
    """SIGKILL every process whose command line or working folder is inside ``folder``, and those of its
    ``*.pid`` files (the proxy's command line does not name the folder): leftovers after a stop."""
    killed = []
    for pid_file in folder.glob("*.pid"):
        try:
            os.kill(int(pid_file.read_text().strip()), signal.SIGKILL)
            killed.append(int(pid_file.read_text().strip()))
        except (OSError, ValueError):
            pass
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(proc / "cwd")
        except OSError:
            continue
        if str(folder) in cmdline or cwd.startswith(str(folder)):
            try:
                os.kill(int(proc.name), signal.SIGKILL)
                killed.append(int(proc.name))
            except OSError:
                pass
    return killed


def kill_processes_of(prefix: str) -> list[int]:
    """SIGKILL every process running as an account this hub created (``prefix`` + the hub's mark)."""
    uids = {e.pw_uid for e in learner_accounts(prefix)}
    killed = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                if proc.stat().st_uid in uids:
                    os.kill(int(proc.name), signal.SIGKILL)
                    killed.append(int(proc.name))
            except OSError:
                pass
    return killed


def remove_accounts(prefix: str) -> list[str]:
    """``userdel -r`` every account this hub created; returns their names."""
    kill_processes_of(prefix)
    names = [e.pw_name for e in learner_accounts(prefix)]
    for name in names:
        subprocess.run(["userdel", "-r", name], capture_output=True, check=False)
    return names


class Learner:
    """One person in a browser: their own cookies, their own token once logged in."""

    def __init__(self, hub: Hub, name: str, password: str) -> None:
        self.hub, self.name, self.password = hub, name, password
        self.http = requests.Session()
        self.token: str | None = None
        self.last: requests.Response | None = None  # the last form's answer

    # -- forms, as a browser fills them
    def _form(self, path: str, data: dict[str, str]) -> requests.Response:
        page = self.http.get(f"{self.hub.url}{path}", timeout=30)
        match = XSRF_INPUT.search(page.text)
        if match:
            data = {**data, "_xsrf": match.group(1)}
        self.last = self.http.post(f"{self.hub.url}{path}", data=data, timeout=60)
        return self.last

    def sign_up(self) -> requests.Response:
        return self._form("/hub/signup", {"username": self.name, "signup_password": self.password,
                                          "signup_password_confirmation": self.password})  # fmt: skip

    def log_in(self, password: str | None = None) -> bool:
        """Submit the login form; True when the hub set a login cookie."""
        self._form("/hub/login", {"username": self.name, "password": password or self.password})
        return any(c.name == "jupyterhub-hub-login" for c in self.http.cookies)

    def approve(self, name: str) -> requests.Response:
        """The teacher's approval page: /hub/authorize/<name> toggles a sign-up's approval."""
        return self.http.get(f"{self.hub.url}/hub/authorize/{name}", timeout=30)

    # -- the hub's API
    def _xsrf_headers(self) -> dict[str, str]:
        xsrf = next((c.value for c in self.http.cookies if c.name == "_xsrf"), "")
        return {"X-XSRFToken": xsrf}

    def request_token(self) -> str:
        """An API token for this learner, requested with their login cookie (as JupyterLab does)."""
        r = self.http.post(f"{self.hub.url}/hub/api/users/{self.name}/tokens", json={"note": "test"},
                           headers=self._xsrf_headers(), timeout=30)  # fmt: skip
        r.raise_for_status()
        self.token = r.json()["token"]
        return self.token

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        return requests.request(method, f"{self.hub.url}{path}", headers=headers, timeout=120, **kwargs)

    def start_server(self, timeout: float = 180) -> None:
        r = self.api("POST", f"/hub/api/users/{self.name}/server")
        if r.status_code not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"{self.name}: starting the server gave {r.status_code}: {r.text[:300]}")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            server = self.api("GET", f"/hub/api/users/{self.name}").json().get("servers", {}).get("", {})
            if server.get("ready"):
                return
            time.sleep(0.5)
        raise TimeoutError(f"{self.name}'s server did not become ready within {timeout} s")

    def stop_server(self) -> None:
        self.api("DELETE", f"/hub/api/users/{self.name}/server")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if not self.api("GET", f"/hub/api/users/{self.name}").json().get("servers"):
                return
            time.sleep(0.3)

    # -- the learner's own server
    def contents(self, path: str, owner: str | None = None) -> requests.Response:
        return self.api("GET", f"/user/{owner or self.name}/api/contents/{path}")

    def run_notebook(self, path: str, timeout: float = 180) -> list[list[dict]]:
        """Execute every code cell of ``path`` (in the learner's server) in a fresh kernel; the outputs per cell."""
        nb = self.contents(path).json()["content"]
        folder = str(Path(path).parent)
        kernel = self.api("POST", f"/user/{self.name}/api/kernels", json={"name": "python3", "path": folder}).json()
        ws_url = f"ws://127.0.0.1:{self.hub.port}/user/{self.name}/api/kernels/{kernel['id']}/channels"
        ws = websocket.create_connection(ws_url, header=[f"Authorization: token {self.token}"], timeout=timeout)
        try:
            return [execute(ws, cell["source"], timeout) for cell in nb["cells"] if cell["cell_type"] == "code"]
        finally:
            ws.close()
            self.api("DELETE", f"/user/{self.name}/api/kernels/{kernel['id']}")


def _decode(frame: str | bytes) -> dict:
    """A kernel message from the websocket: JSON text, or jupyter-server's binary frame for messages with
    buffers (widgets): a count, that many big-endian uint32 offsets, the JSON message, then the buffers."""
    if isinstance(frame, str):
        return json.loads(frame)
    (count,) = struct.unpack("!I", frame[:4])
    offsets = struct.unpack(f"!{count}I", frame[4 : 4 + 4 * count])
    end = offsets[1] if count > 1 else len(frame)
    return json.loads(frame[offsets[0] : end].decode("utf-8"))


def execute(ws: websocket.WebSocket, code: str, timeout: float = 120) -> list[dict]:
    """Send one execute_request (Jupyter messaging over the JSON websocket); collect its outputs."""
    msg_id = uuid.uuid4().hex
    ws.send(json.dumps({
        "header": {"msg_id": msg_id, "username": "test", "session": "hubclient", "msg_type": "execute_request",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                    "allow_stdin": False, "stop_on_error": True},
    }))  # fmt: skip
    outputs: list[dict] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        msg = _decode(ws.recv())
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            outputs.append({"output_type": "stream", "name": content["name"], "text": content["text"]})
        elif kind in ("execute_result", "display_data"):
            outputs.append({"output_type": kind, "data": content["data"]})
        elif kind == "error":
            outputs.append({"output_type": "error", "ename": content["ename"], "evalue": content["evalue"]})
        elif kind == "status" and content["execution_state"] == "idle":
            return outputs
    raise TimeoutError("a cell did not finish")


# ---------------------------------------------------------------- comparing with the stored outputs
def sanitizers() -> list[tuple[re.Pattern, str]]:
    """The regex/replace pairs of tests/sanitize.cfg (what nbval applies too)."""
    cfg = configparser.ConfigParser()
    cfg.read(REPO / "tests" / "sanitize.cfg")
    return [(re.compile(cfg[s]["regex"]), cfg[s]["replace"]) for s in cfg.sections()]


def comparable(outputs: list[dict]) -> list[str]:
    """What must match the stored outputs: stream text (joined per stream) and each result's text/plain."""
    rules = sanitizers()
    texts: list[str] = []
    for out in outputs:
        if out["output_type"] == "stream":
            text = out["text"] if isinstance(out["text"], str) else "".join(out["text"])
            if texts and texts[-1].startswith(f"{out['name']}:"):
                texts[-1] += text
                continue
            texts.append(f"{out['name']}:{text}")
        elif out["output_type"] in ("execute_result", "display_data"):
            plain = out["data"].get("text/plain", "")
            texts.append("plain:" + (plain if isinstance(plain, str) else "".join(plain)))
        elif out["output_type"] == "error":
            texts.append(f"error:{out['ename']}")
    for i, text in enumerate(texts):
        for pattern, replace in rules:
            text = pattern.sub(replace, text)
        texts[i] = text
    return texts


def stored_outputs(notebook: dict) -> list[list[dict]]:
    """The stored outputs of each code cell; ``None`` for cells nbval ignores (# NBVAL_IGNORE_OUTPUT)."""
    cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    source = lambda c: c["source"] if isinstance(c["source"], str) else "".join(c["source"])  # noqa: E731
    return [None if "# NBVAL_IGNORE_OUTPUT" in source(c).splitlines() else c["outputs"] for c in cells]
