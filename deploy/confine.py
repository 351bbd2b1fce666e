"""Each learner confined by the operating system, on one machine (deploy/jupyterhub_config.py uses it;
deploy/aftercourse.py too). Nothing here trusts the learner's code: the kernel enforces every limit.

When a learner's server starts (``preexec``, run as root in the new process before it becomes the
learner's account):

- **Limits** (cgroup v1 hierarchies ``memory``, ``cpu`` and ``pids``): one cgroup per learner, named
  ``classhub-<account>`` under the hub's own cgroup in each hierarchy, holding every process of that
  server — kernels, terminals and anything they start, detached or not. ``memory.limit_in_bytes``
  (``HUB_MEM_LIMIT``: over it the kernel's OOM killer ends a process of *this* learner, and of no one
  else), ``cpu.cfs_quota_us`` (``HUB_CPU_LIMIT`` cores at most; a learner's processes together share
  one ``cpu.shares`` weight, so 12 busy loops weigh what one does), ``pids.max`` (``HUB_TASKS_LIMIT``:
  a fork bomb stops there). ``RLIMIT_NPROC`` says the same per account where there is no pids cgroup.
- **Private temporary folders**: the server runs in its own mount namespace, where ``/tmp``,
  ``/var/tmp``, ``/dev/shm`` and ``/run/lock`` are the learner's own tmpfs (``HUB_TMP_SIZE`` each;
  their pages count against the learner's memory limit): nobody else sees them, and they are gone
  when the learner's last process ends. Folders the class needs that live under one of them (a state
  folder in ``/tmp``) are bound back at the same path. ``/proc`` there lists only their own processes.

- **Learner code reaches no network address** (``deny_ip_sockets``, a seccomp filter that the learner's
  kernels and terminals start under, deploy/confined.py; inherited by everything they start and never
  removable): no IPv4/IPv6/packet socket at all, so no listener on any port a browser reaches (the
  review's N3, A23, A23b) and no connection to the hub's or the proxy's API; no ``ptrace`` nor
  ``process_vm_writev`` (the learner's own server, which holds their hub token and listens on 127.0.0.1,
  cannot be taken over from a kernel; it is also not dumpable, deploy/learner_server.py); no io_uring
  (it can open sockets behind the filter's back).
- **Their server dies with the hub** (``die_with_parent``: ``PR_SET_PDEATHSIG``), its output goes to the
  learner's own log, never to the hub's terminal (``preexec``'s ``log``).

When it stops (stopped, culled, died, or the hub exits: ``end``): every process of the learner's
account is killed — a process started with ``start_new_session`` too, since it runs as that account —
and the cgroups are removed.

Where there are no cgroup v1 hierarchies (a machine with systemd and cgroup v2 only), ``limits_here``
says which limits are missing; deploy/README.md says what to use there (SystemdSpawner).
"""

from __future__ import annotations

import ctypes
import errno
import os
import pwd
import resource
import shutil
import signal
import stat
import time
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
CONTROLLERS = ("memory", "cpu", "pids")
CGROUP_PREFIX = "classhub-"
#: world-writable folders every account shares: each learner gets their own
SHARED_TMP = ("/tmp", "/var/tmp", "/dev/shm", "/run/lock")
CFS_PERIOD_US = 100_000

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}


def parse_size(text: str) -> int:
    """``"2G"`` → 2 GiB in bytes (K, M, G, T are powers of 1024, as in JupyterHub's ``mem_limit``)."""
    text = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = text[-1] if text and text[-1] in _UNITS else ""
    number = float(text[: len(text) - len(unit)])
    return int(number * _UNITS[unit])


@dataclass(frozen=True)
class Limits:
    """What one learner may use; from the environment (``HUB_*``, see deploy/classhub.py)."""

    memory: int  # bytes
    cpus: float  # cores
    tasks: int  # processes and threads
    tmp_size: int  # bytes per private temporary folder

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> Limits:
        env = os.environ if env is None else env
        return cls(
            memory=parse_size(env.get("HUB_MEM_LIMIT", "2G")),
            cpus=float(env.get("HUB_CPU_LIMIT", "1")),
            tasks=int(env.get("HUB_TASKS_LIMIT", "256")),
            tmp_size=parse_size(env.get("HUB_TMP_SIZE", "512M")),
        )


