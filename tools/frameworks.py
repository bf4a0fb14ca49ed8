"""The frameworks the book runs in: the one table every step of the build reads.

Adding a framework means adding a row here (and its module to d2l_mini, its extra to
pyproject.toml); the split, the cache, the records, the report, the install cell, the
Sphinx extension and, through it, the tab script and its style all follow the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable


def torch_device() -> str | None:
    """The GPU a PyTorch kernel computes on, if any (run inside the kernel)."""
    import sys

    torch = sys.modules.get('torch')
    if torch is not None and torch.cuda.is_available():
        return 'GPU: ' + torch.cuda.get_device_name(0)
    return None


def jax_device() -> str | None:
    """The accelerator a JAX kernel computes on, if any (run inside the kernel)."""
    import sys

    jax = sys.modules.get('jax')
    if jax is not None and jax.devices()[0].platform != 'cpu':
        device = jax.devices()[0]
        return device.platform.upper() + ': ' + device.device_kind
    return None


@dataclasses.dataclass(frozen=True)
class Framework:
    name: str  # the cell tag, the folder of its notebooks, ?framework=
    label: str  # the tab's label
    install_label: str  # what the notebook's install cell says it installs
    module: str  # its d2l_mini module file
    extra: str  # the pyproject.toml extra that lists its packages
    recorded_packages: tuple[str, ...]  # versions the execution records name
    cache_packages: tuple[str, ...]  # installed builds that key the execution cache
    device: Callable[[], str | None]  # run in the kernel: names its accelerator, if any


TABLE: tuple[Framework, ...] = (
    Framework(
        name='pytorch',
        label='PyTorch',
        install_label='PyTorch',
        module='torch.py',
        extra='torch',
        recorded_packages=('torch',),
        cache_packages=('torch',),
        device=torch_device,
    ),
    Framework(
        name='jax',
        label='JAX',
        install_label='JAX, Flax and Optax',
        module='jax.py',
        extra='jax',
        recorded_packages=('jax', 'jaxlib', 'flax', 'optax'),
        cache_packages=(
            'jax',
            'jaxlib',
            'jax-cuda12-plugin',
            'jax-cuda13-plugin',
            'flax',
            'optax',
        ),
        device=jax_device,
    ),
)
FRAMEWORKS: tuple[str, ...] = tuple(fw.name for fw in TABLE)
BY_NAME: dict[str, Framework] = {fw.name: fw for fw in TABLE}


def check_framework(name: str) -> str:
    """``name`` if it names a framework of the table; ValueError otherwise."""
    if name not in BY_NAME:
        raise ValueError(f'framework must be one of {FRAMEWORKS}, got {name!r}')
    return name


def framework(name: str) -> Framework:
    return BY_NAME[check_framework(name)]


def check_frameworks(names: object) -> tuple[str, ...]:
    """``names`` as a tuple in the table's order; TypeError or ValueError otherwise."""
    if isinstance(names, str) or not isinstance(names, (list, tuple, set, frozenset)):
        raise TypeError(
            f'frameworks must be a list or tuple of names from {FRAMEWORKS}, got {names!r}'
        )
    if not names:
        raise ValueError(f'frameworks must name at least one of {FRAMEWORKS}, got none')
    chosen = {check_framework(name) for name in names}
    return tuple(name for name in FRAMEWORKS if name in chosen)
