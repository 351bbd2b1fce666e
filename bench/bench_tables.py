"""Tables of states: how large each explorer's table is and how long attnlib takes to build it. Prints figures;
it is not a test (tests/show/test_table.py holds the budgets).

Each explorer is built as its lesson builds it (``bench.bench_widgets``' factories; the pipeline twice, as in
lessons 01 and 07), then :func:`attnlib.show.table.build_tables` runs once and is timed (CPU time of this
process, and wall time). Per explorer: the rows of its table (all its parts), the bytes of every part and chunk
raw, gzip of what is inline (what the page holds up front: :func:`attnlib.show.page.page_tables`, the chunks of
the explorer's first state) and of its largest chunk, the states the table answers (:attr:`Tables.states`),
and for a page with no kernel (the site, a deck): what it holds up front with its files named, and its views'
hover texts (:func:`attnlib.show.table.explanation_files`, one file per view: their number and the largest,
gzip).

Run: ``.venv/bin/python -m bench.bench_tables [--json PATH]``; writes ``bench/results/tables.json``.
Goals (issue #37): inline <= 64 kB gzip, chunks <= 100 kB gzip, every table built in <= 10 s together.
"""

from __future__ import annotations

import argparse
import gzip
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from attnlib.show.explorer import Explorer
from attnlib.show.page import page_tables
from attnlib.show.table import TableTooLarge, build_table, build_tables, chunk_files, explanation_files, page_bytes
from bench import bench_widgets, results

INLINE_GOAL, CHUNK_GOAL, BUILD_GOAL = 64_000, 100_000, 10.0


def lesson_explorers() -> Iterator[tuple[str, Callable[[], Explorer]]]:
    """(``"NN ClassName"``, factory) for every explorer a lesson displays."""
    from attnlib.lessons.pipeline import PipelineExplorer

    yield "01 PipelineExplorer", PipelineExplorer
    for cls in bench_widgets.explorers():
        lesson = cls.__module__.rsplit(".", 1)[-1]
        number = lesson[1:3] if lesson[:1] == "l" and lesson[1:3].isdigit() else "07"  # the pipeline: lesson 07
        yield f"{number} {cls.__name__}", bench_widgets.FACTORIES.get(cls.__name__, cls)


def measure(factory: Callable[[], Explorer]) -> dict[str, object]:
    """Build the explorer (not timed), then its tables (timed), and weigh them."""
    explorer = factory()
    cpu, wall = time.process_time(), time.perf_counter()
    tables = build_tables(explorer)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    sizes = tables.sizes()
    chunks: list[int] = sizes["chunks"]  # type: ignore[assignment]
    page = page_tables(tables)
    held = len(gzip.compress(page_bytes(page), 9))
    texts_cpu = time.process_time()
    written = explanation_files(explorer, tables, page)
    texts_cpu = time.process_time() - texts_cpu
    explained = [len(gzip.compress(t.encode(), 9)) for t in written.values()]
    chunk_files(tables, page)
    row: dict[str, object] = {
        "states": tables.states,
        "parts": len(tables.parts),
        "rows": sizes["rows"],
        "raw_bytes": sizes["raw"],
        "inline_gzip": held,
        "prefetch": bool(page.get("prefetch")),
        "static_inline_gzip": len(gzip.compress(page_bytes(page), 9)),
        "explanation_files": len(explained),
        "largest_explanations_gzip": max(explained, default=0),
        "chunks": len(chunks),
        "largest_chunk_gzip": max(chunks, default=0),
        "chunks_gzip": sum(chunks),
        "build_cpu_s": round(cpu, 3),
        "build_wall_s": round(wall, 3),
        "explanations_cpu_s": round(texts_cpu, 3),
    }
    if len(tables.parts) > 1 or tables.parts[0].chunk is not None:  # before: one table of every reachable state
        try:
            single = build_table(explorer)
            row["one_table"] = {"rows": len(single.keys), "gzip": single.gzip_size()}
        except TableTooLarge as error:
            row["one_table"] = {"error": str(error)}
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", type=Path, default=results.RESULTS / "tables.json")
    args = parser.parse_args()
    rows: dict[str, dict[str, object]] = {}
    for name, factory in sorted(lesson_explorers()):
        rows[name] = measure(factory)
        r = rows[name]
        print(
            f"{name:28} states {r['states']:>9,}  rows {r['rows']:>6}  raw {r['raw_bytes']:>9,} B  "
            f"inline {r['inline_gzip']:>7,} B gzip  chunks {r['chunks']:>2} (largest {r['largest_chunk_gzip']:>6,} B)  "
            f"build {r['build_cpu_s']:.2f} s CPU",
            flush=True,
        )
    total = sum(float(r["build_cpu_s"]) for r in rows.values())  # type: ignore[arg-type]
    texts = sum(float(r["explanations_cpu_s"]) for r in rows.values())  # type: ignore[arg-type]
    print(f"all tables: {total:.1f} s CPU (goal <= {BUILD_GOAL:.0f} s); hover texts {texts:.1f} s")
    results.write(args.json, {"rows": rows, "build_cpu_s": round(total, 2), "explanations_cpu_s": round(texts, 2)})


if __name__ == "__main__":
    main()
