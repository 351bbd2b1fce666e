"""JupyterHub for a class on one machine: `make hub` (see docs/teaching-guide.md, "Run a class").

Every learner signs up, the teacher approves them, and each gets their own JupyterLab that opens on
their own copy of the learner edition (``<homes>/<name>/lessons/``). Settings come from the
environment, so tests and a real class share this one file:

=================  ==================================  ===========================================
variable           default                             meaning
=================  ==================================  ===========================================
``HUB_STATE_DIR``  ``deploy/state``                    the hub's database, cookie secret, pid files
``HUB_HOMES``      ``$HUB_STATE_DIR/homes``            one folder per learner (their lessons, their work)
``HUB_PORT``       ``8000``                            the address learners open: http://127.0.0.1:PORT
``HUB_ADMIN``      ``teacher``                         the admin: approves sign-ups at /hub/authorize
``HUB_MEM_LIMIT``  ``2G``                              memory per learner (see the spawner's note)
``HUB_CULL_IDLE``  ``3600``                            seconds of inactivity before a server is stopped
=================  ==================================  ===========================================

What it binds: 127.0.0.1 only (put a TLS-terminating reverse proxy in front to serve a real network).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 — provided by JupyterHub when it loads this file

REPO = Path(__file__).resolve().parent.parent
STATE = Path(os.environ.get("HUB_STATE_DIR", REPO / "deploy" / "state")).resolve()
HOMES = Path(os.environ.get("HUB_HOMES", STATE / "homes")).resolve()
PORT = int(os.environ.get("HUB_PORT", "8000"))
ADMIN = os.environ.get("HUB_ADMIN", "teacher")
HOMES.mkdir(parents=True, exist_ok=True)
BIN = Path(sys.executable).parent  # the project's .venv: jupyterhub-singleuser and the kernel live there

# ---------------------------------------------------------------- network: 127.0.0.1 only
c.JupyterHub.bind_url = f"http://127.0.0.1:{PORT}"
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = PORT + 1
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
# the real configurable-http-proxy, installed from npm by the project's package.json (`npm ci`)
c.ConfigurableHTTPProxy.command = [str(REPO / "node_modules" / ".bin" / "configurable-http-proxy")]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")

# ---------------------------------------------------------------- state that survives a restart
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")

# ---------------------------------------------------------------- who may log in
c.JupyterHub.authenticator_class = "nativeauthenticator.NativeAuthenticator"
c.NativeAuthenticator.open_signup = False  # a sign-up waits until the teacher approves it
c.NativeAuthenticator.minimum_password_length = 8
c.NativeAuthenticator.check_common_password = True
c.NativeAuthenticator.allowed_failed_logins = 3  # then the account is blocked ...
c.NativeAuthenticator.seconds_before_next_try = 120  # ... for two minutes
c.Authenticator.admin_users = {ADMIN}  # the admin signs up too, and is approved automatically
# NativeAuthenticator's approval is the allow-list: only approved sign-ups can log in at all
c.Authenticator.allow_all = True

# ---------------------------------------------------------------- one JupyterLab per learner
# SimpleLocalProcessSpawner runs every learner's server as the hub's own OS user, each in its own
# folder: learners cannot reach each other's servers or files through JupyterHub (tested), but code a
# learner runs in a kernel could read the disk as that user. For learners you do not trust, give each
# a system account (LocalProcessSpawner + `c.LocalAuthenticator.create_system_users`), or one container
# each (DockerSpawner, or KubeSpawner via deploy/z2jh-values.yaml), which also enforce memory limits.
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = str(HOMES / "{username}")
c.Spawner.notebook_dir = str(HOMES / "{username}")
c.Spawner.default_url = "/lab/tree/lessons/01_inputs.ipynb"
c.Spawner.cmd = [str(BIN / "jupyterhub-singleuser")]
# the kernel websocket without Nagle's algorithm (etc/jupyter_server_config.py): widget updates in ms
c.Spawner.args = [f"--config={REPO / 'etc' / 'jupyter_server_config.py'}"]
if os.geteuid() == 0:
    c.Spawner.args.append("--allow-root")  # jupyter-server refuses root otherwise
c.Spawner.start_timeout = 120  # 20 learners starting at once on 2 cores
c.Spawner.http_timeout = 120
# Advisory with this spawner (it exports MEM_LIMIT; jupyter-resource-usage would show it); enforced by
# SystemdSpawner, DockerSpawner and KubeSpawner. One learner needs about 0.4 GiB (teaching guide).
c.Spawner.mem_limit = os.environ.get("HUB_MEM_LIMIT", "2G")


def _fill_workspace(spawner) -> None:
    """Before each start: copy the learner edition into the learner's folder, never overwriting.

    A learner who broke a lesson deletes (or renames) it and restarts their server (File → Hub Control
    Panel → Stop My Server → Start My Server): the missing lesson comes back fresh; their other files,
    and everyone else's, are untouched.
    """
    spec = importlib.util.spec_from_file_location("build_editions", REPO / "scripts" / "build_editions.py")
    editions = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(editions)
    editions.fill_workspace(HOMES / spawner.user.name)


c.Spawner.pre_spawn_hook = _fill_workspace

# ---------------------------------------------------------------- idle servers are stopped
c.JupyterHub.services = [
    {
        "name": "idle-culler",
        "command": [
            sys.executable,
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
