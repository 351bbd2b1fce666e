"""attnlib.show.page: an explorer's one widget model, driven as the page drives it (its comm's public
``handle_msg``) and recorded as the page gets it (the fake comm of conftest.py): how many messages a change
costs, which values a reply is for, the layout the page draws, and the front end's one module (node)."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import pytest
from test_explorer import EXPLORERS, TinyExplorer

import attnlib.show.page as page_module
from attnlib.lessons.l05_softmax import SoftmaxExplorer
from attnlib.show import ExplorerWidget, HeatmapView, ui
from attnlib.show.explorer import choices
from attnlib.show.page import STATIC, bundle
from attnlib.show.table import FORMAT, Tables, page_value

E = TypeVar("E")
#: the tables (and what the page gets of them) of each explorer built by :func:`made`, per call: built once a module
_TABLES: dict[tuple[object, ...], tuple[Tables, dict[str, Any]]] = {}


def made(factory: Callable[..., E], *args: object, **kwargs: object) -> E:
    """``factory(*args, **kwargs)`` with its page (its one widget model) made, the page's tables built the first
    time the module makes this call and shared by later ones: ``build_tables`` reads the explorer only (a new one
    built with the same arguments is in the same state) and the page only reads its tables (lookups, chunks);
    tests/show/test_table.py checks the tables themselves. What the widget does with them runs anew each time."""
    explorer = factory(*args, **kwargs)
    key = (factory, args, tuple(sorted(kwargs.items())))
    to_page = page_module.page_tables
    with pytest.MonkeyPatch.context() as patch:
        if key in _TABLES:
            tables, payload = _TABLES[key]
            patch.setattr(page_module, "build_tables", lambda *_, **__: tables)
            patch.setattr(page_module, "page_tables", lambda _: payload)
        else:  # built as the page builds them; kept with what the page got of them
            patch.setattr(page_module, "page_tables", lambda t: _TABLES.setdefault(key, (t, to_page(t)))[1])
        explorer.page  # type: ignore[attr-defined]  # noqa: B018  # made now, under the patch
    return explorer


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
    explorer = made(SoftmaxExplorer, "001")
    explorer.page._repr_mimebundle_()  # displayed: its one model exists (not the PNG fallback: no message)
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
    widget = explorer.page
    sent.clear()
    custom(widget, kind="explain", view="heatmap", row=1, col=0, id=7)
    (answer,) = updates(sent, widget)
    assert answer == {"method": "custom", "content": {"kind": "explained", "id": 7, "text": "entry 3"}}
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


def test_the_kernel_applies_the_tables_rule_of_coverage(softmax) -> None:
    explorer, widget = softmax
    assert widget.table["format"] == FORMAT and widget.table["explorer"] == "SoftmaxExplorer"
    assert widget.covers(explorer.values_now()) and not widget.covers({**explorer.values_now(), "scores": "1"})
    assert widget.shown["free"] == {}  # every typed state of lesson 05 is a control


def test_a_typed_cell_moves_the_state_out_of_the_table_and_the_page_is_told(sent) -> None:
    from attnlib.lessons.pipeline import PipelineExplorer

    explorer = made(PipelineExplorer, "001", scaled=False)  # lesson 07's, as the reset test below builds it
    widget = explorer.page
    assert widget.covers(explorer.values_now())
    before = widget.shown["free"]
    assert before and all(str(v).startswith("digest:") for v in before.values())  # the matrices, as the page holds them
    sent.clear()
    custom(widget, kind="edit", view="inputs", row=0, col=0, text="7")
    (message,) = updates(sent, widget)
    free = message["state"]["shown"]["free"]
    assert free != before and free["inputs"] == page_value(explorer.values_now()["inputs"])
    assert not widget.covers(explorer.values_now())  # the page looks this state up no more: the kernel answers
    sent.clear()
    change_in_page(widget, query=1)
    assert len(updates(sent, widget)) == 1  # answered, with the typed cell's numbers


# --------------------------------------------------------------------------- the front end under node
LOAD = """
const module = await import(%s);
const table = module.default && typeof module.default.render;
process.stdout.write(JSON.stringify({keys: Object.keys(module), render: table}));
"""

LOOKUP = """
import { decodeTable, lookup, transition } from %s;
import { readFileSync } from "node:fs";
const revive = (v) => Array.isArray(v) ? v.map(revive) : v !== null && typeof v === "object"
  ? ("$bytes" in v ? new DataView(new Uint8Array(Buffer.from(v.$bytes, "base64")).buffer)
     : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))) : v;
