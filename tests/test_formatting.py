"""attnlib.formatting: the one number formatter of heatmap labels, in its two styles."""

from __future__ import annotations

import pytest

from attnlib.formatting import annotation


@pytest.mark.parametrize(
    "value, decimals, plots, diagrams",
    [
        (0.5, 2, "0.50", "0.50"),
        (2.0, 2, "2.00", "2"),
        (-3.0, 0, "-3", "-3"),
        (0.0, 2, "0", "0"),
        (-0.0, 2, "0", "0"),
        (-1e-9, 2, "-1.0e-09", "-0.00"),
        (1e-5, 2, "1.0e-05", "0.00"),
        (123456.0, 1, "1.2e+05", "123456"),
        (2_000_000.0, 0, "2.0e+06", "2000000"),
        (0.125, 1, "0.1", "0.1"),
    ],
)
def test_annotation_plots_and_step_diagrams(value: float, decimals: int, plots: str, diagrams: str) -> None:
    # the plots and live views: scientific for tiny or huge values; the step diagrams: whole numbers
    # without decimals, everything else rounded to ``decimals``
    assert annotation(value, decimals) == plots
    assert annotation(value, decimals, whole=True, scientific=False) == diagrams
