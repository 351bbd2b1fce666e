"""Render the tables of ``docs/performance.md`` from ``bench/results/*.json`` (what ``make bench`` wrote).

Each table sits between ``<!-- table: NAME -->`` and ``<!-- end -->`` in the page; this rewrites what
is between them and leaves the prose alone. A result that was never recorded leaves its table as it is.

Run: ``.venv/bin/python -m bench.report``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from bench import results

PAGE = results.REPO / "docs" / "performance.md"
INPAGE_MARGIN, INPAGE_P90 = 8, 34  # ms: a change drawn in the page, median ≤ page alone + 8, p90 ≤ 34 (issue 54)
KERNEL_MARGIN = 10  # ms: a change the kernel answers, median ≤ Jupyter alone on the same page + this
KERNEL_GOAL = 10  # ms median per change


def _rows(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def _met(ok: bool) -> str:
    return "met" if ok else "**not met**"


def _changes(data: dict) -> str:
    runs = data.get("runs", 1)
    return f"{data['changes']} changes" if runs == 1 else f"{runs} runs of {data['changes']} changes"


def browser(data: dict) -> str:
    """The live views' table: per explorer, its changes drawn in the page and those the kernel answered, beside
    the checkout before (``--baseline``: every change went to the kernel there), Jupyter alone on the same page
    and the page alone."""
    paths = [p for p in data if p.startswith("baseline")]
    current = data["current"]
    head = ["lesson, explorer", "in the page: median / p90 ms (changes)"]
    head += [f"goal: median ≤ page alone + {INPAGE_MARGIN}, p90 ≤ {INPAGE_P90}"]
    head += ["through the kernel: median / p90 ms (changes)", f"goal ≤ Jupyter alone + {KERNEL_MARGIN}"]
    head += [f"before ({p.removeprefix('baseline ')}): median / p90 ms" for p in paths]
    head += ["Jupyter alone, same page", "page alone", "kernel's first / last message: median ms"]

    def both(figures: dict | None) -> str:
        return f"{figures['median']:.0f} / {figures['p90']:.0f}" if figures and figures["n"] else "-"

    def counted(figures: dict | None) -> str:
        return f"{both(figures)} ({figures['n']})" if figures and figures["n"] else "-"

    # each page's reference row ("05 Jupyter alone"), shown beside its explorers; 00 is a page of its own
    alone = {name[:2]: f["all"] for name, f in current.items() if name[3:] == results.JUPYTER_ALONE}
    lessons = [a for page, a in alone.items() if page != "00"]
    rows, in_page, through = [], [], []
    for name, figures in current.items():
        reference = name[3:] == results.JUPYTER_ALONE
        if reference and name[:2] != "00":
            continue
        page, kernel = (None, figures["all"]) if reference else (figures.get("inpage"), figures.get("kernel"))
        page = page if page and page["n"] else None
        kernel = kernel if kernel and kernel["n"] else None
        row = [name + (" (reference)" if reference else ""), counted(page)]
        floor = figures.get("floor")
        if page and floor and floor["n"]:
            in_page.append(page["median"] <= floor["median"] + INPAGE_MARGIN and page["p90"] <= INPAGE_P90)
        row.append(_met(in_page[-1]) if page and floor and floor["n"] else "-")
        row.append(counted(kernel))
        same = alone.get(name[:2])
        if kernel and same and not reference:
            through.append(kernel["median"] <= same["median"] + KERNEL_MARGIN)
            row.append(_met(through[-1]))
        else:
            row.append("-")
        row += [both(data[path].get(name, {}).get("all")) for path in paths]
        row.append(both(same))
        row.append(both(figures.get("floor")))
        reply, answer = figures.get("reply"), figures.get("answer")
        row.append(f"{reply['median']:.0f} / {answer['median']:.0f}" if reply and answer else "-")
        rows.append(row)
    summary = (
        f"In the page: the goal met by {sum(in_page)} of {len(in_page)} explorers; through the kernel: by "
        f"{sum(through)} of {len(through)}. "
    )
    if lessons:
        summary += (
            f"{results.JUPYTER_ALONE} on the lessons' pages: medians {min(a['median'] for a in lessons):.0f}–"
            f"{max(a['median'] for a in lessons):.0f} ms."
        )
    return _rows(head, rows) + f"\n\n{summary}\n\n{_changes(data)} per explorer; {results.measured_on(data)}."


def static(data: dict) -> str:
    """bench/bench_static.py: each control of each explorer with no kernel, site and deck, disk and http."""
    goal = data["goal"]
    columns = ["site file", "site http", "deck file", "deck http"]
    head = ["lesson, explorer, control", *(f"{c}: median / p90 ms" for c in columns), f"goal ≤ {goal[0]} / {goal[1]}"]
    rows = []
    for name, cols in data["rows"].items():
        shown = [cols.get(c) for c in columns]
        met = all(f["median"] <= goal[0] and f["p90"] <= goal[1] for f in shown if f)
        reference = name.endswith(results.PAGE_ALONE)  # a reference row, not a control
        rows.append(
            [
                f"{name} (reference)" if reference else name,
                *(f"{f['median']:.0f} / {f['p90']:.0f}" if f else "-" for f in shown),
                "-" if reference else _met(met),
            ]
        )
    every = data["all"]
    checks = (
        f"All {every['n']} changes: {every['median']:.0f} / {every['p90']:.0f} ms; {data['pages']} pages, "
        f"{len(data['blocked'])} requests that left the page, {len(data['errors'])} page or console errors."
    )
    return (
        _rows(head, rows)
        + f"\n\n{checks}\n\n{data['changes']} changes per control and page; {results.measured_on(data)}."
    )


def kernel(data: dict) -> str:
    """bench/bench_widgets.py: the kernel's cost of a change, from the page (covered: adopted; answered: one
    ``shown``) and from Python (one message), each explorer displayed with its table."""
    paths = [
        ("covered", "from the page, drawn there"),
        ("answered", "from the page, answered"),
        ("python", "from Python"),
    ]

    def cell(f: dict | None) -> str:
        return "-" if f is None else f"{f['median']:.1f} / {f['p90']:.1f} ({f['messages']:.0f})"

    rows = [
        [name, *(cell(f.get(path)) for path, _ in paths), _met(max(g["median"] for g in f.values()) <= KERNEL_GOAL)]
        for name, f in data["rows"].items()
    ]
    head = ["explorer", *(f"{label}: median / p90 ms (messages)" for _, label in paths), f"goal ≤ {KERNEL_GOAL} ms"]
    met = sum(row[-1] == "met" for row in rows)
    return (
        _rows(head, rows)
        + f"\n\nThe goal met by {met} of {len(rows)} explorers. {data['changes']} changes per path and explorer; "
        + f"{results.measured_on(data)}."
    )


def attention(data: dict) -> str:
    rows = [
        [n, *(f"{f[k]:.2f}" for k in ("attention_ms", "tiled_ms", "sdpa_ms")), f"{f['tiled_ms'] / f['sdpa_ms']:.2f}"]
        for n, f in data["rows"].items()
    ]
    head = ["n", "attention ms", "tiled_attention ms", "torch SDPA ms", "tiled / SDPA"]
    return (
        _rows(head, rows)
        + f"\n\nbatch {data['batch']}, d = {data['d']}, {data['threads']} threads; {results.measured_on(data)}."
    )


def scale(data: dict) -> str:
    parts = []
    for layout, rows in data["rows"].items():
        table = [
            [n]
            + [f"{r[m]['median_ms']:.1f} / {r[m]['peak_mib']:.0f}" for m in ("attention", "tiled", "sdpa")]
            + [f"{r['tiled']['median_ms'] / r['sdpa']['median_ms']:.2f}"]
            for n, r in rows.items()
        ]
        head = ["n", "attention ms / MiB", "tiled ms / MiB", "SDPA ms / MiB", "tiled / SDPA time"]
        parts.append(f"{data['layouts'][layout]}:\n\n" + _rows(head, table))
    kv = data["kv_cache"]
    parts.append(
        f"KV cache, 256 tokens after 16: {kv['cached_ms']:.0f} ms cached, {kv['recomputed_ms']:.0f} ms recomputed "
        f"({kv['recomputed_ms'] / kv['cached_ms']:.1f}×), identical tokens: {kv['identical']}; "
        f"{results.measured_on(data)}."
    )
    return "\n\n".join(parts)


def nbval(data: dict) -> str:
    series = (
        f"{data['lessons']} lessons, `-n {data['workers']}`: median {data['median_s']:.1f} s of "
        f"{len(data['runs_s'])} runs ({', '.join(f'{t:.1f}' for t in data['runs_s'])} s); goal ≤ "
        f"{data['goal_s']:.0f} s {_met(data['median_s'] <= data['goal_s'])}; {results.measured_on(data)}."
    )
    if "alone_s" not in data:
        return series
    goal = data["alone_goal_s"]
    rows = [[lesson, f"{s:.1f}", _met(s <= goal)] for lesson, s in data["alone_s"].items()]
    return (
        series
        + "\n\nEach lesson alone (one process, one torch thread, portable CPU kernels):\n\n"
        + _rows(["lesson", "s", f"≤ {goal:.0f} s"], rows)
    )


def make_test(data: dict) -> str:
    verdict = "passed" if data["passed"] else f"**failed** ({data['outcome']})"
    return (
        f"`make test` on a fresh clone of `{data['commit']}`, nothing cached: {data['total_s'] / 60:.1f} min in all "
        f"({data['total_s']} s, of which pytest {data['pytest_s']:.0f} s), {verdict}; goal ≤ "
        f"{data['goal_s'] / 60:.0f} min {_met(data['passed'] and data['total_s'] <= data['goal_s'])}; "
        f"{results.measured_on(data)}"
        + (
            f" (the load before the run; the cores were {data['cpu_busy']:.0%} busy during it)"
            if data.get("cpu_busy") is not None
            else ""
        )
        + (
            f"; reference {data['reference_after_s']:.2f} s just after the run."
            if data.get("reference_after_s") is not None
            else "."
        )
        + (
            "\n\nSlowest steps of its pytest session (`JOBS` workers, three by default, so each shares the cores):\n\n"
            + "\n".join(f"- {line}" for line in data["slowest"])
            if data.get("slowest")
            else ""
        )
    )


def hub(data: dict) -> str:
    rows = [
        [
            str(r["size"]),
            f"{r['ready_s']:.1f}",
            f"{r['finished_s']:.1f}",
            str(len(r["failures"])),
            f"{r['per_learner_gib']:.2f}",
            str(r["hub_mib"]),
        ]
        for r in data["rows"]
    ]
    head = [
        "learners",
        "all servers ready (s)",
        "all lessons finished (s)",
        "failures",
        "memory per learner (GiB, peak PSS)",
        "hub + proxy (MiB)",
    ]
    return _rows(head, rows) + f"\n\nEvery learner runs `{data['lesson']}`; {results.measured_on(data)}."


def frames(data: dict) -> str:
    """Where a change's time goes on the page's main thread (bench_frames): per control and variant, the clock's
    median / p90 and the main thread's milliseconds per change by phase."""
    phases = list(data["phases"])
    head = ["lesson, explorer, control", "page", "input to screen: median / p90 ms"]
    head += [f"{p} ms" for p in phases] + ["all five ms"]
    rows = []
    for row in data["rows"]:
        work = [row["main"][p] for p in phases]
        rows.append(
            [f"{row['lesson']} {row['explorer']} {row['control']}", row["variant"].replace("|", "\\|")]
            + [f"{row['ms']['median']:.0f} / {row['ms']['p90']:.0f}"]
            + [f"{ms:.1f}" for ms in work]
            + [f"{sum(work):.1f}"]
        )
    return _rows(head, rows) + f"\n\n{data['changes']} traced changes per control; {results.measured_on(data)}."


