// The target id of each page-number slot (the contents' and the references'), in order.
slots => slots.map(slot => slot.dataset.target)
