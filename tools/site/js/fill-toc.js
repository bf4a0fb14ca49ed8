// Writes the page numbers into the table of contents and the prose's references, and the
// style of each page's folio and running heads: {numbers: {target id: folio}, css}.
({numbers, css}) => {
  for (const slot of document.querySelectorAll('.book-toc-page, .book-ref-page')) {
    slot.textContent = numbers[slot.dataset.target] ?? '';
  }
  const heads = document.getElementById('book-running-heads');
  if (heads && css !== undefined) heads.textContent = css;
}