const table = decodeTable(revive(JSON.parse(readFileSync(process.argv[2], "utf8"))));
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

    def encode(value: object) -> object:  # bytes as the page gets them (DataViews), through JSON
        if isinstance(value, bytes):
            return {"$bytes": base64.b64encode(value).decode()}
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [encode(v) for v in value]
        return value

    (tmp_path / "table.json").write_text(json.dumps(encode(widget.table)))
    temperatures = choices(explorer.controls["temperature"])
    start = explorer.control_values()
    cases = [
        [start, None],
        [{**start, "temperature": temperatures[3], "query": 2}, None],
        [{**start, "example": "000"}, "example"],  # the reset: the scores of 000
        [{**start, "scores": "1 2; 3 4"}, None],  # typed: not in the table
    ]
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    runner = tmp_path / "lookup.mjs"
    runner.write_text(LOOKUP % json.dumps((STATIC / "table.js").as_uri()))
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


def test_a_chunk_the_page_asks_for_is_one_custom_message_and_its_state_sends_nothing_back(sent) -> None:
    """Lesson 08's table is chunked by seed: the page holds the first seed's chunk, asks for another's."""
    from attnlib.lessons.l08_scaling import ScalingExplorer

    explorer = made(ScalingExplorer)
    widget = explorer.page
    tables = widget.tables
    assert tables is not None and widget.table["parts"][0]["chunk"]["control"] == "seed"
    seeds = tables.chunk_values(0)
    other = next(i for i, seed in enumerate(seeds) if seed != explorer.controls["seed"].value)
    sent.clear()
    custom(widget, kind="chunk", part=0, index=other)
    (message,) = updates(sent, widget)
    assert message["method"] == "custom" and message["content"]["type"] == "table-chunk"
    assert message["content"]["index"] == other and "$buffer" in json.dumps(message["content"]["payload"])
    sent.clear()
    change_in_page(widget, seed=seeds[other])
    assert updates(sent, widget) == []  # the kernel's tables cover it: the page draws it from the chunk
    assert explorer.controls["seed"].value == seeds[other]


PAGE_CHANGE = """
import { pageChange } from %s;
import { decodeTable } from %s;
import { readFileSync } from "node:fs";
const revive = (v) => Array.isArray(v) ? v.map(revive) : v !== null && typeof v === "object"
  ? ("$bytes" in v ? new DataView(new Uint8Array(Buffer.from(v.$bytes, "base64")).buffer)
     : Object.fromEntries(Object.entries(v).map(([k, x]) => [k, revive(x)]))) : v;
const [payload, current, free, name, value] = revive(JSON.parse(readFileSync(process.argv[2], "utf8")));
const out = pageChange(decodeTable(payload), current, free, name, value);
process.stdout.write(JSON.stringify({values: out.values, free: out.free, drawn: out.state !== null}));
"""


def _bytes_as_json(value: object) -> object:
    import base64

    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode()}
    if isinstance(value, dict):
        return {k: _bytes_as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_bytes_as_json(v) for v in value]
    return value


def test_a_reset_of_the_typed_state_is_drawn_from_the_table_as_the_kernel_adopts_it(tmp_path, sent) -> None:
    """Lesson 07's pipeline: a new example resets the inputs (not a control); the page draws it from the table
    with the new inputs, and the kernel, whose tables cover it, sends nothing back (else the page drew nothing)."""
    from attnlib.lessons.pipeline import PipelineExplorer

    explorer = made(PipelineExplorer, "001", scaled=False)
    widget = explorer.page
    other = next(o for o in choices(explorer.controls["example"]) if o != explorer.controls["example"].value)
    case = [widget.table, widget.values, widget.shown["free"], "example", other]
    (tmp_path / "case.json").write_text(json.dumps(_bytes_as_json(case)))
    runner = tmp_path / "change.mjs"
    runner.write_text(
        PAGE_CHANGE % (json.dumps((STATIC / "explorer.js").as_uri()), json.dumps((STATIC / "table.js").as_uri()))
    )
    out = json.loads(
        subprocess.run(
            [node(), str(runner), str(tmp_path / "case.json")], capture_output=True, text=True, check=True
        ).stdout
    )
    assert out["drawn"], "the page has no state for the new example: it would draw nothing"
    assert out["free"] != widget.shown["free"]  # the example's inputs, not the old ones
    sent.clear()
    calls = counted(explorer)
    change_in_page(widget, **out["values"])
    assert updates(sent, widget) == []  # covered: the kernel stays quiet, so the page must draw it itself
    assert calls == [explorer.values_now()]  # and computes it at once, for the values the page drew
    assert widget.free() == out["free"]
    fresh = PipelineExplorer(other, scaled=False)
    assert explorer.summary() == fresh.summary()
    assert explorer.shown_now() == fresh.shown_now() and len(calls) == 1


