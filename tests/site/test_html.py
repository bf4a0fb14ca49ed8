"""The built HTML: framework tabs, notebook links, local MathJax, the execution report.

Checked on the real book (built once by tools.build when the pipeline is there) and on
the hand-made project of tests/site/book_site.py, which also shows that a warning fails the
build.
"""

import itertools
import json
import re
import shutil
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from tests.site import book_site
from tests.site.book_site import REPO

pytestmark = pytest.mark.slow

FRAMEWORKS = ('pytorch', 'jax')
MATHJAX = '_static/mathjax/tex-chtml.js'


def soup(path):
    return BeautifulSoup(Path(path).read_text(encoding='utf-8'), 'html.parser')


def pages(site):
    return sorted(p for p in site.html.rglob('*.html') if '_static' not in p.parts)


def page(site, rel):
    return site.html / f'{rel}.html'


def local_target(site, page_path, href):
    """The file an href of a page points at inside the built site (None if external)."""
    url = urljoin(page_path.relative_to(site.html).as_posix(), href)
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    return site.html / parts.path


def twin_pairs(notebook_path):
    """Adjacent (PyTorch, JAX) code cells of a merged notebook that the page shows."""
    shown = [
        cell
        for cell in nbformat.read(notebook_path, as_version=4).cells
        if not {'remove-cell'} & set(cell.metadata.get('tags', []))
    ]
    tags = [
        set(cell.metadata.get('tags', [])) if cell.cell_type == 'code' else set() for cell in shown
    ]
    return sum(1 for a, b in itertools.pairwise(tags) if 'pytorch' in a and 'jax' in b)


def html_pairs(document):
    cells = document.select('div.cell')
    pairs = 0
    for cell in cells:
        nxt = cell.find_next_sibling()
        if (
            'tag_pytorch' in cell['class']
            and nxt is not None
            and 'tag_jax' in nxt.get('class', [])
        ):
            pairs += 1
    return pairs


def test_toc_of_the_site_lists_only_existing_pages(site):
    toc = yaml.safe_load((site.site / '_toc.yml').read_text())
    from tools.source.sections import toc_files

    for rel in toc_files(toc):
        sources = [site.site / f'{rel}{ext}' for ext in ('.md', '.ipynb')]
        assert sum(p.is_file() for p in sources) == 1, f'{rel}: needs exactly one of {sources}'
        assert page(site, rel).is_file(), rel


def test_section_pages_have_a_tab_bar_for_each_twin(site):
    assert site.sections, 'no section was built'
    for rel in site.sections:
        document = soup(page(site, rel))
        expected = twin_pairs(site.site / f'{rel}.ipynb')
        assert expected >= 1, f'{rel}: the merged notebook has no twin cells'
        assert html_pairs(document) == expected, f'{rel}: twin cells not adjacent in the HTML'
        head_scripts = [s.get('src', '') for s in document.head.find_all('script')]
        tab_script = [
            s for s in document.head.find_all('script') if 'frameworks.js' in s.get('src', '')
        ]
        assert len(tab_script) == 1, f'{rel}: frameworks.js missing from <head>: {head_scripts}'
        assert not {'defer', 'async'} & set(tab_script[0].attrs), 'must run before the first paint'
        assert any(
            'frameworks.css' in link.get('href', '') for link in document.head.find_all('link')
        )


def test_no_page_offers_the_merged_notebook(site):
    assert not (site.html / '_sources').exists()
    offered = {
        site.html / 'notebooks' / fw / f'{rel}.ipynb' for rel in site.sections for fw in FRAMEWORKS
    }
    stray = [p for p in site.html.rglob('*.ipynb') if p not in offered]
    assert stray == [], f'notebooks in the HTML that are not per-framework: {stray}'
    for path in pages(site):
        document = soup(path)
        for link in document.find_all('a', href=True):
            href = link['href'].split('#')[0]
            if href.endswith('.ipynb') and local_target(site, path, href) is not None:
                assert local_target(site, path, href).resolve() in offered, f'{path}: {href}'
        for label in (
            'download-notebook-button',
            'download-source-button',
            'launch-buttons',
            'colab-button',
            'binder-button',
        ):
            assert not document.select(f'[class*="{label}"]') and label not in str(
                document.find(class_='article-header-buttons')
            ), f'{path}: theme button {label}'


