"""JupyterHub for a class on one machine, run by deploy/classhub.py (`make hub`; see its docstring for
the settings and deploy/README.md).

Every learner signs up, the teacher approves them, and each gets their own OS account
(``learn-<name>``, home ``HUB_STATE_DIR/homes/<name>``, mode 0700) on their first start. Their server
and kernels run as that account — never as root, never as the hub's user — and open their own copy of
the learner edition. What they cannot reach: other learners' homes, the hub's database and cookie
secret (``HUB_STATE_DIR/hub``, root's alone), and the lesson source (read-only). Tested in tests/hub/.

What it binds: 127.0.0.1 only, unless HUB_BIND_IP opens the proxy's port to a network, which needs HTTPS:
the proxy's own (HUB_SSL_CERT, HUB_SSL_KEY) or a TLS-terminating reverse proxy in front (deploy/README.md).
Learners open HUB_PUBLIC_URL (default http://hub.localhost:PORT); each learner's server is on its own
origin, <name>. + that host.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import subprocess
import sys
from pathlib import Path

from jupyterhub.proxy import ConfigurableHTTPProxy
from jupyterhub.spawner import LocalProcessSpawner
from tornado import web

sys.path.insert(0, str(Path(__file__).resolve().parent))
import classhub as hub  # the settings and checks `make hub` ran before this file
import confine  # each learner's limits, private temporary folders, and the end of their processes
from classauth import ClassAuthenticator

c = get_config()  # noqa: F821 — provided by JupyterHub when it loads this file

LEARNER_PYTHON = os.environ.get("HUB_LEARNER_PYTHON", str(hub.VENV_BIN / "python"))

# ---------------------------------------------------------------- network: the proxy's port; the rest on 127.0.0.1
# With HUB_SSL_CERT and HUB_SSL_KEY the proxy serves HTTPS itself (classhub.tls_ready copied them for it)
TLS = bool(hub.SSL_CERT)
c.JupyterHub.bind_url = f"{'https' if TLS else 'http'}://{hub.BIND_IP}:{hub.PORTS[0]}"
if TLS:
    c.JupyterHub.ssl_cert = str(hub.TLS / "cert.pem")
    c.JupyterHub.ssl_key = str(hub.TLS / "key.pem")
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = hub.PORTS[1]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{hub.PORTS[2]}"
# the real configurable-http-proxy, installed from npm by the project's package.json (`npm ci`), run as the
# hub's service account (not root: it only forwards requests; on port 443 it may bind that low port and
# nothing more), killed by the kernel if the hub dies
c.ConfigurableHTTPProxy.command = [
    *hub.as_service_account(die_with_parent=True, low_ports=min(hub.PORTS) < 1024),
    str(hub.REPO / "node_modules" / ".bin" / "configurable-http-proxy"),
]
c.ConfigurableHTTPProxy.pid_file = str(hub.PRIVATE / "proxy.pid")


class ClassProxy(ConfigurableHTTPProxy):
    """The proxy, stopped only once no learner process is left: JupyterHub stops it while the learners'
    servers are still stopping, and its port must never be free while a learner's process runs."""

    async def stop(self):
        await asyncio.to_thread(hub.end_learners)
        super().stop()


c.JupyterHub.proxy_class = ClassProxy

# ---------------------------------------------------------------- origins: one per learner
# Each learner's server has its own origin, <name>.hub.localhost (HUB_PUBLIC_URL's host): a script in a
# learner's notebook, even one the teacher opens to help, runs outside the hub's origin and cannot use the
# teacher's login (JupyterHub's "Security overview"). Cookies get the __Host- prefix, so a learner's
# subdomain cannot plant ("toss") cookies for the hub's. A browser takes *.localhost for the loopback;
# a real class needs wildcard DNS and a wildcard TLS certificate (deploy/README.md; tests/hub/test_hub_tls.py).
c.JupyterHub.subdomain_host = hub.PUBLIC_URL
c.JupyterHub.cookie_host_prefix_enabled = True
# every cookie Secure, the hub's and the learners' servers' (passed on as JUPYTERHUB_COOKIE_OPTIONS): sent
# only over TLS, or to localhost, which browsers count as secure. JupyterHub 5.5 leaves the servers' OAuth
# state cookie (__Host-…-oauth-state) without it on plain http, and browsers refuse a __Host- cookie that
# is not Secure: without this, opening a server at http://<name>.hub.localhost fails with a 403.
c.JupyterHub.tornado_settings = {"cookie_options": {"secure": True}}

