"""Drive deploy/jupyterhub_config.py as a class would: start the hub, sign up, approve, log in, start a
server, run a lesson through the server's API. Used by tests/hub/ and bench/bench_hub.py.

Everything goes through HTTP and the kernel websocket, as a browser would: the sign-up and login forms
(with their XSRF tokens), the teacher's approval page, the hub's REST API, the server's contents and
kernels APIs.

The hub is at http://hub.localhost:PORT and each learner's server on its own origin,
http://<name>.hub.localhost:PORT (deploy/jupyterhub_config.py). Browsers take every ``*.localhost`` name
for the loopback (RFC 6761); this module makes Python do the same (``socket.getaddrinfo``), and, as
browsers do for localhost, sends the hub's ``Secure`` (``__Host-``) cookies over plain http there.
Each ``Learner`` can come from its own loopback address (127.0.0.2, …: Linux routes all of 127/8 to
the loopback), which is what the hub's lock-out counts by.
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
from requests.adapters import HTTPAdapter

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "deploy" / "classhub.py"
_SPEC = importlib.util.spec_from_file_location("classhub", LAUNCHER)  # deploy/ is not a package
classhub = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(classhub)
learner_accounts = classhub.learner_accounts  # the accounts a hub created, by prefix and mark

XSRF_INPUT = re.compile(r'name="_xsrf"\s+value="([^"]+)"')
DOMAIN = "hub.localhost"  # the hub's host under test; learner <name> is at <name>.hub.localhost


def _loopback_for_localhost(getaddrinfo):
    """``socket.getaddrinfo`` that answers every ``*.localhost`` name with 127.0.0.1, as browsers do."""

    def resolve(host, *args, **kwargs):
        if isinstance(host, str) and host.rstrip(".").endswith(".localhost"):
            host = "127.0.0.1"
        return getaddrinfo(host, *args, **kwargs)

    resolve.wraps_localhost = True
    return resolve


if not getattr(socket.getaddrinfo, "wraps_localhost", False):
    socket.getaddrinfo = _loopback_for_localhost(socket.getaddrinfo)


class _Browser(requests.Session):
    """A session that, like a browser, sends ``Secure`` cookies to ``*.localhost`` over http (localhost is a
    secure context): http.cookiejar sends them over https only, so they are marked plain on arrival."""

    def send(self, request, **kwargs):
        response = super().send(request, **kwargs)  # each redirect passes here too, before the next request
        for cookie in self.cookies:
            if cookie.secure and (cookie.domain == "localhost" or cookie.domain.endswith(".localhost")):
                cookie.secure = False
        return response


class _FromAddress(HTTPAdapter):
    """Connections from one loopback source address (the hub sees it as the client's address)."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        kwargs["source_address"] = (self.address, 0)
        super().init_poolmanager(*args, **kwargs)


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
    class_code: str = field(default_factory=lambda: secrets.token_hex(4))
    process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"http://{DOMAIN}:{self.port}"

    def server_url(self, learner: str) -> str:
        """The origin of ``learner``'s server (JupyterHub's subdomain for a DNS-safe name)."""
        if not re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", learner):
            raise ValueError(f"{learner!r}: tests use names that are their own subdomain")
        return f"http://{learner}.{DOMAIN}:{self.port}"

    def route(self, path: str) -> str:
        """The full URL of ``path``: ``/user/<name>/…`` on that learner's origin, the rest on the hub's."""
        match = re.match(r"/user/([^/]+)/", path)
        return f"{self.server_url(match.group(1)) if match else self.url}{path}"

    @property
    def private(self) -> Path:
        return self.state / "hub"

    def account(self, learner: str) -> pwd.struct_passwd:
        return pwd.getpwnam(f"{self.prefix}{learner}")

    def start(self, timeout: float = 120) -> Hub:
        env = {
            **os.environ,
            "HUB_STATE_DIR": str(self.state),
            "HUB_PORT": str(self.port),
            "HUB_ACCOUNT_PREFIX": self.prefix,
            "HUB_PUBLIC_URL": self.url,
            "HUB_CLASS_CODE": self.class_code,
            **self.env,
        }
        self.private.mkdir(mode=0o700, parents=True, exist_ok=True)
        log = open(self.private / "hub.log", "ab")  # the hub writes it until it stops
        self.process = subprocess.Popen(
            [sys.executable, str(LAUNCHER)],
            cwd=REPO,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
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

    def cpu_seconds(self) -> float:
        """CPU time JupyterHub itself has used so far (all its threads; not the proxy, not the learners): the
        process the launcher started."""
        assert self.process is not None, "the hub is not running"
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.process.pid:  # ppid: the launcher's one child is JupyterHub
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
        raise RuntimeError(f"no JupyterHub under the launcher {self.process.pid}: {self.log()[-1500:]}")


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
    """One person in a browser: their own cookies, their own token once logged in, their own address."""

    def __init__(self, hub: Hub, name: str, password: str, address: str = "127.0.0.1") -> None:
        self.hub, self.name, self.password, self.address = hub, name, password, address
        self.http = _Browser()
        if address != "127.0.0.1":
            self.http.mount("http://", _FromAddress(address))
        self.token: str | None = None
        self.last: requests.Response | None = None  # the last form's answer

    # -- forms, as a browser fills them
    def _with_xsrf(self, page: str, data: dict[str, str]) -> dict[str, str]:
        """``data`` with the XSRF token of ``page``, fetched now."""
        match = XSRF_INPUT.search(self.http.get(f"{self.hub.url}{page}", timeout=30).text)
        return {**data, "_xsrf": match.group(1)} if match else data

    def _form(self, path: str, data: dict[str, str], page: str | None = None) -> requests.Response:
        """GET ``page`` (default ``path``), then POST ``data`` to ``path`` with the page's XSRF token."""
        self.last = self.http.post(f"{self.hub.url}{path}", data=self._with_xsrf(page or path, data), timeout=60)
        return self.last

    def login_form(self, password: str | None = None) -> dict[str, str]:
        """The login form filled in, with the token of a login page fetched now: posted later with
        :meth:`post_login` (a burst of logins fetches its pages first, then posts them all at once)."""
        return self._with_xsrf("/hub/login", {"username": self.name, "password": password or self.password})

    def post_login(self, form: dict[str, str], timeout: float = 60) -> int:
        """POST a :meth:`login_form`; the response's status."""
        self.last = self.http.post(f"{self.hub.url}/hub/login", data=form, timeout=timeout)
        return self.last.status_code

    def sign_up(self, class_code: str | None = None) -> requests.Response:
        code = self.hub.class_code if class_code is None else class_code
        form = {"username": self.name, "signup_password": self.password, "signup_password_confirmation": self.password}
        return self._form("/hub/signup", {**form, "class_code": code})

    def log_in(self, password: str | None = None) -> bool:
        """Submit the login form (then to the hub's home page, starting no server); True when the hub set a
        login cookie."""
        form = {"username": self.name, "password": password or self.password}
        self._form("/hub/login?next=%2Fhub%2Fhome", form, page="/hub/login")
        return any(c.name.endswith("jupyterhub-hub-login") for c in self.http.cookies)

    # -- the teacher's approval page: every action a POST form with the page's XSRF token
    def approve(self, name: str, approved: bool = True) -> requests.Response:
        return self._form(f"/hub/authorize/{name}", {"approved": "1" if approved else "0"}, page="/hub/authorize")

    def discard(self, name: str) -> requests.Response:
        return self._form(f"/hub/discard/{name}", {}, page="/hub/authorize")

    def unblock(self, name: str, address: str) -> requests.Response:
        return self._form("/hub/unblock", {"name": name, "address": address}, page="/hub/authorize")

    # -- the hub's API
    def _xsrf_headers(self) -> dict[str, str]:
        xsrf = next((c.value for c in self.http.cookies if c.name == "_xsrf"), "")
        return {"X-XSRFToken": xsrf}

    def request_token(self) -> str:
        """An API token for this learner, requested with their login cookie (as JupyterLab does)."""
        r = self.http.post(
            f"{self.hub.url}/hub/api/users/{self.name}/tokens",
            json={"note": "test"},
            headers=self._xsrf_headers(),
            timeout=30,
        )
        r.raise_for_status()
        self.token = r.json()["token"]
        return self.token

    def api(self, method: str, path: str, **kwargs) -> requests.Response:
        """A request with this learner's token: ``/hub/…`` to the hub, ``/user/<name>/…`` to that server."""
        headers = {"Authorization": f"token {self.token}", **kwargs.pop("headers", {})}
        return requests.request(method, self.hub.route(path), headers=headers, timeout=120, **kwargs)

    def start_server(self, timeout: float = 180) -> None:
        """Start this learner's server and wait until the hub says it is ready: on the hub's progress event
        stream (one request that ends when the server is ready, as the hub's spawn page waits), not by
        polling (each poll costs the hub and this process CPU; a start under load takes 10 s and more)."""
        r = self.api("POST", f"/hub/api/users/{self.name}/server")
        if r.status_code not in (201, 202, 400):  # 400: already running
            raise RuntimeError(f"{self.name}: starting the server gave {r.status_code}: {r.text[:300]}")
        deadline = time.monotonic() + timeout
        with self.api("GET", f"/hub/api/users/{self.name}/server/progress", stream=True) as events:
            if events.status_code == 200:
                for line in events.iter_lines(decode_unicode=True):
                    if not line or not line.startswith("data:"):
                        continue  # the stream's keep-alive blank lines
                    event = json.loads(line.removeprefix("data:"))
                    if event.get("failed"):
                        raise RuntimeError(f"{self.name}'s server did not start: {event.get('message')}")
                    if event.get("ready") or time.monotonic() > deadline:
                        break
        while time.monotonic() < deadline:  # the stream ended: confirm (or wait on, if it gave up early)
            server = self.api("GET", f"/hub/api/users/{self.name}").json().get("servers", {}).get("", {})
            if server.get("ready"):
                return
            time.sleep(0.2)
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
        ws = self.kernel_channels(kernel["id"], timeout)
        try:
            return [execute(ws, cell["source"], timeout) for cell in nb["cells"] if cell["cell_type"] == "code"]
        finally:
            ws.close()
            self.api("DELETE", f"/user/{self.name}/api/kernels/{kernel['id']}")

    def kernel_channels(self, kernel_id: str, timeout: float = 120) -> websocket.WebSocket:
        """The websocket of one of this learner's kernels, opened with their token."""
        url = self.hub.route(f"/user/{self.name}/api/kernels/{kernel_id}/channels").replace("http://", "ws://", 1)
        return websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=timeout)


def _decode(frame: str | bytes) -> dict:
    """A kernel message from the websocket: JSON text, or jupyter-server's binary frame for messages with
    buffers (widgets): a count, that many big-endian uint32 offsets, the JSON message, then the buffers."""
    if isinstance(frame, str):
        return json.loads(frame)
    (count,) = struct.unpack("!I", frame[:4])
    offsets = struct.unpack(f"!{count}I", frame[4 : 4 + 4 * count])
    end = offsets[1] if count > 1 else len(frame)
    return json.loads(frame[offsets[0] : end].decode("utf-8"))


def execute_request(code: str, msg_id: str, session: str = "hubclient") -> str:
    """One Jupyter execute_request for the kernel's JSON websocket, as text."""
    header = {"msg_id": msg_id, "username": "test", "session": session, "msg_type": "execute_request"}
    content = {"code": code, "silent": False, "store_history": True, "user_expressions": {}}
    return json.dumps(
        {
            "header": {**header, "version": "5.3", "date": ""},
            "parent_header": {},
            "metadata": {},
            "channel": "shell",
            "buffers": [],
            "content": {**content, "allow_stdin": False, "stop_on_error": True},
        }
    )


def execute(ws: websocket.WebSocket, code: str, timeout: float = 120) -> list[dict]:
    """Send one execute_request (Jupyter messaging over the JSON websocket); collect its outputs."""
    msg_id = uuid.uuid4().hex
    ws.send(execute_request(code, msg_id))
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


def browser_log_in(page, hub: Hub, who: Learner) -> None:
    """Log ``who`` in through the hub's login form in a Playwright ``page``, as a person would; wait for home."""
    page.goto(f"{hub.url}/hub/login?next=%2Fhub%2Fhome")
    page.fill("#username_input", who.name)
    page.fill("#password_input", who.password)
    page.click("#login_submit")
    page.wait_for_url(re.compile(r".*/hub/home"), timeout=30_000)
