"""What the bench scripts share: Markdown tables, printing a report (and writing it with --out), the
marked sections of a generated doc (each bench rewrites its own section, keeping the others), a
validation table recorded into the artifacts (with --record), and the candidate rule of
docs/amp_decision_rule.md."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

#: Every marked section starts with a line like this one (``NAME`` being the bench's name).
_OPEN = "<!-- {}:start -->"
_CLOSE = "<!-- {}:end -->"


def record_validation(predictor, name: str, table) -> Path:
    """Write ``table`` as ``validation/<name>.csv`` into the predictor's artifacts folder and list
    it (with its sha256) in their manifest, so that the app's Model accuracy page reads it and
    computes nothing. Returns the file's path."""
    from profet_core.prediction._store import sha256, write_json

    folder = Path(predictor.bundle.path)
    out = folder / "validation" / f"{name}.csv"
    table.to_csv(out, index=False, float_format="%.6g")
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][f"validation/{name}.csv"] = sha256(out)
    write_json(folder / "manifest.json", manifest)
    return out


def markers(name: str) -> tuple[str, str]:
    """The opening and closing marker lines of section ``name``."""
    return _OPEN.format(name), _CLOSE.format(name)


def write_section(path, name: str, text: str) -> None:
    """Put ``text`` (which starts and ends with the markers of ``name``) at the end of ``path``,
    replacing the section of that name if the file has one."""
    start, end = markers(name)
    out = Path(path)
    old = out.read_text() if out.is_file() else ""
    if start in old and end in old:
        old = old[: old.index(start)] + old[old.index(end) + len(end) :].lstrip("\n")
    out.write_text(old.rstrip("\n") + "\n\n" + text + "\n")


def marked_tail(path) -> str:
    """Everything from the first marked section on ('' if none): what a bench that rewrites the
    head of the doc keeps."""
    out = Path(path)
    old = out.read_text() if out.is_file() else ""
    first = re.search(r"<!-- [\w-]+:start -->", old)
    return old[first.start() :] if first else ""


def md_table(df, fmt: str | None = None) -> str:
    """A Markdown table of a DataFrame; ``fmt`` (e.g. ``.1f``) formats its float cells (else
    ``str``)."""
    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    for r in df.itertuples(index=False):
        cells = [format(v, fmt) if fmt and isinstance(v, float) else str(v) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def emit(text: str, out=None) -> None:
    """Print a report, and write it to ``out`` (a Markdown file) where given."""
    print(text)
    if out:
        Path(out).write_text(text + "\n", encoding="utf-8")


def data_main(report, doc: str, argv=None) -> None:
    """The command line of a bench that reads the data folder: ``--data`` (default
    ``../shared/data/profet``) and ``--out``; prints ``report(data)`` and writes it with
    ``--out``."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--data", default="../shared/data/profet")
    ap.add_argument("--out", help="also write the tables to this Markdown file")
    args = ap.parse_args(argv)
    emit(report(args.data), args.out)


def passes_rule(cand: dict, base: dict) -> bool:
    """docs/amp_decision_rule.md's rule for a candidate against ``base``: primary score ``P``
    lower by >= 1.0 point, leave-one-source-out ``loso`` not higher (0.1-point tolerance),
    cross-fitted 80% ``coverage`` within 75-85%."""
    return (
        cand["P"] <= base["P"] - 1.0
        and cand["loso"] <= base["loso"] + 0.1
        and 75.0 <= cand["coverage"] <= 85.0
    )
