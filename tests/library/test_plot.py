"""plot, check_shape, try_gpu and the JAX key helpers."""

import matplotlib

matplotlib.use('Agg')
import numpy as np
import pytest
from matplotlib import pyplot as plt

from d2l_mini import plotting


@pytest.fixture
def axes():
    figure = plt.figure()
    yield figure.gca()
    plt.close(figure)


def lines(axes):
    return [(line.get_xdata(), line.get_ydata()) for line in axes.lines]


def test_two_series_against_one_x(axes):
    x = np.arange(1, 5)
    plotting.plot(
        x,
        [[1, 2, 3, 4], np.array([4.0, 3, 2, 1])],
        'step',
        'loss',
        legend=['up', 'down'],
        yscale='log',
        xlim=(1, 4),
        axes=axes,
    )
    drawn = lines(axes)
    assert len(drawn) == 2
    np.testing.assert_array_equal(drawn[0][0], x)
    np.testing.assert_array_equal(drawn[1][0], x)
    np.testing.assert_array_equal(drawn[1][1], [4, 3, 2, 1])
    assert axes.get_xlabel() == 'step' and axes.get_ylabel() == 'loss'
    assert axes.get_yscale() == 'log' and axes.get_xlim() == (1, 4)
    assert [t.get_text() for t in axes.get_legend().get_texts()] == ['up', 'down']
    assert axes.lines[1].get_linestyle() == '--'  # second default format


def test_y_only_is_drawn_against_indices(axes):
    plotting.plot([3.0, 1.0, 2.0], axes=axes)
    ((x, y),) = lines(axes)
    np.testing.assert_array_equal(x, [0, 1, 2])
    np.testing.assert_array_equal(y, [3, 1, 2])


def test_rows_of_a_2d_array_are_series(axes):
    plotting.plot(np.arange(3), np.array([[0, 1, 2], [2, 1, 0]]), axes=axes)
    assert len(axes.lines) == 2


def test_torch_tensors_with_gradients(axes):
    import torch

    x = torch.linspace(0, 1, 5)
    y = (x * torch.ones(5, requires_grad=True)) ** 2
    plotting.plot(x, y, axes=axes)
    ((_, drawn),) = lines(axes)
    np.testing.assert_allclose(drawn, np.linspace(0, 1, 5) ** 2, rtol=1e-6)


def test_jax_arrays_and_python_floats(axes):
    from jax import numpy as jnp

    plotting.plot(jnp.arange(1, 4), [[0.5, 0.25, 0.125], jnp.ones(3)], axes=axes)
    assert len(axes.lines) == 2
    np.testing.assert_array_equal(lines(axes)[1][1], [1, 1, 1])


def test_new_figure_has_the_requested_size():
    plotting.plot([1, 2], [3, 4], figsize=(4.0, 2.0))
    figure = plt.gcf()
    assert tuple(figure.get_size_inches()) == (4.0, 2.0)
    plt.close(figure)


def test_mismatched_lengths_are_rejected(axes):
    with pytest.raises(ValueError, match='same length'):
        plotting.plot([1, 2, 3], [1, 2], axes=axes)
    with pytest.raises(ValueError, match='series'):
        plotting.plot([[1, 2], [3, 4]], [[1, 2], [3, 4], [5, 6]], axes=axes)


def test_description_names_kind_axes_scales_and_legend(axes):
    plotting.plot(
        [1, 2, 3],
        [[1, 2, 3], [3, 2, 1]],
        'step',
        'training loss',
        legend=['SwiGLU', 'GELU'],
        yscale='log',
        axes=axes,
    )
    assert (
        plotting.describe(axes.figure)
        == 'Line plot of training loss (log scale) against step: SwiGLU, GELU'
    )


def test_description_of_several_plots():
    figure, (left, right) = plt.subplots(1, 2)
    plotting.plot([1, 2], [3, 4], 'block', 'attention', axes=left)
    plotting.plot([1, 2], [3, 4], 'block', 'FFN', legend='post-LN', axes=right)
    assert plotting.describe(figure) == (
        'Figure of 2 plots: Line plot of attention '
        'against block; Line plot of FFN against '
        'block: post-LN'
    )
    for ax in (left, right):
        ax.clear()
        ax.imshow(np.eye(2))
    right.set_title('head 1')
    assert plotting.describe(figure) == 'Figure of 2 plots: Image; Image, titled head 1'
    right.set_title('')
    assert plotting.describe(figure) == 'Figure of 2 plots, each: Image'
    plt.close(figure)