# ---------------------------------------------------------------- state that survives a restart (root's alone)
c.JupyterHub.db_url = f"sqlite:///{hub.PRIVATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(hub.PRIVATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(hub.PRIVATE / "jupyterhub.pid")
# the teacher's approval page is linked from the hub's home page (templates/home.html)
c.JupyterHub.template_paths = [str(hub.REPO / "deploy" / "templates")]


# ---------------------------------------------------------------- who may log in
c.JupyterHub.authenticator_class = ClassAuthenticator  # deploy/classauth.py (Kubernetes uses it too)
c.NativeAuthenticator.open_signup = False  # a sign-up waits until the teacher approves it
c.NativeAuthenticator.minimum_password_length = 8
c.NativeAuthenticator.check_common_password = True
c.NativeAuthenticator.allowed_failed_logins = 3
c.NativeAuthenticator.seconds_before_next_try = hub.LOCKOUT_SECONDS  # HUB_LOCKOUT_SECONDS, default 120
c.ClassAuthenticator.admin_minimum_password_length = 16
# Every sign-up needs the class code, the teacher's too: HUB_CLASS_CODE, which `make hub` prints and passes
# on (deploy/classhub.py). At most 60 sign-ups wait (HUB_MAX_PENDING). Lock-out: 3 wrong passwords for one
# name from one address block that pair for 2 minutes; 20 failures from one address (any names, or wrong
# class codes) block the address; the teacher unblocks on the approval page. ClassAuthenticator's
# defaults, so the Kubernetes values get the same (tests/hub/test_z2jh.py); changed only when asked:
if os.environ.get("HUB_MAX_PENDING"):
    c.ClassAuthenticator.max_pending_signups = hub.MAX_PENDING
# The client's address for the lock-out: the hop our proxy appends to X-Forwarded-For (1), or, behind the
# guide's nginx (which appends the browser's address first), the one before it: HUB_TRUSTED_PROXIES=2.
c.ClassAuthenticator.trusted_proxies = hub.TRUSTED_PROXIES
if os.environ.get("HUB_SIGNUPS_PER_ADDRESS"):
    c.ClassAuthenticator.signups_per_address = int(os.environ["HUB_SIGNUPS_PER_ADDRESS"])
# HUB_ROSTER: a file of the names the teacher expects, one a line: nobody else can sign up
if hub.ROSTER:
    c.ClassAuthenticator.roster = hub.roster_names()
# The admin is approved automatically when they sign up: whoever signs up first under this name with the
# class code is the admin. Sign up as the teacher before you announce the code.
c.Authenticator.admin_users = {hub.ADMIN}
# NativeAuthenticator's approval is the allow-list: only approved sign-ups can log in at all
c.Authenticator.allow_all = True
# a learner's name is also part of an OS account name
c.Authenticator.username_pattern = hub.USERNAME_PATTERN


# ---------------------------------------------------------------- one OS account and one JupyterLab per learner
class LearnerSpawner(LocalProcessSpawner):
    """LocalProcessSpawner whose learner ``<name>`` runs as the OS account ``HUB_ACCOUNT_PREFIX<name>``,
    confined by deploy/confine.py: their own cgroups (memory, CPU, processes) and temporary folders; their
    server's and kernels' output in their own log (``HUB_STATE_DIR/hub/logs/<name>.log``); the server ends
    when the hub does, however the hub ends."""

    def make_preexec_fn(self, name):
        account = hub.account_name(self.user.name)
        become = super().make_preexec_fn(account)
        keep = [str(p) for p in hub.folders_learners_need(LEARNER_PYTHON)]
        log = str(hub.learner_log(self.user.name))

        def preexec() -> None:
            confine.preexec(account, LIMITS, keep, log)  # as root, then ...
            become()  # ... the learner's account, then:
            confine.die_with_parent()

        return preexec

    def user_env(self, env):
        entry = pwd.getpwnam(hub.account_name(self.user.name))
        env.update(USER=entry.pw_name, HOME=entry.pw_dir, SHELL=entry.pw_shell)
        return env


