// Scrolls the first tab group that holds a figure (else the first one) to the bottom of
// the view.
() => {
  const groups = [...document.querySelectorAll('.fw-group')];
  const group = groups.find(g => g.querySelector('.cell_output img')) || groups[0];
  if (group) window.scrollTo({top: group.getBoundingClientRect().bottom + window.scrollY
                                   - window.innerHeight + 24, behavior: 'instant'});
}
