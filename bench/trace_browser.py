"""Where a live view's time goes in the browser: a Chrome trace of explorer changes, summarised.

Opens ``bench/bench_browser.py``'s notebook in JupyterLab + headless Chromium, makes 10 control
changes of each chosen row under Chromium's tracing and prints, per change, the main thread's time
in each kind of event (``Layerize``, ``Paint``, ``Layout``, script, …) and the time of frames that
change one text only, for comparison. The README's "where the time goes" cites it.

Run: ``.venv/bin/python bench/trace_browser.py [ROW …]`` with ROW a row number of bench_browser's
table (0 = the floor, 1 = the 64×64 heatmap, 2… = the explorers in order; default 0 3 5 13);
``--lesson NN`` traces lesson NN of ``notebooks/`` instead, run top to bottom (ROW: its widget
outputs in order; default: every one that shows a live view);
``--hide-views`` hides every live heatmap first (the views still update, nothing of them is
painted): what the explorer's other widgets and JupyterLab cost on their own. ``--js`` samples the
page's JavaScript instead (Chromium's CPU profiler, 20 changes per row) and prints its self time per
change: attnlib's front end (anywidget loads ``heatmap.js`` and ``relay.js`` from blob URLs) against
JupyterLab's and ipywidgets' bundles and the browser's own calls, and the costliest functions.
``--messages`` prints the timeline of a change instead (20 changes per row, medians, ms after the
event): when the page sent it, when the kernel's messages arrived (``status: busy``, the control's
``echo_update``, the relay's update or a widget's own ``update``, ``status: idle``; logged by a
wrapper around the page's kernel websocket), when the first view began to redraw and when that
frame was painted. ``--layers`` prints, per row, the page's composited layers (counted by why Chromium
made them layers, with the element) and the time of each frame's ``Layerize`` over 10 changes: the
compositing step runs over the whole page, and its cost grew with the number of layers (every
``<canvas>`` is one; attnlib's live views draw their grids in SVG, with a canvas only under a matrix
of more than 1024 cells). ``--tasks`` prints the renderer main thread's tasks during one change (the
median of 7 by time to the painted frame): when each began after the input event, how long it ran,
and what it was (the input event, a frame's rendering, a kernel message read from the websocket, a
task posted through a ``MessagePort`` such as React's scheduler, a timer), with any layout it forced.
It shows whether a change waits for the kernel or for the page's main thread.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
sys.path.insert(0, str(REPO / "bench"))
import bench_browser  # noqa: E402
from labdriver import CHROMIUM_ARGS, find_chromium, open_and_run_all, start_lab, start_lab_on_lessons  # noqa: E402

CATEGORIES = ["devtools.timeline", "disabled-by-default-devtools.timeline", "v8.execute"]
CHANGES = 10
# ten frames that each change one text: the cost of a frame with nothing of ours in it
TEXT_FRAMES_JS = """async () => {
  const d = document.body.appendChild(document.createElement('div'));
  for (let i = 0; i < 10; i++) {
    d.textContent = String(i);
    await new Promise(r => requestAnimationFrame(() => setTimeout(r, 20)));
  }
  d.remove();
}"""
RENDERING = ("UpdateLayoutTree", "Layout", "PrePaint", "Paint", "Layerize", "Commit")
PROFILED = 20  # changes per row under the JavaScript profiler (--js), and timelines (--messages)
# logs each kernel websocket message the page sends or receives: time, direction, a short kind
WEBSOCKET_LOG_JS = """
(() => {
  window.__attnMessages = [];
  const Native = window.WebSocket;
  const kindOf = (data) => {
    const text = typeof data === 'string' ? data : new TextDecoder().decode(data);
    const state = text.match(/"execution_state":\\s*"(\\w+)"/);
    if (state) return 'status: ' + state[1];
    if (text.includes('echo_update')) return 'echo_update';
    if (/"kind":\\s*"update"/.test(text)) return 'relay update';
    if (/"method":\\s*"update"/.test(text)) return 'widget update';
    const type = text.match(/"msg_type":\\s*"(\\w+)"/);
    return type ? type[1] : 'other';
  };
  window.WebSocket = function (url, protocols) {
    const ws = protocols === undefined ? new Native(url) : new Native(url, protocols);
    if (String(url).includes('/channels')) {
      ws.addEventListener('message', (e) => window.__attnMessages.push({t: performance.now(), kind: kindOf(e.data)}));
      const send = ws.send.bind(ws);
      ws.send = (data) => { window.__attnMessages.push({t: performance.now(), kind: 'sent'}); send(data); };
    }
    return ws;
  };
  window.WebSocket.prototype = Native.prototype;
  Object.assign(window.WebSocket, Native);
})();
"""
TIMELINE_JS = """() => [window.__attnT0, window.__attnMessages,
  [...document.querySelectorAll('.attn-heatmap')].map(h => Number(h.dataset.drawStart))]"""


def _warm_up(page, panel: str, k: int) -> None:
    """Scroll row ``k`` into view and make three untimed changes (steps 0–2 of ``CHANGE_JS``)."""
    bench_browser.scroll_to_output(page, panel, k)
    for step in range(3):
        page.evaluate(bench_browser.CHANGE_JS, [panel, k, step])
        page.wait_for_timeout(60)


def js_self_ms(profile: dict) -> tuple[collections.Counter, collections.Counter]:
    """Self time (ms) of a ``Profiler.stop`` profile: per origin (attnlib's front end, a page bundle,
    the browser's own calls) and per function (``name @ origin:line``); idle and GC time left out."""
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    by_origin: collections.Counter = collections.Counter()
    by_function: collections.Counter = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = nodes[sample]
        name = frame["functionName"] or "(anonymous)"
        if name in ("(idle)", "(program)", "(garbage collector)", "(root)"):
            continue
        url = frame["url"]
        if url.startswith("blob:"):  # anywidget's ES modules: heatmap.js, relay.js
            origin = "attnlib front end (heatmap.js, relay.js)"
        elif url:
            origin = "page bundle " + url.rsplit("/", 1)[-1].split("?")[0]
        else:
            origin = "browser (DOM and canvas calls)"
        by_origin[origin] += delta / 1000
        by_function[f"{name} @ {origin.split(' ')[-1] if url else 'browser'}:{frame['lineNumber']}"] += delta / 1000
    return by_origin, by_function


def profile_rows(page, panel: str, rows: list[int], names: list[str]) -> None:
    """Print the JavaScript self time per change of each row, sampled by Chromium's CPU profiler."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 100})  # µs
    for k in rows:
        _warm_up(page, panel, k)
        cdp.send("Profiler.start")
        for step in range(3, 3 + PROFILED):
            page.evaluate(bench_browser.CHANGE_JS, [panel, k, step])
            page.wait_for_timeout(60)
        by_origin, by_function = js_self_ms(cdp.send("Profiler.stop")["profile"])
        print(f"{names[k]}: JavaScript self time {sum(by_origin.values()) / PROFILED:.1f} ms per change")
        for origin, ms in by_origin.most_common(6):
            print(f"  {ms / PROFILED:5.2f}  {origin}")
        print("  costliest functions: " + ", ".join(f"{f} {ms / PROFILED:.2f}" for f, ms in by_function.most_common(8)))
    cdp.detach()


def timeline_rows(page, panel: str, rows: list[int], names: list[str]) -> None:
    """Print, per row, the median time (ms after the event) of each step of a change (``--messages``)."""
    for k in rows:
        _warm_up(page, panel, k)
        steps: dict[str, list[float]] = collections.defaultdict(list)
        for step in range(3, 3 + PROFILED):
            page.evaluate("() => { window.__attnMessages = []; }")
            got = page.evaluate(bench_browser.CHANGE_JS, [panel, k, step])  # leaves its start in __attnT0
            page.wait_for_timeout(300)  # the change's last messages
            t0, messages, starts = page.evaluate(TIMELINE_JS)
            if got.get("first") is None:
                continue
            seen = set()
            for m in messages:
                if m["t"] >= t0 and m["kind"] not in seen:  # the first of each kind after the event
                    seen.add(m["kind"])
                    steps[m["kind"]].append(m["t"] - t0)
            redraws = [s - t0 for s in starts if s >= t0]
            if redraws:
                steps["first view redraws"].append(min(redraws))
            steps["frame painted (first)"].append(got["first"])
        order = sorted(steps, key=lambda kind: statistics.median(steps[kind]))
        print(f"{names[k]}: " + ", ".join(f"{kind} {statistics.median(steps[kind]):.1f}" for kind in order))


def layer_rows(browser, page, panel: str, rows: list[int], names: list[str]) -> None:
    """Print, per row, the composited layers once it changed (by reason and element) and the ms of each
    frame's ``Layerize`` over 10 changes (``--layers``)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("LayerTree.enable")
    trees: list[list[dict]] = []
    cdp.on("LayerTree.layerTreeDidChange", lambda event: trees.append(event.get("layers") or []))
    for k in rows:
        _warm_up(page, panel, k)
        browser.start_tracing(page=page, categories=CATEGORIES)
        for step in range(3, 3 + CHANGES):
            page.evaluate(bench_browser.CHANGE_JS, [panel, k, step])
            page.wait_for_timeout(60)
        layerize = [e["dur"] / 1000 for e in main_thread_events(json.loads(browser.stop_tracing()), ("Layerize",))]
        why: collections.Counter = collections.Counter()
        for layer in trees[-1] if trees else []:
            reasons = cdp.send("LayerTree.compositingReasons", {"layerId": layer["layerId"]}).get(
                "compositingReasonIds", []
            )
            element = ""
            if layer.get("backendNodeId"):
                node = cdp.send("DOM.describeNode", {"backendNodeId": layer["backendNodeId"]})["node"]
                attributes = dict(zip(node.get("attributes", [])[::2], node.get("attributes", [])[1::2], strict=True))
                element = node["nodeName"].lower() + "".join("." + c for c in attributes.get("class", "").split()[:2])
            why[(", ".join(reasons) or "-", element)] += 1
        print(
            f"{names[k]}: {sum(why.values())} composited layers; Layerize in {len(layerize)} frames, "
            f"median {statistics.median(layerize):.1f} ms, {sum(layerize) / CHANGES:.1f} ms per change"
        )
        for (reasons, element), n in why.most_common(8):
            print(f"  {n:3d} × {element or '(no element)'}: {reasons}")
    cdp.detach()


TASK_KINDS = (  # (name of an event inside a task, what the task is), the first found names it
    ("ProxyMain::BeginMainFrame", "frame: style, layout, paint, compositing"),
    ("EventDispatch", "input event"),
    ("_onWSMessage", "kernel message (websocket)"),
    ("MessagePort::Accept", "posted task (MessagePort: React's scheduler, ...)"),
    ("TimerFire", "timer"),
)
TASK_CATEGORIES = [*CATEGORIES, "blink.user_timing", "blink", "cc", "toplevel"]  # names the tasks too


def task_rows(browser, page, panel: str, rows: list[int], names: list[str]) -> None:
    """Print, per row, the main thread's tasks of ≥ 0.3 ms during the median of 7 changes (``--tasks``)."""
    for k in rows:
        _warm_up(page, panel, k)
        browser.start_tracing(page=page, categories=TASK_CATEGORIES)
        firsts = []
        for step in range(3, 10):
            page.evaluate("() => performance.mark('attn-change')")
            firsts.append(page.evaluate(bench_browser.CHANGE_JS, [panel, k, step]).get("first"))
            page.wait_for_timeout(200)
        trace = json.loads(browser.stop_tracing())
        timed = [(t, m) for m, t in enumerate(firsts) if t is not None]
        if not timed:
            print(f"{names[k]}: no change redrew a view")
            continue
        first, median = sorted(timed)[len(timed) // 2]
        marks = sorted(e["ts"] for e in trace["traceEvents"] if e.get("name") == "attn-change")
        complete = sorted(main_thread_events(trace), key=lambda e: e["ts"])
        end = marks[median + 1] if median + 1 < len(marks) else marks[median] + 300_000
        window = [e for e in complete if marks[median] <= e["ts"] < end]
        inputs = [e for e in window if e["name"] == "EventDispatch"]
        t0 = inputs[0]["ts"] if inputs else marks[median]
        print(f"{names[k]}: the change whose frame was painted {first:.1f} ms after the event (median of {len(timed)})")
        for task in (e for e in window if e["name"] == "RunTask" and e["dur"] >= 300 and e["ts"] >= t0 - 1000):
            if task["ts"] - t0 > first * 1000 + 5000:
                break
            inside = [e for e in window if task["ts"] <= e["ts"] < task["ts"] + task["dur"]]
            found = [f"{e['name']} {(e.get('args', {}).get('data') or {}).get('functionName', '')}" for e in inside]
            kind = next((what for key, what in TASK_KINDS if any(key in f for f in found)), "other")
            forced = sum(e["dur"] for e in inside if e["name"] == "Layout") if "frame" not in kind else 0
            extra = f", forced layout {forced / 1000:.1f} ms" if forced >= 100 else ""
            print(f"  {(task['ts'] - t0) / 1000:6.1f}  {task['dur'] / 1000:5.1f} ms  {kind}{extra}")


def main_thread_events(trace: dict, names: tuple[str, ...] | None = None) -> list[dict]:
    """Each complete event (``ph: X``, its ``ts`` and ``dur`` in µs) on the renderer's main thread, in
    trace order (``names``: only those)."""
    events = trace["traceEvents"]
    main = {e["tid"] for e in events if e.get("name") == "thread_name" and e["args"].get("name") == "CrRendererMain"}
    return [
        e
        for e in events
        if e.get("ph") == "X" and e.get("tid") in main and e.get("dur") and (names is None or e["name"] in names)
    ]


def main_thread_ms(trace: dict, names: tuple[str, ...] | None = None) -> collections.Counter:
    """Total ms of each complete event on the renderer's main thread (``names``: only those)."""
    total: collections.Counter = collections.Counter()
    for e in main_thread_events(trace, names):
        total[e["name"]] += e["dur"] / 1000
    return total


def trace_rows(browser, page, panel: str, rows: list[int], names: list[str]) -> None:
    """Print, per change of each row, the main thread's time in each kind of event (Chrome tracing)."""
    browser.start_tracing(page=page, categories=CATEGORIES)
    page.evaluate(TEXT_FRAMES_JS)
    text = main_thread_ms(json.loads(browser.stop_tracing()), RENDERING)
    print(f"a frame that changes one text: {sum(text.values()) / 10:.1f} ms of rendering", end=" ")
    print("(" + ", ".join(f"{n} {ms / 10:.1f}" for n, ms in text.most_common()) + ")\n")
    for k in rows:
        _warm_up(page, panel, k)
        browser.start_tracing(page=page, categories=CATEGORIES)
        timed = []
        for step in range(3, 3 + CHANGES):
            timed.append(page.evaluate(bench_browser.CHANGE_JS, [panel, k, step]).get("first"))
            page.wait_for_timeout(60)
        total = main_thread_ms(json.loads(browser.stop_tracing()))
        ms = sorted(t for t in timed if t is not None)
        print(f"{names[k]}: change → painted median {ms[len(ms) // 2]:.0f} ms (under tracing);")
        print(
            "  main thread per change: "
            + ", ".join(f"{n} {t / CHANGES:.1f}" for n, t in total.most_common(12) if n != "RunTask")
            + f"; all tasks {total['RunTask'] / CHANGES:.1f} ms"
        )


def _lesson(parser: argparse.ArgumentParser, number: str) -> Path:
    """The lesson of ``notebooks/`` numbered ``number`` (``08``); a usage error names the numbers there are."""
    found = sorted(bench_browser.LESSONS.glob(f"{number}_*.ipynb"))
    if len(found) != 1:
        there = ", ".join(p.name[:2] for p in sorted(bench_browser.LESSONS.glob("[0-9][0-9]_*.ipynb")))
        parser.error(f"--lesson {number}: no lesson of notebooks/ has that number (there are {there})")
    return found[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", type=int)
    parser.add_argument(
        "--hide-views",
        action="store_true",
        help="hide every live heatmap (display: none): what the rest of the explorer costs without our views",
    )
    parser.add_argument("--js", action="store_true", help="sample the page's JavaScript instead of tracing")
    parser.add_argument("--messages", action="store_true", help="the timeline of a change: messages, redraw, frame")
    parser.add_argument("--layers", action="store_true", help="the composited layers and each frame's Layerize")
    parser.add_argument("--tasks", action="store_true", help="the main thread's tasks during one change")
    parser.add_argument(
        "--lesson",
        metavar="NN",
        help="in lesson NN of notebooks/ (run top to bottom) instead: ROW counts its explorers",
    )
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        print("no chromium executable: install Debian's chromium (make chromium)")
        return
    from playwright.sync_api import sync_playwright

    names = ["floor", "one heatmap 64×64"] + [f"{m}.{n}" for m, n in bench_browser.EXPLORERS]
    with tempfile.TemporaryDirectory() as tmp:
        if args.lesson:
            lesson = _lesson(parser, args.lesson)
            notebook = f"notebooks/{lesson.name}"
            server = start_lab_on_lessons(Path(tmp), windowing=None)
        else:
            root = Path(tmp) / "root"
            root.mkdir()
            notebook = "bench.ipynb"
            (root / notebook).write_text(json.dumps(bench_browser.notebook()))
            server = start_lab(root, Path(tmp) / "jupyter", windowing=None)  # JupyterLab's default, as a learner has it
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True)
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                if args.messages:
                    context.add_init_script(WEBSOCKET_LOG_JS)
                page = context.new_page()
                panel = open_and_run_all(page, server, notebook, workspace="trace")
                if args.lesson:  # the lesson's widget outputs that show a live view, named from their cell
                    shown = page.evaluate(bench_browser.NAMES_JS, panel)
                    names = [name or "(no live view)" for name in shown]
                    args.rows = args.rows or [k for k, name in enumerate(shown) if name]
                args.rows = args.rows or [0, 3, 5, 13]
                if args.hide_views:
                    page.add_style_tag(content=".attn-heatmap { display: none !important; }")
                if args.messages:
                    timeline_rows(page, panel, args.rows, names)
                elif args.layers:
                    layer_rows(browser, page, panel, args.rows, names)
                elif args.tasks:
                    task_rows(browser, page, panel, args.rows, names)
                elif args.js:
                    profile_rows(page, panel, args.rows, names)
                else:
                    trace_rows(browser, page, panel, args.rows, names)
                browser.close()
        finally:
            server.shutdown_kernels()
            server.stop()


if __name__ == "__main__":
    main()
