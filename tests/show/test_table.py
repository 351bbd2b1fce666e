"""Tables of states: every row of every explorer's table is what compute() gives for that row's values, bit-exact
(each matrix's float64 bytes, every string and number after a JSON round trip), an explorer built fresh at sampled
states shows what the table holds for them, every table fits its budget (64 kB gzip inline, chunks of at most
100 kB), and the model-free ones build in well under the 10 s all tables may take together (bench/bench_tables.py
prints every figure). The explorers are built as their lessons build them (the pipeline as in lessons 01 and 07).
The page's reader of the same tables: tests/show/table.test.mjs."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import inspect
import json
import random
from collections.abc import Callable, Mapping
from typing import cast

import pytest

from attnlib.lessons.l08_scaling import ScalingExplorer
from attnlib.show.explorer import Explorer
from attnlib.show.table import (
    CHUNK_FOLDER,
    MARKS,
    Shown,
    Table,
    Tables,
    build_tables,
    chunk_files,
    chunk_message,
    comparable,
    explanation_files,
    page_bytes,
    page_value,
)
from bench.bench_tables import lesson_explorers

INLINE_BUDGET = 64_000
CHUNK_BUDGET = 100_000
#: every explorer a lesson displays, built with the lesson's arguments
LESSONS: dict[str, Callable[[], Explorer]] = dict(lesson_explorers())
#: explorers run through a model: their build is not timed with the others (bench/bench_tables.py times it)
WITH_MODEL = {
    "13 TrainingExplorer",
    "14 HeadsExplorer",
    "16 ReferentExplorer",
    "17 WriterExplorer",
    "18 ModelHeadsExplorer",
}
#: rows checked one in this many: lesson 17's writer runs its model 61 times a row (67 rows: 6 s to build)
EVERY = {"17 WriterExplorer": 8}

_BUILT: dict[str, tuple[Explorer, Tables, bool]] = {}


def tables_of(name: str) -> tuple[Explorer, Tables]:
    """The explorer (in its first state) and its tables, built once per session; once they are built, the
    compute of an explorer whose views explain their cells keeps what it gave (:func:`_kept`)."""
    if name not in _BUILT:
        explorer = LESSONS[name]()
        before = explorer.displayed()
        tables = build_tables(explorer)
        _BUILT[name] = explorer, tables, explorer.displayed() == before
        if name in EXPLAINED:
            _kept(explorer)
        if any(part.chunk is not None for part in tables.parts):
            # a chunk is read off the built tables alone: kept once read (sizes, to_page("all") and chunk_files
            # each read lesson 12's 32 chunks); no caller changes it (chunk_files names files in the page's head)
            tables.chunk = functools.cache(tables.chunk)  # type: ignore[method-assign]
    return _BUILT[name][:2]


def _kept(explorer: Explorer) -> None:
    """``explorer.compute`` from now on keeps what it gives, per values (each exactly: its type and value, a
    matrix by its digest). compute is pure, so the checks of every row (_expected) and explanation_files, which
    both compute every row of the table anew, compute each once between them (lesson 01's pipeline: 392 rows);
    the table itself was built before, by the explorer's own compute. Only the small one-part tables of
    EXPLAINED: lesson 12's 9 712 rows of matrices are not kept."""
    compute = explorer.compute
    seen: dict[tuple[tuple[str, str, object], ...], Shown] = {}

    def kept(values: Mapping[str, object]) -> Shown:
        key = tuple(sorted((n, type(v).__name__, page_value(v)) for n, v in values.items()))
        if key not in seen:
            seen[key] = compute(values)
        return seen[key]

    explorer.compute = kept  # type: ignore[method-assign]


def _expected(explorer: Explorer, part: Table, values: Mapping[str, object]) -> dict[str, dict[str, object]]:
    """What compute(values) shows for the outputs of ``part``, in the form of ``part.state`` (drawn only as needed)."""
    shown = explorer.compute(values)
    out: dict[str, dict[str, object]] = {"views": {}, "texts": {}, "controls": {}}
    drawn_of: dict[str, dict[str, object]] = {}  # each view drawn once (a part may hold its look and its matrix)
    for output in part.outputs:
        kind, rest = output.split("/", 1)
        name, _, field = rest.partition(":")
        if kind == "texts":
            out["texts"][name] = json.loads(json.dumps(shown.texts[name]))
        elif kind == "controls":
            out["controls"][name] = json.loads(json.dumps(dict(shown.controls[name])))
        else:
            if name not in drawn_of:
                drawn_of[name] = comparable({"views": {name: explorer.views[name].drawn(shown.views[name])}})["views"][
                    name
                ]
            drawn = drawn_of[name]
            keep = {
                "": set(drawn),
                "matrix": {"buffer"},
                "marks": set(MARKS),
                "look": set(drawn) - set(MARKS) - {"buffer"},
            }[field]
            view = out["views"].setdefault(name, {})
            view.update({k: v for k, v in drawn.items() if k in keep})  # type: ignore[union-attr]
    return out


def test_the_lessons_display_twenty_one_explorers() -> None:
    assert len(LESSONS) == 21 and "01 PipelineExplorer" in LESSONS and "07 PipelineExplorer" in LESSONS


@pytest.mark.parametrize("name", list(LESSONS))
def test_every_row_of_every_table_is_compute_of_its_values(name: str) -> None:
    explorer, tables = tables_of(name)
    assert _BUILT[name][2], "building the table changed a widget"
    states: dict[int, dict[str, dict[str, object]]] = {}  # each row's state, read once (one part: for both loops)
    for part in tables.parts:
        assert len(part.keys) == len(set(part.keys)) == len(part.rows) >= 1
        for k in range(0, len(part.values), EVERY.get(name, 1)):
            states[k] = part.state(k)
            assert _expected(explorer, part, part.values[k]) == states[k], (name, part.controls, part.keys[k])
    if len(tables.parts) == 1:  # every reachable state: the page's rule finds each row, and its state is compute's
        (table,) = tables.parts
        assert len(table.keys) >= 2 or name.startswith(("01 Inputs", "10", "13", "14"))
        for k in range(len(table.values)):
            assert table.find(table.page_values(k)) == k
            assert tables.lookup(table.page_values(k)) == (states[k] if k in states else table.state(k))


def _states(explorer: Explorer, tables: Tables, count: int, seed: int) -> list[dict[str, object]]:
    """``count`` states of the table: its rows (one part), or random values of every control (parts)."""
    rng = random.Random(seed)
    if len(tables.parts) == 1:
        values = tables.parts[0].values
        return [values[k] for k in sorted(rng.sample(range(len(values)), min(count, len(values))))]
    grid = explorer.control_grid()
    first = explorer.values_now()
    out = []
    for _ in range(count):
        values = {**first, **{n: rng.choice(v) for n, v in grid.items()}}
        for control, traits in explorer.compute(values).controls.items():
            values[control] = traits.get("value", values[control])
        out.append(values)
    return out


@pytest.mark.parametrize("name", [n for n in LESSONS if isinstance(LESSONS[n], type)])
def test_an_explorer_built_fresh_at_sampled_states_shows_the_table(name: str) -> None:
    """A new explorer, given a table's state as its arguments, shows what the page looks up for that state."""
    explorer, tables = tables_of(name)
    factory = LESSONS[name]
    accepted = inspect.signature(factory).parameters
    compared = 0
    for values in _states(explorer, tables, 3, seed=len(name)):
        page = {n: page_value(v) for n, v in values.items()}
        state = tables.lookup(page)
        assert state is not None, (name, page)
        arguments = {k: v for k, v in values.items() if k in accepted and k in explorer.controls}
        fresh = factory(**arguments)
        if {n: page_value(v) for n, v in fresh.values_now().items()} != page:
            continue  # a state its arguments cannot give (e.g. a text typed for another example)
        assert comparable(fresh.displayed()) == state, f"{name} built with {arguments}"
        compared += 1
    assert compared >= 1, f"{name}: no sampled state could be built fresh"


@pytest.mark.parametrize("name", list(LESSONS))
def test_each_table_fits_its_budget(name: str) -> None:
    """Inline (with the first state's chunks) <= 64 kB gzip; each chunk <= 100 kB gzip."""
    _, tables = tables_of(name)
    sizes = tables.sizes()
    assert sizes["inline"] <= INLINE_BUDGET, f"{name}: {sizes['inline']} bytes gzip inline"
    assert all(size <= CHUNK_BUDGET for size in sizes["chunks"]), f"{name}: chunks {sizes['chunks']}"  # type: ignore[attr-defined]


def test_every_explorer_with_no_model_has_a_table() -> None:
    """Every explorer with no model builds its table (how long it takes is bench.bench_tables' figure, not a
    test's: a timed test fails on a loaded machine and passes on a fast one whatever the code does)."""
    built = {name: tables_of(name)[1] for name in LESSONS if name not in WITH_MODEL}  # each built once a session
    rows = {name: sum(len(part.keys) for part in tables.parts) for name, tables in built.items()}
    assert all(rows.values()), {name: n for name, n in rows.items() if not n}
    assert rows["05 SoftmaxExplorer"] == 51 * (3 + 4 + 3)  # every temperature × the queries of 001, 000 and 004


def test_lesson_08_is_chunked_by_seed_on_its_d_k_grid_and_lesson_12_is_factored() -> None:
    assert LESSONS["08 ScalingExplorer"] is ScalingExplorer  # the lesson's explorer is built with no arguments
    _, tables = tables_of("08 ScalingExplorer")
    (part,) = tables.parts
    assert part.chunk == "seed" and len(tables.chunk_values(0)) == 21
    assert sorted({key[part.controls.index("d_k")] for key in part.keys}) == list(ScalingExplorer.D_K)
    assert len(part.keys) == 10 * 21
    assert tables.states == 210 and tables.to_page()["states"] == 210
    _, positions = tables_of("12 PositionsExplorer")  # every state would be 1.1 M rows: six parts instead
    assert positions.states == sum(range(2, 65)) * sum(d // 2 for d in range(2, 65, 2)) == 1_097_712
    assert positions.parts[0].controls == ("n_tokens", "d_model")
    # the matrices of every n_tokens are blocks of the 64-position ones: one P and one P Pᵀ per d_model
    assert sum(len(p.matrices) for p in positions.parts) == 2 * 63 * 32
    page = positions.to_page("all")
    assert len(page["parts"][0]["chunks"]["0"]["matrices"]) == 8 * (64 * 2 + 64 * 64)


@pytest.mark.parametrize(
    "name", ["01 PipelineExplorer", "05 SoftmaxExplorer", "07 SummingExplorer", "12 PositionsExplorer"]
)
def test_the_pages_transition_is_the_explorers(name: str) -> None:
    """Tables.transition (what table.js does) of sampled changes == the explorer's transition, then clamping."""
    explorer, tables = tables_of(name)
    grid = explorer.control_grid()
    rng = random.Random(37)
    for values in _states(explorer, tables, 40, seed=37):
        control = rng.choice(list(grid))
        moves = [v for v in grid[control] if page_value(v) != page_value(values[control])]
        changed = {**values, control: rng.choice(moves)}  # a change: the page sends none for the same value
        after = dict(explorer.transition(changed, control))
        for dependent, traits in explorer.compute(after).controls.items():
            after[dependent] = traits.get("value", after[dependent])
        page = tables.transition({n: page_value(v) for n, v in changed.items()}, control)
        assert page == {n: page_value(v) for n, v in after.items()}, (name, control, changed[control])
        assert tables.lookup(page) is not None


def _file_body(path: str, text: str) -> dict:
    """What a file beside a page with no kernel (a chunk's, a view's explanations) puts in
    ``globalThis.attnlibChunks``, checked to be under its own name: the digest of what it puts there."""
    key = path.removeprefix(f"{CHUNK_FOLDER}/").removesuffix(".js")
    prefix = f'(globalThis.attnlibChunks ??= {{}})["{key}"] = '
    body = text.split(prefix, 1)[1].rstrip().removesuffix(";")
    assert hashlib.sha256(body.encode()).hexdigest()[:24] == key
    return json.loads(body)


def test_a_page_with_no_kernel_has_every_chunk_it_does_not_hold_as_a_file() -> None:
    """chunk_files: one file per chunk the page does not hold, named by its content's digest, holding what the kernel
    would send for it (chunk_message), each at most the chunk budget gzip; the page names each one's path."""
    _, tables = tables_of("12 PositionsExplorer")
    page = tables.to_page("current")
    files = chunk_files(tables, page)
    (part,) = [p for p, t in enumerate(tables.parts) if t.chunk is not None]
    named = page["parts"][part]["chunk"]["files"]
    held = [int(i) for i in page["parts"][part]["chunks"]]
    assert len(named) == len(tables.chunk_values(part)) == 32 and [i for i, f in enumerate(named) if not f] == held
    assert sorted(files) == sorted(f for f in named if f) and all(f.startswith(f"{CHUNK_FOLDER}/") for f in files)
    for index in range(0, 32, 5):
        if index in held:
            continue
        text = files[named[index]]
        body = _file_body(named[index], text)
        content, buffers = chunk_message(tables, part, index)
        assert body["content"] == json.loads(json.dumps(content))
        assert [base64.b64decode(b) for b in body["buffers"]] == buffers
        assert len(gzip.compress(text.encode(), 9)) <= CHUNK_BUDGET
    assert chunk_files(tables, tables.to_page("all")) == {}  # a page that holds every chunk needs no file


#: the explorers whose views have hover explanations
EXPLAINED = ("01 PipelineExplorer", "03 QKVExplorer", "04 ScoresExplorer", "05 SoftmaxExplorer", "07 SummingExplorer")


def _check_texts(explorer: Explorer, tables: Tables, files: dict[str, str], page: dict, samples: int) -> int:
    """Each view's file holds, at sampled rows of each piece, the texts view.explain(i, j) gives once the view
    shows that row's frame; returns how many cells said something."""
    rng = random.Random(5)
    said = 0
    assert sorted(files) == sorted(page["explanations"].values())
    for name, path in page["explanations"].items():
        held = _file_body(path, files[path])
        assert (held["explorer"], held["view"]) == (tables.explorer, name)
        table = tables.parts[held["part"]]
        assert len(gzip.compress(files[path].encode(), 9)) <= CHUNK_BUDGET
        for piece, indices in held["rows"].items():
            rows = range(len(table.keys)) if piece == "" else tables.chunk_rows(held["part"], int(piece))
            assert len(indices) == len(rows)
            for position in sorted(rng.sample(range(len(rows)), min(samples, len(rows)))):
                row = rows[position]
                texts = held["texts"][indices[position]]
                if not cast(Mapping[str, object], table.state(row)["views"][name]).get("explained", True):
                    assert texts == []
                    continue
                view = explorer.views[name]
                view.show(explorer.compute(table.values[row]).views[name])
                n_rows, n_cols = view.shape
                assert texts == [[view.explain(i, j) for j in range(n_cols)] for i in range(n_rows)]
                said += sum(bool(t) for line in texts for t in line)
    return said


@pytest.mark.parametrize("name", EXPLAINED)
def test_a_page_with_no_kernel_has_its_views_explanations_in_files_beside_it(name: str) -> None:
    """explanation_files: a file per explained view, named by its content's digest, mapping every row of the table
    to the texts compute gives (view.explain); each at most the chunk budget gzip, and the page, which names them,
    no larger than the kernel's but for their names (the texts are most of a table's bytes)."""
    explorer, tables = tables_of(name)
    page = tables.to_page("current")
    inline = len(gzip.compress(page_bytes(page), 9))
    files = explanation_files(explorer, tables, page)
    assert files and all(path.startswith(f"{CHUNK_FOLDER}/") for path in files)
    assert _check_texts(explorer, tables, files, page, samples=6) > 0
    assert len(gzip.compress(page_bytes(page), 9)) <= min(INLINE_BUDGET, inline + 400)


def test_an_explorer_with_no_explanations_gets_no_file() -> None:
    """Lessons 08 and 12 explain no cell: no file, and the page names none."""
    for name in ("08 ScalingExplorer", "12 PositionsExplorer"):
        explorer, tables = tables_of(name)
        page = tables.to_page("current")
        assert explanation_files(explorer, tables, page) == {} and "explanations" not in page


def test_a_chunked_part_has_its_explanations_row_by_row_per_chunk() -> None:
    """A part in chunks (lesson 05's explorer here chunked by its example, as lesson 08 chunks by seed): the file
    maps each chunk's rows, in the chunk's order, to their texts."""
    from attnlib.lessons.l05_softmax import SoftmaxExplorer
    from attnlib.show.table import Part

    assert LESSONS["05 SoftmaxExplorer"] is SoftmaxExplorer  # the lesson's explorer is built with no arguments
    outputs = tables_of("05 SoftmaxExplorer")[1].parts[0].outputs

    class Chunked(SoftmaxExplorer):
        def table_parts(self) -> list[Part]:
            return [Part(("example", "temperature", "query"), tuple(outputs), chunk="example")]

    explorer = Chunked()
    tables = build_tables(explorer)
    page = tables.to_page("current")
    files = explanation_files(explorer, tables, page)
    (held,) = [_file_body(path, text) for path, text in files.items()]
    assert sorted(held["rows"]) == sorted(str(i) for i in range(len(tables.chunk_values(0))))
    assert _check_texts(explorer, tables, files, page, samples=4) > 0
