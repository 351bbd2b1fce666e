// @ts-check
// What the site adds for keyboard users (site/conf.py loads it on every page): a code block, an output or a
// formula too wide (or too tall) for its box scrolls, so it must take the keyboard's focus to scroll with arrow
// keys (WCAG 2.1.1; axe's scrollable-region-focusable). Only the boxes that scroll at this width and zoom get a
// tab stop (data-a11y-scroll marks the ones given one here), measured again when the window's size changes or
// the math's web fonts have loaded. An in-line formula wider than its line (a phone, 200 % zoom: the math is
// typeset when the site is built, by MathJax 3, which does not break in-line formulas) is shown on a line of its
// own that scrolls (data-a11y-wide, a11y.css), so nothing reaches past the page's column.
(() => {
  const BOXES = "pre, .math-wrapper, .table-wrapper, .cell_output .output, [data-a11y-wide]";
  const INLINE_MATH = 'mjx-container[jax="CHTML"]:not([display="true"])';
  /** @param {Element} box */
  const untab = (box) => {
    if (!box.hasAttribute("data-a11y-scroll")) return;
    box.removeAttribute("tabindex");
    box.removeAttribute("data-a11y-scroll");
  };
  /** @param {Element} element the width of the block it sits in, inside its padding */
  const lineWidth = (element) => {
    let block = element.parentElement;
    while (block && getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
    if (!block) return Number.POSITIVE_INFINITY;
    const style = getComputedStyle(block);
    return block.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  };
  const widen = () => {
    const formulas = [...document.querySelectorAll(INLINE_MATH)];
    for (const math of formulas) {
      if (!math.hasAttribute("data-a11y-wide")) continue;
      math.removeAttribute("data-a11y-wide"); // measured at its own width
      untab(math);
    }
    const wide = formulas.filter((math) => math.getBoundingClientRect().width > lineWidth(math) + 0.5);
    for (const math of wide) math.setAttribute("data-a11y-wide", "");
  };
  const mark = () => {
    for (const box of document.querySelectorAll(BOXES)) {
      if (!(box instanceof HTMLElement) || box.querySelector(".attnlib-explorer")) continue;
      const scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      const style = getComputedStyle(box);
      const can = /auto|scroll/.test(style.overflowX + style.overflowY);
      if (scrolls && can && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-a11y-scroll", "");
      } else if (!(scrolls && can)) {
        untab(box);
      }
    }
  };
  const measure = () => {
    widen();
    mark();
  };
  let queued = 0;
  const later = () => {
    cancelAnimationFrame(queued);
    queued = requestAnimationFrame(measure);
  };
  const start = () => {
    measure();
    document.fonts.ready.then(later); // a formula has its width once its fonts are there
    window.addEventListener("resize", later);
  };
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
