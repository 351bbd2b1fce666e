"""Sphinx configuration of the series' static site (`make site`; sources prepared by site/build.py).

Offline by construction: the Furo theme ships its CSS/JS in the wheel (system fonts, no web fonts),
the math is typeset once when the site is built (site/typeset.mjs, MathJax 3 in Node: the pages load no
MathJax, only the web fonts of the characters they show, from ``_static/math-fonts``), myst-nb
shows the outputs site/build.py stored (with widget state) without executing anything, the widget
front end comes from ``_static/_vendor`` (require.js and html-manager from node_modules, anywidget's
AMD module from the installed wheel), and search is Sphinx's own offline index.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import quote

from docutils import nodes
from sphinx.ext.mathjax import html_visit_displaymath, html_visit_math

project = "Self-attention, step by step"
author = "Self-attention, step by step contributors"
copyright = "the contributors (MIT licence)"

extensions = ["myst_nb"]
html_theme = "furo"
html_title = project
html_static_path = ["_static"]
# what the site adds for accessibility (site/_static; docs/teaching-guide.md, "Accessibility")
html_css_files = ["a11y.css"]
html_js_files = ["a11y.js"]
html_last_updated_fmt = None
html_copy_source = False  # no _sources/*.ipynb.txt copies
html_show_sourcelink = False
exclude_patterns = ["_build"]

# math as Sphinx's MathJax renderer writes it (\(…\) in <span class="math">, \[…\] in <div class="math">) but
# no MathJax script in the pages: site/build.py typesets every page's math with site/typeset.mjs once built
html_math_renderer = "typeset"
myst_update_mathjax = False  # no MathJax configuration to update, no mathjax_ignore class on MyST's sections

myst_enable_extensions = ["dollarmath", "amsmath", "html_image"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # lessons start at h1 and some sections skip a level

# a code cell's Markdown output as MyST, like the lessons' own cells: its $…$ math typeset and its tables drawn
# (CommonMark, myst-nb's default, left lesson 08's and 20's formulas as TeX and lesson 18's tables as pipes)
nb_render_markdown_format = "myst"
nb_execution_mode = "off"  # the stored outputs are the ones nbval checks; never re-executed here
# the widget front end from the site itself (site/build.py copies it), on pages with widget state only;
# paths are relative to _static/ (Sphinx's add_js_file), not "_static/…"
nb_ipywidgets_js = {
    "_vendor/require.js": {},
    "_vendor/anywidget-paths.js": {},  # requirejs finds "anywidget" in _vendor/, not on a CDN
    "_vendor/embed-amd.js": {},
}

# the launch link on every lesson page: a plain link, nothing is loaded when the page is viewed.
# site/build.py sets BINDER_REPO from pyproject.toml's [project.urls] Repository (its one home).
BINDER_REPO = os.environ.get("BINDER_REPO", "")
BINDER_REF = os.environ.get("BINDER_REF", "HEAD")
LAUNCH_FOLDER = "my-lessons/lessons"  # binder/postBuild puts the learner edition there


def binder_url(lesson: str = "") -> str:
    """The mybinder.org launch URL of the repository, opening ``lesson`` (e.g. ``01_inputs.ipynb``) in
    the learner edition that binder/postBuild prepares."""
    if not BINDER_REPO:
        raise RuntimeError("BINDER_REPO is not set: build the site with site/build.py")
    url = f"https://mybinder.org/v2/gh/{BINDER_REPO}/{BINDER_REF}"
    return f"{url}?labpath={quote(f'{LAUNCH_FOLDER}/{lesson}', safe='')}" if lesson else url


def add_launch_link(app, doctree: nodes.document, docname: str) -> None:
    """Put 'Launch this lesson on Binder' and 'Download this notebook' under the title of every lesson page
    (site/build.py puts the learner edition's ``NN_name.ipynb`` beside ``NN_name.html``)."""
    if not docname.startswith("notebooks/"):
        return
    para = nodes.paragraph(classes=["launch-link"])
    lesson = docname.split("/", 1)[1] + ".ipynb"
    para += nodes.reference("", "▶ Launch this lesson on Binder", refuri=binder_url(lesson))
    para += nodes.Text(" · ")
    para += nodes.reference("", "⬇ Download this notebook (.ipynb)", refuri=lesson, classes=["download-link"])
    section = next(iter(doctree.findall(nodes.section)), None)
    if section is None:
        doctree.insert(0, para)
    else:
        title = next(iter(section.findall(nodes.title)), None)
        section.insert(section.index(title) + 1 if title is not None else 0, para)


# TeX in a title, as plain text for the browser tab, the search results and the sidebar
TEX_TEXT = [
    (re.compile(r"\\sqrt\{([^{}]*)\}"), r"√\1"),
    (re.compile(r"\\(?:times)\b"), "×"),
    (re.compile(r"\\(?:cdot)\b"), "·"),
    (re.compile(r"\\(?:top)\b"), "ᵀ"),
    (re.compile(r"_\{([^{}]*)\}"), r"_\1"),
    (re.compile(r"[{}]|\\[,;!]"), ""),
]


def tex_as_text(tex: str) -> str:
    """``\\sqrt{d_k}`` -> ``√d_k``: a formula of a title as text a browser tab and a search result can show."""
    for pattern, text in TEX_TEXT:
        tex = pattern.sub(text, tex)
    return tex.strip()


def plain_titles(app, env) -> None:
    """Titles with math become text: Sphinx shows a title's TeX source raw in <title> and search results."""
    for table in (env.titles, env.longtitles):
        for docname, title in list(table.items()):
            if not any(isinstance(node, nodes.math) for node in title.findall()):
                continue
            parts = [
                tex_as_text(node.astext()) if isinstance(node, nodes.math) else node.astext() for node in title.children
            ]
            table[docname] = nodes.title("", "".join(parts))


def search_page_text(app, pagename, templatename, context, doctree) -> None:
    """The search page loads the pages' text (site/build.py writes it) so that it shows excerpts from disk too."""
    if pagename == "search":
        app.add_js_file("page-text.js")


# Sphinx writes a toctree's caption as <p class="caption" role="heading"> with no level, which a heading needs
# (WCAG 1.3.1; axe's aria-required-attr): the sidebar's captions are level-2 headings under the site's title
HEADING_WITHOUT_LEVEL = re.compile(r'(<p class="caption" role="heading")(?![^>]*aria-level)')


def heading_levels(app, exception) -> None:
    """Give every caption Sphinx marks ``role="heading"`` its ``aria-level`` in the built pages."""
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        fixed = HEADING_WITHOUT_LEVEL.sub(r'\1 aria-level="2"', html)
        if fixed != html:
            page.write_text(fixed, encoding="utf-8")


def setup(app) -> None:
    app.connect("build-finished", heading_levels)
    app.connect("doctree-resolved", add_launch_link)
    app.connect("env-updated", plain_titles)
    app.connect("html-page-context", search_page_text)
    app.add_html_math_renderer("typeset", (html_visit_math, None), (html_visit_displaymath, None))
