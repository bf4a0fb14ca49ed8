// The title of every heading that Chromium makes a bookmark of, in the document's order.
() => Array.from(document.querySelectorAll('h1, h2, h3, h4, h5, h6'))
  .filter(heading => heading.checkVisibility())
  .map(heading => heading.dataset.bookTitle ?? heading.textContent.replace(/\s+/g, ' ').trim())
