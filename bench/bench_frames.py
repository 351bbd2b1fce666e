"""Where a change's time goes on the page's main thread: Chromium's own trace of each control's changes.

``bench_browser`` says how long a change takes to reach the screen; this says what the page's main thread does
meanwhile. Each lesson is opened in JupyterLab in headless Chromium and run top to bottom, as there; then, for
each control the table of an explorer covers (menus, sliders, check boxes), two changes warm up and ``--changes``
more are traced (Chromium's ``devtools.timeline`` category, the trace DevTools' Performance panel records). Per
change: the same clock as ``bench_browser`` (input event to the frame after the one that paints the change), and
the main thread's time in the input's handlers (``EventDispatch``: the explorer looking the state up and setting
the DOM; a style or layout it forces counts as such), style (``UpdateLayoutTree``), layout, paint (``PrePaint``
and ``Paint``) and layerize, each summed over the renderer's main thread (an event inside another of its name
counted once).

``--clock paint`` stops the clock at the frame after the first one that paints a change to the explorer's views
(what a learner sees first, were views below the viewport drawn after that paint) instead of at ``attnlib:shown``
(every view drawn); the main thread's figures still count all of each change. ``--thread-time`` sums the main
thread's CPU time (the trace's ``tdur``) instead of its wall time: a loaded machine's descheduling does not count.

``--css RULE`` also times the page with RULE added to it (a stylesheet the page gets after the lesson has run),
a variant beside the page as shipped, e.g. ``--css ".attnlib-explorer { contain: content }"``.

Run: ``.venv/bin/python -m bench.bench_frames [--lessons 04 05] [--changes 12] [--clock paint] [--thread-time]
[--css RULE …]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter
from pathlib import Path

from bench import results
from bench.bench_browser import ARM_JS, CONTROLS_JS, NAMES_JS, change, open_lesson, output_of
from harness.labdriver import CHROMIUM_ARGS, SETTLED_JS, find_chromium, start_lab_on_lessons

LESSONS = results.REPO / "notebooks"
#: what each figure sums: trace event names of the renderer's main thread
PHASES = {
    "handlers": ("EventDispatch",),
    "style": ("UpdateLayoutTree",),
    "layout": ("Layout",),
    "paint": ("PrePaint", "Paint"),
    "layerize": ("Layerize",),
}
SHIPPED = "as shipped"


def main_thread_ms(events: list[dict], cpu: bool = False) -> dict[str, float]:
    """Milliseconds per phase (:data:`PHASES`) on the renderer's main thread (``CrRendererMain``, the one with
    the most complete events when there are several): an event that lies inside an earlier one of its own name
    is part of it and not counted again, and a style, layout or paint that a handler forces (inside its
    ``EventDispatch``) counts in its own phase, not the handler's: the phases add up. ``cpu``: the thread's CPU
    time (``tdur``) instead of the wall time (``dur``)."""
    names = (e for e in events if e.get("name") == "thread_name")
    mains = {(e["pid"], e["tid"]) for e in names if e["args"].get("name") == "CrRendererMain"}
    complete = [e for e in events if e.get("ph") == "X" and (e["pid"], e["tid"]) in mains]
    per_thread = Counter((e["pid"], e["tid"]) for e in complete)
    if not per_thread:
        raise ValueError("the trace has no complete events on a renderer's main thread (CrRendererMain)")
    main = per_thread.most_common(1)[0][0]
    spans: dict[str, list[tuple[float, float, float]]] = {p: [] for p in PHASES}
    ends: dict[str, float] = {}
    for e in sorted((e for e in complete if (e["pid"], e["tid"]) == main), key=lambda e: e["ts"]):
        name = e["name"]
        phase = next((p for p, names in PHASES.items() if name in names), None)
        if phase is None or e["ts"] < ends.get(name, -1):
            continue
        ends[name] = e["ts"] + e.get("dur", 0)
        spans[phase].append((e["ts"], ends[name], e.get("tdur", e.get("dur", 0)) if cpu else e.get("dur", 0)))
    got = {p: sum(took for _, _, took in spans[p]) / 1000 for p in PHASES}
    # a style, layout or paint a handler forces lies inside it: counted in its own phase, not the handler's
    forced = sum(
        took
        for phase in PHASES
        if phase != "handlers"
        for start, end, took in spans[phase]
        if any(h0 <= start and end <= h1 for h0, h1, _ in spans["handlers"])
    )
    got["handlers"] -= forced / 1000
    return got


def trace_control(
    browser,
    page,
    panel: str,
    k: int,
    control: list,
    changes: int,
    scratch: Path,
    clock: str = "shown",
    cpu: bool = False,
) -> dict:
    """``changes`` changes of ``control`` of widget output ``k`` (after two that warm up), traced: ``{"ms": [the
    clock per change], "main": {phase: ms per change}}`` (``clock``, ``cpu``: ``--clock``, ``--thread-time``)."""
    output = output_of(page, panel, k)
    times: list[float] = []
    trace = scratch / "trace.json"
    for step in range(changes + 2):
        if step == 2:
            browser.start_tracing(page=page, path=str(trace), categories=["devtools.timeline"])
        page.evaluate(ARM_JS, [panel, k, "mutations" if clock == "paint" else "auto"])
        change(page, output, *control, step)
        page.evaluate("() => window.__benchFirst")
        page.evaluate(SETTLED_JS, panel)
        got = page.evaluate("() => window.__benchFinish()")
        if step >= 2 and got["first"] is not None:
            times.append(got["first"] if clock == "paint" else got["all"])
    browser.stop_tracing()
    loaded = json.loads(trace.read_text())
    events = loaded["traceEvents"] if isinstance(loaded, dict) else loaded
    return {"ms": times, "main": {p: ms / changes for p, ms in main_thread_ms(events, cpu).items()}}


def measure(
    lessons: list[Path], changes: int, variants: dict[str, str], clock: str = "shown", cpu: bool = False
) -> list[dict]:
    """One row per lesson, explorer, control and variant (``{name: extra CSS}``, ``""``: the page as shipped)."""
    from playwright.sync_api import sync_playwright

    rows = []
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        server = start_lab_on_lessons(Path(tmp) / "lab", windowing=None)
        try:
            browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS, headless=True)
            for lesson in lessons:
                for variant, css in variants.items():
                    page, panel = open_lesson(browser, server, lesson)
                    if css:
                        page.add_style_tag(content=css)
                    for k, name in enumerate(page.evaluate(NAMES_JS, panel)):
                        if name is None:
                            continue
                        output_of(page, panel, k).scroll_into_view_if_needed()
                        for control in page.evaluate(CONTROLS_JS, [panel, k]):
                            if control[0] == "typed":
                                continue  # the kernel's: bench_browser times those
                            got = trace_control(browser, page, panel, k, control, changes, Path(tmp), clock, cpu)
                            row = {"lesson": lesson.name[:2], "explorer": name, "control": control[1]}
                            row |= {"variant": variant, "ms": results.summary(got["ms"])}
                            row["main"] = {p: round(ms, 2) for p, ms in got["main"].items()}
                            rows.append(row)
                            work = ", ".join(f"{p} {ms:.1f}" for p, ms in row["main"].items())
                            print(
                                f"{row['lesson']} {name} {control[1]} [{variant}]: {results.stats(got['ms'])} ms;"
                                f" main thread per change: {work} ms",
                                flush=True,
                            )
                    page.context.close()
                    server.shutdown_kernels()
        finally:
            server.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lessons", nargs="*", metavar="NN", default=["04"], help="the lessons numbered NN")
    parser.add_argument("--changes", type=int, default=12, help="traced changes per control")
    parser.add_argument("--clock", choices=["shown", "paint"], default="shown", help="where the clock stops")
    parser.add_argument("--thread-time", action="store_true", help="the main thread's CPU time, not wall time")
    parser.add_argument("--css", action="append", default=[], metavar="RULE", help="also time the page with RULE")
    parser.add_argument("--json", type=Path, default=results.RESULTS / "frames.json", help="where to write")
    args = parser.parse_args()
    if find_chromium() is None:
        raise SystemExit("no chromium executable: install Debian's chromium (make chromium)")
    lessons = [p for p in sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")) if p.name[:2] in args.lessons]
    variants = {SHIPPED: "", **{css: css for css in args.css}}
    rows = measure(lessons, args.changes, variants, args.clock, args.thread_time)
    written = {"changes": args.changes, "clock": args.clock, "thread_time": args.thread_time}
    results.write(args.json, written | {"phases": {p: list(n) for p, n in PHASES.items()}, "rows": rows})


if __name__ == "__main__":
    main()
