"""The words of the spec order: what :func:`~._order.spec_order` moved or kept,
as notes of bounded length that the CLI and the app show alike (the largest moves by name, the
rest counted)."""

from __future__ import annotations

import math

from ._bounds import limiting

#: Moves named one by one in a note; the others are counted with their range of factors.
NAMED_MOVES = 5


def order_notes(moved, precision: str, kept=()) -> list[str]:
    """The notes of a table :func:`spec_order` moved or kept out of bounds (none where
    neither)."""
    notes = []
    if moved:
        parts = _named(moved)
        notes.append(
            f"spec order ({precision}): a step is never longer than another GPU's over the "
            "least ratio of its resources to that GPU's (convolution/matrix rate, FP32 rate, "
            "memory bandwidth; the link with several GPUs), nor shorter than it over the "
            "largest, with 10% for what the rated resources do not show (power-capped GPUs run "
            "below them), and a GPU with at least another's rates and 95% of its bandwidth is "
            "never slower (no "
            f"published measurement of these pairs shows otherwise): {'; '.join(parts)}."
        )
    if kept:
        a, b, r = max(kept, key=lambda k: k[2])
        notes.append(
            f"{a} is predicted {r:.2f}x slower than its resources against {b}'s allow: both "
            "answers come from pairs trained on measurements, and the data itself measures "
            "some small host-bound CNNs slower on the V100 (p3.2xlarge) than on the T4 "
            "(g4dn.xlarge): up to 1.46x, on 17 of its 274 shared workloads."
        )
    return notes


def _named(moved) -> list[str]:
    """The :data:`NAMED_MOVES` largest moves by name (in factor order), the others counted."""
    by_size = sorted(moved, key=lambda m: -abs(math.log(m[2])) if m[2] > 0 else 0.0)
    named = sorted(by_size[:NAMED_MOVES], key=lambda m: m[2])
    parts = [f"{m[0]} {m[3] or 'moved into a bound'} (x{m[2]:.2f})" for m in named]
    rest = by_size[NAMED_MOVES:]
    if rest:
        lo, hi = min(m[2] for m in rest), max(m[2] for m in rest)
        parts.append(f"and {len(rest)} more by x{lo:.2f} to x{hi:.2f}")
    return parts


def why(lines, k: int, b: int, capped: bool, fac: float, *, precision: str, multi: bool) -> str:
    """How target ``k`` moved against ``b`` (by the bound ``fac``), citing the resource that
    sets it."""
    name = lines["instance"].iloc[b]
    if capped:  # k's step <= fac x b's; r: k's least resource ratio to b
        res, r = limiting(lines, k, b, precision, multi)
        if r >= 1 - 1e-9:
            return f"capped at {name}'s step (at least its every resource)"
        return f"capped at {fac:.2f}x {name}'s step (its {res} {r:.2f}x {name}'s, its least)"
    res, r = limiting(lines, b, k, precision, multi)  # b's least ratio to k: k's largest lead
    if r >= 1 - 1e-9:
        return f"raised to {name}'s step (which has at least its every resource)"
    return f"raised to {name}'s step / {fac:.2f} (its {res} {1 / r:.2f}x {name}'s, its most)"
