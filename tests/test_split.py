"""tools.split: one MyST section -> a PyTorch notebook and a JAX notebook."""
import base64

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tools import colab
from tools.sections import find_sections, read_section, section_name
from tools.split import main as split_main
from tools.split import split_section

BIB = """@article{vaswani2017attention,
  author = {Vaswani, Ashish and Shazeer, Noam and Parmar, Niki},
  title = {Attention is all you need}, year = {2017}}
@article{ba2016layer,
  author = {Ba, Jimmy Lei and Kiros, Jamie Ryan}, title = {Layer normalization}, year = {2016}}
"""


def routed(project):
    code = project.code
    project.section(
        "ch/routes",
        "# Routes\n\nIntro prose.\n",
        code("import math", "pytorch"),
        code("import cmath", "jax"),
        "Between the twins and the shared cell.\n",
        code("shared = 1 + 1"),
        code("assert shared == 2", "pytorch", "claim", "remove-cell"),
        code("assert shared == 2", "jax", "claim", "remove-cell"),
        code("1 / 0", "raises-exception"),
    )
    return split_section("ch/routes", project.layout)


def read(path):
    return nbformat.read(path, as_version=4)


def test_tags_route_cells_and_untagged_cells_go_to_both(project):
    paths = routed(project)
    sources = {fw: [c.source for c in read(p).cells[1:] if c.cell_type == "code"]
               for fw, p in paths.items()}
    assert sources["pytorch"] == ["import math", "shared = 1 + 1", "assert shared == 2", "1 / 0"]
    assert sources["jax"] == ["import cmath", "shared = 1 + 1", "assert shared == 2", "1 / 0"]
    for path in paths.values():
        prose = [c.source for c in read(path).cells if c.cell_type == "markdown"]
        assert prose == ["# Routes\n\nIntro prose.", "Between the twins and the shared cell."]


def test_paths_mirror_the_source_tree(project):
    paths = routed(project)
    build = project.layout.build
    assert paths == {"pytorch": build / "notebooks/pytorch/ch/routes.ipynb",
                     "jax": build / "notebooks/jax/ch/routes.ipynb"}


def test_ids_come_from_source_positions_and_are_stable(project):
    paths = routed(project)
    ids = {fw: [c.id for c in read(p).cells] for fw, p in paths.items()}
    assert ids["pytorch"] == ["install", "c000", "c001", "c003", "c004", "c005", "c007"]
    assert ids["jax"] == ["install", "c000", "c002", "c003", "c004", "c006", "c007"]
    first = {fw: p.read_bytes() for fw, p in paths.items()}
    assert {fw: p.read_bytes() for fw, p in split_section("ch/routes", project.layout).items()} == first


def test_framework_tags_go_other_tags_stay(project):
    paths = routed(project)
    for framework, path in paths.items():
        tags = {c.source: c.metadata.get("tags") for c in read(path).cells[1:]}
        assert tags["assert shared == 2"] == ["claim", "remove-cell"]
        assert tags["1 / 0"] == ["raises-exception"]
        assert all(fw not in (t or []) for t in tags.values() for fw in ("pytorch", "jax"))


def test_notebooks_are_plain_jupyter_notebooks(project):
    for path in routed(project).values():
        notebook = read(path)
        nbformat.validate(notebook)
        assert notebook.metadata.kernelspec.name == "python3"
        assert "jupytext" not in notebook.metadata


def run_install_cell(source, d2l_mini_importable, monkeypatch):
    """Execute an install cell with IPython's syntax; returns the %pip lines it ran."""
    calls = []

    class Shell:
        def run_line_magic(self, name, line):
            calls.append(f"%{name} {line}")

    if not d2l_mini_importable:
        monkeypatch.setitem(__import__("sys").modules, "d2l_mini", None)
    code = TransformerManager().transform_cell(source)
    namespace = {"get_ipython": lambda: Shell()}
    exec(code, namespace)
    return calls


def test_colab_cell_comes_first_and_does_nothing_where_d2l_mini_is_installed(project, monkeypatch):
    paths = routed(project)
    for framework, path in paths.items():
        install = read(path).cells[0]
        assert install.id == "install" and install.cell_type == "code"
        assert run_install_cell(install.source, True, monkeypatch) == []