# ---------------------------------------------------------------- cgroups (v1)
def _own_cgroup(controller: str) -> Path | None:
    """This process's cgroup in ``controller``'s v1 hierarchy, or None without one (writable)."""
    mount = CGROUP_ROOT / controller
    if not (mount / "cgroup.procs").exists() or not os.access(mount, os.W_OK):
        return None
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return mount / path.lstrip("/")
    return None


def cgroup_controllers() -> list[str]:
    """The v1 controllers this machine offers (of memory, cpu, pids)."""
    return [c for c in CONTROLLERS if _own_cgroup(c) is not None]


def cgroup_paths(account: str) -> dict[str, Path]:
    """The learner's cgroup in each available hierarchy (created by ``create_cgroups``)."""
    return {c: own / f"{CGROUP_PREFIX}{account}" for c in CONTROLLERS if (own := _own_cgroup(c)) is not None}


def create_cgroups(account: str, limits: Limits) -> dict[str, Path]:
    """One cgroup per controller for ``account``, with its limits written; returns them."""
    paths = cgroup_paths(account)
    for controller, path in paths.items():
        path.mkdir(exist_ok=True)
        if controller == "memory":
            (path / "memory.limit_in_bytes").write_text(str(limits.memory))
        elif controller == "cpu":
            (path / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
            (path / "cpu.cfs_quota_us").write_text(str(max(1000, int(limits.cpus * CFS_PERIOD_US))))
            (path / "cpu.shares").write_text("1024")
        elif controller == "pids":
            (path / "pids.max").write_text(str(limits.tasks))
    return paths


def find_cgroups(account: str) -> list[Path]:
    """Every cgroup named for ``account`` in the v1 hierarchies, wherever the hub's own cgroup was."""
    found = []
    for controller in CONTROLLERS:
        mount = CGROUP_ROOT / controller
        if mount.is_dir():
            for folder, subfolders, _ in os.walk(mount):
                if Path(folder).name == f"{CGROUP_PREFIX}{account}":
                    found.append(Path(folder))
                    subfolders.clear()
                elif folder.count(os.sep) - str(mount).count(os.sep) >= 4:
                    subfolders.clear()  # the hub's cgroup is a few levels down at most
    return found


def remove_cgroups(account: str, wait: float = 5.0) -> list[Path]:
    """Remove the learner's cgroups (once their processes are gone; retried for ``wait`` seconds while the
    kernel lets go); returns the ones still there, so that a caller can say so."""
    left = []
    for path in find_cgroups(account):
        deadline = time.monotonic() + wait
        while True:
            try:
                path.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as error:
                if error.errno != errno.EBUSY:
                    raise
                if time.monotonic() >= deadline:
                    left.append(path)
                    break
                time.sleep(0.1)
    return left


# ---------------------------------------------------------------- mounts
_libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS = 0x00020000
MS_BIND, MS_REC, MS_PRIVATE, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1000, 0x4000, 0x40000, 0x2, 0x4, 0x8


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            flags,
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def private_tmp(size: int, keep: list[str]) -> None:
    """In a new mount namespace, a fresh tmpfs on each shared temporary folder (every folder in ``keep``
    that lies under one of them is bound back at its path: the state folder, the repository), and a
    ``/proc`` that shows only the account's own processes."""
    _check(_libc.unshare(CLONE_NEWNS), "unshare")
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the machine's namespace
    for shared in SHARED_TMP:
        if not os.path.isdir(shared) or os.path.islink(shared):
            continue
        kept = [
            (path, os.open(path, os.O_PATH))
            for path in keep
            if os.path.isdir(path) and os.path.commonpath([shared, path]) == shared and path != shared
        ]
        _mount("tmpfs", shared, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
        for path, fd in kept:
            os.makedirs(path, mode=0o711, exist_ok=True)  # root's folders on the way, passable
            _mount(f"/proc/self/fd/{fd}", path, None, MS_BIND | MS_REC)
            os.close(fd)
    # a /proc of their own that lists only their own processes (hidepid=2): no other account's command
    # lines (the review's A6: kernels' paths, the proxy's ports), nor the roster of who runs
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")


def preexec(account: str, limits: Limits, keep: list[str], log: str | None = None) -> None:
    """Run as root in the learner's new process, before it becomes the learner's account: into their cgroups
    and private folders; with ``log``, its stdout and stderr go (appended) to that file, opened here as root
    (the learner writes through the descriptor, cannot open the file, and holds no other terminal's)."""
    for path in cgroup_paths(account).values():
        (path / "cgroup.procs").write_text(str(os.getpid()))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits.tasks, limits.tasks))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if log is not None:
        fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.close(null)
    private_tmp(limits.tmp_size, keep)


