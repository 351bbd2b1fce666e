"""Write binder/requirements.txt from requirements.lock (``make binder``), or check it is current.

Usage: python scripts/binder_requirements.py [--check]

Binder builds the image with repo2docker, which installs ``binder/requirements.txt`` *before* it
copies the rest of the repository: that file cannot point at ``requirements.lock`` or at ``-e .``.
So it is generated from the lock, the one place the versions live, with one change: torch comes from
PyTorch's CPU wheel index (``torch==X+cpu``), because torch's wheel on PyPI pulls gigabytes of CUDA
libraries that a CPU-only Binder cannot use. ``binder/postBuild`` then installs attnlib itself
(``--no-deps``) and the learner edition. ``tests/test_binder.py`` fails when the file is stale.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LOCK = REPO / "requirements.lock"
TARGET = REPO / "binder" / "requirements.txt"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"

HEADER = f"""\
# GENERATED from requirements.lock by scripts/binder_requirements.py (`make binder`); do not edit.
# repo2docker installs this file before it copies the repository, so it holds every pin itself.
# torch: the CPU build from PyTorch's index (PyPI's wheel would pull the CUDA libraries).
--extra-index-url {TORCH_CPU_INDEX}
"""


def render(lock: str) -> str:
    """binder/requirements.txt for the pins in ``lock`` (the text of requirements.lock)."""
    lines = []
    for raw in lock.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if "==" not in line or line.startswith("-"):
            raise SystemExit(f"error: requirements.lock line {raw!r} is not an exact pin (name==version)")
        name, version = line.split("==", 1)
        if name.lower() == "torch" and "+" not in version:
            line = f"{name}=={version}+cpu"
        lines.append(line)
    return HEADER + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/binder_requirements.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if binder/requirements.txt is not current")
    args = parser.parse_args(argv)
    want = render(LOCK.read_text(encoding="utf-8"))
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
