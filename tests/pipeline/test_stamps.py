"""tools.stamps: one digest says whether a product is up to date with its inputs."""

import shutil

from tests.site import book_site
from tools.paths import ROOT, Layout, write_atomic
from tools.site import pdf, render
from tools.stamps import Digest, module_files, read_stamp, write_stamp


def test_a_digest_names_files_relative_to_the_project(tmp_path):
    """The same project in two folders gives the same digest; another byte does not."""
    first = book_site.make_project(tmp_path / 'here')
    second = tmp_path / 'there'
    shutil.copytree(first, second)

    def digest(root):
        layout = Layout(root=root)
        return Digest(layout).files(sorted(layout.book.rglob('*.md'))).hexdigest()

    assert digest(first) == digest(second)
    page = next((second / 'book').rglob('*.md'))
    page.write_text(page.read_text() + ' ')
    assert digest(first) != digest(second)


def test_labels_keep_texts_apart():
    layout = Layout()
    assert Digest(layout).text('a', 'bc').hexdigest() != Digest(layout).text('ab', 'c').hexdigest()
    assert Digest(layout).text('a', 'b').text('c', '').hexdigest() != (
        Digest(layout).text('a', '').text('c', 'b').hexdigest()
    )


def test_a_missing_file_differs_from_an_empty_one(tmp_path):
    layout = Layout(root=tmp_path)
    missing = Digest(layout).file(tmp_path / 'f').hexdigest()
    (tmp_path / 'f').write_text('')
    assert Digest(layout).file(tmp_path / 'f').hexdigest() != missing


def test_code_follows_the_imports_of_tools_modules_only():
    render_code = module_files(render.RENDER_CODE)
    assert ROOT / 'tools/site/report.py' in render_code  # imported by the render step
    assert ROOT / 'tools/site/twins.py' in render_code  # imported by an extension module
    assert ROOT / 'tools/site/__init__.py' in render_code  # a package runs on import
    # steps that do not make the HTML: editing them renders nothing again
    for other in ('tools/readers.py', 'tools/site/pdf.py', 'tools/publish.py'):
        assert ROOT / other not in render_code
    printing = module_files(['tools.site.pdf'])
    assert {ROOT / 'tools/site/book_html.py', ROOT / 'tools/site/edition.py'} <= set(printing)
    assert all(path.is_relative_to(ROOT / 'tools') for path in printing)


def test_the_pdf_stamp_follows_the_html_s_digest(tmp_path):
    layout = Layout(root=book_site.make_project(tmp_path / 'project'))
    write_stamp(layout.render_stamp, inputs='one')
    first = pdf.stamp(layout, 'a browser')
    assert first == pdf.stamp(layout, 'another browser') | {'browser': 'a browser'}
    write_stamp(layout.render_stamp, inputs='two')
    assert pdf.stamp(layout, 'a browser')['inputs'] != first['inputs']


def test_stamps_and_atomic_writes(tmp_path):
    path = tmp_path / 'deep' / 'stamp.json'
    assert read_stamp(path) == {}
    write_stamp(path, inputs='abc', browser='b')
    assert read_stamp(path) == {'inputs': 'abc', 'browser': 'b'}
    data = tmp_path / 'data.zip'
    assert write_atomic(data, b'\x00\x01') and data.read_bytes() == b'\x00\x01'
    assert not write_atomic(data, b'\x00\x01'), 'the same bytes are not written again'
    assert write_atomic(data, 'text') and data.read_text() == 'text'
    assert sorted(p.name for p in tmp_path.iterdir()) == ['data.zip', 'deep'], 'no temporary left'
