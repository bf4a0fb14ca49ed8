// Writes each entry's page number into the table of contents: numbers is {target id: page}.
numbers => {
  for (const slot of document.querySelectorAll('.book-toc-page')) {
    slot.textContent = numbers[slot.dataset.target] ?? '';
  }
}
