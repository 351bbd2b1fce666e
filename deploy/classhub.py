"""The class hub on one machine: `make hub` runs this file (see deploy/README.md).

It checks the machine, then runs JupyterHub with deploy/jupyterhub_config.py, then removes anything a
failed start left behind. Settings come from the environment (tests and a real class share them):

======================  ==========================  ===========================================
variable                default                     meaning
======================  ==========================  ===========================================
``HUB_STATE_DIR``       ``deploy/state``            everything the hub writes (layout below)
``HUB_PORT``            ``8000``                    the proxy listens on 127.0.0.1:PORT; the hub
                                                    also takes PORT+1 (its API) and PORT+2 (the
                                                    proxy's API)
``HUB_PUBLIC_URL``      http://hub.localhost:PORT   what learners open; each learner's server is
                                                    on its own origin, ``<name>.`` + that host (see
                                                    the guide: wildcard DNS and TLS for a class)
``HUB_CLASS_CODE``      random, kept in ``hub/``    what every sign-up needs (printed at start and
                                                    on the approval page)
``HUB_ADMIN``           ``teacher``                 the admin: approves sign-ups at /hub/authorize
``HUB_ACCOUNT_PREFIX``  ``learn-``                  learner ``ada`` runs as the OS account ``learn-ada``
``HUB_LOCKOUT_SECONDS`` ``120``                     how long failed logins block (see the guide)
``HUB_MAX_PENDING``     ``60``                      sign-ups waiting for approval at most
``HUB_MEM_LIMIT``       ``2G``                      memory per learner (GiB; their cgroup, deploy/confine.py)
``HUB_CPU_LIMIT``       ``1``                       cores per learner at most (their cgroup's CPU quota)
``HUB_TASKS_LIMIT``     ``256``                     processes and threads per learner
``HUB_TMP_SIZE``        ``512M``                    each of a learner's private /tmp, /var/tmp, /dev/shm
``HUB_CULL_IDLE``       ``3600``                    seconds of inactivity before a server is stopped
``HUB_TRUSTED_PROXIES`` ``1``                       proxies appending to X-Forwarded-For: 2 behind nginx
``HUB_SIGNUPS_PER_ADDRESS`` ``30``                  sign-ups from one address per 10 minutes
``HUB_ROSTER``          none                        a file of the names that may sign up, one a line
``HUB_SSL_CERT``        none                        the proxy serves HTTPS with this certificate
``HUB_SSL_KEY``         none                        (PEM, a wildcard for the host and ``*.`` it)
                                                    and its key: then HUB_PUBLIC_URL is https://
``HUB_BIND_IP``         ``127.0.0.1``               where the proxy listens (0.0.0.0: every
                                                    network; the two API ports stay on 127.0.0.1)
======================  ==========================  ===========================================

Layout of ``HUB_STATE_DIR`` (owned by root, mode 0711: learners may pass through, not list):
``hub/`` (0700: database, cookie secret, pid files — the hub's alone), ``homes/<name>/`` (0700, owned
by the learner's account), ``learner-env/`` (0755: the Python learners' servers run, see
``learner_python``), ``tls/`` (0700, the service account's: a copy of the certificate and key the proxy
reads, made at each start).

Why root: the hub runs as root only to create each learner's account (``useradd``), to start each
learner's server as that account inside its limits (deploy/confine.py), and to end every process of that
account when the server stops. No learner process runs as root, nor as any account but their own; the
proxy and the idle culler run as the hub's service account (``HUB_ACCOUNT_PREFIX_svc``, no login).
"""

from __future__ import annotations

