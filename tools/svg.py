"""Small pieces of hand-written SVG for the schematic figures in tools/figures/.

Every element is formatted the same way on every run, so a figure script that
uses only these gives a byte-identical file when it is run again.
"""

from collections.abc import Sequence
from pathlib import Path

Point = tuple[float, float]
Colours = tuple[str, str]  # a box's fill and stroke

# The colours that every figure gives the same kind of box.
SUBLAYER: Colours = ('#dbe8f6', '#3b6ea5')  # attention, or any sublayer F
NORM: Colours = ('#fcebcf', '#bf7a10')


def fmt(v: float) -> str:
    return f'{v:g}'


def line(points: Sequence[Point]) -> str:
    """A polyline of the class "wire" through ``points``."""
    coords = ' '.join(f'{fmt(x)},{fmt(y)}' for x, y in points)
    return f'<polyline class="wire" points="{coords}"/>'


def arrow(points: Sequence[Point]) -> str:
    """A polyline through ``points`` ending in the arrow head ``#head``."""
    return line(points)[:-2] + ' marker-end="url(#head)"/>'


def text(x: float, y: float, s: str, cls: str = 'label') -> str:
    return f'<text x="{fmt(x)}" y="{fmt(y)}" class="{cls}">{s}</text>'


def box(
    cx: float,
    cy: float,
    label: str,
    colours: Colours,
    size: Point,
    rx: float,
    label_class: str | None = None,
) -> str:
    """A rounded box of ``size`` (width, height) centred on (cx, cy), its label inside."""
    (fill, stroke), (w, h) = colours, size
    cls = f' class="{label_class}"' if label_class else ''
    return (
        f'<rect x="{fmt(cx - w / 2)}" y="{fmt(cy - h / 2)}" width="{fmt(w)}" '
        f'height="{fmt(h)}" rx="{fmt(rx)}" fill="{fill}" stroke="{stroke}"/>'
        f'<text x="{fmt(cx)}" y="{fmt(cy + 4.5)}"{cls}>{label}</text>'
    )


def plus(cx: float, cy: float, r: float = 9) -> tuple[str, str]:
    """The circled + where a branch adds back into the stream: the circle, the cross."""
    return (
        f'<circle cx="{fmt(cx)}" cy="{fmt(cy)}" r="{fmt(r)}" class="add"/>',
        f'<path class="wire" d="M{fmt(cx - 5)},{fmt(cy)}h10M{fmt(cx)},{fmt(cy - 5)}v10"/>',
    )


def dot(cx: float, cy: float) -> str:
    """The dot where a branch leaves the stream."""
    return f'<circle cx="{fmt(cx)}" cy="{fmt(cy)}" r="3" class="fork"/>'


def document(width: float, height: float, title: str, style: str, body: list[str]) -> str:
    """A complete SVG: white background, the arrow-head marker, then ``body``
    (a list of elements, one per line)."""
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">'
        f'<title>{title}</title>'
        f'<style>{style}</style>'
        '<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
        '<path d="M0,0L10,5L0,10z" fill="#333"/></marker></defs>'
        f'<rect width="{width}" height="{height}" fill="#fff"/>'
    )
    return head + '\n'.join([''] + body + ['']) + '</svg>\n'


def write(path: Path | str, svg: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding='utf-8')
    print(f'wrote {path}')
