// Moves each figure that left a gap at the foot of the page before it (pdf.py) after the
// prose that follows it, as a printed book floats a figure to the next page while the
// text goes on: moves is [{id, room}], room the gap in CSS pixels. The prose may be the
// first paragraphs of a box that follows (a solution's "What the runs show"). Returns
// how many moved.
moves => {
  const body = document.body;
  body.style.width = 'var(--book-text-width)';  // measured as printed (as prepare.js)
  body.style.boxSizing = 'content-box';
  const prose = 'p:not(.book-unfolded-title), ul, ol, dl, blockquote, div.math, ' +
    'div.math-wrapper';
  const following = block => {
    const found = [];
    for (let next = block.nextElementSibling; next; next = next.nextElementSibling) {
      if (next.matches(prose)) {
        found.push(next);
      } else if (next.matches('.book-unfolded') && !found.length) {
        const inner = next.querySelector(':scope > .sd-summary-content, :scope > .sd-card-body');
        for (const child of (inner || next).children) {
          if (child.matches('.book-unfolded-title')) continue;
          if (!child.matches(prose)) break;
          found.push(child);
        }
        break;
      } else {
        break;
      }
    }
    return found;
  };
  let moved = 0;
  for (const {id, room} of moves) {
    const figure = document.getElementById(id);
    if (!figure) continue;
    let block = figure;  // the figure's block in its section's flow (its cell, or itself)
    while (block.parentElement && !block.parentElement.matches('section, article')) {
      block = block.parentElement;
    }
    let after = null, filled = 0;
    for (const next of following(block)) {
      if (filled >= room) break;
      after = next;
      filled += next.getBoundingClientRect().height;
    }
    if (after) {
      after.after(figure);
      figure.classList.add('book-floated');
      moved += 1;
    }
  }
  body.style.width = '';
  body.style.boxSizing = '';
  return moved;
}