import ctypes
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import confine

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "deploy" / "jupyterhub_config.py"
VENV_BIN = Path(sys.executable).parent  # the project's .venv (not resolved: its python is a symlink)
STATE = Path(os.environ.get("HUB_STATE_DIR", REPO / "deploy" / "state")).resolve()
PRIVATE = STATE / "hub"
HOMES = STATE / "homes"
LEARNER_ENV = STATE / "learner-env"
LEARNER_JUPYTER = STATE / "jupyter"  # the learners' kernelspec and server settings (``learner_jupyter``)
LOGS = PRIVATE / "logs"  # each learner's server and kernels write here: <name>.log (root's alone to read)
PORT = int(os.environ.get("HUB_PORT", "8000"))
PORTS = (PORT, PORT + 1, PORT + 2)  # the proxy (what learners open), the hub's API, the proxy's API
PUBLIC_URL = os.environ.get("HUB_PUBLIC_URL", f"http://hub.localhost:{PORT}").rstrip("/")
ADMIN = os.environ.get("HUB_ADMIN", "teacher")
LOCKOUT_SECONDS = int(os.environ.get("HUB_LOCKOUT_SECONDS", "120"))
MAX_PENDING = int(os.environ.get("HUB_MAX_PENDING", "60"))
ACCOUNT_PREFIX = os.environ.get("HUB_ACCOUNT_PREFIX", "learn-")
TRUSTED_PROXIES = int(os.environ.get("HUB_TRUSTED_PROXIES", "1"))
ROSTER = os.environ.get("HUB_ROSTER", "")
SSL_CERT = os.environ.get("HUB_SSL_CERT", "")
SSL_KEY = os.environ.get("HUB_SSL_KEY", "")
TLS = STATE / "tls"  # the proxy's copy of them (``tls_ready``)
BIND_IP = os.environ.get("HUB_BIND_IP", "127.0.0.1")
ACCOUNT_MARK = "attention class learner"  # the comment (GECOS) of every account the hub creates
USERNAME_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,19}$"  # a learner's name must also make a valid OS account name
NOBODY = "nobody"  # stands in for a learner account in the checks: it has no group and no home


class NotReady(SystemExit):
    """The machine cannot run the class hub; the message says what to change."""

    def __init__(self, message: str) -> None:
        super().__init__(f"make hub: {message}")


def account_name(learner: str) -> str:
    """The OS account learner ``learner`` runs as."""
    return f"{ACCOUNT_PREFIX}{learner}"


def service_account(prefix: str = ACCOUNT_PREFIX) -> str:
    """The account the proxy and the idle culler run as: no learner can have its name (``_`` is no
    learner name's first character), and the after-course steps remove it with the learners'."""
    return f"{prefix}_svc"


def as_service_account(
    die_with_parent: bool = False, low_ports: bool = False, prefix: str = ACCOUNT_PREFIX
) -> list[str]:
    """The command prefix that runs a program as the service account, without supplementary groups (and,
    with ``die_with_parent``, killed by the kernel when the process that started it dies; with
    ``low_ports``, allowed to listen on a port below 1024, such as 443, and given no other privilege)."""
    name = service_account(prefix)
    death = ["--pdeathsig=KILL"] if die_with_parent else []
    bind = ["--inh-caps=+net_bind_service", "--ambient-caps=+net_bind_service"] if low_ports else []
    return ["setpriv", f"--reuid={name}", f"--regid={name}", "--clear-groups", *death, *bind, "--"]


def learner_log(learner: str) -> Path:
    """Where learner ``learner``'s server and kernels write their output (never the hub's terminal)."""
    return LOGS / f"{learner}.log"


def folders_learners_need(python: str | Path) -> list[Path]:
    """What a learner's server must still see under a private /tmp: the state, the repository, their Python."""
    python = Path(python)
    return [STATE, REPO, VENV_BIN.parent.resolve(), python.resolve().parent.parent, python.parent.parent.resolve()]


def learner_accounts(prefix: str = ACCOUNT_PREFIX) -> list[pwd.struct_passwd]:
    """Every OS account this hub created with ``prefix`` (the name prefix and the comment must both match)."""
    return [e for e in pwd.getpwall() if e.pw_name.startswith(prefix) and e.pw_gecos.startswith(ACCOUNT_MARK)]


def roster_names() -> set[str]:
    """The names in the ``HUB_ROSTER`` file (one a line; blank lines and ``#`` comments skipped)."""
    lines = Path(ROSTER).read_text().splitlines()
    names = {line.split("#", 1)[0].strip().lower() for line in lines}
    return {name for name in names if name}


def class_code() -> str:
    """The code every sign-up needs: ``HUB_CLASS_CODE``, else one made at the first start and kept in ``hub/``
    (root's alone), so that a restart keeps it."""
    if os.environ.get("HUB_CLASS_CODE"):
        return os.environ["HUB_CLASS_CODE"]
    kept = PRIVATE / "class-code"
    if not kept.exists():
        letters = "abcdefghjkmnpqrstuvwxyz23456789"  # no 0/o, 1/l/i: read aloud or off a board
        kept.write_text("".join(secrets.choice(letters) for _ in range(8)) + "\n")
        kept.chmod(0o600)
    return kept.read_text().strip()


