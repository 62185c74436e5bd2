#!/usr/bin/env python3
"""The README's headline speed and memory figures are rows of Benchmarks/REPORT.md, never typed by hand.

    python3 Benchmarks/readme_rows.py --check     # exit 1 if a README row is not a REPORT row
    python3 Benchmarks/readme_rows.py --update    # copy the rows from REPORT.md into the README

The README holds a table between `<!-- report-rows:begin -->` and `<!-- report-rows:end -->`. Each
row names a row of REPORT.md's "Summary: targets" table by its first cell ("what"); --update
replaces the README's row with the REPORT row of the same name (target, measured, verdict), and
--check fails when a README row differs from the REPORT row of its name or names a row REPORT does
not have. `Benchmarks/run_all.sh` runs --update after writing the report; `.ci/test` runs --check.
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = "<!-- report-rows:begin -->", "<!-- report-rows:end -->"


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def report_rows(report_path):
    """REPORT.md's summary rows by their first cell."""
    rows, inside = {}, False
    with open(report_path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                inside = line.strip() == "## Summary: targets"
                continue
            if inside and line.startswith("|") and not line.startswith("|---"):
                row = cells(line)
                if row and row[0] != "what":
                    rows[row[0]] = "| " + " | ".join(row) + " |"
    return rows


def readme_block(text):
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"readme_rows: README.md has no {BEGIN} ... {END} block")
    return start + len(BEGIN), end


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true")
    mode.add_argument("--update", action="store_true")
    parser.add_argument("--readme", default=os.path.join(ROOT, "README.md"))
    parser.add_argument("--report", default=os.path.join(ROOT, "Benchmarks", "REPORT.md"))
    args = parser.parse_args()

    report = report_rows(args.report)
    with open(args.readme, encoding="utf-8") as f:
        text = f.read()
    start, end = readme_block(text)
    lines = text[start:end].strip("\n").split("\n")
    problems, out = [], []
    for line in lines:
        if not line.startswith("|") or line.startswith("|---") or cells(line)[0] == "what":
            out.append(line)
            continue
        name = cells(line)[0]
        row = report.get(name)
        if row is None:
            problems.append(f"README row '{name}' is not a row of {os.path.relpath(args.report, ROOT)}")
            out.append(line)
        else:
            if "| " + " | ".join(cells(line)) + " |" != row:
                problems.append(f"README row '{name}' differs from the report: {row}")
            out.append(row)
    if args.update:
        missing = [p for p in problems if "is not a row" in p]
        new_text = text[:start] + "\n" + "\n".join(out) + "\n" + text[end:]
        if new_text != text:
            tmp = args.readme + ".tmp"
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(new_text)
            os.chmod(tmp, os.stat(args.readme).st_mode & 0o7777)
            os.replace(tmp, args.readme)
        for p in missing:
            print(f"readme_rows: {p}", file=sys.stderr)
        return 1 if missing else 0
    for p in problems:
        print(f"readme_rows: {p}", file=sys.stderr)
    if not problems:
        print(f"readme_rows: {sum(1 for l in lines if l.startswith('|') and not l.startswith('|---')) - 1} "
              f"README rows are rows of the report")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
