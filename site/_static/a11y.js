// @ts-check
// What the site adds for keyboard users (site/conf.py loads it on every page): a code block, an output or a
// formula too wide (or too tall) for its box scrolls, so it must take the keyboard's focus to scroll with arrow
// keys (WCAG 2.1.1; axe's scrollable-region-focusable). Only the boxes that scroll at this width and zoom get a
// tab stop (data-a11y-scroll marks the ones given one here), measured again when the window's size changes.
(() => {
  const BOXES = "pre, .math-wrapper, .table-wrapper, .cell_output .output";
  const mark = () => {
    for (const box of document.querySelectorAll(BOXES)) {
      if (!(box instanceof HTMLElement) || box.querySelector(".attnlib-explorer")) continue;
      const scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      const style = getComputedStyle(box);
      const can = /auto|scroll/.test(style.overflowX + style.overflowY);
      if (scrolls && can && !box.hasAttribute("tabindex")) {
        box.setAttribute("tabindex", "0");
        box.setAttribute("data-a11y-scroll", "");
      } else if (!(scrolls && can) && box.hasAttribute("data-a11y-scroll")) {
        box.removeAttribute("tabindex");
        box.removeAttribute("data-a11y-scroll");
      }
    }
  };
  let queued = 0;
  const later = () => {
    cancelAnimationFrame(queued);
    queued = requestAnimationFrame(mark);
  };
  const start = () => {
    mark();
    /** @type {any} */
    const mathjax = /** @type {any} */ (window).MathJax;
    if (mathjax?.Hub?.Register) {
      // a typeset formula has another width than its TeX: measure again after each typesetting
      mathjax.Hub.Register.MessageHook("End Process", mark);
      mathjax.Hub.Queue(mark);
    }
    window.addEventListener("resize", later);
  };
  if (document.readyState === "complete") start();
  else window.addEventListener("load", start);
})();
