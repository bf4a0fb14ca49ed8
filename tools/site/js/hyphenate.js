// Soft hyphens in the printed prose. Without an argument: the words of the prose (not
// code, maths, headings, tables, captions or the contents). With {word: hyphenated}:
// writes those words back hyphenated (tools/site/hyphenate.py hyphenates them).
words => {
  const skip = 'pre, code, kbd, samp, .math, mjx-container, h1, h2, h3, h4, h5, h6, ' +
    'table, figcaption, .book-toc, .book-nobreak, .book-cell-label, script, style';
  const texts = [];
  for (const page of document.querySelectorAll('.book-page')) {
    const walker = document.createTreeWalker(page, NodeFilter.SHOW_TEXT, {
      acceptNode: node => node.parentElement.closest(skip) ?
        NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.data.includes('://')) texts.push(node);  // an address stays whole
    }
  }
  const word = /[A-Za-z]{6,}/g;
  if (!words) {
    const found = new Set();
    for (const node of texts) for (const match of node.data.matchAll(word)) found.add(match[0]);
    return [...found];
  }
  let changed = 0;
  for (const node of texts) {
    const data = node.data.replace(word, found => words[found] ?? found);
    if (data !== node.data) {
      node.data = data;
      changed += 1;
    }
  }
  return changed;
}
