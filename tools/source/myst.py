"""MyST-only Markdown turned into plain Markdown that Jupyter and Colab can show.

Roles become text (citations author-year from ``book/*.bib``, references the title
or number of their target), ``(label)=`` lines go, numbered equations get a
``\\tag{n}``, figures become images with a caption (local files are embedded as
cell attachments, so the notebook shows them wherever it is opened), admonitions
become block quotes, value references a placeholder that execution fills
(tools/source/values.py), a ``{container} fw-only-<framework>`` block stays in its own
framework's notebook only, and of the prose for one medium (``web-only``,
``notebook-only``, ``print-only``) only the notebooks' stays.  Code spans, code blocks
and math are left alone.
"""

from __future__ import annotations

import base64
import codecs
import functools
import posixpath
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import latexcodec  # noqa: F401  (registers the "ulatex" codec)
import yaml
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser
from pybtex.database import Entry
from pybtex.database.input.bibtex import Parser as BibtexParser

from tools.paths import Layout
from tools.source import values
from tools.source.sections import book_pages

ADMONITIONS = {
    'note',
    'tip',
    'hint',
    'important',
    'warning',
    'caution',
    'attention',
    'danger',
    'error',
    'seealso',
    'admonition',
}
# The pages the build writes itself (tools/site/report.py): no source holds their titles.
GENERATED_PAGES = {'report': 'Execution report'}
PAGE_TITLE = re.compile(r'^# (?P<title>.+)$', re.MULTILINE)
DROPPED_DIRECTIVES = {'bibliography', 'tableofcontents', 'toctree', 'glossary'}
# Prose for one framework: ```{container} fw-only-pytorch``` (see tools/source/values.py).
FRAMEWORK_ONLY = re.compile(r'fw-only-(?P<framework>\w+)')
# Prose for some media only, as a container (```{container} notebook-only```) or a span
# ([...]{.web-only}), with a class for each medium that shows it: `web-only` the HTML
# page (tabs, buttons, links under a title), `notebook-only` the notebooks, `print-only`
# the PDFs; `{.web-only .print-only}` the book's pages, not the notebooks
# (book/_static/media.css, tools/site/book_html.py). A notebook keeps what is marked
# notebook-only and leaves out what is marked for other media only.
MEDIA = ('web-only', 'notebook-only', 'print-only')
NOTEBOOK_MEDIUM = 'notebook-only'
_MEDIUM_CLASS = r'\.(?:' + '|'.join(MEDIA) + ')'
MEDIUM_SPAN = re.compile(
    r'\[(?P<text>(?:[^\[\]]|\[[^\[\]]*\])*)\]'
    rf'\{{(?P<media>\s*{_MEDIUM_CLASS}(?:\s+{_MEDIUM_CLASS})*)\s*\}}',
    re.S,
)


def in_notebooks(media: str) -> bool | None:
    """Whether prose marked with these classes (``web-only print-only`` or
    ``.web-only .print-only``) shows in a notebook; None if they are not only media."""
    names = [name.lstrip('.') for name in media.split()]
    if not names or not set(names) <= set(MEDIA):
        return None
    return NOTEBOOK_MEDIUM in names


IMAGE_TYPES = {
    '.svg': 'image/svg+xml',
    '.png': 'image/png',
    '.jpg': 'image/jpeg',
    '.jpeg': 'image/jpeg',
    '.gif': 'image/gif',
}
INLINE = re.compile(
    r'(?P<code>`+).+?(?P=code)'
    r'|\{(?P<role>[A-Za-z][\w:+-]*)\}`(?P<content>[^`]*)`'
    r'|!\[(?P<alt>[^\]]*)\]\((?P<src>[^)\s]+)(?P<title>\s+\"[^\"]*\")?\)',
    re.S,
)
OPTION = re.compile(r'^:([\w-]+):\s*(.*)$')
EXPLICIT_TARGET = re.compile(r'^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$', re.S)


