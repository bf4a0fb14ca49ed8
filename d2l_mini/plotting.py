"""Plotting and shape helpers shared by both frameworks (matplotlib, numpy)."""

import numpy as np
from matplotlib import pyplot as plt


def _axes_text(axes):
    """What one matplotlib ``Axes`` shows, from its kind, labels, scales and legend."""
    if axes.lines:
        kind = 'Line plot'
    elif axes.images:
        kind = 'Image'
    elif axes.collections or axes.patches:
        kind = 'Chart'
    else:
        return None
    ylabel, xlabel = (_label(axis) for axis in (axes.yaxis, axes.xaxis))
    text = kind + (f' of {ylabel}' if ylabel else '') + (f' against {xlabel}' if xlabel else '')
    if axes.get_title():
        text += f', titled {axes.get_title()}'
    legend = axes.get_legend()
    if legend is not None:
        text += ': ' + ', '.join(t.get_text() for t in legend.get_texts())
    return text


def _label(axis):
    label = axis.get_label_text()
    if label and axis.get_scale() == 'log':
        return f'{label} (log scale)'
    return label


def describe(figure):
    """A text alternative for a matplotlib figure, from its axes' kinds, labels and
    legends, e.g. 'Line plot of training loss against step: SwiGLU, GELU'."""
    texts = [t for t in map(_axes_text, figure.axes) if t]
    if not texts:
        return 'Empty figure'
    if len(texts) == 1:
        return texts[0]
    counts = {text: texts.count(text) for text in texts}
    if len(counts) == 1:
        return f'Figure of {len(texts)} plots, each: {texts[0]}'
    parts = [text if n == 1 else f'{n} × {text}' for text, n in counts.items()]
    return f'Figure of {len(texts)} plots: ' + '; '.join(parts)


def _pretty_description(figure, printer, cycle):
    printer.text(describe(figure))


def describe_figures(shell):
    """Make the text/plain of every figure that ``shell`` (IPython) displays its
    :func:`describe` text. The book's build does this in its kernels (tools/run/startup.py),
    for the HTML's alt text; a reader's notebook keeps matplotlib's own."""
    from matplotlib.figure import Figure

    shell.display_formatter.formatters['text/plain'].for_type(Figure, _pretty_description)


def use_svg_display():
    """Show notebook figures as SVG; does nothing outside IPython."""
    try:
        from matplotlib_inline import backend_inline
    except ImportError:
        return
    try:
        backend_inline.set_matplotlib_formats('svg')
    except Exception:  # not running inside an IPython kernel
        return


def set_figsize(figsize=(3.5, 2.5)):
    """Set the default size of new figures."""
    use_svg_display()
    plt.rcParams['figure.figsize'] = figsize


def to_numpy(x):
    """Convert a torch tensor, a JAX array, a list or a scalar to numpy."""
    if hasattr(x, 'detach'):  # a torch tensor, possibly on a GPU
        x = x.detach().cpu()
    return np.asarray(x)


def _is_array(x):
    return hasattr(x, 'shape') and hasattr(x, 'ndim')


def _as_series(values):
    """A list of 1-D numpy arrays from one series, a 2-D array (one series per
    row) or a list of series."""
    if _is_array(values):
        array = to_numpy(values)
        return [array] if array.ndim <= 1 else list(array.reshape(array.shape[0], -1))
    values = list(values)
    if values and all(np.ndim(v) == 0 and not isinstance(v, (list, tuple)) for v in values):
        return [to_numpy([to_numpy(v) for v in values])]
    return [to_numpy(v).ravel() for v in values]


def set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend):
    """Label, limit and scale the axes of a matplotlib ``Axes``."""
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.set_xscale(xscale)
    axes.set_yscale(yscale)
    if xlim is not None:
        axes.set_xlim(xlim)
    if ylim is not None:
        axes.set_ylim(ylim)
    if legend:
        axes.legend(legend)
    axes.grid()


def plot(
    X,
    Y=None,
    xlabel=None,
    ylabel=None,
    legend=None,
    xlim=None,
    ylim=None,
    xscale='linear',
    yscale='linear',
    fmts=('-', 'm--', 'g-.', 'r:'),
    figsize=(3.5, 2.5),
    axes=None,
):
    """Plot one or several series.

    ``X`` and ``Y`` may be torch tensors, JAX or numpy arrays, lists of numbers,
    or lists of such series. With ``Y=None`` the series in ``X`` are drawn
    against their indices. One ``X`` series is shared by all ``Y`` series.
    Draws into ``axes`` when given, otherwise into a new figure of ``figsize``.
    """
    if Y is None:
        Y, X = _as_series(X), None
    else:
        Y = _as_series(Y)
    if X is None:
        X = [np.arange(len(y)) for y in Y]
    else:
        X = _as_series(X)
        if len(X) == 1:
            X = X * len(Y)
    if len(X) != len(Y):
        raise ValueError(
            f'X holds {len(X)} series but Y holds {len(Y)}; give one X series or one per Y series'
        )
    if legend is not None and isinstance(legend, str):
        legend = [legend]
    if axes is None:
        use_svg_display()
        axes = plt.figure(figsize=figsize).gca()
    for i, (x, y) in enumerate(zip(X, Y, strict=True)):
        if len(x) != len(y):
            raise ValueError(
                f'series {i}: X has {len(x)} points, Y has '
                f'{len(y)}; they must have the same length'
            )
        axes.plot(x, y, fmts[i % len(fmts)])
    set_axes(axes, xlabel, ylabel, xlim, ylim, xscale, yscale, legend)


def check_shape(a, shape):
    """Raise ValueError unless ``a.shape`` equals ``shape``."""
    actual = tuple(a.shape)
    expected = tuple(shape)
    if actual != expected:
        message = f'shape mismatch: expected {expected}, got {actual}'
        raise ValueError(message)
