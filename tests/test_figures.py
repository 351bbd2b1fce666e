"""The committed diagrams in images/ are exactly what scripts/figures.py draws now."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import torch
from PIL import Image

from attnlib import examples, steps
from attnlib.show import style
from scripts import figures

IMAGES = Path(__file__).resolve().parents[1] / "images"
STATIC = [
    "step1_inputs.png",
    "step2_weights.png",
    "step3_qkv.png",
    "step4_scores.png",
    "step5_softmax.png",
    "step6_weighting.png",
    "step7_summing.png",
    "step8_scaling.png",
]
ANIMATED = ["step3_qkv.gif", "step4_scores.gif", "step5_softmax.gif", "step6_weighting.gif", "step7_summing.gif"]
FIX = "regenerate with `make figures` (or `.venv/bin/python scripts/figures.py`) and commit images/"


def test_the_fixed_file_names_are_drawn() -> None:
    assert list(figures.FIGURES) == STATIC
    assert list(figures.ANIMATIONS) == ANIMATED


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("images")
    figures.render_all(out)
    return out


@pytest.mark.parametrize("name", STATIC + ANIMATED)
def test_committed_image_matches_the_code(name: str, fresh: Path) -> None:
    committed = IMAGES / name
    assert committed.is_file(), f"images/{name} is missing: {FIX}"
    assert committed.read_bytes() == (fresh / name).read_bytes(), (
        f"images/{name} differs from what scripts/figures.py draws now: {FIX}"
    )


@pytest.mark.parametrize("name", STATIC + ANIMATED)
def test_images_are_small(name: str) -> None:
    assert (IMAGES / name).stat().st_size < 300 * 1024, f"images/{name} is over 300 KB"


@pytest.mark.parametrize("name", ["step4_scores.png", "step4_scores.gif"])
def test_drawing_is_byte_deterministic(name: str) -> None:
    assert figures.render(name) == figures.render(name)


def test_drawing_ignores_the_projector_style() -> None:
    laptop = figures.render("step5_softmax.png")
    try:
        style.use("projector")
        projector = figures.render("step5_softmax.png")
    finally:
        style.use("laptop")
    assert projector == laptop


def test_png_carries_no_software_metadata() -> None:
    image = Image.open(io.BytesIO(figures.render("step1_inputs.png")))
    assert "Software" not in image.info


@pytest.mark.parametrize("name", ANIMATED)
def test_gifs_are_animated_and_loop(name: str) -> None:
    image = Image.open(IMAGES / name)
    assert image.n_frames >= 3
    assert image.info.get("loop") == 0


def test_animation_walks_the_rows_of_document_001() -> None:
    # step 3 goes input by input: at least one frame per input row of 001's example
    n_inputs = examples.three_inputs.inputs.shape[0]
    assert len(figures.ANIMATIONS["step3_qkv.gif"]()) >= n_inputs


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="step9"):
        figures.render("step9_nothing.png")


def test_check_reports_a_stale_image(tmp_path: Path) -> None:
    figures.render_all(tmp_path, ["step1_inputs.png"])
    (tmp_path / "step2_weights.png").write_bytes(b"not a png")
    out_of_date = figures.stale(tmp_path)
    assert "step1_inputs.png" not in out_of_date
    assert "step2_weights.png" in out_of_date
    assert "step3_qkv.gif" in out_of_date  # missing


def test_example_numbers_are_attnlib_s() -> None:
    # the diagrams are drawn from this computation (document 001: outputs ≈ [2, 7, 1.5] for input 1)
    ex = examples.three_inputs
    queries, keys, values = steps.derive_qkv(ex.inputs, *ex.projections)
    weights = steps.softmax(steps.score(queries, keys))
    context = weights @ values
    torch.testing.assert_close(context[0], torch.tensor([1.9366, 6.6831, 1.5951]), atol=1e-4, rtol=0)


def test_every_image_a_lesson_embeds_is_drawn() -> None:
    embedded = set()
    for lesson in sorted((IMAGES.parent / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        embedded |= {(lesson.name, m) for m in re.findall(r"\.\./images/([\w.-]+)", lesson.read_text(encoding="utf-8"))}
    missing = sorted((lesson, name) for lesson, name in embedded if name not in STATIC + ANIMATED)
    assert not missing, f"lessons embed images scripts/figures.py does not draw: {missing}"