LIMITS = confine.Limits.from_env()


_accounts = asyncio.Lock()  # useradd locks /etc/passwd: one account at a time


async def _run(*cmd: str, **kwargs) -> None:
    proc = await asyncio.create_subprocess_exec(
        *cmd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, **kwargs
    )
    out, _ = await proc.communicate()
    if proc.returncode:
        raise RuntimeError(f"{cmd[0]} failed ({proc.returncode}): {out.decode(errors='replace')[-800:]}")


async def learner_account(learner: str) -> pwd.struct_passwd:
    """The learner's OS account, created on their first start (the hub made it, or no server starts)."""
    name, home = hub.account_name(learner), hub.HOMES / learner
    async with _accounts:
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            await _run(
                "useradd",
                "--create-home",
                "--home-dir",
                str(home),
                "--shell",
                "/bin/bash",
                "--comment",
                hub.ACCOUNT_MARK,
                "--user-group",
                "-K",
                "UMASK=077",
                name,
            )
            entry = pwd.getpwnam(name)
    if not entry.pw_gecos.startswith(hub.ACCOUNT_MARK) or entry.pw_uid < 1000 or entry.pw_dir != str(home):
        raise web.HTTPError(500, "the OS account %s exists but this hub did not make it: no server starts as it", name)
    if home.stat().st_uid != entry.pw_uid:
        raise web.HTTPError(500, "%s belongs to another account: chown -R %s: %s", str(home), name, str(home))
    os.chmod(home, 0o700)
    return entry


async def _prepare(spawner) -> None:
    """Before each start: the learner's account, then the learner edition copied into their home (as them).

    A learner who broke a lesson deletes (or renames) it and restarts their server (File → Hub Control
    Panel → Stop My Server → Start My Server): the missing lesson comes back fresh; their other files,
    and everyone else's, are untouched.
    """
    entry = await learner_account(spawner.user.name)
    await asyncio.to_thread(confine.end, entry.pw_name)  # nothing of an earlier server is left running
    await asyncio.to_thread(confine.create_cgroups, entry.pw_name, LIMITS)
    confined = _as_learner(entry)
    await _run(
        *CONFINED,
        LEARNER_PYTHON,
        str(hub.REPO / "scripts" / "build_editions.py"),
        "--workspace",
        entry.pw_dir,
        **confined,
    )
    # matplotlib's font list, copied (as the learner) unless they have one: built by their first lesson
    # instead, it takes seconds under load, and past 5 s matplotlib prints a warning into that lesson's
    # first cell (every learner's, in a class that starts together)
    await _run(*CONFINED, "/bin/sh", "-c", COPY_FONT_LIST, str(FONT_LIST), **confined)


#: a learner's command under the class's filter (no IP sockets, no ptrace: deploy/confined.py)
CONFINED = (LEARNER_PYTHON, str(hub.REPO / "deploy" / "confined.py"))


def _as_learner(entry: pwd.struct_passwd) -> dict:
    """The keyword arguments that run a start-up step as the learner, inside the confinement their server
    gets (cgroups, private /tmp, their /proc; ``CONFINED`` adds the filter): the review's N14."""
    keep = [str(p) for p in hub.folders_learners_need(LEARNER_PYTHON)]

    def preexec() -> None:
        confine.preexec(entry.pw_name, LIMITS, keep, None)
        os.setgroups([])
        os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
        os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)

    env = {"HOME": entry.pw_dir, "PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"}
    return {"preexec_fn": preexec, "cwd": entry.pw_dir, "env": env}


