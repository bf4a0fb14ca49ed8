"""Small pieces of hand-written SVG for the schematic figures in tools/figures/.

Every element is formatted the same way on every run, so a figure script that
uses only these gives a byte-identical file when it is run again.
"""

from pathlib import Path


def fmt(v):
    return f'{v:g}'


def line(points):
    """A polyline of the class "wire" through ``points``."""
    coords = ' '.join(f'{fmt(x)},{fmt(y)}' for x, y in points)
    return f'<polyline class="wire" points="{coords}"/>'


def arrow(points):
    """A polyline through ``points`` ending in the arrow head ``#head``."""
    return line(points)[:-2] + ' marker-end="url(#head)"/>'


def text(x, y, s, cls='label'):
    return f'<text x="{fmt(x)}" y="{fmt(y)}" class="{cls}">{s}</text>'


def document(width, height, title, style, body):
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


def write(path, svg):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding='utf-8')
    print(f'wrote {path}')
