"""What the printed book's text says where the site's would not do on paper (fast: pages
in the theme's shape, no Sphinx, no browser): references with the page they point at,
"Back to the exercise." as the exercise's number, section and page, both frameworks on
the bridges, the edition's module in the reference, no ``#@save``, inline maths kept
with its punctuation, long inline code breakable, prose hyphenated."""

import yaml
from bs4 import BeautifulSoup

from tools.site import book_html, hyphenate

TOC = {
    'format': 'jb-book',
    'root': 'index',
    'parts': [
        {'caption': 'Getting started', 'chapters': [{'file': 'pytorch-to-nnx'}]},
        {
            'caption': 'The chapter',
            'numbered': True,
            'chapters': [{'file': 'ch/index', 'sections': [{'file': 'ch/vit'}]}],
        },
        {
            'caption': 'Solutions',
            'chapters': [{'file': 'solutions/index', 'sections': [{'file': 'solutions/vit'}]}],
        },
        {'caption': 'Back matter', 'chapters': [{'file': 'd2l-mini'}, {'file': 'references'}]},
    ],
}
SAVE = (
    '<div class="cell tag_pytorch"><div class="cell_input"><pre><span></span>'
    '<span class="fw-line"><span class="c1">#@save</span>\n</span>'
    '<span class="fw-line"><span class="k">class</span> A: pass\n</span></pre></div></div>'
)
PAGES = {
    'index': '<section id="welcome"><h1>Welcome</h1><p>Read '
    '<a class="reference internal" href="ch/vit.html"><span class="doc">The ViT</span></a> '
    'first.</p></section>',
    'pytorch-to-nnx': '<section id="bridge"><h1>From PyTorch to NNX</h1>'
    '<div class="cell tag_pytorch"><pre>import torch</pre></div>'
    '<div class="cell tag_jax"><pre>from flax import nnx</pre></div>'
    '<p class="fw-only-jax">Only in JAX.</p></section>',
    'ch/index': '<section id="chapter"><h1><span class="section-number">1. </span>Chapter'
    '</h1></section>',
    'ch/vit': '<section id="vit"><h1><span class="section-number">1.1. </span>The ViT</h1>'
    '<p>As <a class="reference internal" href="#fig-x"><span class="std std-numref">'
    'Fig. 1.1.1</span></a> shows, and ('
    '<a class="reference internal" href="#ex-gap"><span class="std std-ref">Exercise 1'
    '</span></a>) asks; the patch '
    '<span class="math notranslate nohighlight">\\(\\mathbf{x}_p\\)</span>, its embedding '
    '(<span class="math notranslate nohighlight">\\(d\\)</span> features) and '
    '<code class="docutils literal notranslate"><span class="pre">'
    'd2l_mini.plotting.describe</span></code>; see '
    '<a class="reference internal" href="../references.html#id2">Vaswani</a> and '
    '<a class="reference internal" href="#equation-eq-x">(1.1)</a>.</p>'
    '<figure id="fig-x"><img alt="A figure" src="../_images/x.svg"></figure>'
    f'{SAVE}'
    '<section id="exercises"><h2>Exercises</h2><ol id="ex-gap"><li><p><strong>Gap.</strong> '
    '(<a class="reference internal" href="../solutions/vit.html#sol-gap">'
    '<span class="std std-ref">solution</span></a>) Replace the token.</p></li></ol>'
    '</section></section>',
    'solutions/index': '<section id="solutions"><h1>Solutions</h1></section>',
    'solutions/vit': '<section id="sol-vit"><h1>Solutions: The ViT</h1>'
    '<section id="sol-gap"><h2>Exercise 1: Without the Token</h2>'
    '<p>Back to <a class="reference internal" href="../ch/vit.html#ex-gap">'
    '<span class="std std-ref">the exercise</span></a>.</p></section></section>',
    'd2l-mini': '<section id="ref"><h1>The library</h1>'
    '<section id="pytorch-d2l-mini-torch"><h2>PyTorch: <code class="docutils literal">'
    '<span class="pre">d2l_mini.torch</span></code></h2><dl id="d2l_mini.torch.plot">'
    '<dt>plot</dt></dl></section>'
    '<section id="jax-d2l-mini-jax"><h2>JAX: <code class="docutils literal">'
    '<span class="pre">d2l_mini.jax</span></code></h2><dl id="d2l_mini.jax.plot">'
    '<dt>plot</dt></dl></section></section>',
    'references': '<section id="references"><h1>References</h1>'
    '<div class="citation" id="id2">Vaswani et al.</div></section>',
}