def test_python_back_to_the_state_it_last_sent_reaches_a_page_that_moved(sent, softmax) -> None:
    """The page moves (drawn from its table: nothing goes back); Python sets the explorer back to the state it
    last sent: the shown goes with the values (traitlets would drop a shown equal to the trait's)."""
    explorer, widget = softmax
    before = explorer.control_values()
    change_in_page(widget, query=2)
    assert updates(sent, widget) == []
    explorer.controls["query"].value = before["query"]
    (message,) = updates(sent, widget)
    assert message["state"]["shown"]["values"] == before == message["state"]["values"]
    sent.clear()
    explorer.update()  # the same state again, the page has not moved: nothing leaves
    explorer.publish()
    assert updates(sent, widget) == []


def test_a_table_in_chunks_holds_the_first_and_fetches_the_rest_when_they_are_small(sent) -> None:
    """Both hold the first state's chunk (what the page holds up front is at most 64 kB gzip). Lesson 08's chunks
    (by seed) are small: the table says ``prefetch``, and the page fetches every seed once drawn; lesson 12's are
    not: the page asks for one when a state needs it."""
    import gzip

    from attnlib.lessons.l08_scaling import ScalingExplorer
    from attnlib.lessons.l12_positions import PositionsExplorer
    from attnlib.show.page import PREFETCH_CHUNKS
    from attnlib.show.table import page_bytes

    for page in (
        made(ScalingExplorer).page,
        made(PositionsExplorer, n_tokens=24, d_model=16, position=5, frequency=0).page,
    ):
        assert page.tables is not None
        held = [(p, len(page.tables.chunk_values(k))) for k, p in enumerate(page.table["parts"]) if "chunk" in p]
        assert held and all(len(p["chunks"]) == 1 < n for p, n in held)
        assert len(gzip.compress(page_bytes(page.table), 9)) <= 64_000
        every = len(gzip.compress(page_bytes(page.tables.to_page("all")), 1))
        assert page.table.get("prefetch", False) is (every <= PREFETCH_CHUNKS), every
    assert made(ScalingExplorer).page.table["prefetch"] is True


# --------------------------------------------------------------------------- a state the page drew: computed at once
def counted(explorer) -> list[dict]:
    """The calls of the explorer's compute from now on (the values of each), through a wrapper on the method."""
    calls: list[dict] = []
    compute = explorer.compute

    def counting(values):
        calls.append(dict(values))
        return compute(values)

    explorer.compute = counting
    return calls


def same_state(message_shown: dict, widget: ExplorerWidget, fresh: SoftmaxExplorer) -> bool:
    """The ``shown`` a message carried is what ``fresh`` shows: its JSON part as sent, its matrices (sent as binary
    buffers) as the widget's trait holds them."""
    expected = {k: v for k, v in fresh.shown_now().items() if k != "values"}
    sent_views = {n: {k: v for k, v in view.items() if k != "buffer"} for n, view in message_shown["views"].items()}
    views = {n: {k: v for k, v in view.items() if k != "buffer"} for n, view in expected["views"].items()}
    buffers = {n: view["buffer"] for n, view in expected["views"].items()}
    return (
        sent_views == views
        and {n: view["buffer"] for n, view in widget.shown["views"].items()} == buffers
        and all(message_shown[k] == expected[k] for k in ("texts", "controls", "message"))
    )


def drawn_in_page(widget: ExplorerWidget, name: str, value: object) -> dict:
    """Control ``name`` moved to ``value`` in the page, which applies its table's resets and clamps (the rule
    ``table.js`` shares with :meth:`Tables.transition`) and sends its values; the values sent."""
    tables = widget.tables
    assert tables is not None
    moved = tables.transition({**widget.values, **widget.shown["free"], name: value}, name)
    assert tables.lookup(moved) is not None, f"the table does not hold {name} = {value!r}"
    asked = {n: moved[n] for n in widget.values}
    change_in_page(widget, **asked)
    return asked