# ---------------------------------------------------------------- after becoming the learner
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 4, 38, 22, 2


def die_with_parent() -> None:
    """SIGKILL this process when its parent (the hub) dies, however it dies. Called *after* the change of
    account: the kernel clears the setting when the credentials change."""
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PR_SET_PDEATHSIG)")


def not_dumpable() -> None:
    """No process of the same account may ptrace this one nor open its /proc/<pid>/mem (until it execs)."""
    _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "prctl(PR_SET_DUMPABLE)")


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


_LD_W_ABS, _JEQ, _JGE, _RET = (
    0x20,
    0x15,
    0x35,
    0x06,
)  # BPF_LD|BPF_W|BPF_ABS, BPF_JMP|BPF_JEQ|BPF_K, …JGE…, BPF_RET|BPF_K
_ALLOW, _KILL = 0x7FFF0000, 0x80000000  # SECCOMP_RET_ALLOW, SECCOMP_RET_KILL_PROCESS
_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
#: the IP socket families (AF_INET, AF_INET6) and raw packets (AF_PACKET); Unix sockets (kernels' ipc) stay
DENIED_FAMILIES = (2, 10, 17)
#: system call numbers: (socket, ptrace, process_vm_readv, process_vm_writev, io_uring_setup) per architecture
_SYSCALLS = {0xC000003E: (41, 101, 310, 311, 425), 0xC00000B7: (198, 117, 270, 271, 425)}  # x86_64, aarch64


def _filter_for(arch: int, numbers: tuple[int, ...]) -> list[tuple[int, int, int, int]]:
    socket_nr, *others = numbers
    denied_calls = list(zip(others, (errno.EPERM, errno.EPERM, errno.EPERM, errno.ENOSYS), strict=True))
    code = [(_LD_W_ABS, 0, 0, 0)]  # the system call's number
    if arch == 0xC000003E:  # x32 system calls (numbers from 0x40000000) would bypass the numbers below
        code += [(_JGE, 0, 1, 0x40000000), (_RET, 0, 0, _ERRNO | errno.ENOSYS)]
    for number, error in denied_calls:
        code += [(_JEQ, 0, 1, number), (_RET, 0, 0, _ERRNO | error)]
    code += [(_JEQ, 1, 0, socket_nr), (_RET, 0, 0, _ALLOW), (_LD_W_ABS, 0, 0, 16)]  # socket's first argument
    for family in DENIED_FAMILIES:
        code += [(_JEQ, 0, 1, family), (_RET, 0, 0, _ERRNO | errno.EACCES)]
    return [*code, (_RET, 0, 0, _ALLOW)]


def deny_ip_sockets() -> None:
    """From now on, in this process and every process it starts, for good: ``socket()`` of an IP or packet
    family fails with EACCES; ``ptrace``, ``process_vm_readv``/``writev`` with EPERM; io_uring is absent.
    Any other architecture's system calls (a 32-bit binary) kill the process."""
    code = [(_LD_W_ABS, 0, 0, 4)]  # the architecture
    for arch, numbers in _SYSCALLS.items():
        block = _filter_for(arch, numbers)
        code += [(_JEQ, 0, len(block), arch), *block]
    code.append((_RET, 0, 0, _KILL))
    program = (_SockFilter * len(code))(*(_SockFilter(*line) for line in code))
    fprog = _SockFprog(len(code), program)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


