"""The whole book as one HTML document per framework, made from the built site, to print.

tools/site/pdf.py prints it.  The document is assembled from the pages that jupyter-book
built (``_build/site/_build/html``), in the order of the site's ``_toc.yml``, so that
section and equation numbers and citations are the HTML's own:

- a title page (title, edition, authors, date), its back (the colophon: where, when and
  with which versions the outputs were made, and from which commit; tools/site/edition.py
  gathers them) and a table of contents (parts, chapters, sections and their first level
  of headings, with their numbers and an empty slot for the page number);
- each page's article, with the ids prefixed by the page (``<page>--<id>``) so that
  they stay unique, links between pages turned into links inside the document, links
  to other local files (notebooks, downloads) unwrapped to their text, and images
  pointing at the site's files;
- only one framework: the other framework's cells and ``fw-only-*`` prose removed, no
  tab bars, no notebook or Colab links, no heading permalinks; what only a browser has a
  use for (``web-only`` prose) and what only a notebook shows (``notebook-only``)
  removed, unless also marked ``print-only``, and ``print-only`` prose kept (the site
  hides it);
  folded parts unfolded, without their toggles: a hidden cell source is shown as any
  other, a dropdown (a solution) is a box under its title. The bridges between the
  frameworks (``BOTH_CODE``) keep both frameworks' cells, each labelled; the library's
  reference keeps the edition's module; a ``#@save`` line (a note for ``make save``) is
  not printed;
- every figure numbered in one sequence, "Figure 1" to "Figure N", with a caption: a
  figure of the prose, or a plot whose cell gives its caption (``mystnb: figure:
  caption:``, which myst-nb renders as a figure), keeps its caption under the new number
  (references to it follow); a plot without one gets its text alternative. A plot is
  set large enough for the text it draws to print at ``MIN_PLOT_TEXT_PT`` or more, where
  the text's width allows;
- references in the prose carry the page they point at (``, p. 27``; a slot that
  tools/site/pdf.py fills from a first printing, as the contents' page numbers); "Back
  to the exercise." names the exercise, its section and page;
- line breaking as on paper: inline maths kept with the punctuation that touches it, long
  inline code breakable after its dots, underscores and slashes;
- headings re-levelled so that the PDF outline nests parts, chapters and sections (a
  part's caption is a heading of its own, except where its first chapter has the same
  title: then that chapter stands for the part); the root page, whose title is the book's,
  is titled "About this book";
- sections that run on within their chapter (a new page for each chapter only), and
  ``marks``: where each page of the site starts, with the running heads it sets (the
  chapter's title on left pages, the section's on right ones), which tools/site/pdf.py
  turns into the heads and folios of each printed page.

The document's stylesheets are the site's, plus ``pdf.css`` beside this module.
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import yaml
from bs4 import BeautifulSoup, NavigableString, Tag

from tools.frameworks import FRAMEWORKS, check_framework
from tools.frameworks import framework as framework_row
from tools.site.edition import Edition
from tools.steps import StepFailed

PRINT_CSS = Path(__file__).with_name('pdf.css')
TOC_ID = 'book-contents'
PAGE_SLOT = 'book-toc-page'  # the class of the TOC's page-number slots
REF_SLOT = 'book-ref-page'  # the class of the page-number slots of the prose's references
HEADS_STYLE = 'book-running-heads'  # the id of the style that pdf.py fills with the heads
ANCHORS = 'book-anchors'  # hidden links to the figures: their pages come with the printing
# The pages about both frameworks, whose cells print in both editions, each labelled.
BOTH_CODE = ('pytorch-to-nnx', 'jax-to-nnx')
REFERENCE_PAGE = 'd2l-mini'  # the library's reference: each edition keeps its module
SAVE_MARK = '#@save'  # the first line of a cell that make save copies into the library
# A plot is set at least this large, where the text's width allows: the smallest text it
# draws (matplotlib's tick labels, legends, titles) printed at this size or more.
MIN_PLOT_TEXT_PT = 7.0
TEXT_WIDTH_PT = 150 * 72 / 25.4  # pdf.css: --book-text-width
PLOT_MIN_SHARE = 0.66  # and at least this share of the text's width
# Pages are read as if served from here, to resolve their relative links.
BASE = 'http://book.invalid/'
HEADINGS = ('h1', 'h2', 'h3', 'h4', 'h5', 'h6')
# Prose for some media only (book/_static/media.css): a class for each medium that shows it.
WEB_ONLY, NOTEBOOK_ONLY, PRINT_ONLY = 'web-only', 'notebook-only', 'print-only'
ROOT_TITLE = 'About this book'  # the root page's title in print (its own is the book's)
FIGURE = 'Figure'  # what a figure's number says
# What a printed page of one framework leaves out, besides the other framework.
DROPPED = (
    'a.headerlink',
    '.fw-notebooks',
    '.book-downloads',
    '.toctree-wrapper',
    f'.{WEB_ONLY}:not(.{PRINT_ONLY})',
    f'.{NOTEBOOK_ONLY}:not(.{PRINT_ONLY})',
    'script',
    'button',
)
# The toggle of a dropdown's title: its arrow.
TOGGLE_CHROME = ('svg', '.sd-summary-state-marker', '.sd-summary-up', '.sd-summary-down')
# myst-nb's folded cell parts (hide-input, hide-output, hide-cell): shown as any other.
FOLDED_CELL = 'hide'


class BookHtmlError(StepFailed):
    """The built site is not what the document is made from (a page or its article is missing)."""


@dataclasses.dataclass(frozen=True)
class Page:
    rel: str  # the page's path in the site, without .html
    part: str | None  # the caption of its part of the toc
    depth: int  # 0: a chapter (or the root page); 1: its section; ...

    @property
    def slug(self) -> str:
        return re.sub(r'[^A-Za-z0-9_-]', '-', self.rel)


@dataclasses.dataclass(frozen=True)
class Mark:
    """Where a page of the site starts in print (the id of its title), and its heads."""

    target: str
    chapter: bool  # a chapter opens a printed page, which carries no running heads
    left: str  # the head of a left page: the chapter's title (or the part's)
    right: str  # the head of a right page: the section's title


@dataclasses.dataclass
class TocEntry:
    target: str  # the id of the heading it points at
    level: int  # 1: a part or chapter; 2: a section; ...
    number: str  # '1.2.' or ''
    title: str
    kind: str = 'section'  # part, chapter, section or subsection: its style in the contents


def reading_order(toc: dict) -> list[Page]:
    """The pages of a parsed jb-book ``_toc.yml``, in reading order."""
    pages = [Page(str(toc['root']), None, 0)] if toc.get('root') else []

    def visit(entries: list, part: str | None, depth: int) -> None:
        for entry in entries or []:
            if 'file' in entry:
                pages.append(Page(str(Path(entry['file']).with_suffix('')), part, depth))
            for key in ('sections', 'chapters'):
                visit(entry.get(key), part, depth + 1)

    for part in toc.get('parts', []):
        visit(part.get('chapters'), part.get('caption'), 0)
    visit(toc.get('chapters'), None, 0)
    return pages


def site_pages(site: Path) -> list[Page]:
    toc = yaml.safe_load((Path(site) / '_toc.yml').read_text(encoding='utf-8')) or {}
    return reading_order(toc)


def read_page(html_dir: Path, page: Page) -> BeautifulSoup:
    path = Path(html_dir) / f'{page.rel}.html'
    if not path.is_file():
        raise BookHtmlError(f'{path} is missing: render the book first (python -m tools render)')
    return BeautifulSoup(path.read_text(encoding='utf-8'), 'html.parser')


def article_of(html_dir: Path, page: Page) -> Tag:
    article = read_page(html_dir, page).select_one('article.bd-article')
    if article is None:
        raise BookHtmlError(
            f'{Path(html_dir) / page.rel}.html has no <article class="bd-article">: '
            'the theme changed; tools/site/book_html.py reads its articles'
        )
    return article


def keep_framework(article: Tag, framework: str, both: bool = False) -> None:
    """Remove every other framework's cells and prose, and what a page shows around them;
    with ``both``, keep every framework's cells, each labelled with its framework."""
    for other in FRAMEWORKS:
        if other != framework:
            selector = f'.fw-only-{other}' if both else f'div.cell.tag_{other}, .fw-only-{other}'
            for element in article.select(selector):
                element.decompose()
    if both:
        label_cells(article)
    for element in article.select(', '.join(DROPPED)):
        element.decompose()
    unfold(article)
    drop_save_marks(article)