def _softmax_moves(explorer: SoftmaxExplorer, back: bool = False) -> list[tuple[str, object]]:
    """Softmax moved in the page to example 000 (4 tokens: its query menu is not 001's), its last query and a hotter
    temperature, or ``back`` to 001, its first query and T = 1: each change drawn from the table."""
    temperatures = choices(explorer.controls["temperature"])
    if back:
        return [("example", "001"), ("query", 0), ("temperature", temperatures[20])]
    return [("example", "000"), ("query", 3), ("temperature", temperatures[40])]


def _moved_in_page(explorer: SoftmaxExplorer, moves: list[tuple[str, object]]) -> SoftmaxExplorer:
    """``explorer`` moved in the page; the explorer built fresh at the values it reaches."""
    for name, value in moves:
        drawn_in_page(explorer.page, name, value)
    c = explorer.controls
    return SoftmaxExplorer(c["example"].value, temperature=c["temperature"].value, query=c["query"].value)


def _softmax_in_page(sent) -> tuple[SoftmaxExplorer, ExplorerWidget, list[dict], SoftmaxExplorer]:
    """Softmax displayed and moved in the page; its compute counted from the first move; the same state built fresh."""
    explorer = made(SoftmaxExplorer, "001")
    explorer.page._repr_mimebundle_()  # displayed (the PNG fallback sends nothing, computes nothing)
    calls = counted(explorer)
    sent.clear()
    return explorer, explorer.page, calls, _moved_in_page(explorer, _softmax_moves(explorer))


def test_changes_the_table_covers_are_computed_at_once_and_send_nothing(sent) -> None:
    explorer, widget, calls, fresh = _softmax_in_page(sent)
    assert len(calls) == len(_softmax_moves(explorer)) and updates(sent, widget) == []  # each state, once
    assert calls[-1] == explorer.values_now()
    assert explorer.control_values() == fresh.control_values() == widget.values  # the values are the page's
    assert explorer.controls["query"].value == 3  # not one of 001's three queries: adopted unchecked
    assert explorer.displayed() == fresh.displayed()  # Python's state is the page's


#: what Python code, the notebook and the page read off an explorer and its views
READS: dict[str, Callable[[SoftmaxExplorer], object]] = {
    "summary": lambda e: e.summary(),
    "repr": repr,
    "png": lambda e: e.snapshot_png(),
    "bundle": lambda e: {k: v for k, v in e._repr_mimebundle_()[0].items() if "widget" not in k},
    "shown_now": lambda e: e.shown_now(),
    "tree": lambda e: e.tree(),
    "a view's numbers": lambda e: e.views["heatmap"].values,
    "a view's labels": lambda e: list(e.views["bars"].row_labels),
    "a view's title": lambda e: e.views["bars"].title,
    "a view's matrix": lambda e: e.views["heatmap"].data.tolist(),
    "a view's frame": lambda e: e.views["bars"].shown(),
    "a view's picture": lambda e: e.views["heatmap"].to_png(),
    "a view's explanation": lambda e: e.views["heatmap"].explain(1, 2),
    "a text": lambda e: e.texts["stats"].value,
    "a caption kept as an attribute": lambda e: e.bar_caption.value,
    "a dependent menu": lambda e: e.controls["query"].options,
    "a menu's label": lambda e: e.controls["query"].label,
    "the message": lambda e: e.message.value,
}


def test_every_read_after_changes_drawn_in_the_page_is_what_a_fresh_explorer_shows(sent) -> None:
    """Each read after moves in the page (to 000 and back to 001 in turn) gives what the explorer built fresh at
    those values gives, computing nothing: the states were computed as they were adopted; nothing is sent."""
    explorer, widget, calls, fresh = _softmax_in_page(sent)
    for k, (read, how) in enumerate(READS.items()):
        if k:
            fresh = _moved_in_page(explorer, _softmax_moves(explorer, back=k % 2 == 1))
        assert calls and calls[-1] == explorer.values_now(), read  # computed at once, for the values now
        calls.clear()
        assert how(explorer) == how(fresh), read
        assert explorer.shown_now() == fresh.shown_now() and explorer.summary() == fresh.summary(), read
        assert calls == [], read  # a read computes nothing
    assert updates(sent, widget) == []
    assert explorer.displayed() == fresh.displayed() == explorer.state(explorer.compute(explorer.values_now()))
    assert type(explorer.views["heatmap"]) is HeatmapView and type(explorer.texts["stats"]) is ui.HTML  # as built


