"""Draw book/img/block-wiring.svg: one Transformer block, post-LN beside pre-LN.

    python -m tools.figures.block_wiring

The SVG is written as plain text, element by element, so re-running the script
gives a byte-identical file.
"""

from tools.paths import Layout
from tools.svg import NORM, SUBLAYER, Colours, arrow, box, document, dot, line, plus, text, write

OUT = Layout().book / 'img' / 'block-wiring.svg'

WIDTH, HEIGHT = 640, 570
BOX_W, BOX_H = 124, 34
NORM_W, NORM_H = 84, 26
FILL: dict[str, Colours] = {'attn': SUBLAYER, 'ffn': ('#e1f0d8', '#4d8a38'), 'norm': NORM}


def block(cx: float, cy: float, label: str, kind: str) -> str:
    """A box of ``kind`` ('attn', 'ffn' or 'norm'); norms are the smaller ones."""
    size = (NORM_W, NORM_H) if kind == 'norm' else (BOX_W, BOX_H)
    return box(cx, cy, label, FILL[kind], size, rx=6)


def sublayer(
    sx: float, fork_y: float, join_y: float, branch: list[tuple[str, str, float]]
) -> list[str]:
    """A branch that leaves the stream at ``fork_y``, passes the boxes of
    ``branch`` (bottom to top, (label, kind, centre_y)) and adds back at
    ``join_y``; returns the SVG elements."""
    bx = sx + 105
    parts = [dot(sx, fork_y), line([(sx, fork_y), (bx, fork_y)])]
    y = fork_y
    for label, kind, cy in branch:
        h = NORM_H if kind == 'norm' else BOX_H
        parts.append(arrow([(bx, y), (bx, cy + h / 2)]))
        parts.append(block(bx, cy, label, kind))
        y = cy - h / 2
    parts.append(arrow([(bx, y), (bx, join_y), (sx + 10, join_y)]))
    parts.append(''.join(plus(sx, join_y)))
    return parts


def post_ln(sx: float) -> list[str]:
    parts = [
        text(sx + 50, 30, 'Post-LN (2017)', 'title'),
        text(sx, 556, 'x', 'var'),
        arrow([(sx, 540), (sx, 503)]),
    ]
    parts += sublayer(sx, 500, 360, [('Attention', 'attn', 420)])
    parts += [
        arrow([(sx, 500), (sx, 370)]),
        arrow([(sx, 351), (sx, 333)]),
        block(sx, 320, 'Norm', 'norm'),
    ]
    parts += sublayer(sx, 280, 150, [('FFN', 'ffn', 212)])
    parts += [
        line([(sx, 307), (sx, 280)]),
        arrow([(sx, 280), (sx, 160)]),
        arrow([(sx, 141), (sx, 123)]),
        block(sx, 110, 'Norm', 'norm'),
        arrow([(sx, 97), (sx, 62)]),
        text(sx, 54, 'y', 'var'),
    ]
    return parts


def pre_ln(sx: float) -> list[str]:
    parts = [
        text(sx + 50, 30, 'Pre-LN (modern)', 'title'),
        text(sx, 556, 'x', 'var'),
        arrow([(sx, 540), (sx, 503)]),
    ]
    parts += sublayer(sx, 500, 330, [('Norm', 'norm', 455), ('Attention', 'attn', 392)])
    parts += [arrow([(sx, 500), (sx, 340)])]
    parts += sublayer(sx, 290, 120, [('Norm', 'norm', 245), ('FFN', 'ffn', 182)])
    parts += [
        line([(sx, 321), (sx, 290)]),
        arrow([(sx, 290), (sx, 130)]),
        arrow([(sx, 111), (sx, 62)]),
        text(sx, 54, 'y', 'var'),
    ]
    return parts


def svg() -> str:
    style = (
        '.wire{fill:none;stroke:#333;stroke-width:1.6}'
        '.add{fill:#fff;stroke:#333;stroke-width:1.6}'
        '.fork{fill:#333}'
        'text{font-family:Helvetica,Arial,sans-serif;font-size:14px;'
        'text-anchor:middle;fill:#222}'
        '.title{font-size:16px;font-weight:bold}'
        '.var{font-style:italic;font-size:16px}'
        '.note{font-size:12px;fill:#555}'
    )
    body = post_ln(110) + pre_ln(430)
    body.append(
        f'<line x1="{WIDTH / 2}" y1="50" x2="{WIDTH / 2}" y2="545" '
        'stroke="#ccc" stroke-dasharray="4 4"/>'
    )
    body.append(text(70, 440, 'residual', 'note'))
    body.append(text(70, 455, 'stream', 'note'))
    return document(WIDTH, HEIGHT, 'Transformer block: post-LN and pre-LN wiring', style, body)


def main() -> None:
    write(OUT, svg())


if __name__ == '__main__':
    main()
