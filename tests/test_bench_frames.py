"""bench_frames' reading of a Chromium trace: what it sums, on which thread, and what it counts once."""

from __future__ import annotations

import pytest

from bench.bench_frames import PHASES, main_thread_ms


def _thread(pid: int, tid: int, name: str) -> dict:
    return {"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": {"name": name}}


def _event(name: str, ts: float, dur: float, pid: int = 1, tid: int = 10) -> dict:
    return {"ph": "X", "name": name, "ts": ts, "dur": dur, "pid": pid, "tid": tid}


def test_the_phases_of_the_renderers_main_thread_are_summed_in_milliseconds() -> None:
    events = [
        _thread(1, 10, "CrRendererMain"),
        _thread(1, 11, "Compositor"),
        _event("EventDispatch", 0, 2000),
        _event("EventDispatch", 500, 1000),  # inside the one before: part of it
        _event("EventDispatch", 5000, 500),
        _event("Layout", 5100, 200),  # forced by that handler: layout's time, not the handler's
        _event("UpdateLayoutTree", 3000, 1500),
        _event("Layout", 4500, 250),
        _event("PrePaint", 6000, 100),
        _event("Paint", 6100, 400),
        _event("Paint", 6200, 100),  # a nested paint
        _event("Layerize", 7000, 300),
        _event("Paint", 0, 9000, tid=11),  # another thread's
        _event("FunctionCall", 0, 3000),  # no phase of its own
    ]
    got = main_thread_ms(events)
    assert set(got) == set(PHASES)
    assert got == pytest.approx({"handlers": 2.3, "style": 1.5, "layout": 0.45, "paint": 0.5, "layerize": 0.3})


def test_the_busiest_renderer_is_the_page() -> None:
    """Two renderers (another page's, an extension's): the page is the main thread with the most events."""
    events = [_thread(1, 10, "CrRendererMain"), _thread(2, 20, "CrRendererMain"), _event("Layout", 0, 1000)]
    events += [_event("Layout", 10 * k, 2000, pid=2, tid=20) for k in range(0, 3000, 1000)]
    assert main_thread_ms(events)["layout"] == pytest.approx(6.0)


def test_a_trace_without_a_renderer_says_so() -> None:
    with pytest.raises(ValueError, match="CrRendererMain"):
        main_thread_ms([_thread(1, 11, "Compositor"), _event("Paint", 0, 10, tid=11)])
