"""The first cell of every split notebook: installs what Colab lacks.

Guarded by ``import d2l_mini``, so it does nothing where the book's environment is
already installed (locally, in CI).
"""
from __future__ import annotations

import re

import yaml

from tools.paths import Layout

CELL_ID = "install"
DEFAULT_REPOSITORY = "https://github.com/d2l-mini/transformer-block-book"
PACKAGES = {"pytorch": ("torch",), "jax": ("jax", "jaxlib", "flax", "optax")}


def repository_url(layout: Layout) -> str:
    """``repository.url`` from ``_config.yml``, or the book's default repository."""
    if layout.config.is_file():
        config = yaml.safe_load(layout.config.read_text(encoding="utf-8")) or {}
        url = (config.get("repository") or {}).get("url")
        if url:
            return str(url).rstrip("/")
    return DEFAULT_REPOSITORY


def pinned_versions(layout: Layout) -> dict[str, str]:
    """``name -> version`` of every ``name==version`` line of requirements.txt."""
    versions = {}
    if layout.requirements.is_file():
        for line in layout.requirements.read_text(encoding="utf-8").splitlines():
            match = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*==\s*([^\s;#]+)", line)
            if match:
                versions[match.group(1).lower()] = match.group(2).split("+")[0]
    return versions


def install_source(framework: str, layout: Layout) -> str:
    if framework not in PACKAGES:
        raise ValueError(f"framework must be one of {tuple(PACKAGES)}, got {framework!r}")
    versions = pinned_versions(layout)
    pins = [f"{name}=={versions[name]}" if name in versions else name for name in PACKAGES[framework]]
    library = f'"d2l_mini @ git+{repository_url(layout)}"'
    lines = [
        "# Colab or a fresh Jupyter: install the book's library and the pinned framework.",
        "# Where d2l_mini is already installed, this cell does nothing.",
        "try:",
        "    import d2l_mini",
        "except ImportError:",
    ]
    if framework == "jax":
        # On a GPU machine JAX needs its CUDA plugin, which plain `jax` does not bring.
        gpu_jax = pins[0].replace("jax", "jax[cuda12]", 1)
        lines += [
            "    import shutil",
            f'    jax_package = "{gpu_jax}" if shutil.which("nvidia-smi") else "{pins[0]}"',
            f"    %pip install --quiet {{jax_package}} {' '.join(pins[1:])} {library}",
        ]
    else:
        lines.append(f"    %pip install --quiet {' '.join(pins)} {library}")
    return "\n".join(lines)