# ---------------------------------------------------------------- the end of a learner's processes
def processes_of(uid: int) -> list[int]:
    """Every live process running as ``uid`` (real or effective); zombies, already dead, are not counted."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                for line in (proc / "status").read_text().splitlines():
                    if line.startswith("State:") and line.split()[1] == "Z":
                        break
                    if line.startswith("Uid:"):
                        real, effective = line.split()[1:3]
                        if uid in (int(real), int(effective)):
                            found.append(int(proc.name))
                        break
            except OSError:
                pass
    return found


def kill_account(uid: int, timeout: float = 20) -> list[int]:
    """SIGKILL every process of ``uid`` until none is left; returns the pids killed.

    A child that becomes ``uid`` sends ``kill(-1, SIGKILL)``: every process it may signal, which is every
    process of that account and nothing else, in one system call (a fork bomb cannot outrun it for long:
    its processes are capped, see ``Limits.tasks``)."""
    if uid == 0:
        raise ValueError("refusing to kill every process of root")
    killed: list[int] = []
    deadline = time.monotonic() + timeout
    while (left := processes_of(uid)) and time.monotonic() < deadline:
        killed.extend(p for p in left if p not in killed)
        child = os.fork()
        if child == 0:  # pragma: no cover — the child
            try:
                os.setgroups([])
                os.setresgid(65534, 65534, 65534)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(child, 0)
        time.sleep(0.05)
    if left := processes_of(uid):
        raise RuntimeError(f"processes of uid {uid} still run after {timeout} s: {left}")
    return killed


def end(account: str) -> list[int]:
    """Every process of ``account`` killed, its cgroups removed; returns the pids killed."""
    try:
        uid = pwd.getpwnam(account).pw_uid
    except KeyError:
        return []
    killed = kill_account(uid)
    remove_cgroups(account)
    return killed


# ---------------------------------------------------------------- files left in the shared folders
def remove_files_of(
    uids: Collection[int], folders: Iterable[str] = SHARED_TMP, spare: Iterable[str] = ()
) -> dict[int, list[str]]:
    """Delete everything the accounts ``uids`` own in the machine's shared temporary folders (never following a
    link, never leaving the folder's filesystem, never inside ``spare``); returns what was removed, per uid.

    One walk serves every account: a teacher's ``/tmp`` may hold hundreds of thousands of files (virtual
    environments, clones), and the walk, not the deleting, is what takes time. It does not enter a folder none
    of the accounts may pass through (execute permission for its owner, group or others): they cannot have
    made anything inside it. A folder one of them owns goes whole, whatever is inside."""
    accounts = set(uids)
    groups = {pwd.getpwuid(uid).pw_gid for uid in accounts}
    spared = tuple(os.path.join(os.path.abspath(s), "") for s in spare)
    removed: dict[int, list[str]] = {uid: [] for uid in accounts}

    def passable(info: os.stat_result) -> bool:
        mode = info.st_mode
        return bool(
            mode & stat.S_IXOTH
            or (mode & stat.S_IXGRP and info.st_gid in groups)
            or (mode & stat.S_IXUSR and info.st_uid in accounts)
        )

    for top in folders:
        if not os.path.isdir(top) or os.path.islink(top):
            continue
        device = os.lstat(top).st_dev
        pending = [top]
        while pending:
            try:
                entries = list(os.scandir(pending.pop()))
            except OSError:
                continue
            for entry in entries:
                path = entry.path
                if spared and any(os.path.join(path, "").startswith(s) for s in spared):
                    continue
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if info.st_dev != device:
                    continue
                folder = stat.S_ISDIR(info.st_mode)
                if info.st_uid in accounts:
                    if folder:
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        try:
                            os.unlink(path)
                        except OSError:
                            continue
                    removed[info.st_uid].append(path)
                elif folder and passable(info):
                    pending.append(path)
    return removed


def limits_here() -> dict[str, str]:
    """Which of the limits this machine enforces, and how (for `make hub`'s start-up message)."""
    found = cgroup_controllers()
    return {
        "memory": "cgroup" if "memory" in found else "MISSING",
        "cpu": "cgroup" if "cpu" in found else "MISSING",
        "processes": "cgroup" if "pids" in found else "RLIMIT_NPROC",
        "temporary folders": "private tmpfs",
        "network": "no IP sockets in learner code (seccomp)" if _has_seccomp() else "MISSING (no seccomp)",
    }


def _has_seccomp() -> bool:
    """This kernel filters system calls (the ``Seccomp:`` line of /proc/self/status)."""
    return any(line.startswith("Seccomp:") for line in Path("/proc/self/status").read_text().splitlines())