# the font list, built once when the hub starts, readable by the learners (it names the installed fonts)
FONT_LIST = hub.STATE / "matplotlib"
subprocess.run(
    [LEARNER_PYTHON, "-c", "import matplotlib.font_manager"],
    check=True,
    capture_output=True,
    env={"PATH": "/usr/bin:/bin", "MPLCONFIGDIR": str(FONT_LIST)},
)
FONT_LIST.chmod(0o755)
COPY_FONT_LIST = 'mkdir -p "$HOME/.cache/matplotlib" && cp -n "$0"/fontlist-*.json "$HOME/.cache/matplotlib/"'
for _font_list in FONT_LIST.glob("fontlist-*.json"):
    _font_list.chmod(0o644)


async def _end(spawner) -> None:
    """After a learner's server stopped (stopped, culled, died, or the hub exiting): every process of their
    account ends — a detached one too — and their cgroups go."""
    killed = await asyncio.to_thread(confine.end, hub.account_name(spawner.user.name))
    if killed:
        spawner.log.info("ended %d process(es) of %s after its server stopped", len(killed), spawner.user.name)


c.JupyterHub.spawner_class = LearnerSpawner
c.Spawner.pre_spawn_hook = _prepare
c.Spawner.post_stop_hook = _end
c.Spawner.notebook_dir = str(hub.HOMES / "{username}")
c.Spawner.default_url = "/lab/tree/lessons/01_inputs.ipynb"
# JupyterHub's single-user server, not dumpable (deploy/learner_server.py): the learner's kernels cannot
# ptrace it or write its memory
c.Spawner.cmd = [LEARNER_PYTHON, str(hub.REPO / "deploy" / "learner_server.py")]
# no ~/.jupyter config: a learner's own code never runs in their server (the review's N4: a config that
# logged every request's cookies, served pages without login, set cookies for the whole hub: N5)
c.Spawner.disable_user_config = True
c.Spawner.args = [
    # the kernel websocket without Nagle's algorithm (etc/jupyter_server_config.py): widget updates in ms
    f"--config={hub.REPO / 'etc' / 'jupyter_server_config.py'}",
    # kernels talk to the server over Unix sockets in the learner's private runtime folder, not loopback TCP
    # ports that any account on the machine can connect to (and subscribe to a kernel's output)
    "--KernelManager.transport=ipc",
]
c.Spawner.environment = {
    # kernels never write .pyc files into the shared source (learners cannot anyway: it is read-only to them)
    "PYTHONDONTWRITEBYTECODE": "1",
    # one torch (OpenMP, MKL) thread per kernel: a learner's cell does not spin every core of the machine
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    # the kernels' sockets and connection files: in the learner's private /tmp (confine.py), mode 0700 (a
    # Unix socket's path must stay under 108 bytes, which the home's runtime folder can exceed)
    "JUPYTER_RUNTIME_DIR": "/tmp/jupyter-runtime",
    # the learners' kernelspec and terminal (deploy/classhub.py's learner_jupyter: both start through
    # deploy/confined.py) and the project's lab settings (etc/labconfig: no "Jupyter news" pop-up)
    "JUPYTER_CONFIG_PATH": f"{hub.LEARNER_JUPYTER}:{hub.REPO / 'etc'}",
    "JUPYTER_PATH": str(hub.LEARNER_JUPYTER),
}
c.Spawner.start_timeout = 120  # 20 learners starting at once on 2 cores
c.Spawner.http_timeout = 120
# Enforced by the learner's memory cgroup (confine.py); also exported as MEM_LIMIT. One learner needs about
# 0.4 GiB (teaching guide).
c.Spawner.mem_limit = os.environ.get("HUB_MEM_LIMIT", "2G")
c.Spawner.cpu_limit = LIMITS.cpus

# ---------------------------------------------------------------- idle servers are stopped
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "user": hub.service_account(),  # not root: it only calls the hub's API with its own token
        "cwd": "/",
        "command": [
            LEARNER_PYTHON,
            "-m",
            "jupyterhub_idle_culler",
            f"--timeout={os.environ.get('HUB_CULL_IDLE', '3600')}",
            "--cull-every=300",
        ],
    }
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    }
]
