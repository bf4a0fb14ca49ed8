"""The whole book as one HTML document per framework, made from the built site, to print.

tools/site/pdf.py prints it.  The document is assembled from the pages that jupyter-book
built (``_build/site/_build/html``), in the order of the site's ``_toc.yml``, so that
section, equation and figure numbers and citations are the HTML's own:

- a title page and a table of contents (chapters, sections and their first level of
  headings, with their numbers and an empty slot for the page number);
- each page's article, with the ids prefixed by the page (``<page>--<id>``) so that
  they stay unique, links between pages turned into links inside the document, links
  to other local files (notebooks, downloads) unwrapped to their text, and images
  pointing at the site's files;
- only one framework: the other framework's cells and ``fw-only-*`` prose removed, no
  tab bars, no notebook or Colab links, no heading permalinks, hidden cell sources shown;
- headings re-levelled so that the PDF outline nests parts, chapters and sections
  (a part's caption is a heading of its own).

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
from tools.steps import StepFailed

PRINT_CSS = Path(__file__).with_name('pdf.css')
TOC_ID = 'book-contents'
PAGE_SLOT = 'book-toc-page'  # the class of the TOC's page-number slots
# Pages are read as if served from here, to resolve their relative links.
BASE = 'http://book.invalid/'
HEADINGS = ('h1', 'h2', 'h3', 'h4', 'h5', 'h6')
# What a printed page of one framework leaves out, besides the other framework.
DROPPED = (
    'a.headerlink',
    '.fw-notebooks',
    '.book-downloads',
    '.toctree-wrapper',
    'details.hide > summary',
    'script',
    'button',
)


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


def keep_framework(article: Tag, framework: str) -> None:
    """Remove every other framework's cells and prose, and what a page shows around them."""
    for other in FRAMEWORKS:
        if other != framework:
            for element in article.select(f'div.cell.tag_{other}, .fw-only-{other}'):
                element.decompose()
    for element in article.select(', '.join(DROPPED)):
        element.decompose()
    for details in article.find_all('details'):
        details['open'] = ''


def heading_text(heading: Tag) -> tuple[str, str]:
    """(number, title) of a heading: its ``section-number`` span and the rest."""
    number = heading.find('span', class_='section-number')
    numbered = number.get_text(strip=True) if number else ''
    full = heading.get_text(' ', strip=True)
    title = full[len(numbered) :].strip() if numbered and full.startswith(numbered) else full
    return numbered, ' '.join(title.split())


class Document:
    """One framework's book, page by page; ``html()`` gives the finished document."""

    def __init__(self, html_dir: Path, pages: list[Page], framework: str, title: str):
        self.html_dir = Path(html_dir)
        self.pages = pages
        self.framework = check_framework(framework)
        self.title = title
        self.slugs = {page.rel: page.slug for page in pages}
        if len(set(self.slugs.values())) != len(pages):
            raise BookHtmlError(f'two pages of the toc give the same anchor: {self.slugs}')
        self.toc: list[TocEntry] = []

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

    # -- headings

    def relevel(self, article: Tag, page: Page) -> None:
        """Shift the page's headings below its part and chapter, noting them in the toc."""
        shift = page.depth + (1 if page.part else 0)
        first = True
        for heading in article.find_all(HEADINGS):
            level = int(heading.name[1])
            heading['class'] = [*heading.get('class', []), f'book-h{level}']
            if first:
                heading['class'].append('book-page-title')
                first = False
            heading.name = f'h{min(level + shift, 6)}'
            if level <= 2:
                section = heading.find_parent('section')
                target = heading.get('id') or (section.get('id') if section else None)
                if target is None:
                    heading['id'] = target = f'{self.slugs[page.rel]}--heading-{len(self.toc)}'
                number, title = heading_text(heading)
                self.toc.append(TocEntry(target, shift + level, number, title))

    # -- the document

    def page_html(self, page: Page) -> str:
        document = read_page(self.html_dir, page)
        article = document.select_one('article.bd-article')
        if article is None:
            raise BookHtmlError(
                f'{self.html_dir / page.rel}.html has no <article class="bd-article">: '
                'the theme changed; tools/site/book_html.py reads its articles'
            )
        keep_framework(article, self.framework)
        self.relink(article, page)
        self.relevel(article, page)
        classes = f'book-page book-depth-{page.depth}'
        return (
            f'<section class="{classes}" id="{self.anchor(page.rel)}">'
            f'{article.decode_contents()}</section>'
        )

    def body(self) -> str:
        chunks, parts = [], []
        for page in self.pages:
            if page.part and page.part != (parts[-1] if parts else None):
                anchor = f'book-part-{len(parts)}'
                parts.append(page.part)
                self.toc.append(TocEntry(anchor, 1, '', page.part))
                chunks.append(f'<h1 class="book-part" id="{anchor}">{html.escape(page.part)}</h1>')
            chunks.append(self.page_html(page))
        return '\n'.join(chunks)

    def toc_html(self) -> str:
        items = []
        for entry in self.toc:
            number = (
                f'<span class="book-toc-number">{html.escape(entry.number)}</span> '
                if entry.number
                else ''
            )
            items.append(
                f'<li class="book-toc-level-{entry.level}"><a href="#{entry.target}">'
                f'{number}<span class="book-toc-title">{html.escape(entry.title)}</span>'
                f'<span class="{PAGE_SLOT}" data-target="{entry.target}"></span></a></li>'
            )
        return (
            f'<nav class="book-toc" aria-labelledby="{TOC_ID}">'
            f'<h1 id="{TOC_ID}">Contents</h1><ol>{"".join(items)}</ol></nav>'
        )

    def title_page(self, site_url: str | None) -> str:
        label = framework_row(self.framework).label
        others = ' and '.join(framework_row(fw).label for fw in FRAMEWORKS if fw != self.framework)
        online = (
            f'<p class="book-title-site">Read online, with the {others} code too: '
            f'<a href="{html.escape(site_url)}">{html.escape(site_url)}</a></p>'
            if site_url
            else ''
        )
        return (
            '<header class="book-title-page">'
            f'<p class="book-title">{html.escape(self.title)}</p>'
            f'<p class="book-title-edition">The {html.escape(label)} edition: every code cell '
            f'and every output in {html.escape(label)}</p>'
            f'{online}</header>'
        )

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
            + f'<style>\n{style}</style>'
        )

    def html(self, site_url: str | None = None) -> str:
        body = self.body()  # first: it collects the toc
        return (
            f'<!DOCTYPE html>\n<html lang="en" class="fw-js fw-{self.framework}" '
            'data-theme="light" data-mode="light">'
            f'<head>{self.head()}</head>'
            f'<body class="book-print"><main class="bd-main"><div class="bd-content">'
            f'<div class="bd-article-container"><article class="bd-article">'
            f'{self.title_page(site_url)}{self.toc_html()}{body}'
            '</article></div></div></main></body></html>\n'
        )


def book_document(
    html_dir: Path, site: Path, framework: str, title: str, site_url: str | None = None
) -> str:
    """The printable document of ``framework``'s book, from the site's built pages."""
    return Document(html_dir, site_pages(site), framework, title).html(site_url)