def test_section_pages_link_their_per_framework_notebooks(site):
    config = yaml.safe_load((REPO / '_config.yml').read_text())
    repo = urlsplit(config['repository']['url']).path.strip('/')
    branch = config['sphinx']['config']['notebooks_branch']
    for rel in site.sections:
        path = page(site, rel)
        document = soup(path)
        for fw in FRAMEWORKS:
            box = document.select(f'.fw-notebooks .fw-only-{fw}')
            assert len(box) == 1, f'{rel}: {fw} links'
            download = box[0].select_one('a.fw-download')['href']
            target = local_target(site, path, download)
            assert target == site.html / 'notebooks' / fw / f'{rel}.ipynb'
            assert (
                target.read_bytes()
                == (site.build / 'notebooks' / fw / f'{rel}.ipynb').read_bytes()
            )
            colab = box[0].select_one('a.fw-colab')['href']
            assert (
                colab
                == f'https://colab.research.google.com/github/{repo}/blob/{branch}/{fw}/{rel}.ipynb'
            )
    for path in pages(site):
        rel = path.relative_to(site.html).with_suffix('').as_posix()
        if rel not in site.sections:
            assert not soup(path).select('.fw-notebooks'), (
                f'{rel} is a plain page but offers notebooks'
            )


# A value that the prose quotes, as merge writes it: [text]{.fw-value .fw-only-<framework>},
# or [text]{.fw-value .fw-same} where the frameworks' values read the same.
MERGED_VALUE = re.compile(r'\[([^\]]*)\]\{\.fw-value \.fw-(?:only-)?(\w+)\}')


def test_quoted_values_show_per_framework(site):
    """Each value of the merged prose reaches the page as a span of its framework (or of
    both, ``same``), in order."""
    for rel in site.sections:
        notebook = nbformat.read(site.site / f'{rel}.ipynb', as_version=4)
        merged = [
            match.groups()
            for cell in notebook.cells
            if cell.cell_type == 'markdown'
            for match in MERGED_VALUE.finditer(cell.source)
        ]
        document = soup(page(site, rel))
        shown = [
            (
                span.get_text(),
                next(
                    c.removeprefix('fw-').removeprefix('only-')
                    for c in span['class']
                    if c.startswith(('fw-only-', 'fw-same'))
                ),
            )
            for span in document.select('span.fw-value')
        ]
        assert shown == merged, f"{rel}: the page's value spans differ from the merged prose"
        assert '{value}`' not in document.get_text() and 'data-book-value' not in str(document), (
            rel
        )


# The repr of an object without a printable value: "<torch._C.Generator at 0x7feb40d2d870>".
MEMORY_ADDRESS = re.compile(r'\bat 0x[0-9a-fA-F]{6,}')


def test_no_output_shows_a_memory_address(site):
    """An address differs on every run, so a page that prints one changes on a re-run."""
    found = []
    for path in pages(site):
        for output in soup(path).select('div.cell_output'):
            found += [
                f'{path.relative_to(site.html)}: {match.group(0)}'
                for match in MEMORY_ADDRESS.finditer(output.get_text())
            ]
    assert not found, "outputs that show an object's memory address:\n" + '\n'.join(found)


def test_mathjax_is_served_by_the_site(site):
    with_math = 0
    for path in pages(site):
        document = soup(path)
        for tag in document.find_all(['script', 'link', 'img']):
            url = tag.get('src') or tag.get('href') or ''
            if (
                tag.name == 'link'
                and 'stylesheet' not in tag.get('rel', [])
                and tag.get('as') != 'script'
            ):
                continue
            assert '://' not in url and not url.startswith('//'), (
                f'{path}: loads {url} from the network'
            )
        scripts = [s.get('src', '') for s in document.find_all('script')]
        mathjax = [s for s in scripts if 'mathjax' in s.lower()]
        if mathjax:
            with_math += 1
            assert len(mathjax) == 1 and local_target(site, path, mathjax[0]).is_file(), mathjax
            assert urlsplit(mathjax[0]).path.endswith(MATHJAX)
    assert with_math >= 1, 'no page typesets math'
    fonts = site.html / '_static/mathjax/output/chtml/fonts/woff-v2'
    assert (fonts / 'MathJax_Main-Regular.woff').is_file()


