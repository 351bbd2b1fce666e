"""Build a static reveal.js deck per lesson into slides/ that works offline (``make slides``).

Usage: python scripts/build_slides.py [notebooks/NN_x.ipynb ...] [--out slides]

By default nbconvert's decks load reveal.js, require.js, jQuery, MathJax and the widget renderer
from CDNs, and show nothing without a network. Here they come from the npm packages pinned in
package.json / package-lock.json (``npm ci`` fetches them into node_modules/ at build time): the
needed files are copied once into ``<out>/_vendor/`` and every deck points at them with relative
URLs, so the folder ``slides/`` (next to ``images/``, which the lessons embed as ``../images/…``)
opens from disk with no network. Theme ``white`` (the default theme pulls web fonts). The decks load
no MathJax: their math is typeset once, when they are built (:func:`typeset_math`, site/typeset.mjs,
which the site's build calls too), with its web fonts in ``<out>/_vendor/math-fonts/``.

Each lesson is first executed with its widget state into ``build/slides-src/`` (scripts/widget_state.py;
``notebooks/`` keeps no state), and the deck draws its widgets from that state with html-manager and
anywidget's front end (copied from the installed wheel into ``_vendor/``): the explorers are drawn by the
page with no kernel (the chunks of a table too large to ship whole, lesson 12's, are files in
``<out>/attnlib-chunks/`` that a deck loads when a state needs one: copy that folder with the decks); to
present with a kernel use jupyterlab-slideshow (docs/teaching-guide.md). Exit status 1 if a deck still
references a remote URL.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from jinja2 import DictLoader
from nbconvert import SlidesExporter
from traitlets.config import Config

ROOT = Path(__file__).resolve().parent.parent
NODE_MODULES = ROOT / "node_modules"
VENDOR = "_vendor"

# what each deck loads, relative to the deck's folder (the copies in <out>/_vendor)
URLS = {
    "reveal_url_prefix": f"{VENDOR}/reveal.js",
    "require_js_url": f"{VENDOR}/requirejs/require.js",
    "jquery_url": f"{VENDOR}/jquery/dist/jquery.min.js",
    "widget_renderer_url": f"{VENDOR}/@jupyter-widgets/html-manager/dist/embed-amd.js",
}

# npm package -> parts of it the decks need (everything else stays in node_modules)
PACKAGES: dict[str, tuple[str, ...]] = {
    "reveal.js": ("dist", "plugin", "package.json"),
    "requirejs": ("require.js", "package.json"),
    "jquery": ("dist", "package.json"),
    "@jupyter-widgets/html-manager": ("dist", "package.json"),
}
# the typesetter of the decks' and the site's math (MathJax 3 in Node) and the package it runs
TYPESET = ROOT / "site" / "typeset.mjs"
TYPESET_PACKAGE = "mathjax-full"
# where a deck's math fonts go, beside the other copies (the site's: site/build.py's MATH_FONTS)
MATH_FONTS = f"{VENDOR}/math-fonts"

# a src/href/url to anything but a relative path or a data: URI
# nbconvert's reveal template imports MermaidJS from a CDN on every page; the lessons draw no
# Mermaid diagrams, so this template leaves that block out; nor does it load MathJax (the math is typeset already,
# :func:`typeset_math`), and its script that starts reveal.js calls no MathJax (START_REVEAL)
TEMPLATE = "offline_reveal.html.j2"
# after require.js, anywidget-paths.js tells requirejs where anywidget's front end is (scripts/widget_state.py)
# reveal.js's controls tutorial bounces the "next" arrow (a CSS animation of 50 × 2 s) until the reader has used
# the arrows; while anything animates, Chromium draws a frame at every tick, so a change of an explorer waits for
# the next tick instead of being drawn at once (measured in commit c767e46's body). The arrows keep their highlight
# colour; the rule matches reveal.css's own selectors, later in the page.
NO_BOUNCE = ", ".join(f".reveal .controls .navigate-{side}.highlight" for side in ("left", "right", "up", "down"))
# WCAG 2.x AA in a deck (issue 56; docs/teaching-guide.md, "Accessibility"): the "In [ ]:" prompts in colours
# of 4.5:1 or more on white (nbconvert's grey #b0b0b0 is 2.2:1, its blue #307fc1 4.3:1), so are the code's
# colours on its grey (JupyterLab's comments #408080 are 4.2:1 on #f5f5f5); links underlined where they sit in
# text (their blue is 1.9:1 against the text's black, under the 3:1 that colour alone would need); and no slide
# transition or animation for a reader whose system asks for reduced motion
ACCESSIBLE = (
    "body { --jp-cell-prompt-not-active-font-color: #616161; --jp-cell-prompt-not-active-opacity: 1; "
    "--jp-cell-inprompt-font-color: #1a5a8f; --jp-cell-outprompt-font-color: #9c3d1e; "
    "--jp-mirror-editor-comment-color: #2f6b6b; --jp-mirror-editor-atom-color: #4040c0; "
    "--jp-mirror-editor-number-color: #006b00; --jp-mirror-editor-operator-color: #8a1ccf; "
    "--jp-mirror-editor-meta-color: #8a1ccf; --jp-mirror-editor-bracket-color: #6b6b40; "
    "--jp-mirror-editor-quote-color: #006b00; --jp-mirror-editor-error-color: #c00000; "
    "--jp-mirror-editor-variable-3-color: #006b45; } "
    ".reveal .jp-RenderedMarkdown a, .reveal .jp-RenderedHTMLCommon a { text-decoration: underline; } "
    "@media (prefers-reduced-motion: reduce) { .reveal *, .reveal *::before, .reveal *::after "
    "{ transition: none !important; animation: none !important; } }"
)
# nbconvert's script that starts reveal.js, less its MathJax.Hub call on every change of slide (no MathJax here)
START_REVEAL = """<script>
require({waitSeconds: 15}, ["{{ reveal_url_prefix }}/dist/reveal.js", "{{ reveal_url_prefix }}/plugin/notes/notes.js"],
  function (Reveal, RevealNotes) {
    Reveal.initialize({controls: true, progress: true, history: true, transition: "{{ reveal_transition }}",
      slideNumber: "{{ reveal_number }}", plugins: [RevealNotes], width: {{ reveal_width }},
      height: {{ reveal_height }}});
    var scroll = {{ reveal_scroll }};
    Reveal.addEventListener("slidechanged", function () {  // a slide taller than the deck scrolls
      if (scroll !== true) return;
      var h = $(".reveal").height() * 0.95;
      $("section.present").find("section").filter(function () { return $(this).height() > h; })
        .css("height", "calc(95vh)").css("overflow-y", "scroll").css("margin-top", "20px");
    });
  });
