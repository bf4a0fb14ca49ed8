// The target id of each page-number slot of the table of contents, in order.
slots => slots.map(slot => slot.dataset.target)