def label_cells(article: Tag) -> None:
    """Label each framework's cell with its framework, as the page does in "Both"."""
    soup = BeautifulSoup('', 'html.parser')
    for name in FRAMEWORKS:
        for cell in article.select(f'div.cell.tag_{name}'):
            label = soup.new_tag('p')
            label['class'] = ['book-cell-label']
            label.string = framework_row(name).label
            cell.insert(0, label)
            cell['class'] = [*cell.get('class', []), 'book-both']


def keep_reference(article: Tag, framework: str) -> None:
    """The library's reference without the sections of the other frameworks' modules."""
    others = {
        'd2l_mini.' + framework_row(fw).module.removesuffix('.py')
        for fw in FRAMEWORKS
        if fw != framework
    }
    for section in article.find_all('section'):
        heading = section.find(HEADINGS)
        code = heading.find('code') if heading is not None else None
        if code is not None and code.get_text(strip=True) in others:
            section.decompose()


def drop_save_marks(article: Tag) -> None:
    """Leave out the ``#@save`` line that opens a cell's source."""
    for pre in article.select('div.cell_input pre'):
        for comment in pre.find_all('span', class_='c1', limit=1):
            if comment.get_text().strip() != SAVE_MARK:
                continue
            line = comment.find_parent('span', class_='fw-line')
            if line is not None and line.get_text().strip() == SAVE_MARK:
                line.decompose()
                continue
            after = comment.next_sibling
            comment.decompose()
            if isinstance(after, Tag) and after.get_text().startswith('\n'):
                after = after.string  # Pygments' whitespace token
            if isinstance(after, NavigableString) and after.startswith('\n'):
                after.replace_with(after[1:])