def document(tmp_path, framework='pytorch'):
    html = tmp_path / 'html'
    for rel, article in PAGES.items():
        path = html / f'{rel}.html'
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f'<html><head><title>x</title></head><body><article class="bd-article">{article}'
            '</article></body></html>'
        )
    site = tmp_path / 'site'
    site.mkdir(exist_ok=True)
    (site / '_toc.yml').write_text(yaml.safe_dump(TOC))
    pages = book_html.site_pages(site)
    return BeautifulSoup(
        book_html.Document(html, pages, framework, 'A book').html(), 'html.parser'
    )


def said(element):
    """The text as printed, a page-number slot written as [target]."""
    for slot in element.select(f'.{book_html.REF_SLOT}'):
        slot.string = f'[{slot["data-target"]}]'
    return ' '.join(element.get_text().replace('\u00a0', ' ').split())


def test_references_carry_the_page_they_point_at(tmp_path):
    doc = document(tmp_path)
    text = said(doc.find(id='ch-vit'))
    assert 'As Figure 1, p. [ch-vit--fig-x] shows' in text
    assert '(Exercise 1, p. [ch-vit--ex-gap]) asks' in text
    assert 'Read The ViT (p. [ch-vit]) first.' in said(doc.find(id='index'))
    # Citations and equations carry none.
    assert 'Vaswani and (1.1).' in text
    assert '(solution on p. [solutions-vit--sol-gap]) Replace' in text


def test_back_to_the_exercise_names_it_its_section_and_page(tmp_path):
    back = document(tmp_path).select_one('p.book-back-ref')
    assert said(back) == 'Exercise 1 in Section 1.1, p. [ch-vit--ex-gap].'
    assert back.a['href'] == '#ch-vit--ex-gap'


def test_the_bridges_keep_both_frameworks_labelled_and_the_reference_one_module(tmp_path):
    for framework, other in (('pytorch', 'jax'), ('jax', 'torch')):
        doc = document(tmp_path, framework)
        bridge = doc.find(id='pytorch-to-nnx')
        labels = [p.get_text() for p in bridge.select('.book-cell-label')]
        assert labels == ['PyTorch', 'JAX'] and 'import torch' in bridge.text
        assert 'from flax import nnx' in bridge.text
        assert ('Only in JAX.' in bridge.text) == (framework == 'jax')
        reference = doc.find(id='d2l-mini')
        module = 'torch' if framework == 'pytorch' else 'jax'
        assert f'd2l_mini.{module}' in reference.text and f'd2l_mini.{other}' not in reference.text


def test_no_save_mark_is_printed(tmp_path):
    doc = document(tmp_path)
    code = doc.find(id='ch-vit').select_one('div.cell_input pre').get_text()
    assert '#@save' not in code and code.startswith('class A')


def test_inline_maths_keeps_its_punctuation_and_long_code_may_break(tmp_path):
    doc = document(tmp_path)
    groups = [g.get_text() for g in doc.select('.book-nobreak')]
    assert groups == ['\\(\\mathbf{x}_p\\),', '(\\(d\\)']
    code = doc.find('code', string=None, class_='docutils')
    assert len(code.find_all('wbr')) == 3 and code.get_text() == 'd2l_mini.plotting.describe'


def test_words_are_hyphenated_as_tex_would():
    assert hyphenate.breaks('representation') == [3, 5, 8, 10]  # rep-re-sen-ta-tion
    assert hyphenate.hyphenate('table') == 'table', 'a short word stays whole'
    assert hyphenate.hyphenate('LayerNorm') == 'LayerNorm', 'so does a name in capitals'
    assert hyphenate.hyphenated(['gradients', 'block']) == {'gradients': 'gra\u00addi\u00adents'}
