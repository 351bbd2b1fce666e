"""attnlib.show.page: an explorer's one widget model, driven as the page drives it (its comm's public
``handle_msg``) and recorded as the page gets it (the fake comm of conftest.py): how many messages a change
costs, which values a reply is for, the layout the page draws, and the front end's one module (node)."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pytest
from test_explorer import EXPLORERS, TinyExplorer

from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.show import ExplorerWidget
from attnlib.show.explorer import choices
from attnlib.show.page import STATIC, bundle, table_trait


def from_page(widget: ExplorerWidget, data: dict) -> None:
    """A message from the page, as the kernel's comm gets it."""
    widget.comm.handle_msg({"content": {"data": data}, "buffers": []})


def custom(widget: ExplorerWidget, **content: object) -> None:
    """A custom message from the page (the front end's ``model.send(content)``)."""
    from_page(widget, {"method": "custom", "content": content})


def change_in_page(widget: ExplorerWidget, **changes: object) -> None:
    from_page(widget, {"method": "update", "state": {"values": {**widget.values, **changes}}, "buffer_paths": []})


def updates(sent: list[tuple[str, dict]], widget: ExplorerWidget) -> list[dict]:
    return [msg for model, msg in sent if model == widget.model_id]


@pytest.fixture
def softmax(sent) -> tuple[SoftmaxExplorer, ExplorerWidget]:
    explorer = SoftmaxExplorer("001")
    explorer._repr_mimebundle_()  # displayed: its one model exists
    sent.clear()
    return explorer, explorer.page


def test_a_page_change_the_table_covers_sends_nothing_back(sent, softmax) -> None:
    explorer, widget = softmax
    hotter = choices(explorer.controls["temperature"])[30]
    change_in_page(widget, temperature=hotter, query=2)
    assert updates(sent, widget) == []  # no shown, no values, no echo
    assert explorer.controls["temperature"].value == hotter and explorer.controls["query"].value == 2
    assert explorer.displayed() == explorer.state(explorer.compute(explorer.values_now()))  # Python follows quietly


def test_a_page_change_the_table_does_not_cover_gets_one_shown_tagged_with_its_values(sent, softmax) -> None:
    explorer, widget = softmax
    typed = "1 0 0\n0 1 0\n0 0 5"
    change_in_page(widget, scores=typed)
    messages = updates(sent, widget)
    assert len(messages) == 1 and messages[0]["method"] == "update"
    state = messages[0]["state"]
    assert set(state) == {"shown"}  # the values are the page's own: not sent back
    assert state["shown"]["values"] == {**widget.values, "scores": typed} and state["shown"]["origin"] == "page"
    assert ["shown", "views", "heatmap", "buffer"] in messages[0]["buffer_paths"]  # the numbers stay binary
    assert explorer.views["heatmap"].values[2][2] == pytest.approx(np.exp(5) / (np.exp(5) + 2))


def test_a_reset_made_by_the_kernel_is_answered_with_the_values_it_gives(sent, softmax) -> None:
    """A page that did not apply the example's reset of the scores gets the reset values with the state."""
    explorer, widget = softmax
    change_in_page(widget, example="000")
    (message,) = updates(sent, widget)
    shown = message["state"]["shown"]
    assert message["state"]["values"]["scores"] == explorer.controls["scores"].value != widget.shown["asked"]["scores"]
    assert shown["asked"]["example"] == "000" and shown["values"]["scores"] == explorer.controls["scores"].value


def test_a_change_made_in_python_sends_values_and_shown_in_one_message(sent, softmax) -> None:
    explorer, widget = softmax
    explorer.controls["query"].value = 1
    (message,) = updates(sent, widget)
    assert {"values", "shown"} <= set(message["state"])
    assert message["state"]["values"]["query"] == 1 == message["state"]["shown"]["values"]["query"]
    assert message["state"]["shown"]["origin"] == "python"
    sent.clear()
    explorer.update()  # the same state again: nothing leaves
    explorer.publish()
    assert updates(sent, widget) == []


def test_a_bad_text_from_the_page_is_answered_with_the_message_and_the_last_good_views(sent, softmax) -> None:
    explorer, widget = softmax
    before = widget.shown["views"]
    change_in_page(widget, scores="1 2; 3 oops")
    (message,) = updates(sent, widget)
    assert "oops" in message["state"]["shown"]["message"]
    assert explorer.views["heatmap"].shown() == before["heatmap"]


def test_hover_explanations_and_typed_cells_travel_as_custom_messages(sent) -> None:
    explorer = TinyExplorer("1 2; 3 4")
    explorer.views["heatmap"].update(np.eye(2), explanations=[["a", "b"], ["c", "d"]])
    widget = explorer.page
    sent.clear()
    custom(widget, kind="explain", view="heatmap", row=1, col=0, id=7)
    (answer,) = updates(sent, widget)
    assert answer == {"method": "custom", "content": {"kind": "explained", "id": 7, "text": "c"}}
    sent.clear()
    custom(widget, kind="edit", view="heatmap", row=1, col=1, text="9")
    (message,) = updates(sent, widget)
    assert message["state"]["values"]["matrix"] == "1 2; 3 9" == explorer.controls["matrix"].value
    assert "shown" in message["state"]  # the values and what they show, together
    sent.clear()
    custom(widget, kind="explain", view="nope", row=0, col=0)
    assert updates(sent, widget) == []  # an unknown view: ignored