def test_equations_citations_and_references_resolve(site):
    for rel in site.sections:
        document = soup(page(site, rel))
        for ref in document.select('a.reference.internal'):
            assert local_target(
                site, page(site, rel), ref['href'].split('#')[0] or f'{Path(rel).name}.html'
            ).is_file()
    if not site.real:
        document = soup(page(site, 'demo/twins'))
        assert document.select_one('#equation-eq-demo .eqno') is not None
        cite = document.select_one("span.bibtex-citation-ref a, a[href*='references.html']")
        assert cite is not None and 'references.html' in cite['href']
        assert 'Vaswani' in soup(site.html / 'references.html').get_text()


def test_report_lists_each_notebook(site):
    document = soup(site.html / 'report.html')
    header = [
        th.get_text(' ', strip=True) for th in document.select('table')[0].select('thead th')
    ]
    assert header[:4] == ['Section', 'Framework', 'Wall time (s)', 'Status']
    body = document.select('table')[0].select('tbody tr')
    rows = [[td.get_text(' ', strip=True) for td in tr.find_all('td')] for tr in body]
    links = [tr.find('td').find('a') for tr in body]
    linked_to = [link['href'].split('#')[0] if link else None for link in links]
    assert len(rows) == 2 * len(site.sections)
    for rel in site.sections:
        title = soup(page(site, rel)).find('h1').get_text(' ', strip=True).rstrip('#').strip()
        mine = [row for row, href in zip(rows, linked_to, strict=True) if href == f'{rel}.html']
        assert [row[1] for row in mine] == ['PyTorch', 'JAX'], f'{rel}: {mine}'
        assert mine[0][0] and title.endswith(mine[0][0]), (title, mine[0][0])
        assert all(row[3] in ('executed', 'cached') for row in mine), mine
        assert all(float(row[2]) >= 0 for row in mine)
    text = document.get_text(' ', strip=True)
    assert 'Python' in text and 'Hardware' in text
    if not site.real:
        assert {(row[1], row[3]) for row in rows} == {('PyTorch', 'executed'), ('JAX', 'cached')}


def test_unchanged_site_keeps_its_html():
    from tools.paths import Layout
    from tools.site.render import render

    built = book_site.demo_site()
    index = built.html / 'index.html'
    before = index.stat().st_mtime_ns
    notices = []
    render(Layout(root=built.build.parent), quiet=True, progress=notices.append)
    assert any('nothing changed' in n for n in notices), notices
    assert index.stat().st_mtime_ns == before


def test_a_warning_fails_the_build(tmp_path):
    from tools.paths import Layout
    from tools.site.render import RenderError, render

    root = tmp_path / 'project'
    (root / 'book').mkdir(parents=True)
    (root / '_config.yml').write_text((REPO / '_config.yml').read_text())
    shutil.copytree(REPO / 'book/_static', root / 'book/_static')
    (root / 'book/index.md').write_text('# Broken\n\nSee {ref}`no-such-label`.\n')
    (root / 'book/references.bib').write_text((REPO / 'book/references.bib').read_text())
    (root / '_toc.yml').write_text('format: jb-book\nroot: index\nchapters:\n  - file: report\n')
    with pytest.raises(RenderError, match='no-such-label'):
        render(Layout(root=root), quiet=True, progress=lambda message: None)


def test_every_image_has_a_text_alternative(site):
    """Figures and plot outputs: an alt text that is words, not the image's file name."""
    for path in pages(site):
        for image in soup(path).find_all('img'):
            alt = image.get('alt', '').strip()
            assert alt and not alt.endswith(('.png', '.svg', '.jpg')) and '/' not in alt, (
                f'{path}: <img src={image.get("src")}> has alt {alt!r}'
            )