def tables(data: dict) -> str:
    rows = []
    for name, r in data["rows"].items():
        chunks = f"{r['chunks']} (≤ {r['largest_chunk_gzip'] / 1000:.1f})" if r["chunks"] else "–"
        chunks += ", fetched once drawn" if r.get("prefetch") else ""
        said = r.get("explanation_files", 0)
        texts = f"{said} (≤ {r['largest_explanations_gzip'] / 1000:.1f})" if said else "–"
        static = r.get("static_inline_gzip", r["inline_gzip"])
        ok = (
            max(r["inline_gzip"], static) <= 64_000
            and max(r["largest_chunk_gzip"], r.get("largest_explanations_gzip", 0)) <= 100_000
        )
        rows.append(
            [
                name,
                f"{r['states']:,}",
                str(r["rows"]),
                str(r["parts"]),
                f"{r['raw_bytes'] / 1000:.1f}",
                f"{r['inline_gzip'] / 1000:.1f}",
                chunks,
                f"{static / 1000:.1f}",
                texts,
                f"{r['build_cpu_s']:.2f}",
                _met(ok),
            ]
        )
    head = [
        "lesson, explorer",
        "states",
        "rows",
        "parts",
        "raw kB",
        "inline kB gzip",
        "chunks (largest kB gzip)",
        "no kernel: inline kB gzip",
        "hover-text files (largest kB gzip)",
        "build s CPU",
        "goal ≤ 64 kB inline, ≤ 100 kB a file",
    ]
    before = "; ".join(
        f"{name} as one table of every state: "
        + (
            f"{r['one_table']['rows']} rows, {r['one_table']['gzip'] / 1000:.1f} kB gzip"
            if "rows" in r["one_table"]
            else r["one_table"]["error"]
        )
        for name, r in data["rows"].items()
        if "one_table" in r
    )
    total = data["build_cpu_s"]
    return (
        _rows(head, rows)
        + f"\n\nEvery table built in {total:.1f} s CPU (goal ≤ 10 s: {_met(total <= 10)})"
        + (
            f"; the hover texts of a page with no kernel in {data['explanations_cpu_s']:.1f} s more"
            if "explanations_cpu_s" in data
            else ""
        )
        + f". Before: {before}. "
        + f"{results.measured_on(data)}."
    )