</script>"""
TEMPLATE_SOURCE = (
    "{%- extends 'index.html.j2' -%}\n{% block html_head_js_mermaidjs %}{% endblock html_head_js_mermaidjs %}\n"
    "{% block html_head_js_mathjax %}{% endblock html_head_js_mathjax %}\n"
    f"{{% block footer_js %}}{START_REVEAL}{{% endblock footer_js %}}\n"
    "{%- block html_head_js_requirejs -%}{{ super() }}\n"
    f'<script src="{VENDOR}/anywidget-paths.js"></script>\n'
    "{%- endblock html_head_js_requirejs -%}\n"
    f"{{%- block html_head_css -%}}{{{{ super() }}}}\n<style>{NO_BOUNCE} {{ animation: none; }} {ACCESSIBLE}</style>\n"
    "{%- endblock html_head_css -%}\n"
)

# what a page loads: a src, a <link>'s href, a CSS url(), a CDN's address — not a link the reader may follow (<a href>)
REMOTE = re.compile(
    r"""src\s*=\s*["'](?:https?:)?//|<link\b[^>]*\bhref\s*=\s*["'](?:https?:)?//|url\(\s*["']?(?:https?:)?//"""
    r"""|https?://(?:unpkg|cdn)"""
)


def ensure_node_modules() -> None:
    """Run ``npm ci`` when a package the decks need is missing from node_modules/."""
    if all((NODE_MODULES / name / "package.json").is_file() for name in (*PACKAGES, TYPESET_PACKAGE)):
        return
    npm = shutil.which("npm")
    if npm is None:
        raise SystemExit("error: npm is needed once to fetch reveal.js, MathJax … (package-lock.json); install Node.js")
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=ROOT, check=True)


