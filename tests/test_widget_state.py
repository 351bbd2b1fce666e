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


def _executed_like(esm: str, n: int) -> nbformat.NotebookNode:
    """A notebook as nbclient saves one: ``n`` anywidget models sharing ``esm``, one view displayed."""
    nb = nbformat.v4.new_notebook()
    state = {
        f"m{k}": {"model_name": "AnyModel", "model_module": "anywidget", "state": {"_esm": esm, "kernel": True}}
        for k in range(n)
    }
    state["other"] = {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls", "state": {"value": "x"}}
    nb.metadata["widgets"] = {widget_state.WIDGET_STATE: {"state": state, "version_major": 2, "version_minor": 0}}
    view = {"model_id": "m0", "version_major": 2, "version_minor": 0}
    cell = nbformat.v4.new_code_cell("show()")
    cell.outputs = [nbformat.v4.new_output("display_data", data={widget_state.WIDGET_VIEW: view, "text/plain": "w"})]
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), cell]
    return nb


def test_pages_carry_each_front_end_once_and_no_kernel() -> None:
    esm = "export default { render({ el }) { el.textContent = '</script>'; } };\n" * 50
    nb = widget_state.for_pages(_executed_like(esm, 3))
    state = widget_state.widget_state(nb)
    stubs = {state[f"m{k}"]["state"]["_esm"] for k in range(3)}
    assert len(stubs) == 1 and esm not in stubs and len(stubs.pop()) < 120
    assert [state[f"m{k}"]["state"]["kernel"] for k in range(3)] == [False] * 3
    assert state["other"]["state"] == {"value": "x"}  # other models untouched
    outputs = nb.cells[1].outputs
    assert len(outputs) == 2 and widget_state.WIDGET_VIEW in outputs[1]["data"]  # the modules come first
    html = outputs[0]["data"]["text/html"]
    assert html.count("</script>") == 2  # the module's own "</script>" is escaped inside the JSON
    assert nb.cells[0].get("outputs") == []
    again = widget_state.for_pages(nb)  # idempotent: a stub is not shared again
    assert len(again.cells[1].outputs) == 2


def test_a_buffer_whose_place_is_gone_is_dropped() -> None:
    """A trait set again with another shape leaves nbclient's earlier buffers behind: prune_buffers keeps those
    with a place in the state (html-manager fails on the others)."""
    nb = _executed_like("export default {};", 1)
    model = widget_state.widget_state(nb)["m0"]
    model["state"]["table"] = {"parts": [{"chunks": {"3": {}}}]}
    kept = [{"path": ["table", "parts", 0, "chunks", "3", "keys"], "data": "", "encoding": "base64"}]
    gone = [
        {"path": ["table", "parts", 1, "keys"], "data": "", "encoding": "base64"},
        {"path": ["table", "parts", 0, "chunks", "5", "keys"], "data": "", "encoding": "base64"},
    ]
    model["buffers"] = kept + gone
    assert widget_state.prune_buffers(nb) == 2
    assert model["buffers"] == kept
