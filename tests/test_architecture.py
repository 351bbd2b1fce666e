"""The rooms of attnlib and the one rule between them (docs/architecture.md).

- the maths core imports only the standard library and torch (tqdm for the progress bar of a long loop);
- ``attnlib.show`` (drawing, live views) may import the core, never ``attnlib.lessons``;
- ``attnlib.lessons`` (each lesson's explorers and checkers) may import both;
- nothing in attnlib imports the tests or the tools (scripts/, site/, bench/, harness/, deploy/);
- each room's third-party imports are exactly those docs/architecture.md's table lists for it, and every
  package attnlib depends on (pyproject.toml: the core's dependencies and the ``show`` extra) is imported.
- tests/ mirrors the rooms: tests/show/ and tests/lessons/ hold test_<module>.py files named after their room's
  modules, every lesson's module has its own, and no two test files share a name.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "attnlib"
STDLIB = set(sys.stdlib_module_names)


def room(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
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
    tools = {
        m
        for m in imports(path)
        if m.split(".")[0] in {"tests", "scripts", "site", "bench", "conftest", "harness", "deploy"}
    }
    assert not tools


TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize("folder", ["show", "lessons"])
def test_tests_of_a_room_are_named_after_its_modules(folder: str) -> None:
    modules = {p.stem.lstrip("_") for p in (PACKAGE / folder).glob("*.py")}
    strays = sorted(p.name for p in (TESTS / folder).glob("test_*.py") if p.stem.removeprefix("test_") not in modules)
    assert not strays, f"tests/{folder}/ names no module of attnlib/{folder}/: {strays} (docs/architecture.md)"


def test_every_lesson_module_has_its_test_file() -> None:
    lessons = {p.stem for p in (PACKAGE / "lessons").glob("l[0-9][0-9]_*.py")}
    missing = sorted(
        f"tests/lessons/test_{name}.py" for name in lessons if not (TESTS / "lessons" / f"test_{name}.py").exists()
    )
    assert len(lessons) >= 17 and not missing, missing


def test_no_two_test_files_share_a_name() -> None:
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert len(names) > 40 and len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def third_party(paths: list[Path]) -> set[str]:
    return {m.split(".")[0] for p in paths for m in imports(p)} - STDLIB - {"attnlib"}


def documented_imports() -> dict[str, set[str]]:
    """docs/architecture.md's table: room → the third-party packages (in backticks) it may import."""
    rows = {}
    for line in (REPO / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith(("maths core", "`attnlib/show/`", "`attnlib/lessons/`")):
            name = "core" if cells[0].startswith("maths core") else cells[0].strip("`").split("/")[1]
            rows[name] = set(re.findall(r"`([A-Za-z_]\w*)`", cells[1])) - {"show"}
    return rows


@pytest.mark.parametrize("name", ["core", "show", "lessons"])
def test_each_room_imports_what_the_architecture_page_lists(name: str) -> None:
    listed = documented_imports()[name]
    used = third_party([p for p in MODULES if room(p) == name])
    assert used == listed, f"attnlib/{name}: imports {sorted(used)}, docs/architecture.md lists {sorted(listed)}"


def test_every_dependency_of_attnlib_is_imported() -> None:
    """The core's dependencies and the ``show`` extra are exactly what attnlib imports outside the lessons; the
    lessons may also import what the ``lessons`` extra adds (which also holds what runs them: JupyterLab)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def names(lines: list[str]) -> set[str]:
        return {re.split(r"[<>=!~ \[;]", line, maxsplit=1)[0].lower() for line in lines} - {project["name"]}

    library = names([*project["dependencies"], *project["optional-dependencies"]["show"]])
    lessons = names(project["optional-dependencies"]["lessons"])
    outside = {m.lower() for m in third_party([p for p in MODULES if room(p) != "lessons"])}
    inside = {m.lower() for m in third_party([p for p in MODULES if room(p) == "lessons"])}
    assert library == outside | (inside & library), "pyproject.toml lists what attnlib does not import, or misses it"
    assert inside <= library | lessons, f"the lessons import {sorted(inside - library - lessons)}, declared nowhere"


def test_import_attnlib_gives_the_maths_and_loads_torch() -> None:
    code = "import sys, attnlib; print('torch' in sys.modules, callable(attnlib.attention))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.split() == ["True", "True"]


def test_the_lessons_launcher_needs_neither_torch_nor_attnlib() -> None:
    code = "import sys, attnlib_lessons; print(sorted(m for m in ('torch', 'attnlib') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", f"attnlib-lessons loads {loaded.strip()} before it starts"


def test_import_attnlib_loads_no_plotting_and_a_lesson_no_seaborn() -> None:
    """One process, three stages: ``import attnlib`` (the core) loads no plotting or widgets; what every lesson's
    first cell imports (show, plots, the lessons' modules), and a heatmap drawn as every explorer's PNG fallback is,
    leave seaborn, and the pandas and pyplot it brings, to the first curve drawn: a kernel or a test that draws no
    curve does not pay them."""
    probe = "print(sorted(m for m in {} if m in sys.modules));"
    code = (
        "import sys, attnlib, attnlib.steps, attnlib.transformer, attnlib.pretrained, attnlib.kv_cache;"
        + probe.format("('matplotlib', 'seaborn', 'ipywidgets', 'anywidget', 'numpy.typing')")
        + "import attnlib.show, attnlib.show.plots, attnlib.show.style, attnlib.lessons.pipeline;"
        + "attnlib.lessons.lessons();"  # imports every lesson's module
        + probe.format("('seaborn', 'pandas', 'matplotlib.pyplot')")
        + "attnlib.show.plots.heatmap_png([{'matrix': [[0.5, -1.0], [float('nan'), 2.0]]}]);"
        + probe.format("('seaborn', 'pandas', 'matplotlib.pyplot')")
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    core, first_cell, drawn = loaded.splitlines()
    assert core == "[]", f"import attnlib loaded {core}"
    assert first_cell == "[]", f"a lesson's first cell loaded {first_cell} before drawing anything"
    assert drawn == "[]", f"drawing a heatmap loaded {drawn}"


# private names of ipywidgets, anywidget, traitlets and jupyter that attnlib must not touch (public APIs only);
# of a front end's widget manager, anywidget's types declare only get_model public
PRIVATE = re.compile(
    r"\b_holding_sync\b|\b_states_to_send\b|\b_property_lock\b|\b_remove_buffers\b|\b_put_buffers\b"
    r"|\b_deserialize_state\b|\b_handle_custom_msg\b|\b_send\b|\b_trait_values\b|\b_trait_notifiers\b"
    r"|\b_cross_validation_lock\b|\b_comm_changed\b|\b_lock_property\b|\b_should_send_property\b"
    r"|\b_anywidget_\w+|\bipywidgets\.widgets\.widget\b|\bjupyter_\w+\.\w*\._|\btraitlets\.\w*\._"
    r"|\bstate_change\b|\bset_state\b|\bwidget_manager\b(?!\.get_model\()"
)


@pytest.mark.parametrize(
    "path", sorted([*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]), ids=lambda p: str(p.relative_to(PACKAGE))
)
def test_attnlib_uses_no_private_widget_or_jupyter_internals(path: Path) -> None:
    found = sorted({m.group(0) for m in PRIVATE.finditer(path.read_text())})
    assert not found, f"{path.relative_to(PACKAGE.parent)} uses private internals {found}: use the public API"


# private attributes of torch's objects (nn.MultiheadAttention's _qkv_same_embed_dim, a module's _parameters …)
# and private torch modules (torch._C …): attnlib reads torch through its public API only
def torch_private_names() -> set[str]:
    """Names with one leading underscore on the torch objects attnlib handles."""
    import torch
    from torch import nn

    parameter = nn.Parameter(torch.zeros(1))
    objects = [
        torch.zeros(1),
        parameter,
        torch.Generator(),
        nn.Module(),
        nn.MultiheadAttention(4, 2),
        nn.MultiheadAttention(4, 2, kdim=2),
        nn.Linear(2, 2),
        nn.LayerNorm(2),
        nn.Embedding(2, 2),
        nn.Sequential(),
        nn.ModuleList(),
        torch.optim.AdamW([parameter]),
    ]
    return {n for o in objects for n in dir(o) if n.startswith("_") and not n.startswith("__")}


def own_private_names() -> set[str]:
    """Private names attnlib defines itself (functions, classes, attributes it assigns)."""
    own = set()
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                own.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                own.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
    return {n for n in own if n.startswith("_")}


def torch_private_uses(source: str, private: set[str]) -> set[str]:
    """``private`` attribute names read in ``source``, and private torch modules it names or imports."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if node.attr in private or (isinstance(root, ast.Name) and root.id in {"torch", "nn", "F"}):
                found.add(node.attr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
            if any(m.split(".")[0] == "torch" for m in modules):
                found |= {p for m in modules for p in m.split(".") if p.startswith("_")}
                found |= {n for n in names if n.startswith("_") and not n.startswith("__")}
    return found


@functools.cache
def torch_private() -> set[str]:
    """torch's private names that attnlib does not define itself (computed when a test asks, not at collection)."""
    return torch_private_names() - own_private_names()


def test_the_torch_private_check_can_fail() -> None:
    assert "_qkv_same_embed_dim" in torch_private()
    source = "if m._qkv_same_embed_dim: x = torch._C._get_tracing_state()\nfrom torch.nn.modules._x import y\n"
    assert torch_private_uses(source, torch_private()) == {"_qkv_same_embed_dim", "_C", "_get_tracing_state", "_x"}
    assert torch_private_uses("self._own_helper(); m.in_proj_weight", torch_private()) == set()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_attnlib_uses_no_private_torch_attributes(path: Path) -> None:
    found = sorted(torch_private_uses(path.read_text(), torch_private()))
    assert not found, f"{path.relative_to(PACKAGE.parent)} reads torch's private {found}: use the public API"


def test_the_slow_first_order_names_modules_that_exist() -> None:
    """tests/conftest.py's SLOW_FIRST orders make test's longest modules; a renamed module would drop out of
    it silently and could start last."""
    from harness.labdriver import load_module

    slow_first = load_module(REPO / "tests" / "conftest.py").SLOW_FIRST
    missing = [path for path in slow_first if not (REPO / path).is_file()]
    assert not missing, f"SLOW_FIRST names modules that do not exist: {missing}"
    assert len(set(slow_first)) == len(slow_first)


# ------------------------------------------------------------------------------------ no import circles
def module_path(name: str) -> Path | None:
    """The file of attnlib module ``name`` (a package: its ``__init__.py``), or None outside attnlib."""
    if name != "attnlib" and not name.startswith("attnlib."):
        return None
    base = PACKAGE.parent.joinpath(*name.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.exists():
            return path
    return None


def attnlib_imports(path: Path) -> set[Path]:
    """The attnlib files ``path`` imports, anywhere in it (at run time, in a function, under TYPE_CHECKING):
    ``from . import ui`` is ui.py, not the package's ``__init__.py``."""
    package = ["attnlib", *path.relative_to(PACKAGE).parent.parts]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                names.add(f"{module}.{alias.name}" if module_path(f"{module}.{alias.name}") else module)
    return {p for p in map(module_path, names) if p is not None and p != path}


def circles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Every import circle of ``graph`` found by a depth-first walk (one per back edge)."""
    found: list[list[Path]] = []
    state: dict[Path, int] = {}  # 1: on the walk's path, 2: done
    path: list[Path] = []

    def walk(node: Path) -> None:
        state[node] = 1
        path.append(node)
        for other in sorted(graph.get(node, ())):
            if state.get(other) == 1:
                found.append([*path[path.index(other) :], other])
            elif other not in state:
                walk(other)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    return found


IMPORTS = {path: attnlib_imports(path) for path in MODULES}


def test_the_circle_finder_can_fail() -> None:
    a, b, c = (PACKAGE / n for n in ("a.py", "b.py", "c.py"))
    assert circles({a: {b}, b: {c}, c: {a}}) == [[a, b, c, a]]
    assert circles({a: {b, c}, b: {c}, c: set()}) == []


def test_no_module_of_attnlib_imports_itself_back() -> None:
    """No import circle, not even one only for the type checker or inside a function (docs/architecture.md)."""
    found = [" -> ".join(str(p.relative_to(PACKAGE)) for p in circle) for circle in circles(IMPORTS)]
    assert not found, f"import circles: {found}"


# ------------------------------------------------------------------------------------ the life of a change
ARCHITECTURE = (REPO / "docs" / "architecture.md").read_text()
SHOW = PACKAGE / "show"


def figures() -> tuple[str, str]:
    """docs/architecture.md's two figures of the live views: the life of a change, who imports whom in show/."""
    section = ARCHITECTURE.split("## The life of a change", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2, "the section has the life of a change and the imports of show/, one figure each"
    return blocks[0], blocks[1]


def defined(name: str, source: str) -> bool:
    """Whether ``source`` (Python or JS) defines ``name``: a function, a method, a const, an object's member."""
    return bool(
        re.search(
            rf"(\bdef |\bfunction |\bconst ){name}\b|\b{name}: [(\w]|^\s*(async )?{name}\([^)]*\) \{{", source, re.M
        )
    )


def test_the_life_of_a_change_names_what_the_code_defines() -> None:
    source = "\n".join(p.read_text() for p in [*SHOW.glob("*.py"), *SHOW.glob("static/*.js")])
    names = set(re.findall(r"(\w+)\(\)", figures()[0]))
    assert {"changed", "adopt_drawn", "refresh", "chunk_message", "fetch"} <= names  # the figure's route
    missing = sorted(n for n in names if not defined(n, source))
    assert not missing, f"docs/architecture.md's life of a change names what attnlib/show does not define: {missing}"
    assert not defined("ensure_fresh", source)  # (the check can fail: a name the code no longer has)


def drawn_imports() -> set[tuple[str, str]]:
    arrows = set()
    for line in figures()[1].strip().splitlines():
        left, right = line.split(" -> ")
        arrows |= {(left.strip(), r.strip()) for r in right.split(",")}
    return arrows


def test_the_arrows_of_show_are_its_imports() -> None:
    python = {
        (p.name, q.name)
        for p, targets in IMPORTS.items()
        if p.parent == SHOW and p.name != "__init__.py"
        for q in targets
        if q.parent == SHOW
    }
    js = {
        (p.name, target)
        for p in SHOW.glob("static/*.js")
        for target in re.findall(r'from "\./([\w.]+)"', p.read_text())
    }
    assert drawn_imports() == python | js, "docs/architecture.md: who imports whom in show/ is not the code's"
