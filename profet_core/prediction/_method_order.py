"""The spec order of a method other than the default.

Another method (e.g. ``profet``, the reference DNN) answers the targets it has trained pairs for
with its own models and the rest with the cross-instance model, as the default method does. Its
own answers may lie far from the default's (the reference DNN puts a V100 step from a
g3s.xlarge profile at 6.7 ms where the default and the measurements say 38.5 ms); ordering the
other targets against them would spread one method's outlier to every GPU the spec sheet ranks
above it. So the method's own answers are kept as they are and move nothing: every other target
takes the default method's answer to the same call, which the spec order made consistent, and a
note names the method's own answers that fall out of the bounds against them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MS_PER_HOUR = 3_600_000.0
KEYS = ["row", "target", "gpus"]
STEPS = ["batch_latency_ms", "low_ms", "high_ms"]


def own_answers(table: pd.DataFrame, reference, specs: pd.DataFrame, precision: str) -> tuple:
    """``table`` (a non-default method's answer) with every target but its own trained pairs
    (basis ``measured``) answered as ``reference`` (the default method's
    :class:`Prediction` of the same call, ordered) answers it; and the notes.

    Returns
    -------
    table : pandas.DataFrame
    notes : list of str
    """
    from ..crossgpu.order._order import strings

    ref = reference.table
    own = strings(table["basis"]) == "measured"
    gpus = table["gpus"] if "gpus" in table else 1
    left = pd.DataFrame({"row": table["row"].to_numpy(), "target": strings(table["target"])})
    left["gpus"] = np.asarray(gpus) if np.ndim(gpus) else 1
    right = pd.DataFrame({"row": ref["row"].to_numpy(), "target": strings(ref["target"])})
    right["gpus"] = ref["gpus"].to_numpy() if "gpus" in ref else 1
    for c in STEPS:
        right[c] = ref[c].to_numpy(dtype=float)
    got = left.merge(right, on=KEYS, how="left", validate="one_to_one")
    out = table.copy(deep=False)
    take = ~own & got["batch_latency_ms"].notna().to_numpy()
    for c in STEPS:
        out[c] = np.where(take, got[c].to_numpy(), out[c].to_numpy(dtype=float))
    if "usd_per_1000_steps" in out:
        out["usd_per_1000_steps"] = (
            out["batch_latency_ms"] * 1000 / MS_PER_HOUR * out["usd_per_hour"]
        )
    notes = [n for n in reference.notes if n.startswith("spec order")]
    notes += _own_notes(out, own, specs, precision)
    return out, notes


def _own_notes(out: pd.DataFrame, own: np.ndarray, specs, precision: str) -> list[str]:
    """A note naming the method's own answers out of the spec-sheet bounds against the others
    (the largest such ratio per own target)."""
    if not own.any():
        return []
    from ..crossgpu.order._order import SLACK, bound_violations, strings

    names = set(strings(out["target"])[own])
    bad = bound_violations(out.assign(precision=precision), specs)
    bad = bad[bad["slower_spec"].isin(names) | bad["faster_spec"].isin(names)]
    if bad.empty:
        return []
    bad = bad.assign(
        own=np.where(bad["slower_spec"].isin(names), bad["slower_spec"], bad["faster_spec"])
    )
    worst = bad.sort_values("ratio", ascending=False).drop_duplicates("own")
    parts = [
        f"{r.slower_spec} {r.slower_ms:.3g} ms vs {r.faster_spec} {r.faster_ms:.3g} ms "
        f"({r.ratio:.2f}x its bound)"
        for r in worst.itertuples()
    ]
    method = str(out["method"].iloc[0]) if "method" in out and len(out) else "this"
    return [
        f"The {method} method's own answers (its trained pairs) are kept as it gives them and "
        "move no other target, which the default method answers and the spec order keeps "
        f"consistent; some lie more than {SLACK:.2f}x outside the spec sheet's bounds against "
        f"those ({precision}): {'; '.join(parts)}."
    ]