@functools.cache
def _parser() -> MarkdownIt:
    config = MdParserConfig(enable_extensions={'colon_fence', 'dollarmath', 'amsmath'})
    return create_md_parser(config, RendererHTML)


def _directive(token: Token) -> tuple[str, str] | None:
    """(name, argument) of a ``{name}`` fence, None for an ordinary fence."""
    match = re.match(r'^\{([\w:-]+)\}\s*(.*)$', token.info.strip())
    return (match.group(1), match.group(2)) if match else None


def _options_and_body(content: str) -> tuple[dict, str]:
    lines = content.split('\n')
    options: dict[str, str] = {}
    if lines and lines[0].strip() == '---':
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == '---'), 0)
        options = yaml.safe_load('\n'.join(lines[1:end])) or {}
        lines = lines[end + 1 :]
    else:
        while lines and (match := OPTION.match(lines[0])):
            options[match.group(1)] = match.group(2)
            lines = lines[1:]
    return options, '\n'.join(lines).strip('\n')


def walk_labels(text: str) -> Iterator[tuple[str | None, ...]]:
    """Yield ("target", label, title), ("figure", name, caption), ("equation", label)
    in document order, looking inside directives."""
    tokens = _parser().parse(text)
    for i, token in enumerate(tokens):
        if token.type == 'myst_target':
            title = None
            if i + 2 < len(tokens) and tokens[i + 1].type == 'heading_open':
                title = tokens[i + 2].content
            yield ('target', token.content, title)
        elif token.type == 'math_block_label':
            yield ('equation', token.info)
        elif token.type in ('fence', 'colon_fence') and (directive := _directive(token)):
            name, _ = directive
            if name == 'code-cell':
                continue
            options, body = _options_and_body(token.content)
            if name == 'figure':
                yield ('figure', options.get('name'), body.split('\n\n')[0].strip())
            elif name == 'math' and options.get('label'):
                yield ('equation', options['label'])
            else:
                yield from walk_labels(body)


@functools.lru_cache(maxsize=1024)
def page_labels(text: str) -> tuple[tuple[str | None, ...], ...]:
    """``walk_labels(text)``, parsed once per process for each text: every notebook that
    the build splits reads the labels of the whole book."""
    return tuple(walk_labels(text))


class References:
    """What the whole book knows: bibliography entries, the titles of labels and the
    titles of pages (by their path below the book folder, without ``.md``)."""

    def __init__(
        self,
        bib_files: Sequence[Path] = (),
        titles: dict | None = None,
        page_titles: dict | None = None,
        equation_pages: dict | None = None,
    ) -> None:
        self.bib_files = list(bib_files)
        self.titles = titles or {}
        self.page_titles = {**GENERATED_PAGES, **(page_titles or {})}
        self.equation_pages = equation_pages or {}  # label: the page that numbers it
        self._entries: dict | None = None

    @classmethod
    def load(cls, layout: Layout) -> References:
        titles, page_titles, equation_pages = {}, {}, {}
        for rel in book_pages(layout):
            text = layout.source(rel).read_text(encoding='utf-8')
            for found in page_labels(text):
                if found[0] in ('target', 'figure') and found[1] and found[2]:
                    titles.setdefault(found[1], found[2])
                elif found[0] == 'equation':
                    equation_pages.setdefault(found[1], rel)
            heading = PAGE_TITLE.search(text)
            if heading:
                page_titles[rel] = heading['title'].strip()
        return cls(sorted(layout.book.glob('*.bib')), titles, page_titles, equation_pages)

    def equation_elsewhere(self, label: str) -> str:
        """How a notebook names an equation that another page numbers."""
        page = self.equation_pages.get(label)
        if page is None:
            return f'({label})'
        return f'(see "{self.page_titles.get(page, page)}")'

    def page_title(self, target: str, page_folder: str) -> str:
        """The title of the page a ``{doc}`` role names, from the page it is in
        (``page_folder``: that page's folder below the book, '' at the top)."""
        path = target[1:] if target.startswith('/') else posixpath.join(page_folder, target)
        return self.page_titles.get(posixpath.normpath(path), target)

    @property
    def entries(self) -> dict:
        """The bibliography, read on the first citation."""
        if self._entries is None:
            self._entries = {}
            for bib in self.bib_files:
                self._entries.update(BibtexParser().parse_file(str(bib)).entries)
        return self._entries

    def _authors(self, entry: Entry) -> str:
        people = entry.persons.get('author') or entry.persons.get('editor') or []
        names = [
            codecs.decode(' '.join(p.last_names), 'ulatex').replace('{', '').replace('}', '')
            for p in people
        ]
        if not names:
            return 'Anonymous'
        if len(names) == 1:
            return names[0]
        if len(names) == 2:
            return f'{names[0]} and {names[1]}'
        return f'{names[0]} et al.'

    def cite(self, kind: str, keys: str) -> str:
        parts = []
        for key in (k.strip() for k in keys.split(',') if k.strip()):
            entry = self.entries.get(key)
            if entry is None:
                parts.append((f'[{key}]', ''))
            else:
                parts.append((self._authors(entry), entry.fields.get('year', 'n.d.')))
        if kind in ('cite:t', 'cite:ts'):
            return ', '.join(f'{who} ({year})' if year else who for who, year in parts)
        if kind == 'cite:author':
            return ', '.join(who for who, _ in parts)
        if kind == 'cite:year':
            return ', '.join(year or who for who, year in parts)
        return '(' + '; '.join(f'{who}, {year}' if year else who for who, year in parts) + ')'


