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
  use for (``web-only`` prose) removed and ``print-only`` prose kept (the site hides it);
  folded parts unfolded, without their toggles: a hidden cell source is shown as any
  other, a dropdown (a solution) is a box under its title;
- every figure numbered in one sequence, "Figure 1" to "Figure N", with a caption: a
  figure of the prose keeps its caption under the new number (references to it follow),
  a plot that a cell printed gets its text alternative as its caption;
- headings re-levelled so that the PDF outline nests parts, chapters and sections (a
  part's caption is a heading of its own, except where its first chapter has the same
  title: then that chapter stands for the part); the root page, whose title is the book's,
  is titled "About this book";
- running heads: each page of the site is a named page of its own (CSS ``page``), whose
  left pages carry the chapter's title and right pages the section's, in the page's
  top margin boxes.

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
from bs4 import BeautifulSoup, Tag

from tools.frameworks import FRAMEWORKS, check_framework
from tools.frameworks import framework as framework_row
from tools.site.edition import Edition
from tools.steps import StepFailed

PRINT_CSS = Path(__file__).with_name('pdf.css')
TOC_ID = 'book-contents'
PAGE_SLOT = 'book-toc-page'  # the class of the TOC's page-number slots
# Pages are read as if served from here, to resolve their relative links.
BASE = 'http://book.invalid/'
HEADINGS = ('h1', 'h2', 'h3', 'h4', 'h5', 'h6')
WEB_ONLY, PRINT_ONLY = 'web-only', 'print-only'
ROOT_TITLE = 'About this book'  # the root page's title in print (its own is the book's)
FIGURE = 'Figure'  # what a figure's number says
# What a printed page of one framework leaves out, besides the other framework.
DROPPED = (
    'a.headerlink',
    '.fw-notebooks',
    '.book-downloads',
    '.toctree-wrapper',
    f'.{WEB_ONLY}',
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


def keep_framework(article: Tag, framework: str) -> None:
    """Remove every other framework's cells and prose, and what a page shows around them."""
    for other in FRAMEWORKS:
        if other != framework:
            for element in article.select(f'div.cell.tag_{other}, .fw-only-{other}'):
                element.decompose()
    for element in article.select(', '.join(DROPPED)):
        element.decompose()
    unfold(article)


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
        self.heads: list[str] = []  # the @page rules of the running heads

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

    def running_heads(self, name: str, left: str, right: str) -> None:
        self.heads.append(
            f'@page {name}:left {{ @top-left {{ content: {css_string(left)}; }} }}\n'
            f'@page {name}:right {{ @top-right {{ content: {css_string(right)}; }} }}'
        )

    # -- the document

    def body(self) -> str:
        articles = []
        for page in self.pages:
            article = article_of(self.html_dir, page)
            keep_framework(article, self.framework)
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
        for index, (page, article) in enumerate(zip(self.pages, articles, strict=True)):
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
            number, title = self.relevel(article, page, shift)
            own = full_title(number, title)
            if page.depth == 0:
                chapter = own
            left = page.part if page.depth == 0 and page.part and page.part not in merged else ''
            name = f'book-page-{index}'
            self.running_heads(name, (chapter if page.depth else left) or own, own)
            classes = f'book-page book-depth-{page.depth}'
            chunks.append(
                (
                    f'<section class="{classes}" id="{self.anchor(page.rel)}" '
                    f'style="page: {name}">{part_heading}',
                    article,
                )
            )
        self.refer_to_figures(articles)
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
        heads = '\n'.join(self.heads)
        return (
            '<meta charset="utf-8">'
            f'<title>{html.escape(self.title)}</title>'
            + ''.join(keep)
            + f'<style>\n{style}\n/* The running heads of each page of the site. */\n'
            f'{heads}\n</style>'
        )

    def html(self) -> str:
        body = self.body()  # first: it collects the toc and the running heads
        return (
            f'<!DOCTYPE html>\n<html lang="en" class="fw-js fw-{self.framework}" '
            'data-theme="light" data-mode="light">'
            f'<head>{self.head()}</head>'
            f'<body class="book-print"><main class="bd-main"><div class="bd-content">'
            f'<div class="bd-article-container"><article class="bd-article">'
            f'{self.title_page()}{self.colophon()}{self.toc_html()}{body}'
            '</article></div></div></main></body></html>\n'
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