# ---------------------------------------------------------------- folders
def make_folders() -> None:
    """Create the state layout with its modes (idempotent); the hub's own files are root's alone."""
    for folder, mode in ((STATE, 0o711), (PRIVATE, 0o700), (HOMES, 0o711), (LOGS, 0o700)):
        folder.mkdir(parents=True, exist_ok=True)
        os.chmod(folder, mode)


# ---------------------------------------------------------------- the Python learners run
def _runs_as_nobody(python: Path, code: str) -> subprocess.CompletedProcess:
    """``python -c code`` as an account with no rights here; an interpreter it cannot execute gives rc 126."""
    entry = pwd.getpwnam(NOBODY)
    try:
        return subprocess.run(
            [str(python), "-c", code],
            user=entry.pw_uid,
            group=entry.pw_gid,
            extra_groups=[],
            cwd="/",
            env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            timeout=300,
        )
    except PermissionError as error:
        return subprocess.CompletedProcess([str(python)], 126, "", f"PermissionError: {error}")


def learner_python() -> Path:
    """The interpreter learners' servers and kernels run, with the project's packages.

    The project's .venv when another account can run it. When its base interpreter is out of their reach
    (pyenv under /root, mode 0700), a venv in ``learner-env/`` made from the system's Python of the same
    version, that reads the .venv's site-packages (one ``.pth`` line) and shares its ``share/`` and
    ``etc/`` (JupyterLab's assets and server extensions). Nothing is copied or installed.
    """
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    own = VENV_BIN / "python"
    if _runs_as_nobody(own, "pass").returncode == 0:
        return own
    system = next(
        (
            p
            for p in (Path(f"/usr/bin/python{version}"), Path(f"/usr/local/bin/python{version}"))
            if p.exists() and _runs_as_nobody(p, "pass").returncode == 0
        ),
        None,
    )
    if system is None:
        raise NotReady(
            f"learner accounts cannot run the project's Python ({own.resolve()}: a folder on its path is closed "
            f"to other accounts) and there is no system python{version} they can run. Make the interpreter's "
            "folders readable (chmod o+rx), or create .venv with a system Python: "
            f"make env PYTHON=/usr/bin/python{version}"
        )
    python = LEARNER_ENV / "bin" / "python"
    if not python.exists():
        subprocess.run([str(system), "-m", "venv", "--without-pip", str(LEARNER_ENV)], check=True)
        site = Path(sysconfig.get_paths()["purelib"])  # the .venv's site-packages
        target = LEARNER_ENV / "lib" / f"python{version}" / "site-packages" / "project_venv.pth"
        target.write_text(f"import site; site.addsitedir({str(site)!r})\n")
        for shared in ("share", "etc"):
            (LEARNER_ENV / shared).symlink_to(Path(sys.prefix) / shared)
    return python


def check_learners_can_run(python: Path) -> None:
    """As an account that is neither root nor the owner of anything here: run the server's imports, find
    the lesson source read-only and the homes folder passable. Stops with the reason otherwise."""
    code = (
        "import os, jupyterhub.singleuser, ipykernel, attnlib\n"
        f"assert not os.access({str(REPO / 'notebooks')!r}, os.W_OK), 'notebooks/ is writable by learners'\n"
        f"assert not os.access({str(REPO / 'attnlib')!r}, os.W_OK), 'attnlib/ is writable by learners'\n"
        f"assert os.access({str(HOMES)!r}, os.X_OK), 'learners cannot reach their homes in {HOMES}'\n"
        f"assert not os.access({str(PRIVATE)!r}, os.R_OK), 'the hub state folder is readable by learners'\n"
    )
    done = _runs_as_nobody(python, code)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise NotReady(
            f"a learner account ({NOBODY}) cannot use the class as set up: {reason}. Every folder from / down to "
            f"{REPO} and {STATE} must be passable by other accounts (chmod o+x), the repository readable "
            "(o+r) and not writable by them."
        )


#: what a learner's server and kernel import: its bytecode is written once, here (learners cannot write it)
LEARNER_IMPORTS = (
    "import importlib, pkgutil, jupyterhub.singleuser, jupyterlab, ipykernel.kernelapp\n"
    "import ipywidgets, anywidget, tqdm.auto, matplotlib.pyplot, seaborn, attnlib.lessons, attnlib.show\n"
    "for m in pkgutil.iter_modules(attnlib.lessons.__path__, 'attnlib.lessons.'): importlib.import_module(m.name)\n"
)