# Punctuation that belongs to the formula it touches: after it, or opening before it.
CLOSING = re.compile(r'^[^\s(\[{]{1,3}(?=\s|$)|^[.,;:!?)\]}\u2019\u201d\'"]+')
OPENING = re.compile(r'[(\[{\u2018\u201c]+$')
INLINE_MATH = 'span.math:not(div.math span)'
CODE_BREAKS = re.compile(r'([._/])(?=\w)')  # a long name may break after . _ /
LONG_CODE = 16  # characters: inline code this long gets those break opportunities
BACK = 'Back to the exercise.'  # a solution's link back, which print names in full


def keep_with_maths(article: Tag) -> None:
    """Keep the punctuation that touches an inline formula on its line: "$x$," never
    breaks before its comma, "($x$" never after its parenthesis."""
    soup = BeautifulSoup('', 'html.parser')
    for math in article.select(INLINE_MATH):
        if math.find_parent(['pre', 'code']) is not None:
            continue
        before, after = math.previous_sibling, math.next_sibling
        opening = OPENING.search(before) if isinstance(before, NavigableString) else None
        closing = CLOSING.match(after) if isinstance(after, NavigableString) else None
        if not (opening or closing):
            continue
        group = soup.new_tag('span')
        group['class'] = ['book-nobreak']
        math.insert_before(group)
        if opening:
            before.replace_with(before[: opening.start()])
            group.append(opening.group())
        group.append(math.extract())
        if closing:
            after.replace_with(after[closing.end() :])
            group.append(closing.group())


def breakable_code(article: Tag) -> None:
    """Long inline code (``d2l_mini.plotting.describe``) may break after a dot, an
    underscore or a slash, so that it does not stretch the spaces of a justified line."""
    soup = BeautifulSoup('', 'html.parser')
    for code in article.find_all('code'):
        if code.find_parent('pre') is not None or len(code.get_text()) < LONG_CODE:
            continue
        for text in list(code.find_all(string=True)):
            pieces = CODE_BREAKS.split(str(text))
            if len(pieces) == 1:
                continue
            nodes = []
            for index, piece in enumerate(pieces):
                if piece:
                    nodes.append(NavigableString(piece))
                if index % 2 == 1:
                    nodes.append(soup.new_tag('wbr'))
            for node in nodes:
                text.insert_before(node)
            text.extract()


def svg_size(path: Path) -> tuple[float, float] | None:
    """(width in pt, the smallest text it draws in pt) of a matplotlib SVG, or None.

    matplotlib draws text as glyph paths scaled by size / 100."""
    try:
        text = path.read_text(encoding='utf-8', errors='replace')
    except OSError:
        return None
    width = re.search(r'<svg[^>]*\swidth="([\d.]+)pt"', text)
    sizes = [100 * float(m[1]) for m in re.finditer(r'scale\(([\d.]+) -\1\)', text)]
    if width is None or not sizes:
        return None
    return float(width[1]), min(sizes)


def plot_width(width_pt: float, text_pt: float) -> float:
    """The share of the text's width a plot is printed at: its own size, at least
    ``PLOT_MIN_SHARE`` of the text's width and large enough for its smallest text to
    print at ``MIN_PLOT_TEXT_PT``, at most the whole width."""
    width = max(width_pt, PLOT_MIN_SHARE * TEXT_WIDTH_PT, width_pt * MIN_PLOT_TEXT_PT / text_pt)
    return min(width, TEXT_WIDTH_PT) / TEXT_WIDTH_PT


