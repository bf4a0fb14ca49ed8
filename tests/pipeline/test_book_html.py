"""tools.site.book_html: the built pages joined into one framework's printable document
(fast: hand-written pages in the theme's shape, no Sphinx, no browser)."""

import pytest
import yaml
from bs4 import BeautifulSoup

from tools.site import book_html

TOC = {
    'format': 'jb-book',
    'root': 'index',
    'parts': [
        {
            'caption': 'The chapter',
            'numbered': True,
            'chapters': [{'file': 'ch/index', 'sections': [{'file': 'ch/a'}, {'file': 'ch/b'}]}],
        },
        {'caption': 'Back matter', 'chapters': [{'file': 'references'}]},
    ],
}

HEAD = (
    '<head><title>x</title><link rel="stylesheet" href="{up}_static/theme.css">'
    '<script src="{up}_static/frameworks.js"></script>'
    '<script>window.MathJax = {{}}</script>'
    '<script defer src="{up}_static/mathjax/tex-chtml.js"></script></head>'
)
PAGES = {
    'index': '<section id="welcome"><h1>Welcome<a class="headerlink" href="#welcome">#</a></h1>'
    '<p>Start at <a class="reference internal" href="ch/a.html#sec-a">the first section</a>.'
    '</p></section>',
    'ch/index': '<section id="the-chapter"><h1><span class="section-number">1. </span>'
    'The chapter</h1><p>See <a href="a.html">A</a>.</p></section>',
    'ch/a': '<section id="section-a"><span id="sec-a"></span>'
    '<h1><span class="section-number">1.1. </span>Section A</h1>'
    '<div class="fw-notebooks"><a href="../notebooks/pytorch/ch/a.ipynb">download</a>'
    '<a href="https://colab.research.google.com/x">open in Colab</a></div>'
    '<div class="cell tag_pytorch"><pre>import torch</pre></div>'
    '<div class="cell tag_jax"><pre>from flax import nnx</pre></div>'
    '<div class="cell"><pre>sizes = [1, 2]</pre></div>'
    '<p>Loss <span class="fw-value fw-only-pytorch">0.5</span>'
    '<span class="fw-value fw-only-jax">0.6</span>, as '
    '<a class="reference internal" href="../references.html#id2">Vaswani, 2017</a> and '
    '<a href="#equation-eq-x">(1.1)</a> say; '
    '<a href="https://pytorch.org">PyTorch</a>, '
    '<a href="../notebooks/jax/ch/a.ipynb">the notebook</a>.</p>'
    '<div class="math" id="equation-eq-x"><span class="eqno">(1.1)</span></div>'
    '<figure id="fig-x"><img alt="A figure" src="../_images/x.svg"></figure>'
    '<details class="admonition hide above-input"><summary>Show code cell source</summary>'
    '<div class="cell"><pre>hidden = 1</pre></div></details>'
    '<div class="cell"><div class="cell_output"><img alt="Line plot of loss against step" '
    'src="../_images/plot.svg"></div></div>'
    '<p class="web-only">Pick a tab.</p><p class="print-only">On paper, one framework.</p>'
    '<details class="sd-dropdown sd-card"><summary class="sd-summary-title">'
    '<span class="sd-summary-text">Solution</span><span class="sd-summary-state-marker">'
    '<svg><path d="M0 0"></path></svg></span></summary>'
    '<div class="sd-card-body"><p>The answer.</p></div></details>'
    '<section id="a-part"><h2><span class="section-number">1.1.1. </span>A part</h2>'
    '<h3>Deeper</h3></section></section>',
    'ch/b': '<section id="section-b"><h1><span class="section-number">1.2. </span>Section B'
    '</h1><div class="container fw-only-jax"><p>Only in JAX.</p></div>'
    '<div class="cell"><pre><a class="reference internal d2l-ref" href="../references.html#id2"'
    ' data-fw-hrefs=\'{"pytorch": "../references.html#id2", "jax": "../references.html#id3"}\'>'
    'd2l.plot</a>(x)</pre></div>'
    '<p>Back to <a href="a.html#sec-a">A</a>, as '
    '<a class="reference internal" href="a.html#fig-x"><span class="std std-numref">'
    'Fig. 1.1.1</span></a> shows.</p></section>',
    'references': '<section id="references"><h1>References</h1>'
    '<div class="citation" id="id2">Vaswani et al.</div>'
    '<div class="citation" id="id3">Xiong et al.</div></section>',
}


@pytest.fixture
def built(tmp_path):
    html = tmp_path / 'html'
    for rel, article in PAGES.items():
        up = '../' * rel.count('/')
        path = html / f'{rel}.html'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'<html>{HEAD.format(up=up)}<body><div class="bd-sidebar">nav</div>'
            f'<article class="bd-article">{article}</article></body></html>'
        )
    site = tmp_path / 'site'
    site.mkdir()
    (site / '_toc.yml').write_text(yaml.safe_dump(TOC))
    return html, site