def write_bytecode() -> None:
    """Import what learners' servers and kernels import, writing its bytecode: each kernel then loads it
    instead of compiling every module again (learners may not write into the environment or the source).
    Skipped while nothing changed since the last time (a stamp in the environment)."""
    stamp = VENV_BIN.parent / ".bytecode-written"
    sources = [VENV_BIN.parent / ".installed", *(REPO / "attnlib").rglob("*.py")]
    newest = max((p.stat().st_mtime for p in sources if p.exists()), default=0.0)
    if stamp.exists() and stamp.stat().st_mtime >= newest:
        return
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", LEARNER_IMPORTS], env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise NotReady(f"what learners' kernels import does not import here: {reason}. Reinstall: make env")
    stamp.touch()


#: each learner's server: its own _xsrf cookie Secure too, like every cookie of the hub's, so never sent to a
#: plain-http port of the learner's name (tests/hub/test_hub_tls.py; the Kubernetes values say the same)
SERVER_TORNADO_SETTINGS = {"xsrf_cookie_kwargs": {"secure": True}}


def learner_jupyter(python: Path) -> None:
    """The kernelspec and server settings every learner's server uses (``JUPYTER_PATH`` and the first folder
    of ``JUPYTER_CONFIG_PATH``, deploy/jupyterhub_config.py), root's, readable by all:

    - the one kernel, ``python3``, started through deploy/confined.py (no IP socket, no ptrace), without the
      kernel capturing its own file descriptors 1 and 2 (``capture_fd_output``: it kept a duplicate of the
      server's, the review's N2); its IOPub pipe, a TCP port, cannot open under the filter (N1): output
      of a forked subprocess is then not shown;
    - no other kernelspec (a learner's ~/.local/share/jupyter/kernels would start without the filter);
    - terminals started through deploy/confined.py too;
    - the server's ``_xsrf`` cookie ``Secure``, as the hub's cookies are.

    In ``jupyter_config.json``: the server is started with ``--config`` (etc/jupyter_server_config.py), after
    which jupyter_server reads no other ``jupyter_server_config`` file, but every ``jupyter_config`` one.
    """
    kernel = LEARNER_JUPYTER / "kernels" / "python3"
    kernel.mkdir(parents=True, exist_ok=True)
    confined = [str(python), str(REPO / "deploy" / "confined.py")]
    spec = {
        "argv": [
            *confined,
            str(python),
            "-m",
            "ipykernel_launcher",
            "-f",
            "{connection_file}",
            "--IPKernelApp.capture_fd_output=False",
        ],
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "metadata": {"debugger": True},
        "env": {"PYTHONWARNINGS": "ignore:Couldn't bind IOPub Pipe"},  # the filter's refusal, expected
    }
    (kernel / "kernel.json").write_text(json.dumps(spec, indent=1) + "\n")
    settings = {
        "KernelSpecManager": {"allowed_kernelspecs": ["python3"], "ensure_native_kernel": False},
        "ServerApp": {
            "terminado_settings": {"shell_command": [*confined, "/bin/bash", "-l"]},
            "tornado_settings": SERVER_TORNADO_SETTINGS,
        },
    }
    (LEARNER_JUPYTER / "jupyter_config.json").write_text(json.dumps(settings, indent=1) + "\n")
    for path in (LEARNER_JUPYTER, LEARNER_JUPYTER / "kernels", kernel):
        path.chmod(0o755)


# ---------------------------------------------------------------- before starting anything
def port_owner(port: int) -> tuple[int | None, str, str] | None:
    """Who listens on TCP ``port``: (pid or None, account, command line), or None when nobody does."""
    inodes: dict[str, int] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "0A":  # 0A: LISTEN
                inodes[fields[9]] = int(fields[7])
    if not inodes:
        return None
    inode, uid = next(iter(inodes.items()))
    try:
        account = pwd.getpwuid(uid).pw_name
    except KeyError:
        account = str(uid)
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) == f"socket:[{inode}]" for fd in (proc / "fd").iterdir()):
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
                return int(proc.name), account, command
        except OSError:
            continue
    return None, account, "?"


