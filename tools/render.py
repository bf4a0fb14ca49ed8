"""Assemble the book's site from the merged notebooks and build its HTML.

`python -m tools render` lays out _build/site/ (configuration, plain pages, the merged
notebook of every section, the Execution report, the split notebooks for download) and
runs `jupyter-book build --all -W -n --keep-going` on it: any warning fails the build.
The HTML ends in _build/site/_build/html. When the assembled site is byte for byte the
one of the last successful build, the HTML is kept as it is (`--force` rebuilds).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tools import report
from tools.frameworks import FRAMEWORKS, TABLE
from tools.paths import Layout
from tools.problems import StepFailed
from tools.sections import is_section

GENERATED_PAGES = ("report",)
DIGEST_FILE = ".site-digest"


class RenderError(StepFailed):
    """The site could not be assembled or its HTML did not build cleanly."""


def book_pages(book):
    """{'<rel>': is_section} for every Markdown page under book/ (not _static/, _templates/, img/)."""
    pages = {}
    for path in sorted(Path(book).rglob("*.md")):
        rel = path.relative_to(book)
        if any(part.startswith((".", "_")) for part in rel.parts) or rel.parts[0] == "img":
            continue
        pages[rel.with_suffix("").as_posix()] = is_section(path)
    return pages


def filter_toc(toc, available, progress=print):
    """A copy of the parsed _toc.yml without the entries whose page does not exist.

    An entry that goes takes its sections with it; a part left without chapters goes too.
    """
    if toc.get("root") not in available:
        raise RenderError(f"the toc's root page {toc.get('root')!r} does not exist")

    def keep(entries):
        kept = []
        for entry in entries:
            name = entry.get("file")
            if name is not None and name not in available:
                below = [e.get("file") for e in entry.get("sections", []) if e.get("file") in available]
                progress(f"render: leaving {name} out of the toc: book/{name}.md does not exist"
                       + (f" (nor its sections {', '.join(below)})" if below else ""))
                continue
            entry = dict(entry)
            for key in ("sections", "chapters"):
                if key in entry:
                    entry[key] = keep(entry[key])
                    if not entry[key]:
                        del entry[key]
            kept.append(entry)
        return kept

    toc = dict(toc)
    if "parts" in toc:
        parts = []
        for part in toc["parts"]:
            part = dict(part)
            part["chapters"] = keep(part.get("chapters", []))
            if part["chapters"]:
                parts.append(part)
        toc["parts"] = parts
    for key in ("chapters", "sections"):
        if key in toc:
            toc[key] = keep(toc[key])
    return toc


def toc_files(toc):
    files = [toc["root"]]

    def walk(entries):
        for entry in entries:
            if "file" in entry:
                files.append(entry["file"])
            for key in ("sections", "chapters"):
                walk(entry.get(key, []))

    for part in toc.get("parts", []):
        walk(part.get("chapters", []))
    for key in ("chapters", "sections"):
        walk(toc.get(key, []))
    return files


def site_config(layout: Layout) -> str:
    """The book's _config.yml with the framework table (names and labels) that the
    Sphinx extension gives the pages (``book_frameworks``)."""
    config = yaml.safe_load(layout.config.read_text(encoding="utf-8")) or {}
    sphinx_config = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx_config["book_frameworks"] = [{"name": fw.name, "label": fw.label} for fw in TABLE]
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def copy_tree(src, dst):
    if Path(src).is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".*", "__pycache__", "*.ipynb_checkpoints"))


def assemble(layout, site, progress=print):
    """Lay out `site` for jupyter-book; returns the toc files that are sections."""
    book, build, site = layout.book, layout.build, Path(site)
    pages = book_pages(book)
    toc = filter_toc(yaml.safe_load(layout.toc.read_text()),
                     set(pages) | set(GENERATED_PAGES), progress)
    built = toc_files(toc)
    sections = [rel for rel in built if pages.get(rel)]

    missing = [str(build / "merged" / f"{rel}.ipynb") for rel in sections
               if not (build / "merged" / f"{rel}.ipynb").is_file()]
    missing += [str(build / "notebooks" / fw / f"{rel}.ipynb") for rel in sections for fw in FRAMEWORKS
                if not (build / "notebooks" / fw / f"{rel}.ipynb").is_file()]
    if missing:
        raise RenderError("missing notebooks (run python -m tools execute and merge first): "
                          + ", ".join(missing))

    # Start from an empty site, keeping only the HTML of the last build (see render()).
    if site.exists():
        for path in site.iterdir():
            if path.name != "_build":
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
    site.mkdir(parents=True, exist_ok=True)
    (site / "_config.yml").write_text(site_config(layout), encoding="utf-8")
    (site / "_toc.yml").write_text(yaml.safe_dump(toc, sort_keys=False))
    if (book / "references.bib").is_file():
        shutil.copy2(book / "references.bib", site / "references.bib")
    copy_tree(book / "_static", site / "_static")
    copy_tree(book / "_templates", site / "_templates")
    copy_tree(book / "img", site / "img")
    (site / "_ext").mkdir()
    shutil.copy2(Path(__file__).with_name("render_ext.py"), site / "_ext" / "render_ext.py")

    for rel, section in pages.items():
        target = site / (f"{rel}.ipynb" if section else f"{rel}.md")
        target.parent.mkdir(parents=True, exist_ok=True)
        if not section:
            shutil.copy2(book / f"{rel}.md", target)
        elif rel in sections:
            shutil.copy2(build / "merged" / f"{rel}.ipynb", target)

    downloads = site / "_extra" / "notebooks"
    downloads.mkdir(parents=True)
    for rel in sections:
        for fw in FRAMEWORKS:
            target = downloads / fw / f"{rel}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(build / "notebooks" / fw / f"{rel}.ipynb", target)

    records_path = layout.records
    if not records_path.is_file():
        progress(f"render: {records_path} does not exist; the Execution report lists no runs")
    report.write_report(records_path, site / "report.md", sections=sections, linked=sections)
    return sections


def jupyter_book_command():
    local = Path(sys.executable).with_name("jupyter-book")
    found = str(local) if local.is_file() else shutil.which("jupyter-book")
    if found is None:
        raise RenderError("jupyter-book is not installed: pip install -r requirements.txt")
    return found


def build_html(site, *, quiet=False):
    """Run jupyter-book on `site`; RenderError unless it built without a warning."""
    command = [jupyter_book_command(), "build", str(site), "--all", "-W", "-n", "--keep-going"]
    result = subprocess.run(command, capture_output=quiet, text=True)
    if result.returncode != 0:
        details = f"\n{result.stdout}\n{result.stderr}" if quiet else ""
        raise RenderError(f"jupyter-book build failed (exit {result.returncode}): "
                          f"{' '.join(command)}{details}")
    return Path(site) / "_build" / "html"


def site_digest(site):
    """A hash of everything jupyter-book reads: the site's files and the tools' versions."""
    from importlib import metadata

    digest = hashlib.sha256()
    for name in ("jupyter-book", "myst-nb", "sphinx", "sphinx-book-theme", "sphinx-mathjax-offline"):
        try:
            digest.update(f"{name}=={metadata.version(name)}\n".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name} missing\n".encode())
    for path in sorted(Path(site).rglob("*")):
        rel = path.relative_to(site)
        if rel.parts[0] == "_build" or not path.is_file():
            continue
        digest.update(f"{rel.as_posix()}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def render(layout=None, *, site=None, html=True, force=False, quiet=False, progress=print):
    """Assemble `site` (default <layout.build>/site) and, if `html`, build it.

    layout: a tools.paths.Layout (book/, _build/, _config.yml, _toc.yml; default the
    repository's). The HTML is rebuilt from scratch unless the site is the same as at the
    last successful build (or `force`). Returns the HTML folder <site>/_build/html.
    Raises RenderError when a section's notebooks are missing or jupyter-book reports
    any warning.
    """
    layout = layout or Layout()
    site = Path(site) if site is not None else layout.build / "site"
    start = time.perf_counter()
    sections = assemble(layout, site, progress=progress)
    progress(f"render: site assembled in {site} ({len(sections)} sections)")
    out = site / "_build" / "html"
    if not html:
        return out
    digest, stamp = site_digest(site), site / "_build" / DIGEST_FILE
    if not force and (out / "index.html").is_file() and stamp.is_file() and stamp.read_text() == digest:
        progress(f"render: nothing changed since the last build; HTML kept: {out / 'index.html'}")
        return out
    if (site / "_build").exists():
        shutil.rmtree(site / "_build")
    build_html(site, quiet=quiet)
    stamp.write_text(digest)
    progress(f"render: HTML built in {time.perf_counter() - start:.0f} s: {out / 'index.html'}")
    return out