def test_plot_outputs_take_their_description_as_alt_text(site):
    if site.real:
        pytest.skip('the hand-made book has one described and one undescribed plot')
    document = soup(page(site, 'demo/twins'))
    alts = {
        fw: [img['alt'] for img in document.select(f'div.cell.tag_{fw} .cell_output img')]
        for fw in FRAMEWORKS
    }
    assert alts == {
        'pytorch': [book_site.PLOT_DESCRIPTION],
        'jax': ['Image output of the code cell'],
    }


def test_theme_html_is_made_accessible(site):
    document = soup(site.html / 'references.html')
    entries = document.select('[role="list"] > *')
    assert entries and all(entry.get('role') == 'listitem' for entry in entries)
    for path in pages(site):
        document = soup(path)
        for summary in document.select('.bd-sidebar-primary summary'):
            assert summary.get_text(strip=True) or summary.get('aria-label'), f'{path}: {summary}'
        for button in document.select('.search-button-field'):
            name = button.get('aria-label') or button.get_text(' ', strip=True)
            assert button.get_text(' ', strip=True).split()[0] in name, f'{path}: {button}'
        assert document.select_one('.bd-sidebar-primary nav .navbar-brand'), (
            f"{path}: the sidebar's title is outside a landmark"
        )
        for summary in document.select('article details.hide > summary'):
            assert not summary.get('aria-label'), f'{path}: {summary}'
    if not site.real:
        assert soup(page(site, 'demo/more')).select('article details.hide > summary')


@pytest.mark.usefixtures('corpus')
def test_reference_page_documents_every_public_name_of_both_modules():
    """book/d2l-mini.md is made from the docstrings: a public name added to either module
    (or to the framework-free helpers they re-export) appears on it by itself."""
    import importlib

    site = book_site.real_site()
    if site is None:
        pytest.skip('the reference page is part of the real book only')
    documented = {tag['id'] for tag in soup(page(site, 'd2l-mini')).select('dt[id]')}
    for framework in ('torch', 'jax'):
        module = importlib.import_module(f'd2l_mini.{framework}')
        for name in module.__all__:
            obj = getattr(module, name)
            home = obj.__module__ if obj.__module__.startswith('d2l_mini.') else module.__name__
            assert f'{home}.{name}' in documented, f'd2l.{name} ({framework}) is not documented'


def library_name_uses(pre):
    """The ``d2l`` of each ``d2l.<name>`` in a code block's HTML, as Pygments marks it."""
    for span in pre.select('span.n'):
        dot = span.find_next_sibling('span')
        if span.get_text() == 'd2l' and dot is not None and dot.get_text() == '.':
            yield span


def test_library_names_in_code_link_to_their_entries_on_the_reference_page(site):
    """Every ``d2l.<name>`` in a code cell links to its name's entry on the d2l_mini
    reference page: a cell of one framework to that framework's entry (or a shared
    helper's), an untagged cell to each framework's (data-fw-hrefs)."""
    reference = page(site, 'd2l-mini')
    ids = {tag['id'] for tag in soup(reference).select('[id]')} if reference.is_file() else set()
    linked = 0
    for path in pages(site):
        for cell in soup(path).select('div.cell'):
            frameworks = [f for f in FRAMEWORKS if f'tag_{f}' in cell['class']] or FRAMEWORKS
            for pre in cell.select('div.cell_input pre'):
                for use in library_name_uses(pre):
                    link = use.find_parent('a')
                    if not ids:  # the demo book has no reference page: nothing to link to
                        assert link is None, f'{path}: {link}'
                        continue
                    assert link is not None and 'd2l-ref' in link['class'], f'{path}: {use.parent}'
                    targets = json.loads(link.get('data-fw-hrefs', 'null')) or {
                        f: link['href'] for f in frameworks
                    }
                    assert set(targets) == set(frameworks), f'{path}: {link}'
                    assert link['href'] == targets[frameworks[0]], f'{path}: {link}'
                    for framework, href in targets.items():
                        assert local_target(site, path, href) == reference, f'{path}: {href}'
                        fragment = urlsplit(href).fragment
                        assert fragment in ids, f'{path}: {href} names no entry'
                        other = {'pytorch': 'd2l_mini.jax.', 'jax': 'd2l_mini.torch.'}[framework]
                        assert not fragment.startswith(other), f'{path}: {framework} {href}'
                    linked += 1
    assert linked > 50 if ids else linked == 0, linked


