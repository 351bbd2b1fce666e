"""Tables of states: every row is what compute() gives for that row's values, bit-exact, and small enough to
ship inline (64 kB gzip), built in well under the 10 s all tables may take together."""

from __future__ import annotations

import time

import pytest
from test_explorer import EXPLORERS, built

from attnlib.lessons.l08_scaling import ScalingExplorer
from attnlib.lessons.l12_positions import PositionsExplorer
from attnlib.show.table import TableTooLarge, build_table, comparable

#: over the inline budget today: lesson 08's 399 random float64 matrices on its d_k grid (79 kB gzip;
#: chunks per seed would be about 4 kB each)
OVER_BUDGET = {"08 scaling"}
#: not enumerable as a product of its controls (1.1 M states): needs a table per output (position and
#: frequency move only outlines and the caption)
NO_TABLE = {"12 positions"}
INLINE_BUDGET = 64_000


@pytest.mark.parametrize("name", [n for n in EXPLORERS if n not in NO_TABLE])
def test_every_row_of_the_table_is_compute_of_its_values(name: str) -> None:

    explorer = built(name)
    before = explorer.displayed()
    table = build_table(explorer)
    assert explorer.displayed() == before, "building the table changed a widget"
    assert len(table.keys) == len(set(table.keys)) == len(table.rows) >= 2 or name.startswith("10")
    for k, values in enumerate(table.values):
        assert comparable(explorer.state(explorer.compute(values))) == table.state(k), (name, table.keys[k])
        assert table.find(table.page_values(k)) == k  # the page's rule (table.js: tests/show/table.test.mjs)
    assert table.state(table.index(table.keys[0])) == table.state(0)
    if name not in OVER_BUDGET:
        assert table.gzip_size() <= INLINE_BUDGET, f"{name}: {table.gzip_size()} bytes gzip"


def test_the_tables_cover_the_lessons_states_and_build_in_time() -> None:
    """All the tables build in <= 10 s of this process's CPU time (the machine's other work does not count)."""
    start = time.process_time()
    sizes = {}
    for name in EXPLORERS:
        if name in NO_TABLE or name in {"13 training", "14 heads", "16 referent"}:
            continue  # (those are built once per module in test_compute and timed there with the model)
        table = build_table(EXPLORERS[name]())
        sizes[name] = len(table.keys)
    elapsed = time.process_time() - start
    assert sizes["05 softmax"] == 51 * (3 + 4 + 3)  # every temperature × the queries of 001, 000 and 004
    assert elapsed <= 10.0, f"building the tables took {elapsed:.1f} s"


def test_lesson_08_table_is_its_grid_and_lesson_12_asks_for_one() -> None:
    table = build_table(ScalingExplorer())
    assert sorted({key[table.controls.index("d_k")] for key in table.keys}) == list(ScalingExplorer.TABLE_D_K)
    assert len(table.keys) == 10 * 21
    with pytest.raises(TableTooLarge, match="PositionsExplorer: more than 5000 states"):
        build_table(PositionsExplorer())
