"""Time and peak memory of the profile readers on hostile inputs (the readers' resource bounds).

Each case runs in a fresh subprocess (so peak RSS is its own), parses the input once through
``profet_core.parse_profile`` and prints seconds, peak-RSS growth over the imports, and the
outcome (accepted shape, or the start of the refusal).

    python bench/claims/readers.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MB = 1024 * 1024

CASES = {
    "10,000 unknown op names (JSON)": "json.dumps({f'Device_Unknown{i}': 1.0 for i in range(10_000)})",
    "4,000 unknown op names (JSON, accepted)": "json.dumps({f'Device_Unknown{i}': 1.0 for i in range(4_000)})",
    "one 10 M-character name (JSON)": "json.dumps({'Device_' + 'x' * 10_000_000: 1.0})",
    "one 40 M-character name (JSON, 40 MB)": "json.dumps({'Device_' + 'x' * 40_000_000: 1.0})",
    "40 MB of 1 M distinct names (JSON)": "json.dumps({f'Device_{i:033d}': 1 for i in range(1_000_000)})",
    "40 MB CSV header of long names": "','.join('Device_' + 'y' * 300 + str(i) for i in range(130_000)) + '\\n'",
    "40 MB CSV, 1 column x 20 M rows": "'Device_A\\n' + '1\\n' * 20_000_000",
    "CSV 200,000 rows x 10 ops (accepted)": "','.join(f'Device_{j}' for j in range(10)) + '\\n' + ('1.5,' * 9 + '2\\n') * 200_000",
}

CHILD = r"""
import json, resource, sys, time
from profet_core import ProfetError, parse_profile
data = eval(sys.argv[1])
name = sys.argv[2]
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
try:
    df = parse_profile(data, name)
    outcome = f"accepted {df.shape}"
except ProfetError as exc:
    outcome = "refused: " + str(exc)[:90]
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"s": dt, "mb": (peak - base) / 1024, "bytes": len(data), "out": outcome}))
"""


def main() -> None:
    print(f"{'case':42} {'input MB':>8} {'seconds':>8} {'peak+MB':>8}  outcome")
    for label, expr in CASES.items():
        name = "p.csv" if "CSV" in label else "p.json"
        res = subprocess.run(
            [sys.executable, "-c", CHILD, expr, name],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={"PYTHONPATH": str(ROOT)},
            check=True,
        )
        r = json.loads(res.stdout)
        print(f"{label:42} {r['bytes'] / MB:8.1f} {r['s']:8.2f} {r['mb']:8.0f}  {r['out']}")


if __name__ == "__main__":
    main()
