"""The "Execution report" page: every notebook, how long it ran and on what.

`python -m tools.report [records.json] [report.md]` writes the page from the records that
tools/execute.py keeps in _build/exec/records.json; tools/render.py does the same when it
assembles the site.
"""

import argparse
import json
from pathlib import Path

FRAMEWORKS = {"pytorch": "PyTorch", "jax": "JAX"}
STATUSES = ("executed", "cached", "failed")
FIELDS = ("section", "framework", "wall_s", "status", "executed_at", "python", "versions", "hardware")


def load_records(path):
    """The records of records.json, checked: a list of dicts with every field."""
    path = Path(path)
    records = json.loads(path.read_text())
    if not isinstance(records, list):
        raise ValueError(f"{path}: records must be a JSON list, got {type(records).__name__}")
    for i, record in enumerate(records):
        missing = [field for field in FIELDS if field not in record]
        if missing:
            raise ValueError(f"{path}: record {i} lacks {', '.join(missing)}; each has {', '.join(FIELDS)}")
        if record["framework"] not in FRAMEWORKS:
            raise ValueError(f"{path}: record {i}: framework must be one of {sorted(FRAMEWORKS)}, "
                             f"got {record['framework']!r}")
        if record["status"] not in STATUSES:
            raise ValueError(f"{path}: record {i}: status must be one of {STATUSES}, got {record['status']!r}")
    return records


def cell(value):
    return str(value).replace("|", "\\|").replace("\n", " ")


def section_ref(section, linked):
    return f"{{doc}}`{section}`" if section in linked else f"`{section}`"


def environment_rows(records):
    """One row per framework: Python, package versions and hardware, all values seen."""
    rows = []
    for framework, label in FRAMEWORKS.items():
        mine = [r for r in records if r["framework"] == framework]
        if not mine:
            continue
        seen = {"Python": sorted({str(r["python"]) for r in mine})}
        for record in mine:
            for package, version in record["versions"].items():
                seen.setdefault(package, [])
                if str(version) not in seen[package]:
                    seen[package].append(str(version))
        seen["Hardware"] = sorted({str(r["hardware"]) for r in mine})
        rows.append((label, seen))
    return rows


def report_markdown(records, sections=(), linked=()):
    """The page as MyST Markdown.

    records: as load_records returns them. sections: the section paths the book builds;
    a framework without a record for one of them is listed as "missing". linked: the
    section paths that are pages of this build, shown as links.
    """
    linked = set(linked)
    by_key = {(r["section"], r["framework"]): r for r in records}
    order = {name: i for i, name in enumerate(sections)}
    fw_order = list(FRAMEWORKS)
    keys = sorted(set(by_key) | {(s, f) for s in sections for f in FRAMEWORKS},
                  key=lambda k: (order.get(k[0], len(order)), k[0], fw_order.index(k[1])))
    lines = [
        "# Execution report",
        "",
        "Every page of this book was built from notebooks that were run before the HTML was "
        "rendered, one kernel per framework. This table lists each of them: how long it ran "
        "and whether this build ran it again (*executed*) or reused an unchanged earlier run "
        "(*cached*).",
        "",
        "| Section | Framework | Wall time (s) | Status | Hardware | Executed at |",
        "| --- | --- | ---: | --- | --- | --- |",
    ]
    for section, framework in keys:
        record = by_key.get((section, framework))
        ref = section_ref(section, linked)
        if record is None:
            lines.append(f"| {ref} | {FRAMEWORKS[framework]} | | missing | | |")
            continue
        lines.append(
            f"| {ref} | {FRAMEWORKS[framework]} | {float(record['wall_s']):.1f} | {record['status']} "
            f"| {cell(record['hardware'])} | {cell(record['executed_at'])} |"
        )
    totals = {f: sum(float(r["wall_s"]) for r in records if r["framework"] == f) for f in FRAMEWORKS}
    lines += ["", "Total wall time: " + ", ".join(
        f"{FRAMEWORKS[f]} {totals[f]:.1f} s" for f in FRAMEWORKS) + ".", ""]
    env = environment_rows(records)
    if env:
        lines += ["## Software and hardware", ""]
        for label, seen in env:
            lines += [f"{label} notebooks ran with:", "", "| Component | Version |", "| --- | --- |"]
            lines += [f"| {cell(name)} | {cell(', '.join(values))} |" for name, values in seen.items()]
            lines.append("")
    return "\n".join(lines)


def write_report(records_path, out_path, sections=(), linked=()):
    records = load_records(records_path) if Path(records_path).is_file() else []
    Path(out_path).write_text(report_markdown(records, sections, linked))
    return records


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", nargs="?", default="_build/exec/records.json")
    parser.add_argument("out", nargs="?", default="_build/site/report.md")
    args = parser.parse_args(argv)
    if not Path(args.records).is_file():
        parser.error(f"{args.records} does not exist: run python -m tools.execute first")
    write_report(args.records, args.out)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