@pytest.mark.parametrize("name", list(EXPLORERS))
def test_the_layout_names_every_control_view_and_text(name: str) -> None:
    from test_explorer import built

    explorer = built(name)
    found: dict[str, set[str]] = {"control": set(), "view": set(), "text": set(), "message": set()}

    def walk(node: dict) -> None:
        for child in node.get("children", []):
            walk(child)
        if node["kind"] == "view":
            found["view"].add(node["name"])
        elif node["kind"] == "message":
            found["message"].add("message")
        elif node["kind"] == "html" and "name" in node:
            found["text"].add(node["name"])
        elif "name" in node:
            found["control"].add(node["name"])
            assert node["kind"] == explorer.controls[node["name"]].kind

    tree = explorer.tree()
    json.dumps(tree)  # the page gets it as JSON
    walk(tree)
    assert found["control"] == set(explorer.controls)
    assert found["view"] == set(explorer.views)
    assert found["text"] == set(explorer.texts) and found["message"] == {"message"}


def test_the_table_trait_holds_the_typed_controls_each_row_holds_and_the_resets(softmax) -> None:
    explorer, widget = softmax
    trait = table_trait(widget.table_of, explorer)
    assert trait["resets"] == ["example"] and list(trait["free"]) == ["scores"]
    assert len(trait["free"]["scores"]) == 3  # one text per example
    assert widget.covers(explorer.values_now()) and not widget.covers({**explorer.values_now(), "scores": "1"})


# --------------------------------------------------------------------------- the front end under node
LOAD = """
const module = await import(%s);
const table = module.default && typeof module.default.render;
process.stdout.write(JSON.stringify({keys: Object.keys(module), render: table}));
"""

LOOKUP = """
import { decodeTable, lookup, transition } from %s;
import { readFileSync } from "node:fs";
const trait = JSON.parse(readFileSync(process.argv[2], "utf8"));
trait.payload = new DataView(new Uint8Array(Buffer.from(trait.payload, "base64")).buffer);
const table = decodeTable(trait);
const out = JSON.parse(readFileSync(process.argv[3], "utf8")).map(([values, name]) => {
  const moved = name ? transition(table, values, name) : values;
  const state = lookup(table, moved);
  if (!state) return null;
  for (const view of Object.values(state.views))
    view.buffer = Array.from(new Float64Array(view.buffer.buffer.slice(view.buffer.byteOffset,
      view.buffer.byteOffset + view.buffer.byteLength)));
  return {values: moved, state};
});
process.stdout.write(JSON.stringify(out));
"""


def node() -> str:
    found = shutil.which("node")
    assert found, "node is needed to run the page's modules (make lint installs it with the npm packages)"
    return found


def test_the_front_end_is_one_module_that_exports_render(tmp_path) -> None:
    script = tmp_path / "bundle.mjs"
    script.write_text(bundle())
    runner = tmp_path / "load.mjs"
    runner.write_text(LOAD % json.dumps(script.as_uri()))
    out = json.loads(subprocess.run([node(), str(runner)], capture_output=True, text=True, check=True).stdout)
    assert out == {"keys": ["default"], "render": "function"}
    assert ExplorerWidget._esm == bundle() and "import " not in bundle().split("\n", 5)[0]


def test_the_page_looks_up_what_python_computes(tmp_path, softmax) -> None:
    """The page's table lookup (with the example's reset) gives, bit for bit, Python's compute of those values."""
    import base64

    explorer, widget = softmax
    trait = table_trait(widget.table_of, explorer)
    (tmp_path / "table.json").write_text(json.dumps({**trait, "payload": base64.b64encode(trait["payload"]).decode()}))
    temperatures = choices(explorer.controls["temperature"])
    start = explorer.control_values()
    cases = [
        [start, None],
        [{**start, "temperature": temperatures[3], "query": 2}, None],
        [{**start, "example": "000", "query": 3}, "example"],  # the reset: the scores of 000
        [{**start, "scores": "1 2; 3 4"}, None],  # typed: not in the table
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    runner = tmp_path / "lookup.mjs"
    runner.write_text(LOOKUP % json.dumps((STATIC / "table_interim.js").as_uri()))
    args = [node(), str(runner), str(tmp_path / "table.json"), str(tmp_path / "cases.json")]
    out = json.loads(subprocess.run(args, capture_output=True, text=True, check=True).stdout)
    assert out[3] is None
    for got in out[:3]:
        assert got is not None
        expected = explorer.state(explorer.compute(got["values"]))
        for name, drawn in expected["views"].items():
            assert got["state"]["views"][name]["buffer"] == np.frombuffer(drawn["buffer"], "<f8").tolist()
            rest = {k: v for k, v in drawn.items() if k != "buffer"}
            assert {k: got["state"]["views"][name][k] for k in rest} == json.loads(json.dumps(rest))
        assert got["state"]["texts"] == expected["texts"]
    assert out[2]["values"]["scores"] == explorer.transition({**start, "example": "000"}, "example")["scores"]