def typeset_math(pages: list[Path], fonts: Path, *, dollars: bool = False) -> str:
    """Typeset the math of every page in ``pages`` in place, in one Node process (site/typeset.mjs: MathJax 3,
    CommonHTML with assistive MathML), its web fonts copied into ``fonts``, which each page names by a relative
    URL; ``dollars``: ``$…$`` is math too (a deck's markdown), not only ``\\(…\\)``. Returns what it printed;
    fails naming every page and formula MathJax cannot parse."""
    node = shutil.which("node")
    if node is None:
        raise SystemExit("error: Node.js is needed to typeset the math (site/typeset.mjs); install it")
    if not pages:
        return ""
    command = [node, str(TYPESET), "--fonts", str(fonts), *(["--dollars"] if dollars else []), *map(str, pages)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(done.stderr.strip() or f"error: site/typeset.mjs failed ({done.returncode})")
    return done.stdout


def copy_vendor(out: Path) -> None:
    """Copy the needed parts of each npm package into ``out/_vendor`` (skipped when up to date)."""
    for name, parts in PACKAGES.items():
        source = NODE_MODULES / name
        target = out / VENDOR / name
        stamp = target / "package.json"
        if stamp.is_file() and stamp.read_bytes() == (source / "package.json").read_bytes():
            continue
        shutil.rmtree(target, ignore_errors=True)
        for part in parts:
            src = source / part
            dst = target / part
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_dir():
                shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.map"))
            else:
                shutil.copy2(src, dst)


def exporter() -> SlidesExporter:
    """nbconvert's reveal.js exporter pointed at the local copies, theme ``white``."""
    c = Config()
    c.SlidesExporter.reveal_theme = "white"
    c.SlidesExporter.reveal_transition = "none"
    c.SlidesExporter.reveal_scroll = True  # long code cells scroll instead of being cut off
    c.SlidesExporter.template_file = TEMPLATE
    for option, url in URLS.items():
        setattr(c.SlidesExporter, option, url)
    return SlidesExporter(config=c, extra_loaders=[DictLoader({TEMPLATE: TEMPLATE_SOURCE})])


#: a link's opening tag: where it points is for the reader to follow, nothing the deck loads
ANCHOR = re.compile(r"<a\b[^>]*>", re.IGNORECASE)


def remote_references(html: str) -> list[str]:
    """The remote URLs a deck would load (should be none); links (``<a href>``) a reader may follow are not loads."""
    html = ANCHOR.sub("<a>", html)
    return sorted({html[max(0, m.start() - 20) : m.end() + 60] for m in REMOTE.finditer(html)})


def _widget_state():
    """scripts/widget_state.py as a module (the shared widget-state build step)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("widget_state", ROOT / "scripts" / "widget_state.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(notebooks: list[Path], out: Path, *, executed: Path | None = ROOT / "build" / "slides-src") -> list[Path]:
    """Write ``out/<name>.slides.html`` for each notebook; returns the decks written.

    ``executed``: the folder the lessons are executed into first, with widget state (live explorers);
    ``None`` shows each notebook's outputs as they are (a lesson's stored ones: the PNG fallbacks). Either way
    the decks get the chunk files beside the notebooks they show (those their kernels wrote), which the decks
    load when a state needs one."""
    ensure_node_modules()
    out.mkdir(parents=True, exist_ok=True)
    copy_vendor(out)
    state = _widget_state()
    state.copy_front_end(out / VENDOR)
    if executed is not None:
        notebooks = state.execute_all(notebooks, executed)
    for folder in sorted({path.parent for path in notebooks}):
        state.copy_chunks(folder, out)
    slides = exporter()
    written = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        html, _ = slides.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
        deck = out / f"{path.stem}.slides.html"
        deck.write_text(html, encoding="utf-8")
        written.append(deck)
    typeset_math(written, out / MATH_FONTS, dollars=True)  # every deck at once: one Node process
    for deck in written:
        remote = remote_references(deck.read_text(encoding="utf-8"))
        if remote:
            raise SystemExit(f"error: {deck.name} still loads remote URLs: {remote}")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="build_slides.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="lessons (default: notebooks/NN_*.ipynb)")
    parser.add_argument("--out", type=Path, default=ROOT / "slides", help="folder for the decks (default: slides/)")
    parser.add_argument(
        "--executed",
        type=Path,
        default=ROOT / "build" / "slides-src",
        help="folder the lessons are executed into with widget state (default: build/slides-src/)",
    )
    args = parser.parse_args(argv)
    notebooks = args.notebooks or sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    for deck in build(notebooks, args.out, executed=args.executed):
        print(f"wrote {deck}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