def check_ports_free() -> None:
    for port, address in zip(PORTS, (BIND_IP, "127.0.0.1", "127.0.0.1"), strict=True):
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers bind: a just-closed port is free
            try:
                s.bind((address, port))
            except OSError:
                owner = port_owner(port)
                needs = f"the hub needs {PORTS[0]} (learners), {PORTS[1]} (hub API) and {PORTS[2]} (proxy API)"
                if owner is None:
                    raise NotReady(
                        f"port {port} on 127.0.0.1 is taken; {needs}. Stop what uses it, or choose "
                        "another: HUB_PORT=9000 make hub"
                    ) from None
                pid, account, command = owner
                who = f"process {pid} of account {account} ({command[:120]})"
                if account in {e.pw_name for e in learner_accounts("")}:
                    raise NotReady(
                        f"port {port} on 127.0.0.1 is held by a class learner's {who}: a learner's leftover must not "
                        f"answer your class (it could show a fake login page). Do not move the hub to another "
                        f"port: end it first (sudo kill {pid}, or every leftover: sudo .venv/bin/python "
                        "deploy/aftercourse.py --processes-only), then make hub"
                    ) from None
                raise NotReady(
                    f"port {port} on 127.0.0.1 is taken by {who}; {needs}. Stop it, or choose "
                    "another: HUB_PORT=9000 make hub"
                ) from None


def service_account_ready() -> str:
    """The proxy's and culler's account (created once, no home, no login shell)."""
    name = service_account()
    try:
        pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--home-dir",
                "/nonexistent",
                "--shell",
                "/usr/sbin/nologin",
                "--comment",
                f"{ACCOUNT_MARK} (the hub's proxy and culler)",
                "--user-group",
                name,
            ],
            check=True,
            capture_output=True,
        )
    return name


def tls_ready() -> bool:
    """With ``HUB_SSL_CERT`` and ``HUB_SSL_KEY``: both copied into ``tls/`` for the proxy, which runs as the
    service account and cannot read root's key where certbot keeps it (learners cannot read the copy).
    Copied at every start, so that a renewed certificate is served after the next ``make hub``."""
    if not (SSL_CERT or SSL_KEY):
        if TLS.exists():
            shutil.rmtree(TLS)  # no key left behind from an earlier TLS class
        if not BIND_IP.startswith("127."):
            raise NotReady(
                f"HUB_BIND_IP={BIND_IP} opens the hub to a network: serve it over HTTPS (HUB_SSL_CERT and "
                "HUB_SSL_KEY), or leave it on 127.0.0.1 behind nginx (deploy/README.md)"
            )
        return False
    if not (SSL_CERT and SSL_KEY):
        raise NotReady("HTTPS needs both HUB_SSL_CERT (the certificate chain) and HUB_SSL_KEY (its private key)")
    if not PUBLIC_URL.startswith("https://"):
        raise NotReady(
            f"with HUB_SSL_CERT the proxy serves HTTPS: set HUB_PUBLIC_URL to the https:// address learners open "
            f"(it is {PUBLIC_URL})"
        )
    for what, path in (("HUB_SSL_CERT", SSL_CERT), ("HUB_SSL_KEY", SSL_KEY)):
        if not Path(path).is_file():
            raise NotReady(f"{what}={path}: no such file")
    entry = pwd.getpwnam(service_account())
    TLS.mkdir(mode=0o700, exist_ok=True)
    os.chown(TLS, entry.pw_uid, entry.pw_gid)
    os.chmod(TLS, 0o700)
    for source, name in ((SSL_CERT, "cert.pem"), (SSL_KEY, "key.pem")):
        target = TLS / name
        target.unlink(missing_ok=True)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400)
        with os.fdopen(fd, "wb") as copy:
            copy.write(Path(source).read_bytes())
        os.chown(target, entry.pw_uid, entry.pw_gid)
    return True


