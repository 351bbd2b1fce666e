"""scripts/widget_state.py: the widget state the site and the decks are built with stays out of the lessons,
and the front end it copies is the installed anywidget's own AMD module."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from harness.labdriver import load_module

REPO = Path(__file__).resolve().parents[1]
LESSONS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
widget_state = load_module(REPO / "scripts" / "widget_state.py")


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_committed_lessons_keep_no_widget_state(path: Path) -> None:
    """Saved state makes a lesson about twenty times larger: only the builds under build/ hold it."""
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata, f"{path.name} stores widget state: run scripts/execute_notebooks.py"
    assert widget_state.widget_state(nb) == {}


def test_front_end_is_the_installed_anywidget(tmp_path: Path) -> None:
    import anywidget

    names = widget_state.copy_front_end(tmp_path)
    module = (tmp_path / "anywidget.js").read_text(encoding="utf-8")
    installed = Path(anywidget.__file__).parent / "nbextension" / "index.js"
    assert module == installed.read_text(encoding="utf-8")
    assert 'define(["@jupyter-widgets/base"]' in module  # an AMD module requirejs loads as "anywidget"
    paths = (tmp_path / names[0]).read_text(encoding="utf-8")
    assert "requirejs.config" in paths and "anywidget" in paths and "http" not in paths
