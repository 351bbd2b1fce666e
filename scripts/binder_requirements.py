"""Write binder/requirements.txt from requirements-learner.lock (``make binder``), or check it is current.

Usage: python scripts/binder_requirements.py [--check]

Binder builds the image with repo2docker, which installs ``binder/requirements.txt`` *before* it
copies the rest of the repository: that file cannot point at ``requirements.lock`` or at ``-e .``.
So it is generated from the learner lock (what the lessons need, not the tests, the site or the hub),
with two changes:

- torch comes from PyTorch's CPU wheel index (``torch==X+cpu``), because torch's wheel on PyPI pulls
  gigabytes of CUDA libraries that a CPU-only Binder cannot use;
- ``notebook`` is pinned to the full lock's version: repo2docker's base environment has its own
  ``notebook``, whose pin on an older JupyterLab pip would otherwise leave broken (a resolver conflict).

``binder/postBuild`` then installs attnlib itself (``--no-deps``) and the learner edition.
``tests/test_binder.py`` fails when the file is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements-learner.lock"
FULL_LOCK = REPO / "requirements.lock"
# packages of repo2docker's base environment that pin JupyterLab: pinned here to versions that fit ours
BASE_ENV_PACKAGES = ("notebook",)
TARGET = REPO / "binder" / "requirements.txt"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

HEADER = f"""\
# GENERATED from requirements-learner.lock by scripts/binder_requirements.py (`make binder`); do not edit.
# repo2docker installs this file before it copies the repository, so it holds every pin itself.
# torch: the CPU build from PyTorch's index (PyPI's wheel would pull the CUDA libraries).
--extra-index-url {TORCH_CPU_INDEX}
"""


def pins(lock: str) -> dict[str, str]:
    """``{name: version}`` of a lock file's text; every line is an exact pin or a comment."""
    found = {}
    for raw in lock.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "==" not in line or line.startswith("-"):
            raise SystemExit(f"error: lock file line {raw!r} is not an exact pin (name==version)")
        name, version = line.split("==", 1)
        found[name] = version
    return found


def render(lock: str, full_lock: str = "") -> str:
    """binder/requirements.txt for the pins in ``lock`` (requirements-learner.lock's text), with the base
    environment's packages pinned as in ``full_lock`` (requirements.lock's text)."""
    chosen = pins(lock)
    full = {name.lower(): (name, version) for name, version in pins(full_lock).items()}
    for package in BASE_ENV_PACKAGES:
        if package in full:
            name, version = full[package]
            chosen[name] = version
    lines = []
    for name, version in sorted(chosen.items(), key=lambda item: item[0].lower()):
        if name.lower() == "torch" and "+" not in version:
            version += "+cpu"
        lines.append(f"{name}=={version}")
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/binder_requirements.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if binder/requirements.txt is not current")
    args = parser.parse_args(argv)
    want = render(LOCK.read_text(encoding="utf-8"), FULL_LOCK.read_text(encoding="utf-8"))
    if args.check:
        if not TARGET.exists() or TARGET.read_text(encoding="utf-8") != want:
            print("binder/requirements.txt is not current: run `make binder` and commit it", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(want, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)} ({want.count(chr(10)) - HEADER.count(chr(10))} pins)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
