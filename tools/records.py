"""What each notebook run ran on, and ``_build/exec/records.json``.

The versions and hardware are asked of the kernel itself, by a probe cell that runs
after the notebook's own cells (and is removed again), so they describe the
framework that actually ran: a CUDA build on a GPU machine reports the GPU.

    python -m tools.records FILE [FILE ...]

merges records files (say, those of jobs that each executed one framework) into
``_build/exec/records.json``; a later file wins for the same notebook.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from importlib import metadata as importlib_metadata
from pathlib import Path

from tools.paths import FRAMEWORKS, Layout, write_atomic

PROBE_ID = "execution-probe"
PROBE_MARK = "BOOK-EXECUTION-PROBE "
PACKAGES = {"pytorch": ("torch",), "jax": ("jax", "jaxlib", "flax", "optax")}

PROBE_SOURCE = '''\
def _book_execution_probe(framework):
    import json, os, platform, sys
    from importlib import metadata
    packages = {"pytorch": ("torch",), "jax": ("jax", "jaxlib", "flax", "optax")}[framework]
    versions = {}
    for name in packages:
        module = sys.modules.get(name)
        try:
            versions[name] = getattr(module, "__version__", None) or metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    hardware = None
    torch = sys.modules.get("torch")
    if framework == "pytorch" and torch is not None and torch.cuda.is_available():
        hardware = "GPU: " + torch.cuda.get_device_name(0)
    jax = sys.modules.get("jax")
    if framework == "jax" and jax is not None:
        device = jax.devices()[0]
        if device.platform != "cpu":
            hardware = device.platform.upper() + ": " + device.device_kind
    if hardware is None:
        model = platform.processor() or platform.machine()
        try:
            with open("/proc/cpuinfo") as f:
                model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
        except (OSError, StopIteration):
            pass
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        hardware = f"CPU: {model}, {cores} cores"
    print("%s" + json.dumps({"python": platform.python_version(),
                             "versions": versions, "hardware": hardware}))
_book_execution_probe(%r)
del _book_execution_probe
'''


def probe_source(framework: str) -> str:
    return PROBE_SOURCE % (PROBE_MARK, framework)


def read_probe(cell) -> dict:
    for output in cell.get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith(PROBE_MARK):
                return json.loads(line[len(PROBE_MARK):])
    return {}


def local_environment(framework: str) -> dict:
    """The same facts from this process, for runs that fail before the probe."""
    versions = {}
    for name in PACKAGES[framework]:
        try:
            versions[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            versions[name] = "not installed"
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"python": platform.python_version(), "versions": versions,
            "hardware": f"CPU: {model}, {cores} cores"}


def load(layout: Layout) -> list[dict]:
    if not layout.records.is_file():
        return []
    try:
        return json.loads(layout.records.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return []


def save(layout: Layout, new: list[dict], sections: list[str]) -> None:
    """Write the records of ``new`` runs, keeping earlier ones of other current sections."""
    keep = {(r["section"], r["framework"]): r for r in load(layout) if r.get("section") in sections}
    keep.update({(r["section"], r["framework"]): r for r in new})
    order = {name: i for i, name in enumerate(sections)}
    ordered = sorted(keep.values(), key=lambda r: (order[r["section"]], FRAMEWORKS.index(r["framework"])))
    write_atomic(layout.records, json.dumps(ordered, indent=1) + "\n")


def read_file(path: Path) -> list[dict]:
    """The records in a records file; ValueError saying what is wrong with it."""
    try:
        found = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise ValueError(f"cannot read records from {path}: {error}") from None
    if not isinstance(found, list) or not all(
            isinstance(r, dict) and isinstance(r.get("section"), str) and r.get("framework") in FRAMEWORKS
            for r in found):
        raise ValueError(f"{path} is not a records file: expected a JSON list of objects "
                         f"with a 'section' and a 'framework' (one of {FRAMEWORKS})")
    return found


def merge_files(layout: Layout, paths: list[Path]) -> list[dict]:
    """Add the records of ``paths`` to the layout's records (later files win)."""
    from tools.sections import find_sections

    new = {}
    for path in paths:
        new.update({(r["section"], r["framework"]): r for r in read_file(path)})
    sections = find_sections(layout)
    save(layout, [r for r in new.values() if r["section"] in sections], sections)
    return load(layout)


def main(argv: list[str] | None = None, layout: Layout | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.records",
                                     description="merge records files into _build/exec/records.json")
    parser.add_argument("files", nargs="+", type=Path, help="records.json files to merge")
    args = parser.parse_args(argv)
    layout = layout or Layout()
    try:
        merged = merge_files(layout, args.files)
    except ValueError as error:
        parser.error(str(error))
    print(f"{layout.records}: {len(merged)} record(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