class Converter:
    """Converts the Markdown cells of one notebook, numbering its equations and figures."""

    def __init__(
        self,
        references: References,
        source_dir: Path,
        texts: list[str],
        framework: str | None = None,
        page_folder: str = '',
    ) -> None:
        self.references = references
        self.source_dir = Path(source_dir)
        self.framework = framework
        self.page_folder = page_folder  # the page's folder below the book ('' at the top)
        self.equations: dict[str, int] = {}
        self.figures: dict[str, int] = {}
        figure_count = 0
        for text in texts:
            for found in page_labels(text):
                if found[0] == 'equation':
                    self.equations.setdefault(found[1], len(self.equations) + 1)
                elif found[0] == 'figure':
                    figure_count += 1
                    if found[1]:
                        self.figures.setdefault(found[1], figure_count)
        self._equation_count = 0
        self._figure_count = 0
        self._attachments: dict = {}

    def convert(self, text: str) -> tuple[str, dict]:
        """Plain Markdown for one cell, and the attachments it refers to."""
        self._attachments = {}
        return self._convert(text), self._attachments

    # blocks ---------------------------------------------------------------
    def _convert(self, text: str) -> str:
        lines = text.split('\n')
        out: list[str] = []
        position = 0
        for token in _parser().parse(text):
            if token.level != 0 or not token.map or token.type.endswith('_close'):
                continue
            start, end = token.map
            if start < position:
                continue
            out.append(self._inline('\n'.join(lines[position:start])))
            out.append(self._block(token, '\n'.join(lines[start:end])))
            position = end
        out.append(self._inline('\n'.join(lines[position:])))
        joined = '\n'.join(part for part in out if part is not None)
        return re.sub(r'\n{3,}', '\n\n', joined).strip('\n')

    def _block(self, token: Token, raw: str) -> str | None:
        if token.type in ('myst_target', 'myst_line_comment', 'front_matter'):
            return None
        if token.type == 'math_block_label':
            return self._equation(token.content.strip(), token.info)
        if token.type in ('math_block', 'amsmath'):
            return raw
        if token.type in ('fence', 'colon_fence'):
            directive = _directive(token)
            return self._directive(*directive, token.content) if directive else raw
        return self._inline(raw)

    def _equation(self, body: str, label: str | None) -> str:
        self._equation_count += 1
        tag = f'\n\\tag{{{self._equation_count}}}' if label else ''
        return f'$$\n{body}{tag}\n$$'

    def _directive(self, name: str, argument: str, content: str) -> str | None:
        options, body = _options_and_body(content)
        if name in DROPPED_DIRECTIVES:
            return None
        if name == 'container' and (kept := in_notebooks(argument)) is not None:
            return self._convert(body) if kept else None
        if name == 'container' and FRAMEWORK_ONLY.fullmatch(argument):
            own = FRAMEWORK_ONLY.fullmatch(argument)['framework'] == self.framework
            return self._convert(body) if own or self.framework is None else None
        if name == 'figure':
            return self._figure(argument, options, body)
        if name == 'image':
            return self._image(options.get('alt', ''), argument)
        if name == 'math':
            return self._equation(body, options.get('label'))
        if name in ('code-block', 'code', 'sourcecode'):
            return f'```{argument}\n{body}\n```'
        if name in ADMONITIONS:
            if name == 'admonition':
                title = argument or 'Note'
            else:
                title = 'See also' if name == 'seealso' else name.capitalize()
                body = f'{argument}\n{body}'.strip('\n') if argument else body
            quoted = '\n'.join(f'> {line}'.rstrip() for line in self._convert(body).split('\n'))
            return f'> **{self._inline(title)}**\n>\n{quoted}'
        converted = self._convert(body)
        return f'**{self._inline(argument)}**\n\n{converted}' if argument else converted

    def _figure(self, src: str, options: dict, body: str) -> str:
        self._figure_count += 1
        caption, _, legend = self._convert(body).partition('\n\n')
        caption = caption.replace('\n', ' ').strip()
        image = self._image(options.get('alt') or caption, src)
        parts = [image, f'*Figure {self._figure_count}: {caption}*' if caption else '', legend]
        return '\n\n'.join(part for part in parts if part)

    def _image(self, alt: str, src: str, title: str = '') -> str:
        path = (self.source_dir / src).resolve()
        mime = IMAGE_TYPES.get(path.suffix.lower())
        if (
            '://' in src
            or src.startswith(('data:', 'attachment:'))
            or not mime
            or not path.is_file()
        ):
            return f'![{alt}]({src}{title})'
        name = path.name
        while name in self._attachments and self._attachments[name] != {mime: self._encode(path)}:
            name = f'x{name}'
        self._attachments[name] = {mime: self._encode(path)}
        return f'![{alt}](attachment:{name}{title})'

    @staticmethod
    def _encode(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode('ascii')

    # inline ---------------------------------------------------------------
    def _inline(self, text: str) -> str:
        in_notebook = MEDIUM_SPAN.sub(
            lambda span: span['text'] if in_notebooks(span['media']) else '', text
        )
        return INLINE.sub(self._replace, in_notebook)

    def _replace(self, match: re.Match) -> str:
        if match.group('code'):
            return match.group(0)
        if match.group('role'):
            return self._role(match.group('role'), match.group('content'))
        return self._image(match.group('alt'), match.group('src'), match.group('title') or '')

    def _role(self, name: str, content: str) -> str:
        if name.startswith('cite'):
            return self.references.cite(name, content)
        explicit = EXPLICIT_TARGET.match(content)
        text, target = (
            (explicit.group('text'), explicit.group('target')) if explicit else ('', content)
        )
        if name == 'eq':
            number = self.equations.get(target)
            if text:
                return text
            return f'({number})' if number else self.references.equation_elsewhere(target)
        if name == 'numref':
            number = self.figures.get(target) or self.equations.get(target)
            title = self.references.titles.get(target, target)
            if text:
                return (
                    text.replace('%s', str(number or ''))
                    .replace('{number}', str(number or ''))
                    .replace('{name}', title)
                    .strip()
                )
            return f'Figure {number}' if target in self.figures else title
        if name == 'ref':
            return text or self.references.titles.get(target, target)
        if name == 'doc':
            return text or self.references.page_title(target, self.page_folder)
        if name == 'math':
            return f'${content}$'
        if name == 'value':
            reference = values.ROLE.fullmatch(f'{{value}}`{content}`')
            if reference:
                return values.placeholder(reference['name'], reference['spec'])
        return text or target
