"""Write the cited spec values of ``spec_sources.csv`` into ``gpu_specs.csv`` and
``gpu_reference.csv``, and each line's ``spec_source`` text.

``spec_sources.csv`` is where a spec value is sourced: one row per GPU and field (its value, the
vendor document, the page/table, where the text was read, ``cited`` or ``unsure`` and what would
settle it). This script makes the two spec sheets agree with it, by column name, touching no
other column (prices, interconnect, ``precision_source`` stay as they are), so it can be run again
after another branch changed the sheets' other columns. ``tests/core/data/test_spec_sources.py``
checks that they agree.

    python profet_core/data/build/spec_sheet.py          # rewrite both sheets in place
    python profet_core/data/build/spec_sheet.py --check  # exit 1 if a rewrite would change them
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1]
SHEETS = ("gpu_specs.csv", "gpu_reference.csv")
#: gpu_reference.csv's interconnect columns are link rates, not spec-sheet values: said so.
REFERENCE_NOTE = (
    "; interconnect_gbs (PCIe gen3 about 12, gen4 about 24, gen5 about 48 GB/s effective) and "
    "nvlink_bridge_gbs (per direction) as recalled, unsure: not in spec_sources.csv"
)


def _read(path: Path) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text())))


def spec_source_text(sources: list[dict], gpu: str) -> str:
    """The ``spec_source`` text of one GPU: its documents and its unsure fields."""
    rows = [r for r in sources if r["gpu"] == gpu]
    titles = "; ".join(dict.fromkeys(r["source_title"] for r in rows))
    text = f"Per-value sources (page/table, and where each was read) in spec_sources.csv: {titles}"
    unsure = [r["field"] for r in rows if r["status"] == "unsure"]
    if unsure:
        text += f"; unsure: {', '.join(unsure)} (spec_sources.csv says what would settle each)"
    return text


def _reference_tail(old: str) -> str:
    """What a gpu_reference line keeps of its old text: the peer-to-peer evidence."""
    if "p2p 0:" in old:
        return REFERENCE_NOTE + "; p2p 0:" + old.split("p2p 0:", 1)[1]
    if "no PCIe peer-to-peer" in old:
        return REFERENCE_NOTE + "; GeForce: no PCIe peer-to-peer (all-reduce through host memory)"
    return REFERENCE_NOTE


def rewrite(name: str, sources: list[dict]) -> str:
    """The sheet ``name`` with the sourced values and texts written in (CSV text)."""
    rows = _read(DATA / name)
    head = rows[0]
    value = {(r["gpu"], r["field"]): r["value"] for r in sources}
    for row in rows[1:]:
        gpu = row[head.index("gpu")]
        for i, field in enumerate(head):
            if (gpu, field) in value:
                row[i] = value[(gpu, field)]
        i = head.index("spec_source")
        tail = _reference_tail(row[i]) if name == "gpu_reference.csv" else ""
        if tail and REFERENCE_NOTE in row[i]:  # already rewritten: keep its tail as it is
            tail = row[i][row[i].index(REFERENCE_NOTE) :]
        row[i] = spec_source_text(sources, gpu) + tail
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say whether a rewrite changes")
    args = parser.parse_args(argv)
    with open(DATA / "spec_sources.csv", newline="") as fh:
        sources = list(csv.DictReader(fh))
    changed = []
    for name in SHEETS:
        text = rewrite(name, sources)
        if text != (DATA / name).read_text():
            changed.append(name)
            if not args.check:
                (DATA / name).write_text(text)
    print(("would change: " if args.check else "rewrote: ") + (", ".join(changed) or "nothing"))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
