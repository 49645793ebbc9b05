"""One candidate of the AMP rule: depthwise convolutions get no AMP gain (they are memory-bound
and, on Hopper, gain least), judged by docs/amp_decision_rule.md's rule against the shipped AMP
model (the other memory-bound families keep the bytes-halved gain ``2 ** beta``).

    python bench/studies/amp_depthwise.py [--data ../shared/data/profet]

Prints both models' scores (P: mean per-GPU leave-one-GPU-out AMP-gain MAPE; loso: pooled
leave-one-source-out MAPE; coverage) and whether the candidate passes the rule. VGG16 and
Inception-v3 rows are never fitted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench" / "claims"), str(ROOT / "bench" / "studies")]

import amp_candidates  # noqa: E402
from _sections import passes_rule  # noqa: E402

from profet_core import load_dataset  # noqa: E402
from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table  # noqa: E402
from profet_core.crossgpu.configurations import _amp  # noqa: E402
from profet_core.crossgpu.spec._gpuref import gpu_table  # noqa: E402
from profet_core.crossgpu.spec._published import load_published  # noqa: E402
from profet_core.inputs._gpu_specs import load_specs  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "profet"))
    args = ap.parse_args(argv)
    medians = median_table(load_dataset(args.data))
    specs = load_specs()
    gpus = gpu_table(specs)
    theta = CrossInstanceModel().fit_pairs(all_pairs(medians), specs).theta_
    _, pairs, shares = _amp.amp_state_from(load_published(), gpus, medians, theta)
    fit = ~pairs["held_out"].to_numpy()
    base = amp_candidates.score(pairs[fit], shares[fit], gpus)[0]
    no_depthwise = tuple(f for f in _amp.MEMORY_FAMILIES if f != "depthwise")
    cand = amp_candidates.score(pairs[fit], shares[fit], gpus, memory_families=no_depthwise)[0]
    for name, s in (("shipped", base), ("depthwise: no gain", cand)):
        print(
            f"{name:20s} P {s['P']:.2f}  row MAPE {s['row_mape']:.2f}  loso {s['loso']:.2f}  "
            f"coverage {s['coverage']:.1f}  GPUs <= 10%: {s['gpus_le_10']}"
        )
    print(f"passes the rule: {passes_rule(cand, base)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
