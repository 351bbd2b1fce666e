"""Store fresh outputs in lesson notebooks by executing them top to bottom in a fresh kernel.

Usage: python scripts/execute_notebooks.py notebooks/04_scores.ipynb [...]

Outputs are never pasted: this is the only way they get into the notebooks. Each notebook runs
in its own kernel from this environment, with a per-cell timeout and no timing metadata (so that
re-executing changes nothing but what really changed).

Widget state is NOT stored: it would make a lesson about twenty times larger. Readers of the
notebook without a kernel (GitHub, nbviewer) see each explorer's PNG fallback, drawn with seaborn,
which is part of every explorer's output; the site and the decks execute the lessons again with
their widget state, under build/ (scripts/widget_state.py).
"""

from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import nbformat
from nbclient import NotebookClient

TIMEOUT = 300  # seconds per cell; a stuck cell fails instead of hanging forever


def execute(path: str) -> str:
    nb_path = Path(path)
    nb = nbformat.read(nb_path, as_version=4)
    client = NotebookClient(
        nb,
        timeout=TIMEOUT,
        kernel_name="python3",
        record_timing=False,
        store_widget_state=False,
        resources={"metadata": {"path": str(nb_path.parent)}},
    )
    client.execute()
    nb.metadata.pop("widgets", None)  # state of an earlier run with stored widgets
    nb.metadata["kernelspec"] = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nbformat.validate(nb)
    nbformat.write(nb, nb_path)
    return f"executed {nb_path}"


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    with ProcessPoolExecutor(max_workers=2) as pool:
        for line in pool.map(execute, paths):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