@pytest.mark.slow
def test_notebook_figures_have_their_description_as_text():
    """In a kernel started as the build starts its kernels (``STARTUP_LINE``), after
    ``use_svg_display()`` (the call a notebook makes before drawing): the text/plain of
    every figure (which the HTML book uses as alt text) is its description, whether
    d2l_mini drew it or not."""
    import nbformat
    from nbclient import NotebookClient
    from nbformat import v4

    from tools.run.kernel import STARTUP_LINE

    cells = [
        'from d2l_mini import plotting\nfrom matplotlib import pyplot as plt\n'
        'plotting.use_svg_display()',
        '_, axes = plt.subplots(1, 2)\naxes[0].imshow([[0, 1]])\naxes[1].imshow([[1, 0]])',
        "plotting.plot([1, 2], [3, 4], 'step', 'loss', legend=['a'])",
        '_, axes = plt.subplots(1, 2)\n'
        "plotting.plot([1, 2], [3, 4], 'block', 'attention', axes=axes[0])\n"
        "plotting.plot([1, 2], [3, 4], 'block', 'FFN', axes=axes[1])",
    ]
    notebook = v4.new_notebook(cells=[v4.new_code_cell(c) for c in cells])
    NotebookClient(
        notebook,
        kernel_name='python3',
        timeout=120,
        extra_arguments=[f'--IPKernelApp.exec_lines={STARTUP_LINE}'],
    ).execute()
    texts = [
        [o['data']['text/plain'] for o in cell.outputs if o['output_type'] == 'display_data']
        for cell in notebook.cells
    ]
    assert texts == [
        [],
        ['Figure of 2 plots, each: Image'],
        ['Line plot of loss against step: a'],
        [
            'Figure of 2 plots: Line plot of attention against block; '
            'Line plot of FFN against block'
        ],
    ]
    assert 'image/svg+xml' in notebook.cells[2].outputs[0]['data']
    nbformat.validate(notebook)


def test_check_shape_reports_both_shapes():
    plotting.check_shape(np.zeros((2, 3)), (2, 3))
    with pytest.raises(ValueError, match='shape') as info:
        plotting.check_shape(np.zeros((2, 3)), (3, 2))
    assert '(3, 2)' in str(info.value) and '(2, 3)' in str(info.value)


def test_framework_modules_reexport_the_helpers():
    from d2l_mini import jax, torch

    for module in (torch, jax):
        assert module.plot is plotting.plot
        assert module.check_shape is plotting.check_shape
        assert module.d2l is module


def test_framework_modules_are_twins():
    """Both export the same names, each defined, and the same public
    functions and classes, so that a cell can switch frameworks by its import."""
    from d2l_mini import jax as jax_module
    from d2l_mini import torch as torch_module

    def public(module):
        return {
            name
            for name, value in vars(module).items()
            if not name.startswith('_')
            and callable(value)
            and getattr(value, '__module__', None) == module.__name__
        }

    assert torch_module.__all__ == jax_module.__all__
    for module in (torch_module, jax_module):
        assert all(hasattr(module, name) for name in module.__all__)
        assert public(module) <= set(module.__all__), module.__name__
    assert public(torch_module) == public(jax_module)


def test_torch_check_shape_and_try_gpu():
    import torch

    from d2l_mini import torch as d2l

    d2l.check_shape(torch.ones(2, 5), torch.Size([2, 5]))
    with pytest.raises(ValueError, match=r'\(2, 4\).*\(2, 5\)'):
        d2l.check_shape(torch.ones(2, 5), (2, 4))
    device = d2l.try_gpu()
    expected = 'cuda' if torch.cuda.is_available() else 'cpu'
    assert device.type == expected
    assert d2l.try_gpu(torch.cuda.device_count()).type == 'cpu'


def test_jax_try_gpu():
    import jax

    from d2l_mini import jax as d2l

    device = d2l.try_gpu()
    assert device in jax.devices()
    assert d2l.try_gpu(99).platform == 'cpu'
