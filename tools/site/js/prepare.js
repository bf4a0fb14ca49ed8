// Outputs too wide for the text: a smaller size, down to minPt, then wrapped. Short
// blocks (under keepShare of the text height): kept on one page. Returns what it did,
// for the build's log.
([minPt, keepShare]) => {
  const pxPerPt = 96 / 72;
  let smaller = 0, wrapped = 0, kept = 0;
  // Measured on a body as wide as a printed page's text (the window is wider).
  const body = document.body;
  body.style.width = 'var(--book-text-width)';
  body.style.boxSizing = 'content-box';
  for (const pre of document.querySelectorAll('div.cell_output pre, div.output pre')) {
    if (pre.scrollWidth <= pre.clientWidth + 1) continue;
    // A table (several lines too long) is set smaller; a line or two too long wrap.
    const lines = pre.textContent.replace(/\n$/, '').split('\n');
    const longest = Math.max(...lines.map(line => line.length));
    const room = longest * pre.clientWidth / pre.scrollWidth;
    const over = lines.filter(line => line.length > room).length;
    let size = parseFloat(getComputedStyle(pre).fontSize) / pxPerPt;
    if (over < 3 && over < lines.length * 0.3) size = minPt;  // wraps below
    while (pre.scrollWidth > pre.clientWidth + 1 && size > minPt) {
      size = Math.max(minPt, size - 0.25);
      pre.style.fontSize = `${size}pt`;
    }
    if (pre.style.fontSize) smaller += 1;
    if (pre.scrollWidth > pre.clientWidth + 1) {
      pre.classList.add('book-wrapped');
      wrapped += 1;
    }
  }
  // A display equation wider than the text is set smaller (MathJax sizes it in em).
  for (const math of document.querySelectorAll('mjx-container[display="true"]')) {
    if (math.scrollWidth > math.clientWidth + 1) {
      math.style.fontSize = `${Math.floor(100 * math.clientWidth / math.scrollWidth)}%`;
      smaller += 1;
    }
  }
  // A table wider than the text is set smaller, down to minPt, then made to wrap.
  for (const table of document.querySelectorAll('table')) {
    const box = table.parentElement;
    let size = parseFloat(getComputedStyle(table).fontSize) / pxPerPt;
    while (table.offsetWidth > box.clientWidth + 1 && size > minPt) {
      size = Math.max(minPt, size - 0.25);
      table.style.fontSize = `${size}pt`;
    }
    if (table.style.fontSize) smaller += 1;
    if (table.offsetWidth > box.clientWidth + 1) {
      table.classList.add('book-wrapped');
      wrapped += 1;
    }
  }
  // Whatever still reaches past the text would make Chromium shrink every page to fit.
  const edge = body.getBoundingClientRect().right + 1;
  const wide = [...body.querySelectorAll('*')].filter(
    element => element.getBoundingClientRect().right > edge &&
      element.parentElement.getBoundingClientRect().right <= edge).length;
  const probe = document.createElement('div');
  probe.style.cssText = 'position:absolute;visibility:hidden;height:var(--book-text-height)';
  document.body.appendChild(probe);
  const page = probe.getBoundingClientRect().height;
  probe.remove();
  const blocks = 'div.cell_input, div.cell_output, div.output, pre, table, figure, ' +
    '.pst-scrollable-table-container, .book-unfolded, .admonition, blockquote, div.math';
  for (const block of document.querySelectorAll(blocks)) {
    if (block.getBoundingClientRect().height < page * keepShare) {
      block.classList.add('book-keep');
      kept += 1;
    }
  }
  body.style.width = '';
  body.style.boxSizing = '';
  return {smaller, wrapped, kept, page, wide};
}