def printed_text_pt(width_pt: float, text_pt: float) -> float:
    """The size the smallest text of a plot prints at (plot_width's scale)."""
    return text_pt * plot_width(width_pt, text_pt) * TEXT_WIDTH_PT / width_pt


def unfold(article: Tag) -> None:
    """Every ``<details>`` as a plain block: a folded cell part without its toggle, a
    dropdown as a box under its title (without the toggle's arrow)."""
    for details in article.find_all('details'):
        classes = details.get('class', [])
        summary = details.find('summary', recursive=False)
        title = ''
        if summary is not None:
            if FOLDED_CELL not in classes:
                for element in summary.select(', '.join(TOGGLE_CHROME)):
                    element.decompose()
                title = ' '.join(summary.get_text(' ', strip=True).split())
            summary.decompose()
        details.name = 'div'
        details.attrs.pop('open', None)
        if FOLDED_CELL in classes:
            details['class'] = ['book-unfolded-cell']
            continue
        details['class'] = [*classes, 'book-unfolded']
        if title:
            heading = BeautifulSoup('', 'html.parser').new_tag('p')
            heading['class'] = ['book-unfolded-title']
            heading.string = title
            details.insert(0, heading)


def heading_text(heading: Tag) -> tuple[str, str]:
    """(number, title) of a heading: its ``section-number`` span and the rest."""
    number = heading.find('span', class_='section-number')
    numbered = number.get_text(strip=True) if number else ''
    full = heading.get_text(' ', strip=True)
    title = full[len(numbered) :].strip() if numbered and full.startswith(numbered) else full
    return numbered, ' '.join(re.sub(r'\s+([,.;:!?)])', r'\1', title).split())


def full_title(number: str, title: str) -> str:
    """'1.2 The Block by Hand': a heading as a running head or a bookmark names it."""
    return f'{number.rstrip(".")} {title}' if number else title


def css_string(text: str) -> str:
    escaped = text.replace('\\', '\\\\').replace('"', '\\"').replace('\n', ' ')
    return f'"{escaped}"'


def same_title(a: str, b: str) -> bool:
    return ' '.join(a.casefold().split()) == ' '.join(b.casefold().split())