def running_hub() -> int | None:
    """The pid of a JupyterHub already running with this class's accounts (``HUB_ACCOUNT_PREFIX``), if any."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            command = (proc / "cmdline").read_bytes().split(b"\0")
            if not any(part.endswith(b"jupyterhub") for part in command[:2]) or str(CONFIG).encode() not in command:
                continue
            env = dict(line.split(b"=", 1) for line in (proc / "environ").read_bytes().split(b"\0") if b"=" in line)
        except OSError:
            continue
        if env.get(b"HUB_ACCOUNT_PREFIX", b"learn-").decode() == ACCOUNT_PREFIX:
            return int(proc.name)
    return None


def say(message: str) -> None:
    """A line on stderr, if there still is one (the teacher's terminal may have closed: SIGHUP)."""
    try:
        print(message, file=sys.stderr, flush=True)
    except OSError:
        pass


def end_learners() -> None:
    """Every process of every learner account ends (the service account's too, with ``end_leftovers``)."""
    end_leftovers(spare=service_account())


def end_leftovers(spare: str = "") -> None:
    """No process of this hub's accounts outlives a hub: any left (the hub was killed) ends before it starts."""
    for entry in learner_accounts():
        if entry.pw_name == spare:
            continue
        killed = confine.end(entry.pw_name)
        if killed:
            say(f"make hub: ended {len(killed)} process(es) left running as {entry.pw_name}")


def preflight() -> Path:
    """Every check before anything starts; returns the learners' Python."""
    if os.geteuid() != 0:
        raise NotReady(
            "the hub gives each learner their own OS account and starts their server as that account, which "
            "only root can do: run it as root (sudo make hub). The hub itself does nothing else as root."
        )
    if shutil.which("useradd") is None:
        raise NotReady("useradd is missing (Debian: apt-get install passwd)")
    try:
        pwd.getpwnam(NOBODY)
    except KeyError:
        raise NotReady(f"there is no '{NOBODY}' account to check what learner accounts can reach") from None
    if (pid := running_hub()) is not None:
        raise NotReady(f"a class hub with these accounts ({ACCOUNT_PREFIX}<name>) already runs (pid {pid})")
    end_leftovers()
    check_ports_free()
    if shutil.which("setpriv") is None:
        raise NotReady("setpriv is missing (Debian: apt-get install util-linux): the proxy runs without root")
    make_folders()
    service_account_ready()
    tls_ready()
    python = learner_python()
    check_learners_can_run(python)
    learner_jupyter(python)
    write_bytecode()
    return python


# ---------------------------------------------------------------- after the hub stops
def stop_leftover_proxy() -> None:
    """A proxy whose hub exited (e.g. a failed start) is stopped, so the ports are free again."""
    pid_file = PRIVATE / "proxy.pid"
    try:
        pid = int(pid_file.read_text().strip())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return
    if b"configurable-http-proxy" in cmdline:
        os.kill(pid, signal.SIGTERM)
        say(f"make hub: stopped the proxy left behind (pid {pid})")
    pid_file.unlink(missing_ok=True)


def _terminate_with_parent() -> None:
    """In the hub's process: SIGTERM (an orderly stop) when this wrapper dies, however it dies."""
    if ctypes.CDLL(None, use_errno=True).prctl(confine.PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def main() -> int:
    python = preflight()
    print(
        f"make hub: learners' servers run {python}, each as its learner's own account ({ACCOUNT_PREFIX}<name>); "
        "the hub runs as root only to create those accounts and start and end their servers",
        flush=True,
    )
    limits = ", ".join(f"{what}: {how}" for what, how in confine.limits_here().items())
    print(f"make hub: each learner's limits here — {limits} (deploy/README.md)", flush=True)
    print(
        f"make hub: open {PUBLIC_URL}/hub/signup; the class code for sign-ups (yours too) is {class_code()}", flush=True
    )
    env = {**os.environ, "HUB_LEARNER_PYTHON": str(python), "HUB_CLASS_CODE": class_code()}
    # The hub in its own session: Ctrl-C or `kill` reach it once, from here, and this waits for it to stop
    # the learners' servers and its proxy, then tidies up after it.
    hub = subprocess.Popen(
        [str(VENV_BIN / "jupyterhub"), "-f", str(CONFIG)],
        cwd=PRIVATE,
        env=env,
        start_new_session=True,
        preexec_fn=_terminate_with_parent,  # this wrapper killed outright: the hub still stops in order
    )
    # Ctrl-C, `kill`, and the terminal closing (SIGHUP: an ssh connection that drops) all stop the class
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: hub.send_signal(signal.SIGINT))
    code = hub.wait()
    stop_leftover_proxy()
    end_leftovers()  # whatever the hub did not stop (it crashed, or was killed)
    return code


if __name__ == "__main__":
    sys.exit(main())
