// Writes the page numbers into the table of contents and the prose's references, and the
// style of each page's folio and running heads: {numbers: {target id: folio}, css, here},
// here the references that stand on the page they point at, which print no page.
({numbers, css, here}) => {
  for (const slot of document.querySelectorAll('.book-toc-page, .book-ref-page')) {
    slot.textContent = numbers[slot.dataset.target] ?? '';
  }
  const same = new Set(here ?? []);
  for (const group of document.querySelectorAll('.book-page-ref')) {
    group.classList.toggle('book-same-page', same.has(group.id));
  }
  const heads = document.getElementById('book-running-heads');
  if (heads && css !== undefined) heads.textContent = css;
}