class Document:
    """One framework's book, page by page; ``html()`` gives the finished document."""

    def __init__(
        self,
        html_dir: Path,
        pages: list[Page],
        framework: str,
        title: str,
        edition: Edition | None = None,
    ):
        self.html_dir = Path(html_dir)
        self.pages = pages
        self.framework = check_framework(framework)
        self.title = title
        self.edition = edition or Edition(title=title, framework=self.framework)
        self.slugs = {page.rel: page.slug for page in pages}
        if len(set(self.slugs.values())) != len(pages):
            raise BookHtmlError(f'two pages of the toc give the same anchor: {self.slugs}')
        self.toc: list[TocEntry] = []
        self.figures: dict[str, int] = {}  # the id of a numbered figure: its number
        self.marks: list[Mark] = []  # where each page of the site starts, with its heads
        # (figure id, SVG, the size its smallest text prints at) of each sized plot
        self.plots: list[tuple[str, str, float]] = []
        self.numbers: dict[str, str] = {}  # a page's rel: its number ('1.2.') or ''
        # A reference's page-number group: the target it names (pdf.py leaves the page
        # out where the reference stands on the page it points at).
        self.refs: dict[str, str] = {}

    # -- links and ids

    def local_target(self, page: Page, url: str) -> tuple[str, str] | None:
        """(path below the site, fragment) of a link of ``page``; None when it leaves the site."""
        parts = urlsplit(urljoin(BASE + page.rel + '.html', url))
        if f'{parts.scheme}://{parts.netloc}/' != BASE:
            return None
        return parts.path.lstrip('/'), parts.fragment

    def anchor(self, rel: str, fragment: str = '') -> str:
        return f'{self.slugs[rel]}--{fragment}' if fragment else self.slugs[rel]

    def relink(self, article: Tag, page: Page) -> None:
        for element in article.find_all(id=True):
            element['id'] = self.anchor(page.rel, element['id'])
        for link in article.find_all('a', href=True):
            if link.has_attr('data-fw-hrefs'):  # a library name in an untagged cell
                link['href'] = json.loads(link['data-fw-hrefs'])[self.framework]
                del link['data-fw-hrefs']
            target = self.local_target(page, link['href'])
            if target is None:
                continue
            path, fragment = target
            rel = path.removesuffix('.html')
            if path.endswith('.html') and rel in self.slugs:
                link['href'] = '#' + self.anchor(rel, fragment)
            else:
                link.unwrap()  # a notebook or another file: not part of the printed book
        for element in article.find_all(['img', 'source', 'object', 'embed']):
            for attribute in ('src', 'data'):
                if element.get(attribute):
                    target = self.local_target(page, element[attribute])
                    if target is not None:
                        element[attribute] = target[0]

    # -- figures

    def number_figures(self, article: Tag, page: Page) -> None:
        """Number the page's figures on from the previous pages': a figure of the prose
        under its own caption, a plot of a cell's output under its text alternative."""
        soup = BeautifulSoup('', 'html.parser')
        for element in article.find_all(['figure', 'img']):
            if element.name == 'img' and element.find_parent('figure') is not None:
                continue
            if element.name == 'img' and element.find_parent(class_='cell_output') is None:
                continue
            number = len(self.figures) + 1
            label = f'{FIGURE} {number}'
            if element.name == 'figure':
                figure = element
                caption = figure.find('figcaption')
                if caption is None:
                    caption = soup.new_tag('figcaption')
                    figure.append(caption)
                slot = caption.find('span', class_='caption-number')
                if slot is None:
                    slot = soup.new_tag('span')
                    slot['class'] = ['caption-number']
                    (caption.p or caption).insert(0, slot)
                slot.string = f'{label}. '
            else:
                figure = soup.new_tag('figure')
                figure['class'] = ['book-plot']
                element.replace_with(figure)
                figure.append(element)
                caption = soup.new_tag('figcaption')
                slot = soup.new_tag('span')
                slot['class'] = ['caption-number']
                slot.string = f'{label}. '
                text = soup.new_tag('span')
                text['class'] = ['caption-text']
                text.string = ' '.join(element.get('alt', '').split()).rstrip('.') + '.'
                caption.extend([slot, text])
                figure.append(caption)
            if not figure.get('id'):
                figure['id'] = f'{self.slugs[page.rel]}--book-figure-{number}'
            self.figures[figure['id']] = number
            if figure.find_parent(class_='cell_output') is not None:
                if 'book-plot' not in figure.get('class', []):
                    figure['class'] = [*figure.get('class', []), 'book-plot']
                self.size_plot(figure)

    def size_plot(self, figure: Tag) -> None:
        """Print a plot large enough for its text (plot_width), where its SVG says."""
        image = figure.find('img')
        if image is None or not image.get('src', '').endswith('.svg'):
            return
        size = svg_size(self.html_dir / image['src'])
        if size is None:
            return
        image['style'] = f'width: {100 * plot_width(*size):.1f}%'
        self.plots.append((figure['id'], image['src'], printed_text_pt(*size)))

    def refer_to_figures(self, articles: list[Tag]) -> None:
        """References to a figure of the prose ("Fig. 1.1") name its new number."""
        for article in articles:
            for link in article.find_all('a', href=True):
                number = self.figures.get(link['href'].lstrip('#'))
                slot = link.find(class_='std-numref')
                if number is not None and slot is not None:
                    slot.string = f'{FIGURE} {number}'

    # -- headings

    def relevel(self, article: Tag, page: Page, shift: int) -> tuple[str, str]:
        """Shift the page's headings by ``shift`` levels, noting them in the toc;
        returns the page title's (number, title)."""
        first = None
        for heading in article.find_all(HEADINGS):
            level = int(heading.name[1])
            is_title = first is None
            heading['class'] = [*heading.get('class', []), f'book-h{level}']
            if is_title:
                heading['class'].append('book-page-title')
                if page.rel == self.root:
                    heading.clear()
                    heading.string = ROOT_TITLE
            heading.name = f'h{min(level + shift, 6)}'
            number, title = heading_text(heading)
            heading['data-book-title'] = full_title(number, title)
            if is_title:
                first = (number, title)
            if level <= 2:
                section = heading.find_parent('section')
                target = heading.get('id') or (section.get('id') if section else None)
                if target is None:
                    heading['id'] = target = f'{self.slugs[page.rel]}--heading-{len(self.toc)}'
                kind = 'subsection'
                if is_title:
                    kind = 'chapter' if page.depth == 0 else 'section'
                    if shift + level == 1 and page.part:
                        kind = 'part'  # a chapter that stands for its part
                self.toc.append(TocEntry(target, shift + level, number, title, kind))
        return first or ('', '')

    @property
    def root(self) -> str | None:
        first = self.pages[0] if self.pages else None
        return first.rel if first is not None and first.part is None and first.depth == 0 else None

    # -- references

    def page_of_anchor(self, anchor: str) -> str | None:
        """The rel of the page an id of the document belongs to."""
        slug = anchor.split('--', 1)[0]
        return next((rel for rel, s in self.slugs.items() if s == slug), None)

    def refer_to_pages(self, articles: list[Tag]) -> None:
        """A page-number slot after each reference of the prose to a part of the book (not
        a citation, an equation, a footnote, a library name, nor a link of code, a table or
        a heading), and "Back to the exercise." as the exercise's number, section and page."""
        soup = BeautifulSoup('', 'html.parser')
        for article in articles:
            for link in article.find_all('a', href=True):
                target = link['href'][1:] if link['href'].startswith('#') else ''
                if not target or not self.is_page_reference(link, target):
                    continue
                text = ' '.join(link.get_text(' ', strip=True).split())
                paragraph = link.find_parent('p')
                if paragraph is not None and ' '.join(paragraph.get_text().split()) == BACK:
                    self.back_to_exercise(paragraph, link, target)
                    continue
                before, after = link.previous_sibling, link.next_sibling
                in_brackets = (
                    isinstance(before, NavigableString)
                    and before.rstrip().endswith('(')
                    and isinstance(after, NavigableString)
                    and after.startswith(')')
                )
                if text.casefold() == 'solution':
                    prefix, suffix = ' on p.\u00a0', ''
                elif text[-1:].isdigit() or in_brackets:
                    prefix, suffix = ', p.\u00a0', ''
                else:
                    prefix, suffix = ' (p.\u00a0', ')'
                slot = soup.new_tag('span')
                slot['class'] = [REF_SLOT]
                slot['data-target'] = target
                group = soup.new_tag('span')
                group['class'] = ['book-page-ref']
                group['id'] = f'book-ref-{len(self.refs)}'
                for text in (prefix, slot, suffix):
                    if isinstance(text, str):
                        piece = soup.new_tag('span')
                        piece.string = text
                        text = piece
                    group.append(text)
                link.insert_after(group)
                self.refs[group['id']] = target

    def is_page_reference(self, link: Tag, target: str) -> bool:
        if link.find_parent(['pre', 'table', 'nav', *HEADINGS]) is not None:
            return False
        if link.find_parent(class_=['citation', 'footnote', 'book-toc']) is not None:
            return False
        classes = link.get('class', [])
        if 'footnote-reference' in classes or link.get('role') == 'doc-biblioref':
            return False
        fragment = target.split('--', 1)[-1]
        if fragment.startswith('equation-') or re.fullmatch(r'id\d+', fragment):
            return False  # an equation, a citation or a footnote
        if self.page_of_anchor(target) in (None, 'references'):
            return False
        code = link.find('code')
        text = link.get_text(strip=True)
        return bool(text) and not (code is not None and code.get_text(strip=True) == text)

    def back_to_exercise(self, paragraph: Tag, link: Tag, target: str) -> None:
        """Print "Back to the exercise." as: Exercise 3 in Section 1.1, p. 40."""
        heading = paragraph.find_previous(HEADINGS)
        found = re.search(r'Exercise\s+(\d+)', heading.get_text(' ') if heading else '')
        rel = self.page_of_anchor(target)
        number = self.numbers.get(rel or '', '').rstrip('.')
        name = f'Exercise {found[1]}' if found else 'The exercise'
        where = f' in Section {number}' if number else ''
        paragraph.clear()
        paragraph['class'] = [*paragraph.get('class', []), 'book-back-ref']
        soup = BeautifulSoup('', 'html.parser')
        anchor = soup.new_tag('a', href=f'#{target}')
        anchor['class'] = ['reference', 'internal']
        anchor.string = name + where
        slot = soup.new_tag('span')
        slot['class'] = [REF_SLOT]
        slot['data-target'] = target
        paragraph.extend([anchor, NavigableString(', p.\u00a0'), slot, NavigableString('.')])

    # -- the document

    def body(self) -> str:
        articles = []
        for page in self.pages:
            article = article_of(self.html_dir, page)
            keep_framework(article, self.framework, both=page.rel in BOTH_CODE)
            if page.rel == REFERENCE_PAGE:
                keep_reference(article, self.framework)
            self.relink(article, page)
            articles.append(article)
        # A part whose first chapter has the part's title: the chapter stands for it.
        titles = {}
        for page, article in zip(self.pages, articles, strict=True):
            heading = article.find(HEADINGS)
            titles[page.rel] = heading_text(heading)[1] if heading else ''
        merged = set()
        for page in self.pages:
            if page.part and page.part not in merged and page.depth == 0:
                if same_title(titles[page.rel], page.part):
                    merged.add(page.part)
        chunks, parts = [], []
        chapter = ''
        for page, article in zip(self.pages, articles, strict=True):
            part_heading = ''
            if page.part and page.part != (parts[-1] if parts else None):
                parts.append(page.part)
                if page.part not in merged:
                    anchor = f'book-part-{len(parts) - 1}'
                    self.toc.append(TocEntry(anchor, 1, '', page.part, 'part'))
                    part_heading = (
                        f'<h1 class="book-part" id="{anchor}" '
                        f'data-book-title="{html.escape(page.part)}">'
                        f'{html.escape(page.part)}</h1>'
                    )
            shift = page.depth + (1 if page.part and page.part not in merged else 0)
            self.number_figures(article, page)
            entries = len(self.toc)
            number, title = self.relevel(article, page, shift)
            self.numbers[page.rel] = number
            own = full_title(number, title)
            if page.depth == 0:
                chapter = own
            left = page.part if page.depth == 0 and page.part and page.part not in merged else ''
            if len(self.toc) > entries:
                target = self.toc[entries].target
                left = (chapter if page.depth else left) or own
                self.marks.append(Mark(target, page.depth == 0, left, own))
            classes = f'book-page book-depth-{page.depth}'
            if page.rel in BOTH_CODE:
                classes += ' book-both-frameworks'
            chunks.append(
                (
                    f'<section class="{classes}" id="{self.anchor(page.rel)}">{part_heading}',
                    article,
                )
            )
        ids = {e['id'] for article in articles for e in article.find_all(id=True)}
        ids |= {entry.target for entry in self.toc} | {self.anchor(p.rel) for p in self.pages}
        for article in articles:
            for link in article.find_all('a', href=True):
                if link['href'].startswith('#') and link['href'][1:] not in ids:
                    link.unwrap()  # into what this edition leaves out (the other module)
        self.refer_to_figures(articles)
        self.refer_to_pages(articles)
        for article in articles:
            keep_with_maths(article)
            breakable_code(article)
        return '\n'.join(
            f'{start}{article.decode_contents()}</section>' for start, article in chunks
        )

    def toc_html(self) -> str:
        items = []
        for entry in self.toc:
            number = (
                f'<span class="book-toc-number">{html.escape(entry.number)}</span> '
                if entry.number
                else ''
            )
            items.append(
                f'<li class="book-toc-level-{entry.level} book-toc-{entry.kind}">'
                f'<a href="#{entry.target}">'
                f'{number}<span class="book-toc-title">{html.escape(entry.title)}</span>'
                f'<span class="{PAGE_SLOT}" data-target="{entry.target}"></span></a></li>'
            )
        return (
            f'<nav class="book-toc" aria-labelledby="{TOC_ID}">'
            f'<h1 id="{TOC_ID}" data-book-title="Contents">Contents</h1>'
            f'<ol>{"".join(items)}</ol></nav>'
        )

    def title_page(self) -> str:
        edition = self.edition
        label = html.escape(framework_row(self.framework).label)
        authors = (
            f'<p class="book-title-authors">{html.escape(edition.authors)}</p>'
            if edition.authors
            else ''
        )
        date = (
            f'<p class="book-title-date">{html.escape(edition.date)}</p>' if edition.date else ''
        )
        return (
            '<header class="book-title-page">'
            f'<p class="book-title">{html.escape(self.title)}</p>'
            f'<p class="book-title-edition">The {label} edition</p>'
            f'{authors}{date}</header>'
        )

    def colophon(self) -> str:
        """The back of the title page: what this edition holds, and how it was made."""
        edition = self.edition
        label = html.escape(framework_row(self.framework).label)
        others = ' and '.join(
            html.escape(framework_row(fw).label) for fw in FRAMEWORKS if fw != self.framework
        )
        url = html.escape(edition.site_url or '')
        online = (
            f' The book online, at <a href="{url}">{url}</a>, shows every cell in {others} '
            'as well, side by side with this one where the screen is wide enough, and links '
            "each section's notebook, to download or to run in Google Colab."
            if url
            else ''
        )
        paragraphs = [
            f'This is the {label} edition of <i>{html.escape(self.title)}</i>: every code cell '
            f'of the book is printed in {label}, with the outputs it printed and plotted when '
            'it ran. The solutions are printed in full, after the chapter.' + online
        ]
        made = []
        if edition.executed:
            where = f' on {html.escape("; ".join(edition.hardware))}' if edition.hardware else ''
            count = f'{edition.notebooks} ' if edition.notebooks else ''
            made.append(
                f'The outputs were made by running the {count}{label} notebooks of the book, '
                f'{html.escape(edition.executed)}{where}.'
            )
        versions = [('Python', edition.python)] if edition.python else []
        versions += list(edition.versions)
        if versions:
            made.append(
                'Versions: '
                + ', '.join(f'{html.escape(n)} {html.escape(v)}' for n, v in versions)
                + '.'
            )
        if edition.commit:
            made.append(f'Printed from commit {html.escape(edition.commit)}.')
        if edition.printer:
            made.append(f'Typeset by {html.escape(edition.printer)} from the HTML of the book.')
        if made:
            paragraphs.append(' '.join(made))
        if edition.authors:
            paragraphs.append(f'&#169; {html.escape(edition.authors)}')
        body = ''.join(f'<p>{paragraph}</p>' for paragraph in paragraphs)
        return f'<section class="book-colophon">{body}</section>'

    def head(self) -> str:
        """The root page's stylesheets and MathJax, then the print style."""
        index = read_page(self.html_dir, self.pages[0])
        keep = []
        for element in index.head.find_all(['link', 'script', 'style']):
            if element.name == 'link' and 'stylesheet' in element.get('rel', []):
                keep.append(str(element))
            elif element.name == 'style':
                keep.append(str(element))
            elif element.name == 'script' and (
                'mathjax' in element.get('src', '').lower() or 'MathJax' in element.get_text()
            ):
                keep.append(str(element))
        style = PRINT_CSS.read_text(encoding='utf-8')
        return (
            '<meta charset="utf-8">'
            f'<title>{html.escape(self.title)}</title>'
            + ''.join(keep)
            + f'<style>\n{style}\n</style>'
            + f'<style id="{HEADS_STYLE}">\n{heads_css([], [], [])}</style>'
        )

    def anchors(self) -> str:
        """Hidden links to every figure and reference: Chromium writes a named destination,
        with its page and height, for what a link points at, and pdf.py reads where each
        fell."""
        targets = [*self.figures, *self.refs]
        links = ''.join(f'<a href="#{html.escape(target)}"></a>' for target in targets)
        return f'<nav class="{ANCHORS}" hidden>{links}</nav>'

    def html(self) -> str:
        body = self.body()  # first: it collects the toc and the running heads
        return (
            f'<!DOCTYPE html>\n<html lang="en" class="fw-js fw-{self.framework}" '
            'data-theme="light" data-mode="light">'
            f'<head>{self.head()}</head>'
            f'<body class="book-print"><main class="bd-main"><div class="bd-content">'
            f'<div class="bd-article-container"><article class="bd-article">'
            f'{self.title_page()}{self.colophon()}{self.toc_html()}{body}{self.anchors()}'
            '</article></div></div></main></body></html>\n'
        )


def counter_style(name: str, symbols: list[str]) -> str:
    """A CSS counter style that writes ``symbols[n - 1]`` for n (then nothing): margin
    boxes take ``counter(page, name)`` for a text of each page, which Chromium's paged
    media (no ``string-set``, no ``:nth()`` pages) allows no other way."""
    listed = ' '.join(css_string(symbol) for symbol in symbols) or '""'
    return f'@counter-style {name} {{ system: fixed; symbols: {listed}; fallback: book-none; }}\n'


def heads_css(folios: list[str], left: list[str], right: list[str]) -> str:
    """The style of each printed page's folio and running heads, one entry a page."""
    return (
        '@counter-style book-none { system: cyclic; symbols: ""; }\n'
        + counter_style('book-folio', folios)
        + counter_style('book-left-head', left)
        + counter_style('book-right-head', right)
    )


def book_document(
    html_dir: Path,
    site: Path,
    framework: str,
    title: str,
    site_url: str | None = None,
    edition: Edition | None = None,
) -> str:
    """The printable document of ``framework``'s book, from the site's built pages."""
    edition = edition or Edition(title=title, framework=framework, site_url=site_url)
    return Document(html_dir, site_pages(site), framework, title, edition).html()