def test_colab_cell_installs_the_library_and_the_pinned_framework(project, monkeypatch):
    paths = routed(project)
    torch_calls = run_install_cell(read(paths["pytorch"]).cells[0].source, False, monkeypatch)
    assert len(torch_calls) == 1
    assert "torch==2.13.0 " in torch_calls[0]
    assert '"d2l_mini @ git+https://example.org/owner/book"' in torch_calls[0]
    jax_calls = run_install_cell(read(paths["jax"]).cells[0].source, False, monkeypatch)
    assert len(jax_calls) == 1
    for pin in ("jaxlib==0.10.2", "flax==0.12.8", "optax==0.2.8", "git+https://example.org/owner/book"):
        assert pin in jax_calls[0]
    assert "{jax_package}" in jax_calls[0]  # IPython expands it: jax==0.10.2, or jax[cuda12] on a GPU


def test_colab_repository_falls_back_without_config(project):
    project.layout.config.unlink()
    assert colab.repository_url(project.layout) == colab.DEFAULT_REPOSITORY
    with pytest.raises(ValueError, match="framework"):
        colab.install_source("tensorflow", project.layout)


def test_myst_syntax_becomes_plain_markdown(project):
    (project.layout.book / "references.bib").write_text(BIB)
    (project.layout.book / "img").mkdir()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>\n'
    (project.layout.book / "img" / "wiring.svg").write_bytes(svg)
    project.page("other", "(sec-other)=\n# The other page\n")
    project.section(
        "ch/myst",
        "(sec-here)=\n# Here\n",
        "As {cite:t}`ba2016layer` show, and as {cite:p}`vaswani2017attention,ba2016layer` "
        "say; {cite}`missing2020`. See {ref}`sec-other`, {ref}`that page <sec-other>`, "
        "{numref}`fig-wiring` and {eq}`eq-sum`. Code: `{ref}` stays.\n",
        "$$\ny = a + b\n$$ (eq-sum)\n",
        ":::{figure} ../img/wiring.svg\n:name: fig-wiring\n:width: 50%\n\nThe wiring.\n:::\n",
        "```{note}\nA note with {ref}`sec-here`.\n```\n",
        "```python\nprint('{ref}`kept`')\n```\n",
        project.code("x = 1"),
    )
    path = split_section("ch/myst", project.layout)["pytorch"]
    cells = [c for c in read(path).cells if c.cell_type == "markdown"]
    text = "\n\n".join(c.source for c in cells)
    assert "(sec-here)=" not in text and text.startswith("# Here")
    assert "Ba and Kiros (2016) show" in text
    assert "(Vaswani et al., 2017; Ba and Kiros, 2016) say" in text
    assert "[missing2020]" in text
    assert "See The other page, that page, Figure 1 and (1)." in text
    assert "`{ref}` stays" in text
    assert "$$\ny = a + b\n\\tag{1}\n$$" in text and "(eq-sum)" not in text
    assert "![The wiring.](attachment:wiring.svg)" in text and "*Figure 1: The wiring.*" in text
    assert "> **Note**\n>\n> A note with Here." in text
    assert "print('{ref}`kept`')" in text
    assert ":::" not in text and "```{" not in text
    figure_cell = next(c for c in cells if "attachment:" in c.source)
    assert base64.b64decode(figure_cell.attachments["wiring.svg"]["image/svg+xml"]) == svg


def test_sections_are_pages_with_notebook_front_matter(project):
    project.section("ch/a", "# A\n")
    project.page("ch/index", "---\ntitle: Chapter\n---\n# Chapter\n")
    assert find_sections(project.layout) == ["ch/a"]
    assert section_name(project.layout, str(project.layout.book / "ch/a.md")) == "ch/a"
    with pytest.raises(ValueError, match="plain page"):
        section_name(project.layout, str(project.layout.book / "ch/index.md"))
    with pytest.raises(ValueError, match="no-such"):
        section_name(project.layout, "book/no-such.md")
    assert split_main([], project.layout) == 0
    assert project.layout.notebook("jax", "ch/a").is_file()
    assert not project.layout.notebook("jax", "ch/index").exists()


def test_a_cell_tagged_with_both_frameworks_is_rejected(project):
    project.section("ch/both", project.code("x = 1", "pytorch", "jax"))
    with pytest.raises(ValueError, match="tagged both"):
        read_section(project.layout, "ch/both")
