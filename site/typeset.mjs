// @ts-check
// Typesets the math of built HTML pages once, at build time, with MathJax 3 (the npm package mathjax-full, pinned
// in package.json), so that the pages load no MathJax: each formula becomes CommonHTML (an <mjx-container>) with
// its MathML beside it for screen readers (assistive MathML), and each page gets the CSS of the characters it uses;
// the web fonts are copied once into the folder --fonts names, which each page refers to by a relative URL (the
// pages open from disk too). Used by site/build.py (every page of the site) and scripts/build_slides.py (every deck).
//
//   node site/typeset.mjs --fonts DIR [--dollars] PAGE.html...
//
// --dollars: $…$ is inline math too (nbconvert's decks keep the lessons' markdown math as $…$, \(…\) and $$…$$;
// the site's pages have Sphinx's \(…\) and \[…\] only, where a $ is a dollar). A formula MathJax cannot parse fails
// the run: every such formula is listed with its page and its TeX, and the exit status is 1 (no page is written).
// Prints one line: the pages and formulas typeset.

import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const require = createRequire(import.meta.url);
const { mathjax } = require("mathjax-full/js/mathjax.js");
const { TeX } = require("mathjax-full/js/input/tex.js");
const { CHTML } = require("mathjax-full/js/output/chtml.js");
const { liteAdaptor } = require("mathjax-full/js/adaptors/liteAdaptor.js");
const { RegisterHTMLHandler } = require("mathjax-full/js/handlers/html.js");
const { AssistiveMmlHandler } = require("mathjax-full/js/a11y/assistive-mml.js");
require("mathjax-full/js/input/tex/ams/AmsConfiguration.js");
require("mathjax-full/js/input/tex/newcommand/NewcommandConfiguration.js");
require("mathjax-full/js/input/tex/boldsymbol/BoldsymbolConfiguration.js");
require("mathjax-full/js/util/entities/all.js"); // every named entity, loaded now (none fetched while typesetting)

/** The TeX packages the lessons' math needs (MathJax 2's TeX-AMS: base, AMS maths and symbols, \boldsymbol). No
 * noundefined or noerrors: an unknown macro is an error that fails the build, not red text in a page. */
export const PACKAGES = ["base", "ams", "newcommand", "boldsymbol"];
/** Where the web fonts are in the package, and the font files every page's CSS names (copied by --fonts). */
export const FONTS = join(dirname(require.resolve("mathjax-full/package.json")), "es5/output/chtml/fonts/woff-v2");

const adaptor = liteAdaptor();
AssistiveMmlHandler(RegisterHTMLHandler(adaptor));

/**
 * Typeset every formula of one HTML page.
 * @param {string} html the page
 * @param {{fontURL: string, dollars?: boolean}} options the fonts' URL as the page refers to it; whether $…$ is math
 * @returns {{html: string, count: number, errors: {tex: string, message: string}[]}} the page typeset, the number of
 *   formulas, and every formula MathJax could not parse (its TeX and MathJax's message)
 */
export function typesetPage(html, { fontURL, dollars = false }) {
  /** @type {{tex: string, message: string}[]} */
  const errors = [];
  const tex = new TeX({
    packages: PACKAGES,
    inlineMath: dollars
      ? [
          ["$", "$"],
          ["\\(", "\\)"],
        ]
      : [["\\(", "\\)"]],
    displayMath: [
      ["$$", "$$"],
      ["\\[", "\\]"],
    ],
    processEscapes: dollars, // \$ is a dollar where $ opens math
    /** @param {any} jax @param {any} error */
    formatError: (jax, error) => {
      errors.push({ tex: jax.latex, message: error.message });
      return jax.formatError(error);
    },
  });
  const chtml = new CHTML({ fontURL });
  const page = mathjax.document(html, { InputJax: tex, OutputJax: chtml });
  page.render();
  const count = Array.from(page.math).filter((/** @type {any} */ math) => math.display !== null).length; // no \$
  for (const text of leftTeX(adaptor.body(page.document), dollars)) {
    errors.push({ tex: text, message: "TeX left untypeset (a brace or a delimiter not closed?)" });
  }
  const out = `${adaptor.doctype(page.document)}\n${adaptor.outerHTML(adaptor.root(page.document))}\n`;
  return { html: out, count, errors };
}

// what MathJax leaves alone (its default skipHtmlTags), and the formulas it wrote
const SKIPPED = new Set(["script", "noscript", "style", "textarea", "pre", "code", "annotation", "annotation-xml"]);
const TEX_LEFT = /\\\(|\\\[|\$\$/;
const DOLLAR_MATH_LEFT = /(?<!\\)\$[^$\s][^$]*(?<![\s\\])\$/;

/**
 * The texts of a typeset page that still hold TeX delimiters outside code (a formula MathJax did not find: its
 * closing delimiter inside an unclosed brace, say), each cut to 120 characters.
 * @param {any} node @param {boolean} dollars @returns {string[]}
 */
function leftTeX(node, dollars) {
  const kind = adaptor.kind(node);
  if (kind === "#text") {
    const text = adaptor.value(node);
    const left = TEX_LEFT.test(text) || (dollars && DOLLAR_MATH_LEFT.test(text));
    return left ? [text.trim().slice(0, 120)] : [];
  }
  if (kind.startsWith("#") || SKIPPED.has(kind) || kind.startsWith("mjx-")) return []; // a comment, code, math
  return adaptor.childNodes(node).flatMap((/** @type {any} */ child) => leftTeX(child, dollars));
}

/** @param {string[]} argv @returns {number} the exit status */
function main(argv) {
  const usage = "usage: node site/typeset.mjs --fonts DIR [--dollars] PAGE.html...\n";
  /** @type {{values: {fonts?: string, dollars?: boolean}, positionals: string[]}} */
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { fonts: { type: "string" }, dollars: { type: "boolean", default: false } },
      allowPositionals: true,
    });
  } catch (error) {
    process.stderr.write(`${/** @type {Error} */ (error).message}\n${usage}`);
    return 2;
  }
  const { values, positionals: pages } = parsed;
  const fonts = values.fonts;
  const dollars = values.dollars ?? false;
  if (!fonts || pages.length === 0) {
    process.stderr.write(usage);
    return 2;
  }
  mkdirSync(fonts, { recursive: true });
  for (const name of readdirSync(FONTS)) copyFileSync(join(FONTS, name), join(fonts, name));
  /** @type {[string, string][]} */
  const typeset = [];
  const failed = [];
  let formulas = 0;
  for (const file of pages) {
    const fontURL = relative(dirname(resolve(file)), resolve(fonts)).split(sep).join("/");
    const result = typesetPage(readFileSync(file, "utf-8"), { fontURL, dollars });
    formulas += result.count;
    failed.push(...result.errors.map((e) => `${file}: ${e.message} in the TeX: ${e.tex}`));
    typeset.push([file, result.html]);
  }
  if (failed.length) {
    process.stderr.write(`error: MathJax cannot typeset ${failed.length} formula(s):\n${failed.join("\n")}\n`);
    return 1; // no page written
  }
  for (const [file, html] of typeset) writeFileSync(file, html, "utf-8");
  process.stdout.write(`typeset ${formulas} formulas in ${typeset.length} pages\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
