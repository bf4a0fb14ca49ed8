"""Draw book/img/norm-placements.svg: four places for normalisation around one
sublayer F: post-LN, pre-LN, on the branch output (OLMo 2), on both sides of
the branch (Gemma 3).

    python -m tools.figures.norm_placements

The SVG is written as plain text, element by element, so re-running the script
gives a byte-identical file.
"""

from tools.paths import Layout
from tools.svg import NORM, SUBLAYER, Colours, arrow, box, document, dot, line, plus, text, write

OUT = Layout().book / 'img' / 'norm-placements.svg'

PANEL_W, WIDTH, HEIGHT = 180, 730, 400
BOX_W, BOX_H = 70, 28
NORM_W, NORM_H = 64, 24
FILL: dict[str, Colours] = {'F': SUBLAYER, 'norm': NORM, 'stream-norm': ('#f8d4cf', '#b23a2a')}
FORK_Y, JOIN_Y = 310, 130

# (title, subtitle, boxes on the branch from bottom to top, norm on the stream?,
#  formula)
PANELS = [
    ('Post-LN', 'original Transformer', ['F'], True, 'y = Norm(x + F(x))'),
    ('Pre-LN', 'most current models', ['norm', 'F'], False, 'y = x + F(Norm(x))'),
    ('Output norm', 'OLMo 2', ['F', 'norm'], False, 'y = x + Norm(F(x))'),
    ('Both sides', 'Gemma 3', ['norm', 'F', 'norm'], False, "y = x + Norm'(F(Norm(x)))"),
]


def block(cx: float, cy: float, kind: str) -> str:
    """The sublayer F (kind 'F') or a Norm box ('norm', 'stream-norm')."""
    if kind == 'F':
        return box(cx, cy, 'F', FILL[kind], (BOX_W, BOX_H), rx=5, label_class='var')
    return box(cx, cy, 'Norm', FILL[kind], (NORM_W, NORM_H), rx=5)


def panel(
    x0: float, title: str, subtitle: str, branch: list[str], stream_norm: bool, formula: str
) -> list[str]:
    sx, bx = x0 + 45, x0 + 112
    parts = [
        text(x0 + PANEL_W / 2, 22, title, 'title'),
        text(x0 + PANEL_W / 2, 40, subtitle, 'note'),
        text(sx, 372, 'x', 'var'),
        arrow([(sx, 358), (sx, FORK_Y + 3)]),
        dot(sx, FORK_Y),
        line([(sx, FORK_Y), (bx, FORK_Y)]),
        arrow([(sx, FORK_Y), (sx, JOIN_Y + 10)]),
    ]
    # spread the branch boxes evenly between the fork and the join
    step = (FORK_Y - JOIN_Y) / (len(branch) + 1)
    y = FORK_Y
    for i, kind in enumerate(branch, start=1):
        cy = FORK_Y - i * step
        h = BOX_H if kind == 'F' else NORM_H
        parts += [arrow([(bx, y), (bx, cy + h / 2)]), block(bx, cy, kind)]
        y = cy - h / 2
    parts += [
        arrow([(bx, y), (bx, JOIN_Y), (sx + 10, JOIN_Y)]),
        *plus(sx, JOIN_Y),
    ]
    if stream_norm:
        parts += [
            arrow([(sx, JOIN_Y - 9), (sx, 104)]),
            block(sx, 92, 'stream-norm'),
            arrow([(sx, 80), (sx, 62)]),
        ]
    else:
        parts.append(arrow([(sx, JOIN_Y - 9), (sx, 62)]))
    parts += [text(sx - 14, 72, 'y', 'var'), text(x0 + PANEL_W / 2, 396, formula, 'formula')]
    return parts


def svg() -> str:
    style = (
        '.wire{fill:none;stroke:#333;stroke-width:1.5}'
        '.add{fill:#fff;stroke:#333;stroke-width:1.5}'
        '.fork{fill:#333}'
        'text{font-family:Helvetica,Arial,sans-serif;font-size:13px;'
        'text-anchor:middle;fill:#222}'
        '.title{font-size:15px;font-weight:bold}'
        '.note{font-size:12px;fill:#555}'
        '.var{font-style:italic;font-size:15px}'
        '.formula{font-size:11.5px;font-family:Menlo,Consolas,monospace}'
    )
    body = []
    for i, spec in enumerate(PANELS):
        x0 = 5 + i * PANEL_W
        body += panel(x0, *spec)
        if i:
            body.append(
                f'<line x1="{x0}" y1="20" x2="{x0}" y2="380" '
                'stroke="#ddd" stroke-dasharray="4 4"/>'
            )
    return document(
        WIDTH, HEIGHT, 'Four placements of normalisation around a sublayer', style, body
    )


def main() -> None:
    write(OUT, svg())


if __name__ == '__main__':
    main()
