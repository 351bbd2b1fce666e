"""Build the series' static site (``make site``): one page per lesson, from the stored outputs.

Usage: python site/build.py [--out build/site] [--src build/site-src]

1. Prepares a Sphinx source folder (``--src``, rebuilt every time) laid out like the repository,
   so every relative link of the lessons and the README works unchanged:
   ``index.md`` (README.md, the lesson index, plus site/index.md's toctree), ``notebooks/NN_*.ipynb``
   (the learner edition of every lesson matching the glob, teacher notes out, executed here with its
   widget state by scripts/widget_state.py, so the explorers are live in the page with no kernel),
   ``images/``, ``docs/teaching-guide.md``, ``docs/documents.md``, ``CONTRIBUTING.md``, ``LICENSE``.
2. Copies the widget front end (require.js, html-manager's ``embed-amd.js``, anywidget's AMD module
   from the installed wheel) from node_modules/ (``npm ci``, package.json) and the Python package into
   ``_static/_vendor``.
3. Runs Sphinx (site/conf.py: myst-nb with execution off, Furo), typesets every page's math once
   (site/typeset.mjs: MathJax 3 in Node, so the pages load no MathJax, only the web fonts their
   formulas use, from ``_static/math-fonts``; a formula it cannot parse fails the build, naming the
   page and the TeX), and fails if a page still refers to a remote script, stylesheet, image or font.
4. Puts each lesson's learner edition beside its page (``notebooks/NN_name.ipynb``, the page's
   "Download this notebook" link) and the chunk files of the explorers' tables that the pages load
   when a state needs one (``notebooks/attnlib-chunks/``, written by the lessons' kernels:
   scripts/widget_state.py), and writes ``_static/page-text.js``: the main text of every page,
   which the search page reads instead of fetching the pages (a browser refuses ``fetch`` on
   ``file://``, so results opened from disk had no excerpts).

``--binder-ref`` (or BINDER_REF): the branch, tag or commit the launch links open (default HEAD);
a teacher pins a class to a tag with ``make site BINDER_REF=v1.0``.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import importlib.util
import io
import json
import os
import re
import shutil
import sys
import time
import tomllib
from pathlib import Path

import nbformat

SITE = Path(__file__).resolve().parent
REPO = SITE.parent
LESSONS = "[0-9][0-9]_*.ipynb"
# the web fonts of the typeset math, in _static (site/typeset.mjs copies them from node_modules/mathjax-full)
MATH_FONTS = "math-fonts"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# a badge image from the web, [![alt](https://…)](link): the site keeps the link, drops the image
REMOTE_BADGE = re.compile(r"\[!\[([^\]]*)\]\(https?://[^)]*\)\]\(([^)]*)\)")
# a script, stylesheet, image or font loaded from the web
# the widget front end every page with widget state loads, in this order (site/conf.py's nb_ipywidgets_js):
# name in _static/_vendor -> file in node_modules; anywidget-paths.js (scripts/widget_state.py) goes after
# require.js and points requirejs at anywidget.js, the installed wheel's front end
WIDGET_JS = (
    ("require.js", "requirejs/require.js"),
    ("embed-amd.js", "@jupyter-widgets/html-manager/dist/embed-amd.js"),
)
REMOTE_ASSET = re.compile(r"""<(?:script|link|img|source|iframe)\b[^>]*\b(?:src|href)\s*=\s*["'](?:https?:)?//[^"']*""")


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def palette_png(data: str) -> str:
    """A base64 PNG as the page ships it: in 256 colours (median cut, no dithering) when it is opaque and that is
    smaller, else unchanged. A plot's thousands of colours are mostly its antialiased edges: the cells and text
    look the same, at about a third of the bytes (lesson 11's largest figure: 276 kB -> 85 kB)."""
    from PIL import Image

    original = base64.b64decode(data)
    image = Image.open(io.BytesIO(original))
    if image.mode == "RGBA" and image.getchannel("A").getextrema() != (255, 255):
        return data  # real transparency: median cut works on RGB only
    buffer = io.BytesIO()
    image.convert("RGB").quantize(256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buffer, "PNG", optimize=True
    )
    smaller = buffer.getvalue()
    return base64.b64encode(smaller).decode("ascii") if len(smaller) < len(original) else data


def lesson_page(path: Path, learner_edition) -> nbformat.NotebookNode:
    """A lesson as its page shows it: the learner edition of ``path`` (an executed copy with widget state),
    README links -> home page, its pictures in 256 colours (:func:`palette_png`; the notebooks keep theirs)."""
    nb = learner_edition(nbformat.read(path, as_version=4))
    saved = _script("widget_state").widget_state(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("](../README.md", "](../index.md")
        for output in cell.get("outputs", []):  # a view with no saved model shows its PNG fallback
            data = output.get("data", {})
            view = data.get(WIDGET_VIEW)
            if view is not None and view.get("model_id") not in saved:
                del data[WIDGET_VIEW]
            if "image/png" in data:
                data["image/png"] = palette_png(data["image/png"])
    return nb


def prepare(src: Path, live: str = "all") -> list[Path]:
    """Write the Sphinx source folder; returns the lessons it holds. ``live``: the lessons executed with
    widget state (``all`` or numbers such as ``04,07``); the others show their stored outputs (the PNGs)."""
    editions = _script("build_editions")
    state = _script("widget_state")
    shutil.rmtree(src, ignore_errors=True)
    (src / "notebooks").mkdir(parents=True)
    (src / "docs").mkdir()
    shutil.copy2(SITE / "conf.py", src / "conf.py")
    shutil.copytree(SITE / "_static", src / "_static")  # a11y.css and a11y.js (site/conf.py)
    readme = REMOTE_BADGE.sub(r"[\1](\2)", (REPO / "README.md").read_text(encoding="utf-8"))
    (src / "index.md").write_text(readme + "\n" + (SITE / "index.md").read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copytree(REPO / "images", src / "images")
    for page in ("teaching-guide.md", "documents.md"):
        shutil.copy2(REPO / "docs" / page, src / "docs" / page)
    for name in ("CONTRIBUTING.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    lessons = sorted((REPO / "notebooks").glob(LESSONS))
    chosen = [p for p in lessons if live.replace(" ", "") in ("", "all") or p.name[:2] in live.split(",")]
    shutil.rmtree(executed_folder(src), ignore_errors=True)  # no chunk files of an earlier build
    executed = {p.name: p for p in state.execute_all(chosen, executed_folder(src))}
    for path in lessons:
        page = lesson_page(executed.get(path.name, path), editions.learner_edition)
        nbformat.write(page, src / "notebooks" / path.name)
    slides = _script("build_slides")
    slides.ensure_node_modules()  # npm ci when node_modules/ is missing
    vendor = src / "_static" / "_vendor"
    for name, part in WIDGET_JS:
        (vendor / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(slides.NODE_MODULES / part, vendor / name)
    for font in (slides.NODE_MODULES / "@jupyter-widgets/html-manager/dist").glob("*.woff2"):
        shutil.copy2(font, vendor / font.name)  # html-manager's CSS loads its icon font beside embed-amd.js
    state.copy_front_end(vendor)
    return lessons


def executed_folder(src: Path) -> Path:
    """Where :func:`prepare` executes the lessons with widget state (and their kernels write chunk files)."""
    return src.parent / f"{src.name}-executed"


def remote_assets(out: Path) -> list[str]:
    """Every remote script/stylesheet/image/font reference in the built HTML (should be none)."""
    found = []
    for page in sorted(out.rglob("*.html")):
        text = page.read_text("utf-8")
        found += [f"{page.relative_to(out)}: {m.group(0)[:160]}" for m in REMOTE_ASSET.finditer(text)]
    return found


# what a lesson page may weigh, everything it loads gzip-compressed (issue #37's goal)
PAGE_BUDGET = 1_500_000
# a local file a page loads: <script src>, <img src>, <source src>, <link rel="stylesheet" href> (not the
# navigation links, rel="next" / "prev" / "search", which load nothing)
LOCAL_ASSET = re.compile(
    r"""<(?:script|img|source)\b[^>]*\bsrc\s*=\s*["']([^"'#?]+)"""
    r"""|<link\b(?=[^>]*\brel\s*=\s*["']stylesheet["'])[^>]*\bhref\s*=\s*["']([^"'#?]+)"""
)
# what the page's scripts load themselves, in _static/: requirejs loads anywidget's front end on pages with
# widget state (tests/browser/test_site.py counts every file a page really loads in Chromium)
WIDGET_LOADS = ("_vendor/anywidget.js",)
# the typeset math's CSS (site/typeset.mjs): a font family per @font-face, the families each class of MathJax's
# characters is drawn in, and the classes a page's characters carry (the page's math container: MJX-TEX)
MATH_FONT_FACE = re.compile(r'@font-face[^{]*\{\s*font-family:\s*([\w-]+);\s*src:\s*url\("([^"]+)"\)')
MATH_FONT_CLASS = re.compile(r"\.(MJX-TEX|TEX-[\w]+) \{\s*font-family:\s*([^;}]+)")
MATH_CLASS_USED = re.compile(r'<mjx-[a-z]+ class="[^"]*?\b(MJX-TEX|TEX-[\w]+)\b')


def math_fonts(html: str) -> set[str]:
    """The web fonts a page typeset by site/typeset.mjs makes the browser load (URLs as the page names them):
    those of the font families of the classes its characters carry. A browser loads a family's font when text
    drawn in it is shown, the first family of a list (MathJax's MJXZERO) whenever the list is used."""
    faces = dict(MATH_FONT_FACE.findall(html))
    families = dict(MATH_FONT_CLASS.findall(html))
    used = {f.strip() for name in set(MATH_CLASS_USED.findall(html)) for f in families.get(name, "").split(",")}
    return {faces[family] for family in used if family in faces}


def _gzip_size(path: Path, cache: dict[Path, int]) -> int:
    if path not in cache:
        cache[path] = len(gzip.compress(path.read_bytes(), 9)) if path.is_file() else 0
    return cache[path]


def page_weights(out: Path) -> dict[str, int]:
    """Every lesson page of the site in ``out`` -> the bytes it loads, each file gzip-compressed: the page,
    the local files it refers to, what its scripts load (:data:`WIDGET_LOADS`) and its math's web fonts
    (:func:`math_fonts`)."""
    cache: dict[Path, int] = {}
    weights = {}
    for page in sorted((out / "notebooks").glob("*.html")):
        text = page.read_text("utf-8")
        refs = [src or href for src, href in LOCAL_ASSET.findall(text)]
        files = {(page.parent / ref).resolve() for ref in refs if "//" not in ref}
        loads = WIDGET_LOADS if "widget-state+json" in text else ()
        files |= {(out / "_static" / name).resolve() for name in loads}
        files |= {(page.parent / url).resolve() for url in math_fonts(text)}
        weights[page.relative_to(out).as_posix()] = _gzip_size(page, cache) + sum(_gzip_size(f, cache) for f in files)
    return weights


def repository() -> str:
    """``owner/name`` of the repository on GitHub, from pyproject.toml's ``[project.urls] Repository``."""
    url = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["urls"]["Repository"]
    prefix = "https://github.com/"
    if not url.startswith(prefix):
        raise SystemExit(f"error: [project.urls] Repository must be a GitHub address for Binder, got {url!r}")
    return url[len(prefix) :].rstrip("/")


# the search page answers its own fetches of pages from this text when opened from disk (file://)
PAGE_TEXT_JS = """\
// GENERATED by site/build.py: the main text of every page, for search excerpts opened from disk
window.ATTN_PAGE_TEXT = %s;
(() => {
  if (location.protocol !== "file:") return;
  const root = new URL(".", location.href);
  const fetchPage = window.fetch.bind(window);
  window.fetch = (input, init) => {
    const url = new URL(String(input), location.href);
    const key = decodeURIComponent(url.href.slice(root.href.length).split("#")[0]);
    if (url.href.startsWith(root.href) && key in window.ATTN_PAGE_TEXT) {
      const html = '<div role="main">' + window.ATTN_PAGE_TEXT[key] + "</div>";
      return Promise.resolve(new Response(html, {headers: {"Content-Type": "text/html"}}));
    }
    return fetchPage(input, init);
  };
})();
"""


def page_text(out: Path) -> str:
    """``_static/page-text.js`` for the built site in ``out``: every page's main content without
    pictures, scripts or styles (the sections' ids stay, for excerpts of a matched section)."""
    from bs4 import BeautifulSoup

    pages = {}
    for page in sorted(out.rglob("*.html")):
        main = BeautifulSoup(page.read_text("utf-8"), "html.parser").select_one('[role="main"]')
        if main is None:
            continue
        for tag in main.select("img, script, style, svg, .headerlink, .cell_output"):
            tag.decompose()
        pages[page.relative_to(out).as_posix()] = main.decode_contents()
    return PAGE_TEXT_JS % json.dumps(pages, ensure_ascii=False)


def build(
    out: Path, src: Path, binder_ref: str | None = None, live: str = "all", budget: int | None = PAGE_BUDGET
) -> list[Path]:
    """Prepare ``src`` and build the site into ``out``; returns the lessons built (``live``: see
    :func:`prepare`). Fails when a lesson page loads more than ``budget`` bytes gzip in all (``None``: no
    limit, for a benchmark that measures what there is)."""
    try:
        from sphinx.cmd.build import build_main
    except ImportError:
        raise SystemExit(
            "error: the site needs the workshop's tools (Sphinx, myst-nb, Furo), not in the learner set: "
            "run `make site` (it installs requirements.lock) or pip install -r requirements.lock"
        ) from None

    os.environ.setdefault("BINDER_REPO", repository())  # read by site/conf.py for the launch links
    if binder_ref:
        os.environ["BINDER_REF"] = binder_ref

    lessons = prepare(src, live)
    shutil.rmtree(out, ignore_errors=True)
    code = build_main(["-b", "html", "-q", "-j", "1", "-d", str(src / "_doctrees"), str(src), str(out)])
    if code:
        raise SystemExit(f"error: sphinx-build failed ({code})")
    _script("widget_state").copy_chunks(executed_folder(src), out / "notebooks")
    # the search page's excerpts from disk: the pages' text with their formulas' TeX (as the search index has it)
    (out / "_static" / "page-text.js").write_text(page_text(out), encoding="utf-8")
    _script("build_slides").typeset_math(sorted(out.rglob("*.html")), out / "_static" / MATH_FONTS)
    remote = remote_assets(out)
    if remote:
        raise SystemExit("error: the site still loads from the web:\n" + "\n".join(remote))
    heavy = {page: size for page, size in page_weights(out).items() if budget is not None and size > budget}
    if heavy:
        raise SystemExit(f"error: lesson pages over {budget / 1e6} MB gzip in all (bytes): {heavy}")
    editions = _script("build_editions")
    for path in lessons:  # what each page's "Download this notebook" link gives: the learner edition
        nb = editions.learner_edition(nbformat.read(path, as_version=4))
        nb.metadata.pop("widgets", None)
        nbformat.write(nb, out / "notebooks" / path.name)
    plain_section_titles(out / "searchindex.js")
    return lessons


def plain_section_titles(index: Path) -> None:
    """Section titles with TeX in the search index (``Document 003 scales by \\sqrt{16}``) as text
    (``√16``), as site/conf.py does for page titles: search results show them raw otherwise."""
    conf = load_conf()
    text = index.read_text(encoding="utf-8")
    head, tail = text.index("(") + 1, text.rindex(")")
    data = json.loads(text[head:tail])
    data["alltitles"] = {(conf.tex_as_text(k) if "\\" in k else k): v for k, v in data["alltitles"].items()}
    index.write_text(text[:head] + json.dumps(data, ensure_ascii=False, separators=(",", ":")) + text[tail:], "utf-8")


def load_conf():
    """site/conf.py as a module (its tex_as_text)."""
    spec = importlib.util.spec_from_file_location("site_conf", SITE / "conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="site/build.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=REPO / "build" / "site")
    parser.add_argument("--src", type=Path, default=REPO / "build" / "site-src")
    parser.add_argument("--binder-ref", help="branch, tag or commit the launch links open (default: HEAD)")
    parser.add_argument("--live", default="all", help="lessons executed with live explorers: all, or e.g. 04,07")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    lessons = build(args.out, args.src, args.binder_ref, args.live)
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    weights = page_weights(args.out)
    print(
        "lesson pages, everything each loads, gzip:",
        ", ".join(f"{Path(p).stem[:2]} {w / 1e6:.2f} MB" for p, w in weights.items()),
    )
    print(f"site: {len(lessons)} lessons in {args.out} ({size / 1e6:.1f} MB) in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