def document(built, framework):
    html, site = built
    text = book_html.book_document(html, site, framework, 'A book', 'https://o.github.io/b/')
    return BeautifulSoup(text, 'html.parser')


def test_pages_are_read_in_the_toc_s_order_with_their_part_and_depth():
    pages = book_html.reading_order(TOC)
    assert [(p.rel, p.part, p.depth) for p in pages] == [
        ('index', None, 0),
        ('ch/index', 'The chapter', 0),
        ('ch/a', 'The chapter', 1),
        ('ch/b', 'The chapter', 1),
        ('references', 'Back matter', 0),
    ]


def test_only_one_framework_and_none_of_the_page_s_furniture_is_kept(built):
    pytorch, jax = document(built, 'pytorch'), document(built, 'jax')
    assert 'import torch' in pytorch.text and 'from flax import nnx' not in pytorch.text
    assert 'from flax import nnx' in jax.text and 'import torch' not in jax.text
    assert 'sizes = [1, 2]' in pytorch.text and 'sizes = [1, 2]' in jax.text
    assert 'Loss 0.5,' in pytorch.text and 'Loss 0.6,' in jax.text
    assert 'Only in JAX.' in jax.text and 'Only in JAX.' not in pytorch.text
    for doc in (pytorch, jax):
        pages = ' '.join(page.text for page in doc.select('section.book-page'))
        assert not doc.select('.fw-notebooks, a.headerlink, .bd-sidebar')
        assert 'Colab' not in pages and 'Show code cell source' not in pages
        assert 'hidden = 1' in pages and not doc.find('details') and not doc.find('summary')
        assert not doc.select('.admonition'), 'an unfolded cell is no box'
        scripts = [s.get('src') for s in doc.find_all('script')]
        assert scripts == [None, '_static/mathjax/tex-chtml.js'], 'only MathJax runs'
        assert doc.find('link', rel='stylesheet')['href'] == '_static/theme.css'
        assert doc.html['class'] == ['fw-js', f'fw-{(doc is jax and "jax") or "pytorch"}']


def test_links_between_pages_become_links_inside_the_document(built):
    doc = document(built, 'pytorch')
    ids = {element['id'] for element in doc.find_all(id=True)}
    hrefs = {link.get_text(): link['href'] for link in doc.find_all('a', href=True)}
    assert hrefs['the first section'] == '#ch-a--sec-a'
    assert hrefs['A'] == '#ch-a--sec-a' and hrefs['Vaswani, 2017'] == '#references--id2'
    assert hrefs['(1.1)'] == '#ch-a--equation-eq-x'
    assert hrefs['PyTorch'] == 'https://pytorch.org'
    internal = [href[1:] for href in hrefs.values() if href.startswith('#')]
    assert set(internal) <= ids, set(internal) - ids
    assert 'the notebook' in doc.text and 'the notebook' not in hrefs, 'a file link is unwrapped'
    assert doc.find('img')['src'] == '_images/x.svg'
    assert doc.find(id='ch-b')['class'] == ['book-page', 'book-depth-1']


def test_a_link_with_a_target_per_framework_keeps_the_document_s_framework(built):
    for framework, target in (('pytorch', '#references--id2'), ('jax', '#references--id3')):
        [link] = document(built, framework).select('a.d2l-ref')
        assert link['href'] == target and not link.has_attr('data-fw-hrefs'), link


