// Throws the whole layout away, so that the next printing lays the document out anew
// rather than from what the previous one left behind.
() => {
  const body = document.body;
  body.style.display = 'none';
  void body.offsetHeight;
  body.style.display = '';
  void body.offsetHeight;
}
