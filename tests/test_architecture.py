"""The rooms of attnlib and the one rule between them (docs/architecture.md).

- the maths core imports only the standard library and torch (tqdm for the progress bar of a long loop);
- ``attnlib.show`` (drawing, live views) may import the core, never ``attnlib.lessons``;
- ``attnlib.lessons`` (each lesson's explorers and checkers) may import both;
- nothing in attnlib imports the tests or the tools (scripts/, site/, bench/).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "attnlib"
STDLIB = set(sys.stdlib_module_names)


#: modules inside the package that are tools, not maths: ``attnlib-lessons`` (standard library only)
TOOLS = {"launch.py"}


def room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if len(parts) == 1 and path.name in TOOLS:
        return "tool"
    return parts[0] if len(parts) > 1 else "core"


def imports(path: Path) -> set[str]:
    """Absolute names of every module ``path`` imports (relative imports resolved)."""
    package = ["attnlib", *path.relative_to(PACKAGE).parent.parts]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            found.add(module)
            if not node.module:  # from . import examples
                found |= {f"{module}.{alias.name}" for alias in node.names}
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py"))
CORE = [p for p in MODULES if room(p) == "core"]


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.name)
def test_the_core_imports_only_torch(path: Path) -> None:
    outside = {m for m in imports(path) if m.split(".")[0] not in STDLIB | {"torch", "tqdm", "attnlib"}} | {
        m for m in imports(path) if m.startswith(("attnlib.show", "attnlib.lessons"))
    }
    assert not outside, f"{path.name} is in the maths core but imports {sorted(outside)}"


@pytest.mark.parametrize("path", [p for p in MODULES if room(p) == "show"], ids=lambda p: p.name)
def test_drawing_never_imports_the_lessons(path: Path) -> None:
    assert not {m for m in imports(path) if m.startswith("attnlib.lessons")}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nothing_imports_tests_or_tools(path: Path) -> None:
    tools = {m for m in imports(path) if m.split(".")[0] in {"tests", "scripts", "site", "bench", "conftest"}}
    assert not tools


def test_the_lessons_launcher_needs_neither_torch_nor_attnlib() -> None:
    code = "import sys, attnlib.launch; print(sorted(m for m in ('torch', 'attnlib.steps') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", f"attnlib-lessons loads {loaded.strip()} before it starts"


def test_import_attnlib_loads_no_plotting_or_widgets() -> None:
    code = (
        "import sys, attnlib, attnlib.steps, attnlib.transformer, attnlib.pretrained, attnlib.kv_cache;"
        "print(sorted(m for m in ('matplotlib', 'seaborn', 'ipywidgets', 'anywidget', 'numpy.typing') "
        "if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", f"import attnlib loaded {loaded.strip()}"


# private names of ipywidgets, anywidget, traitlets and jupyter that attnlib must not touch (public APIs only)
PRIVATE = re.compile(
    r"\b_holding_sync\b|\b_states_to_send\b|\b_property_lock\b|\b_remove_buffers\b|\b_put_buffers\b"
    r"|\b_deserialize_state\b|\b_handle_custom_msg\b|\b_send\b|\b_trait_values\b|\b_trait_notifiers\b"
    r"|\b_cross_validation_lock\b|\b_comm_changed\b|\b_lock_property\b|\b_should_send_property\b"
    r"|\b_anywidget_\w+|\bipywidgets\.widgets\.widget\b|\bjupyter_\w+\.\w*\._|\btraitlets\.\w*\._"
    r"|\bstate_change\b|\bset_state\b|\bwidget_manager\b"
)


@pytest.mark.parametrize(
    "path", sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_attnlib_uses_no_private_widget_or_jupyter_internals(path: Path) -> None:
    found = sorted({m.group(0) for m in PRIVATE.finditer(path.read_text())})
    assert not found, f"{path.relative_to(PACKAGE.parent)} uses private internals {found}: use the public API"