def code_rows(cell):
    """The rows of a cell's code in the side-by-side view: 'line', 'changed' or 'filler'."""
    pre = cell.select_one('.cell_input pre')
    if pre is None:
        return None
    rows = []
    for row in pre.find_all('span', recursive=False):
        classes = row.get('class', [])
        if 'fw-filler' in classes:
            assert row.get('aria-hidden') == 'true' and row.get_text() == '\n', row
            rows.append('filler')
        elif 'fw-line' in classes:
            rows.append('changed' if 'fw-changed' in classes else 'line')
    return rows


def test_twin_cells_carry_their_rows_for_the_side_by_side_view(site):
    pairs = 0
    for rel in site.sections:
        cells = soup(page(site, rel)).select('div.cell')
        twins = set()
        for a, b in itertools.pairwise(cells):
            if 'tag_pytorch' in a['class'] and 'tag_jax' in b.get('class', []):
                if b is a.find_next_sibling() and code_rows(a) is not None:
                    twins |= {id(a), id(b)}
                    rows = code_rows(a), code_rows(b)
                    assert len(rows[0]) == len(rows[1]) > 0, f'{rel}: {rows}'
                    # A filler faces a line that differs; equal lines are not marked.
                    for x, y in zip(*rows, strict=True):
                        assert 'filler' not in (x, y) or {x, y} == {'filler', 'changed'}
                        assert {x, y} != {'line', 'changed'}, (rel, rows)
                    # Each line of the code is one row of its own.
                    for cell, cell_rows in zip((a, b), rows, strict=True):
                        lines = cell.select('.cell_input pre > span.fw-line')
                        assert len(lines) == len(cell_rows) - cell_rows.count('filler')
                        assert all(line.get_text().count('\n') == 1 for line in lines), rel
                        assert lines[-1].get_text().endswith('\n'), rel
                    pairs += 1
        for cell in cells:
            if id(cell) not in twins and cell.select_one('.cell_input pre') is not None:
                assert not code_rows(cell), f'{rel}: rows on a cell without a twin'
    assert pairs >= 1
    exclude = (site.html / '_static' / 'copybutton.js').read_text(encoding='utf-8')
    assert re.search(r"let exclude = '[^']*\.fw-filler", exclude), 'the copy button copies fillers'


# The texts of a matplotlib SVG (tick labels, axis labels, legend), which it writes as a
# comment before each text's glyphs.
SVG_TEXT = re.compile(r'<g id="text_\d+">\s*<!-- (.*?) -->')


def plot_texts(notebook: nbformat.NotebookNode) -> list[tuple[str, list[str]]]:
    """The texts of every SVG output in order, each with its cell's id."""
    texts = []
    for cell in notebook.cells:
        for output in cell.get('outputs', []):
            svg = output.get('data', {}).get('image/svg+xml')
            if svg:
                svg = ''.join(svg) if isinstance(svg, list) else svg
                texts.append((cell.get('id'), SVG_TEXT.findall(svg)))
    return texts


def test_twin_plots_share_their_axes(site):
    """A plot that both frameworks draw from the same cell shows the same ticks in both,
    so that "Both" compares the curves and not the axes: where the two runs' data would
    scale the axes apart, the cell sets the limits."""
    if not site.real:
        pytest.skip('the demo book draws no plots')
    differing = []
    for rel in site.sections:
        pytorch, jax = (
            plot_texts(nbformat.read(Path(site.build, 'executed', fw, f'{rel}.ipynb'), 4))
            for fw in ('pytorch', 'jax')
        )
        if len(pytorch) != len(jax):
            differing.append(f'{rel}: {len(pytorch)} plots in PyTorch, {len(jax)} in JAX')
        for (cell, mine), (_, theirs) in zip(pytorch, jax, strict=False):
            if mine != theirs:
                differing.append(f'{rel}, cell {cell}: {sorted(set(mine) ^ set(theirs))}')
    assert not differing, 'twin plots with different axes (set xlim/ylim):\n' + '\n'.join(
        differing
    )
