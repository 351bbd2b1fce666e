"""attnlib.show.ui: the explorers' controls and boxes behave as the ipywidgets they replace (values checked
against the options, clamped to the limits) and describe themselves for the page, with no comm."""

from __future__ import annotations

import json

import pytest
import traitlets

from attnlib.show import ui
from attnlib.show.explorer import choices


def test_a_menu_holds_values_or_label_value_pairs_and_refuses_others() -> None:
    menu = ui.Dropdown(options=[("the", 0), ("cat", 1)], value=1, description="query")
    assert (menu.value, menu.index, menu.label) == (1, 1, "cat")
    assert menu.values() == [0, 1] and menu.labels() == ["the", "cat"]
    with pytest.raises(traitlets.TraitError, match="query: 5 is not one of"):
        menu.value = 5
    plain = ui.ToggleButtons(options=["a", "b"])
    assert plain.value == "a" and choices(plain) == ["a", "b"]


def test_new_options_without_the_value_move_it_to_the_first() -> None:
    menu = ui.Dropdown(options=[("x", 0), ("y", 1), ("z", 2)], value=2)
    menu.options = [("x", 0), ("y", 1)]
    assert menu.value == 0
    menu.options = [("p", 0), ("q", 1)]
    assert menu.value == 0 and menu.label == "p"  # kept when it is still an option


def test_sliders_clamp_their_value_to_their_limits_as_ipywidgets_does() -> None:
    slider = ui.IntSlider(value=7, min=1, max=8)
    slider.max = 4
    assert slider.value == 4
    slider.value = -3
    assert slider.value == 1
    log = ui.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.5)
    assert log.steps() == [0.1, 10**-0.5, 1.0, 10**0.5, 10.0] == choices(log)
    log.value = 1e6
    assert log.value == 10.0


def test_every_part_describes_itself_as_json_for_the_page() -> None:
    text = ui.Textarea(value="1 2", description="scores", layout=ui.Layout(width="320px", height="90px"))
    box = ui.HBox([ui.Checkbox(value=True, description="causal"), ui.HTML("<b>hi</b>")])
    described = text.describe()
    assert described["kind"] == "textarea" and described["label"] == "scores" and described["value"] == "1 2"
    assert described["css"] == {"width": "320px", "height": "90px"}
    assert box.describe()["kind"] == "hbox" and len(box.children) == 2
    log = ui.FloatLogSlider(value=1.0, min=-1, max=1, step=1, readout_format=".2f").describe()
    assert log["steps"] == [0.1, 1.0, 10.0] and log["format"] == ".2f"
    json.dumps([text.describe(), box.describe(), log, ui.Dropdown(options=[("a", 1)]).describe()])


def test_visibility_rules_travel_with_the_layout() -> None:
    layout = ui.Layout(grid_template_columns="repeat(2, max-content)", visible_if={"head": ["all"]})
    assert layout.describe() == {
        "css": {"grid-template-columns": "repeat(2, max-content)"},
        "visible_if": {"head": ["all"]},
    }
    layout.display = "none"  # what Python code reads and sets, as with ipywidgets
    assert layout.describe()["css"]["display"] == "none"


def test_a_control_is_no_widget() -> None:
    control = ui.IntSlider(value=1, min=0, max=3)
    assert not hasattr(control, "comm") and not hasattr(control, "model_id")
    seen = []
    control.observe(lambda change: seen.append(change["new"]), names="value")
    control.value = 2
    assert seen == [2]