def test_headings_nest_below_parts_and_chapters_and_fill_the_contents(built):
    doc = document(built, 'pytorch')
    headings = [(h.name, h.get_text(' ', strip=True)) for h in doc.find_all(book_html.HEADINGS)]
    # The part "The chapter" is its chapter's title: the chapter stands for it.
    assert headings == [
        ('h1', 'Contents'),
        ('h1', book_html.ROOT_TITLE),
        ('h1', '1. The chapter'),
        ('h2', '1.1. Section A'),
        ('h3', '1.1.1. A part'),
        ('h4', 'Deeper'),
        ('h2', '1.2. Section B'),
        ('h1', 'Back matter'),
        ('h2', 'References'),
    ]
    titles = [h['data-book-title'] for h in doc.find_all(book_html.HEADINGS)]
    assert titles[:4] == ['Contents', book_html.ROOT_TITLE, '1 The chapter', '1.1 Section A']
    entries = []
    for li in doc.select('nav.book-toc li'):
        number = li.select_one('.book-toc-number')
        title = li.select_one('.book-toc-title').get_text()
        entries.append((li['class'][0], number.get_text() if number else '', title, li.a['href']))
    assert entries == [
        ('book-toc-level-1', '', book_html.ROOT_TITLE, '#index--welcome'),
        ('book-toc-level-1', '1.', 'The chapter', '#ch-index--the-chapter'),
        ('book-toc-level-2', '1.1.', 'Section A', '#ch-a--section-a'),
        ('book-toc-level-3', '1.1.1.', 'A part', '#ch-a--a-part'),
        ('book-toc-level-2', '1.2.', 'Section B', '#ch-b--section-b'),
        ('book-toc-level-1', '', 'Back matter', '#book-part-1'),
        ('book-toc-level-2', '', 'References', '#references--references'),
    ]
    kinds = [li['class'][1] for li in doc.select('nav.book-toc li')]
    assert kinds == [
        'book-toc-chapter',
        'book-toc-part',
        'book-toc-section',
        'book-toc-subsection',
        'book-toc-section',
        'book-toc-part',
        'book-toc-chapter',
    ]
    slots = doc.select(f'.{book_html.PAGE_SLOT}')
    assert [slot['data-target'] for slot in slots] == [e[3][1:] for e in entries]


def test_the_title_page_names_the_framework_and_its_back_the_site(built):
    doc = document(built, 'jax')
    title = doc.select_one('.book-title-page')
    assert 'A book' in title.text and 'The JAX edition' in title.text
    colophon = doc.select_one('.book-colophon')
    assert colophon.a['href'] == 'https://o.github.io/b/' and 'in PyTorch as well' in colophon.text


def test_the_colophon_says_how_the_outputs_were_made(built):
    html, site = built
    edition = book_html.Edition(
        title='A book',
        framework='pytorch',
        authors='The authors',
        date='4 December 2026',
        commit='0123456789ab',
        executed='2026-12-04 09:40 to 10:15 UTC',
        python='3.11.7',
        versions=(('torch', '2.5.1'), ('numpy', '2.1.0')),
        hardware=('CPU: 2 cores',),
        notebooks=12,
        printer='Chromium 150',
    )
    doc = BeautifulSoup(
        book_html.book_document(html, site, 'pytorch', 'A book', edition=edition), 'html.parser'
    )
    title = doc.select_one('.book-title-page').text
    assert 'The authors' in title and '4 December 2026' in title
    colophon = ' '.join(doc.select_one('.book-colophon').text.split())
    for fact in (
        'running the 12 PyTorch notebooks of the book, 2026-12-04 09:40 to 10:15 UTC on CPU: 2',
        'Python 3.11.7, torch 2.5.1, numpy 2.1.0',
        'commit 0123456789ab',
        'Chromium 150',
    ):
        assert fact in colophon, fact


def test_web_only_prose_is_left_out_and_dropdowns_print_open(built):
    doc = document(built, 'pytorch')
    assert 'Pick a tab.' not in doc.text and 'On paper, one framework.' in doc.text
    box = doc.select_one('.book-unfolded')
    assert box.select_one('.book-unfolded-title').get_text() == 'Solution'
    assert 'The answer.' in box.text and not box.find('svg')


def test_figures_are_numbered_and_plots_captioned(built):
    doc = document(built, 'pytorch')
    captions = [' '.join(f.figcaption.text.split()) for f in doc.find_all('figure')]
    assert captions == ['Figure 1.', 'Figure 2. Line plot of loss against step.']
    assert doc.find('a', href='#ch-a--fig-x').get_text() == 'Figure 1'


def test_sections_run_on_and_each_page_of_the_site_marks_its_running_heads(built):
    html, site = built
    document = book_html.Document(html, book_html.site_pages(site), 'pytorch', 'A book')
    doc = BeautifulSoup(document.html(), 'html.parser')
    assert not doc.find(id='ch-b').get('style'), 'no named page: sections run on'
    assert document.marks[-2:] == [
        book_html.Mark('ch-b--section-b', False, '1 The chapter', '1.2 Section B'),
        book_html.Mark('references--references', True, 'Back matter', 'References'),
    ]
    style = doc.find(id=book_html.HEADS_STYLE).get_text()
    assert '@counter-style book-right-head' in style


def test_a_page_without_its_article_is_named(built):
    html, site = built
    (html / 'ch' / 'b.html').write_text('<html><body>no article</body></html>')
    with pytest.raises(book_html.BookHtmlError, match=r'ch/b\.html has no <article'):
        book_html.book_document(html, site, 'jax', 'A book')
    (html / 'ch' / 'b.html').unlink()
    with pytest.raises(book_html.BookHtmlError, match=r'b\.html is missing: render'):
        book_html.book_document(html, site, 'jax', 'A book')
