"""Install the lessons' Jupyter server settings for every server of this Python environment.

Usage: python scripts/install_server_config.py [--prefix PREFIX]   (default: this Python's sys.prefix)

``make lab``, ``make learn``, the class hub and the browser tests pass ``--config=etc/jupyter_server_config.py``
themselves. An image built by repo2docker (Binder, and the z2jh image, through ``binder/postBuild``)
starts its servers with its own command line instead, so this copies the file to
``PREFIX/etc/jupyter/jupyter_server_config.py``, a file every Jupyter server of the environment reads
(``jupyter --paths``, config). Without it those learners' live views wait for Nagle's algorithm and
re-render JupyterLab's kernel indicators at every widget change (etc/jupyter_server_config.py says why).

An existing different file there is not overwritten: the build stops and names it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "etc" / "jupyter_server_config.py"


def install(prefix: Path) -> Path:
    """Copy :data:`CONFIG` to ``prefix/etc/jupyter/jupyter_server_config.py``; returns that path.

    Raises:
        FileExistsError: a different file is already there (same content: nothing to do).
    """
    target = prefix / "etc" / "jupyter" / CONFIG.name
    if target.exists() and target.read_bytes() != CONFIG.read_bytes():
        raise FileExistsError(
            f"{target} exists with other settings; merge etc/jupyter_server_config.py into it by hand"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(CONFIG, target)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", type=Path, default=Path(sys.prefix), help="the environment (default: sys.prefix)")
    args = parser.parse_args()
    try:
        print(f"installed {install(args.prefix)}")
    except FileExistsError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
