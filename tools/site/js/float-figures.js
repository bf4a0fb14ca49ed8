// Moves each figure that left a gap at the foot of the page before it (pdf.py) after the
// prose that follows it, as a printed book floats a figure to the next page while the
// text goes on: moves is [{id, room}], room the gap in CSS pixels. Returns how many moved.
moves => {
  const body = document.body;
  body.style.width = 'var(--book-text-width)';  // measured as printed (as prepare.js)
  body.style.boxSizing = 'content-box';
  const prose = 'p, ul, ol, dl, blockquote, div.math, div.math-wrapper';
  let moved = 0;
  for (const {id, room} of moves) {
    const figure = document.getElementById(id);
    if (!figure) continue;
    let block = figure;  // the figure's block in its section's flow (its cell, or itself)
    while (block.parentElement && !block.parentElement.matches('section, article')) {
      block = block.parentElement;
    }
    let after = null, filled = 0;
    for (let next = block.nextElementSibling; next && filled < room && next.matches(prose);
         next = next.nextElementSibling) {
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
