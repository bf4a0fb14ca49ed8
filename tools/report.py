"""The "Execution report" page: every notebook, how long it ran and on what.

`python -m tools.report [records.json] [report.md]` writes the page from the records that
tools/execute.py keeps in _build/exec/records.json; tools/render.py does the same when it
assembles the site.
"""

import argparse
import json
from datetime import datetime, timezone
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


def run_time(stamp):
    """'2026-11-29 12:42 UTC' from an ISO timestamp (left as it is if it is not one)."""
    try:
        when = datetime.fromisoformat(str(stamp))
    except ValueError:
        return str(stamp)
    if when.tzinfo is not None:
        when = when.astimezone(timezone.utc)
    return when.strftime("%Y-%m-%d %H:%M") + (" UTC" if when.tzinfo is not None else "")


def report_markdown(records, sections=None, linked=()):
    """The page as MyST Markdown.

    records: as load_records returns them. sections: the section paths the book builds,
    in reading order; only their notebooks are listed, and a framework without a record
    for one of them is listed as "missing" (None: every record, in path order). linked:
    the section paths that are pages of this build, shown as links.
    """
    linked = set(linked)
    if sections is not None:
        records = [r for r in records if r["section"] in set(sections)]
    sections = list(sections) if sections is not None else sorted({r["section"] for r in records})
    by_key = {(r["section"], r["framework"]): r for r in records}
    keys = [(section, framework) for section in sections for framework in FRAMEWORKS]
    hardware = sorted({str(r["hardware"]) for r in records})
    per_row_hardware = len(hardware) > 1
    header = ["Section", "Framework", "Wall time (s)", "Status", "Ran at"]
    align = ["---", "---", "---:", "---", "---"]
    if per_row_hardware:
        header.insert(4, "Hardware")
        align.insert(4, "---")
    lines = [
        "# Execution report",
        "",
        "Every page of this book was built from notebooks that were run before the HTML was "
        "rendered, one kernel per framework. This table lists each of them: how long it ran "
        "and whether this build ran it again (*executed*) or reused an unchanged earlier run "
        "(*cached*).",
        "",
    ]
    if hardware and not per_row_hardware:
        lines += [f"All of them ran on the same hardware: {cell(hardware[0])}.", ""]
    lines += ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    for section, framework in keys:
        record = by_key.get((section, framework))
        row = [section_ref(section, linked), FRAMEWORKS[framework]]
        if record is None:
            row += ["", "missing", ""] + ([""] if per_row_hardware else [])
        else:
            row += [f"{float(record['wall_s']):.1f}", record["status"], run_time(record["executed_at"])]
            if per_row_hardware:
                row.insert(4, cell(record["hardware"]))
        lines.append("| " + " | ".join(row) + " |")
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


def write_report(records_path, out_path, sections=None, linked=()):
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
