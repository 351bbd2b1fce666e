"""After the course, with the hub stopped: remove everything the class hub made on this machine.

    sudo .venv/bin/python deploy/aftercourse.py              # every learner account, with its home and files
    sudo .venv/bin/python deploy/aftercourse.py --dry-run    # only say what it would remove
    sudo .venv/bin/python deploy/aftercourse.py --processes-only   # end leftover processes, keep the accounts

For every account the hub created (``HUB_ACCOUNT_PREFIX``, default ``learn-``, and the hub's comment), in
this order, so that a leftover process cannot make a step fail: every process of every account is killed
(a detached one too), their cgroups are removed, everything they own in ``/tmp``, ``/var/tmp``, ``/dev/shm``
and ``/run/lock`` is deleted (one walk for all of them), then ``userdel --remove`` deletes each account, its
group and its home.
The hub's own state (``HUB_STATE_DIR``: database, approvals) is left for you to delete or keep.
Exit status 0 when every account is gone; otherwise 1, naming what is left.
"""

from __future__ import annotations

import argparse
import os
import pwd
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import classhub
import confine


def remove_accounts(accounts: list[pwd.struct_passwd], processes_only: bool = False) -> list[str]:
    """Remove the accounts the hub made; returns what is left of them (empty when it is all gone)."""
    left: list[str] = []
    killed = {}
    for entry in accounts:  # every process first: one account's process cannot hold another's files or cgroups
        killed[entry.pw_name] = confine.kill_account(entry.pw_uid)
    for entry in accounts:
        left += [f"{entry.pw_name}: its cgroup {path} is still there" for path in confine.remove_cgroups(entry.pw_name)]
    if processes_only:
        for entry in accounts:
            print(f"{entry.pw_name}: ended {len(killed[entry.pw_name])} process(es)")
        return left
    homes = [entry.pw_dir for entry in accounts]
    removed = confine.remove_files_of(
        [entry.pw_uid for entry in accounts], spare=(*homes, str(classhub.STATE), str(classhub.REPO))
    )
    for entry in accounts:
        # success is the account gone, not userdel's exit status: 12 (a warning) for the service account, no home
        done = subprocess.run(["userdel", "--remove", entry.pw_name], capture_output=True, text=True)
        gone = []
        try:
            pwd.getpwnam(entry.pw_name)
            gone.append(f"{entry.pw_name}: userdel failed ({done.returncode}): {done.stderr.strip()}")
        except KeyError:
            pass
        if Path(entry.pw_dir).exists() and Path(entry.pw_dir).stat().st_uid == entry.pw_uid:
            gone.append(f"{entry.pw_name}: its home {entry.pw_dir} is still there")
        print(
            f"{entry.pw_name}: ended {len(killed[entry.pw_name])} process(es), removed "
            f"{len(removed[entry.pw_uid])} file(s) in the shared temporary folders, "
            f"{'removed the account and its home' if not gone else 'NOT removed'}"
        )
        left += gone
    return left


def describe(accounts: list[pwd.struct_passwd]) -> None:
    """--dry-run: what would be removed."""
    files = [p for p in confine.SHARED_TMP if Path(p).is_dir()]
    for entry in accounts:
        running = confine.processes_of(entry.pw_uid)
        print(
            f"{entry.pw_name}: would end {len(running)} process(es), remove its files in {', '.join(files)}, "
            f"its cgroups and the account with its home {entry.pw_dir}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    parser.add_argument("--processes-only", action="store_true", help="end leftover processes, keep the accounts")
    args = parser.parse_args(argv)
    if os.geteuid() != 0 and not args.dry_run:
        print("aftercourse: run it as root (sudo): it removes accounts", file=sys.stderr)
        return 2
    if (pid := classhub.running_hub()) is not None and not args.dry_run:
        print(f"aftercourse: the class hub still runs (pid {pid}): stop it first (Ctrl-C on make hub)", file=sys.stderr)
        return 2
    accounts = classhub.learner_accounts()
    if not accounts:
        print(f"aftercourse: no account made by the class hub (prefix {classhub.ACCOUNT_PREFIX!r}) is left")
        return 0
    if args.dry_run:
        describe(accounts)
        return 0
    left = remove_accounts(accounts, args.processes_only)
    for line in left:
        print(f"aftercourse: {line}", file=sys.stderr)
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