class LazySoftmax(SoftmaxExplorer):
    """Lesson 05's explorer marked lazy, as lesson 17's slow one is."""

    lazy = True


def test_a_lazy_explorer_computes_a_drawn_state_when_first_read(sent) -> None:
    explorer = made(LazySoftmax, "001")
    widget = explorer.page
    calls = counted(explorer)
    sent.clear()
    for name, value in _softmax_moves(explorer):
        drawn_in_page(widget, name, value)
    assert calls == [] and updates(sent, widget) == [] and explorer.behind  # nothing computed yet, nothing sent
    fresh = SoftmaxExplorer("000", temperature=explorer.controls["temperature"].value, query=3)
    assert explorer.shown_now() == fresh.shown_now() and calls == [explorer.values_now()]  # once, when read
    assert not explorer.behind and explorer.summary() == fresh.summary() and len(calls) == 1
    assert updates(sent, widget) == []


def test_a_lazy_explorer_computes_a_drawn_state_once_the_kernel_is_idle(sent) -> None:
    """In a kernel (an event loop runs): the last of several drawn states is computed once no message came for
    IDLE_SECONDS, with no read; nothing is sent."""
    import asyncio

    explorer = made(LazySoftmax, "001")
    widget = explorer.page
    calls = counted(explorer)
    sent.clear()

    async def drag() -> None:
        for name, value in _softmax_moves(explorer):
            drawn_in_page(widget, name, value)
        assert calls == []
        await asyncio.sleep(explorer.IDLE_SECONDS * 2)

    asyncio.run(drag())
    assert calls == [explorer.values_now()] and not explorer.behind  # the last state only
    assert updates(sent, widget) == []


def test_a_hover_after_changes_drawn_in_the_page_explains_the_state_drawn(sent) -> None:
    _, widget, calls, fresh = _softmax_in_page(sent)
    calls.clear()
    custom(widget, kind="explain", view="heatmap", row=3, col=1, id=5)
    (answer,) = updates(sent, widget)
    assert answer["content"] == {"kind": "explained", "id": 5, "text": fresh.views["heatmap"].explain(3, 1)}
    assert answer["content"]["text"] and calls == []  # the state was computed when the page drew it


def test_a_change_the_table_does_not_cover_after_drawn_ones_gets_one_shown_of_its_values(sent) -> None:
    _, widget, calls, _ = _softmax_in_page(sent)
    typed = "1 0 0 0\n0 1 0 0\n0 0 1 0\n0 0 0 5"
    change_in_page(widget, scores=typed)
    (message,) = updates(sent, widget)
    assert set(message["state"]) == {"shown"}
    shown = message["state"]["shown"]
    assert shown["values"] == {**widget.values, "scores": typed} and shown["origin"] == "page"
    assert calls and calls[-1]["scores"] == typed  # what was sent is compute of the typed scores
    fresh = SoftmaxExplorer("000", temperature=widget.values["temperature"], query=3)
    fresh.controls["scores"].value = typed
    assert same_state(shown, widget, fresh)


def test_a_change_made_in_python_after_changes_drawn_in_the_page_sends_one_message_of_its_state(sent) -> None:
    explorer, widget, calls, fresh = _softmax_in_page(sent)
    explorer.controls["query"].value = 0
    (message,) = updates(sent, widget)
    fresh.controls["query"].value = 0
    state = message["state"]
    assert state["values"] == fresh.control_values() == state["shown"]["values"]
    assert state["shown"]["origin"] == "python"
    assert same_state(state["shown"], widget, fresh)
    assert calls[-1] == explorer.values_now()


def test_a_covered_change_that_the_kernel_clamps_is_answered(sent) -> None:
    """Lesson 12: a position past the tokens the page did not clamp: the tables say compute clamps it, so the kernel
    computes and answers with the clamped value (the page's table has that state too, but not these values)."""
    from attnlib.lessons.l12_positions import PositionsExplorer

    explorer = made(PositionsExplorer, n_tokens=24, d_model=16, position=5, frequency=0)
    widget = explorer.page
    calls = counted(explorer)
    sent.clear()
    change_in_page(widget, n_tokens=4)  # position 5 stays: the page did not apply the clamp
    (message,) = updates(sent, widget)
    assert message["state"]["values"]["position"] == explorer.controls["position"].value == 3 and calls
