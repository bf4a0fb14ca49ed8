"""tools.source.save: d2l_mini holds exactly the book's #@save cells."""

import tomllib

import pytest

from tools.cli import main
from tools.frameworks import TABLE
from tools.paths import Layout
from tools.source import save


def test_d2l_mini_is_up_to_date_with_the_book():
    stale = save.stale_modules(Layout())
    if stale:
        pytest.fail(
            f"{', '.join(map(str, stale))} differ from the book's #@save cells: "
            'run `make save` and commit the result',
            pytrace=False,
        )


def library_module(project, name, body):
    path = project.layout.library / name
    path.write_text(f'"""{name}"""\nimport math\n\n\n{body}\n\n{save.MARKER}\n')
    return path


def test_save_copies_cells_in_toc_order_per_framework(project, capsys):
    code = project.code
    layout = project.layout
    torch_module = library_module(project, 'torch.py', 'def kept():\n    return 1')
    jax_module = library_module(project, 'jax.py', 'def kept():\n    return 2')
    project.section(
        'ch/first',
        code("#@save\nclass Block:\n    framework = 'torch'", 'pytorch'),
        code("#@save\nclass Block:\n    framework = 'jax'", 'jax'),
        code('not_saved = 1'),
    )
    project.section(
        'ch/second',
        code("#@save\ndef shared():\n    return 'both'"),
        code('x = 1  #@save is only a marker on the first line'),
    )
    (layout.root / '_toc.yml').write_text(
        'format: jb-book\nroot: index\nchapters:\n- file: ch/second\n- file: ch/first\n'
    )

    assert main(['save', '--check'], layout) == 1
    assert 'd2l_mini/torch.py' in capsys.readouterr().err
    assert main(['save'], layout) == 0
    torch_text = torch_module.read_text()
    head, _, saved = torch_text.partition(save.MARKER + '\n')
    assert head.endswith('def kept():\n    return 1\n\n')
    assert saved == (
        "\n\n# Saved from book/ch/second.md\ndef shared():\n    return 'both'\n"
        "\n\n# Saved from book/ch/first.md\nclass Block:\n    framework = 'torch'\n"
    )
    assert (
        "framework = 'jax'" in jax_module.read_text()
        and "framework = 'torch'" not in jax_module.read_text()
    )
    assert '#@save' not in saved and 'not_saved' not in saved

    assert main(['save', '--check'], layout) == 0
    assert main(['save'], layout) == 0 and torch_module.read_text() == torch_text  # deterministic

    section = layout.source('ch/first')
    section.write_text(section.read_text().replace("'jax'", "'flax'"))
    assert main(['save', '--check'], layout) == 1
    err = capsys.readouterr().err
    assert 'd2l_mini/jax.py' in err and 'd2l_mini/torch.py' not in err and 'make save' in err


def test_a_module_without_the_marker_is_an_error(project, capsys):
    (project.layout.library / 'torch.py').write_text('x = 1\n')
    library_module(project, 'jax.py', '')
    assert main(['save', '--check'], project.layout) == 2
    assert save.MARKER in capsys.readouterr().err


def test_every_framework_has_its_library_module_and_extra():
    layout = Layout()
    extras = tomllib.loads(layout.pyproject.read_text())['project']['optional-dependencies']
    for fw in TABLE:
        assert (layout.library / fw.module).is_file(), fw.name
        assert fw.extra in extras, fw.name
