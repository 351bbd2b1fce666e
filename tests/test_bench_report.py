"""The figures in the docs are the ones the benchmarks wrote: every table ``bench.report`` renders from
``bench/results/*.json`` reads the same in its page (run ``python -m bench.report`` after ``make bench``)."""

from __future__ import annotations

import json

import pytest

from bench import report, results


@pytest.mark.parametrize("name", sorted(report.TABLES))
def test_the_page_shows_what_the_benchmark_wrote(name: str) -> None:
    render, page = report.TABLES[name]
    recorded = results.RESULTS / f"{name}.json"
    assert recorded.exists(), f"{recorded.name} is missing: run its benchmark (make bench or make bench-ops)"
    text = page.read_text()
    start, end = report.span(text, name)
    assert text[start:end] == render(json.loads(recorded.read_text())), "run python -m bench.report"


def test_every_result_says_what_it_measured_on() -> None:
    line = results.measured_on({"date": "2026-11-28", "commit": "abc1234", "machine": "x86_64, 2 cores", "load": "0.5"})
    assert line == "2026-11-28, commit `abc1234`, x86_64, 2 cores, load 0.5"
    assert "commit not recorded" in results.measured_on({"date": "2026-11-20", "machine": "x86_64, 2 cores"})
    timed = results.measured_on(
        {"date": "2026-12-03", "commit": "abc1234", "machine": "x86_64, 2 cores", "reference_s": 0.3}
    )
    assert timed == "2026-12-03, commit `abc1234`, x86_64, 2 cores (reference 0.30 s)"
    fresh = results.provenance()
    assert fresh["commit"] and fresh["machine"].count(",") == 2 and fresh["load"]
    assert 0 < fresh["reference_s"] < 60, fresh["reference_s"]


def test_a_make_test_run_says_the_machines_speed_before_and_after() -> None:
    run = {
        "date": "2026-12-03",
        "commit": "abc1234",
        "machine": "x86_64, 2 cores",
        "load": "3.8",
        "passed": True,
        "outcome": "5 passed",
        "total_s": 1054,
        "pytest_s": 947.6,
        "goal_s": 600,
        "reference_s": 0.35,
        "cpu_busy": 0.94,
    }
    before = report.make_test(run)
    assert "(reference 0.35 s)" in before and "after the run" not in before
    after = report.make_test({**run, "reference_after_s": 0.3})
    assert "reference 0.30 s just after the run" in after and "17.6 min" in after and "not met" in after


def test_a_pages_floor_is_a_reference_row_not_a_goal() -> None:
    figure = {"median": 14.0, "p90": 30.0, "n": 6}
    run = {
        "date": "2026-12-03",
        "commit": "abc1234",
        "machine": "x86_64, 2 cores",
        "load": "1.0",
        "goal": [16, 25],
        "changes": 6,
        "pages": 2,
        "blocked": [],
        "errors": [],
        "all": figure,
        "rows": {
            "07 page alone": {"site file": {**figure, "median": 30.0}},
            "07 SummingExplorer query": {"site file": figure},
        },
    }
    lines = report.static(run).splitlines()
    floor = next(line for line in lines if "page alone" in line)
    query = next(line for line in lines if "SummingExplorer query" in line)
    assert "07 page alone (reference)" in floor and "30 / 30" in floor and floor.rstrip(" |").endswith("-")
    assert "14 / 30" in query and "not met" in query  # the p90 (30 ms) is over the goal's 25


@pytest.mark.parametrize("recorded", sorted(results.RESULTS.glob("*.json")), ids=lambda p: p.stem)
def test_every_result_file_records_its_commit_machine_and_load(recorded) -> None:
    """A figure without the commit it measured and the load it ran under cannot be compared (issue #38): every
    benchmark writes through results.write, which records them."""
    data = json.loads(recorded.read_text())
    assert {"date", "commit", "machine", "load"} <= set(data), f"{recorded.name}: run its benchmark again"
    assert len(data["commit"].rstrip("+")) >= 7 and data["machine"].count(",") == 2, (data["commit"], data["machine"])
    assert float(data["load"]) >= 0


def test_every_table_has_its_place() -> None:
    for name, (_, page) in report.TABLES.items():
        assert f"<!-- table: {name} -->" in page.read_text(), f"{page.name} has no place for the {name} table"


def test_the_kernel_benchmark_can_build_every_explorer() -> None:
    """Each explorer is built by a factory of ``bench_widgets`` or with its defaults (a new lesson's
    explorer with required arguments needs a factory, or ``make bench`` stops at it)."""
    import inspect

    from bench import bench_widgets

    for cls in bench_widgets.explorers():
        required = [
            name
            for name, parameter in inspect.signature(cls).parameters.items()
            if parameter.default is inspect.Parameter.empty
            and parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
        ]
        assert cls.__name__ in bench_widgets.FACTORIES or not required, (
            f"{cls.__name__} needs {required}: add a factory"
        )
