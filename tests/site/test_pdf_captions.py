"""A plot's caption, given by its cell (``mystnb: figure: caption:``): kept from the source
through the merge, printed under the figure's number, the generated description staying
its alt text (fast: no Sphinx, no browser)."""

import nbformat
from bs4 import BeautifulSoup

from tools.site import book_html, merge
from tools.source.sections import SourceCell

CAPTION = 'The training loss falls by two orders of magnitude.'
ALT = 'Line plot of training loss against step'
# A cell's output as myst-nb renders a captioned figure, and one it renders without.
CAPTIONED = (
    '<div class="cell"><div class="cell_output"><figure class="align-default">'
    f'<img alt="{ALT}" src="../_images/a.svg"><figcaption><p><span class="caption-text">'
    f'{CAPTION}</span></p></figcaption></figure></div></div>'
)
BARE = (
    f'<div class="cell"><div class="cell_output"><img alt="{ALT}" src="../_images/b.svg">'
    '</div></div>'
)
# matplotlib's SVG: 540 pt wide (7.5 in), tick labels at 8 pt, a title at 10 pt.
SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" width="540pt" height="180pt">'
    '<g transform="translate(1 2) scale(0.08 -0.08)"></g>'
    '<g transform="translate(1 2) scale(0.1 -0.1)"></g></svg>'
)


def test_a_cell_s_caption_is_kept_by_the_merge():
    metadata = {'tags': ['pytorch'], 'mystnb': {'figure': {'caption': CAPTION}}}
    cell = SourceCell(3, 'code', 'd2l.plot(x, y)', metadata)
    run = nbformat.v4.new_code_cell('d2l.plot(x, y)', execution_count=1)
    merged = merge._code_cell(cell, run, [], ['pytorch'], 'c003')
    assert merged.metadata['mystnb'] == {'figure': {'caption': CAPTION}}


def test_a_plot_prints_its_cell_s_caption_and_keeps_its_description_as_alt(tmp_path):
    html = tmp_path / 'html'
    (html / '_images').mkdir(parents=True)
    (html / '_images' / 'a.svg').write_text(SVG)
    page = book_html.Page('ch/a', None, 0)
    document = book_html.Document(html, [page], 'pytorch', 'A book')
    article = BeautifulSoup(f'<article>{CAPTIONED}{BARE}</article>', 'html.parser').article
    document.relink(article, page)
    document.number_figures(article, page)
    first, second = article.find_all('figure')
    assert ' '.join(first.figcaption.get_text().split()) == f'Figure 1. {CAPTION}'
    assert first.img['alt'] == ALT and 'book-plot' in first['class']
    assert ' '.join(second.figcaption.get_text().split()) == f'Figure 2. {ALT}.'
    # 8 pt text on 540 pt: set at the text's width, 425 pt, its text prints at 6.3 pt.
    assert first.img['style'] == 'width: 100.0%'
    [(figure, svg, size)] = document.plots
    assert figure == first['id'] and svg == '_images/a.svg' and round(size, 1) == 6.3


def test_a_plot_is_set_large_enough_for_its_text_where_the_width_allows():
    width = book_html.TEXT_WIDTH_PT
    assert book_html.plot_width(252, 10) == book_html.PLOT_MIN_SHARE  # 3.5 in, at 10 pt
    assert round(book_html.plot_width(300, 5) * width) == 420  # 5 pt text: scaled to 7 pt
    assert book_html.printed_text_pt(300, 5) == book_html.MIN_PLOT_TEXT_PT
    assert book_html.plot_width(900, 10) == 1.0  # too wide: the text's width