GUIDE = results.REPO / "docs" / "teaching-guide.md"
#: table name (bench/results/<name>.json) → its renderer and the page that holds it
TABLES: dict[str, tuple[Callable[[dict], str], Path]] = {
    "browser": (browser, PAGE),
    "static": (static, PAGE),
    "kernel": (kernel, PAGE),
    "attention": (attention, PAGE),
    "scale": (scale, PAGE),
    "nbval": (nbval, PAGE),
    "make_test": (make_test, PAGE),
    "hub": (hub, GUIDE),
    "tables": (tables, PAGE),
    "frames": (frames, PAGE),
}


def span(page: str, name: str) -> tuple[int, int]:
    """Where table ``name`` sits in ``page``: between ``<!-- table: name -->`` and ``<!-- end -->``."""
    start = page.index(f"<!-- table: {name} -->\n") + len(f"<!-- table: {name} -->\n")
    return start, page.index("\n<!-- end -->", start - 1)


def main() -> None:
    pages = {path: path.read_text() for path in {page for _, page in TABLES.values()}}
    for name, (render, where) in TABLES.items():
        path = results.RESULTS / f"{name}.json"
        if not path.exists():
            continue
        body = render(json.loads(path.read_text()))
        page = pages[where]
        start, end = span(page, name)
        pages[where] = page[:start] + body + page[end:]
    for where, page in pages.items():
        where.write_text(page)
        print(f"wrote {where.relative_to(results.REPO)}")


if __name__ == "__main__":
    main()
