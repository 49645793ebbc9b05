"""Flag a profile that covers more training steps than the 2 PROFET's data does.

A profile taken over 10 steps instead of 2, with nobody saying so, has every op time about 5x
too large; without the anchor's latency nothing else shows it. The signal here is the per-step
overhead of Keras's training loop: the host op types that read the next batch and write the
TensorBoard summaries of a step (``Host_Dataset``, ``Host_IteratorGetNext``,
``Host_WriteSummary``, ``Host_FlushSummaryWriter``) take about the same time per step whatever
the CNN, batch or input size, so their total counts the steps. The overhead ratio of a profile
is the median over those ops of ``time * 2 / steps`` divided by the op's median in the 2-step
training profiles of the same instance, taken as a *lower* median (the 2nd smallest of the 4
ratios), so that two inflated ops (a heavy input pipeline inflates ``Host_Dataset`` and
``Host_IteratorGetNext``) do not raise it; it is about 1 for a 2-step profile and about
``steps_taken / 2`` for one taken over more steps.

The threshold is a quantile of the ratio on the training profiles, widened, per instance. It is
validated leave-one-architecture-out: profiles of each architecture are scaled by 1 (false
alarms), 2, 3, 5 and 10 (catches), every op column or every op column but the IDLE rows, and
tested against thresholds learned without that architecture. The reserved architectures are
kept out of every fit and reported on their own. A baseline (device busy time against the
largest in the training data at the same instance, batch and input size) is reported too.

The check is the product's own: :func:`profet_core.inputs._overhead.learn_step_reference`
learns the references and limits (as ``profet train`` does) and
:func:`profet_core.inputs._overhead.overhead_ratio` computes the ratio (as ``predict`` does).

    python bench/studies/steps_signal.py --data ../shared/data/profet [--examples examples]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from profet_core._schema import DEFAULT_STEPS
from profet_core.inputs._overhead import (
    OVERHEAD_OPS,
    POOLED,
    QUANTILE_HIGH,
    RESERVED_ARCHITECTURES,
    WIDEN,
    learn_step_reference,
    overhead_ratio,
    reference_for,
)

#: Scalings tested: 1 is a genuine 2-step profile (false alarms), the rest are missed steps.
FACTORS = (1, 1.5, 2, 3, 5, 10)


def load(data: Path) -> pd.DataFrame:
    """The profiles table of the PROFET data (one 2-step profile a row, op times in us)."""
    return pd.read_parquet(Path(data) / "profiles.parquet")


def op_columns(profiles: pd.DataFrame) -> list[str]:
    """The ``Host_*``/``Device_*`` op columns of a profiles table."""
    return [c for c in profiles.columns if str(c).startswith(("Host_", "Device_"))]


def scaled(profiles: pd.DataFrame, factor: float, idle: bool = True) -> pd.DataFrame:
    """Profiles as if taken over ``factor`` times the steps (IDLE columns scaled if ``idle``)."""
    cols = [c for c in op_columns(profiles) if idle or not c.endswith("_IDLE")]
    out = profiles.copy()
    out[cols] = out[cols] * factor
    return out


def ratio_and_limit(profiles: pd.DataFrame, stored: dict, steps=DEFAULT_STEPS):
    """The product's overhead ratio of each profile and its instance's alarm limit.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Op columns (us over ``steps``) and ``instance`` (one without a reference: the pooled).
    stored : dict
        From :func:`learn_step_reference` (what ``profet train`` stores in model.json).

    Returns
    -------
    (ndarray, ndarray)
        Ratio (NaN: no verdict) and limit, each of shape (n,).
    """
    n = len(profiles)
    refs, limits = np.full((n, len(OVERHEAD_OPS)), np.nan), np.full(n, np.nan)
    inst = profiles["instance"].to_numpy()
    for name in pd.unique(inst):
        ref, high, _, _ = reference_for(stored, name)
        refs[inst == name], limits[inst == name] = ref, high
    return overhead_ratio(profiles, refs, steps), limits


def alarms(profiles: pd.DataFrame, stored: dict) -> np.ndarray:
    """True where a profile's overhead ratio is above its instance's limit (the warning)."""
    ratio, limit = ratio_and_limit(profiles, stored)
    return ratio > limit


BUSY_KEY = ["instance", "batch_size", "input_size"]


def busy_us(profiles: pd.DataFrame) -> pd.Series:
    """Device busy time (us): the sum of ``Device_*`` columns but ``Device_IDLE``."""
    cols = [c for c in op_columns(profiles) if c.startswith("Device_") and c != "Device_IDLE"]
    return profiles[cols].sum(axis=1)


def busy_alarms(train: pd.DataFrame, test: pd.DataFrame) -> np.ndarray:
    """Baseline: device busy time above WIDEN x the largest trained at the same size key."""
    top = train.assign(busy=busy_us(train)).groupby(BUSY_KEY)["busy"].max().rename("top")
    joined = test[BUSY_KEY].join(top, on=BUSY_KEY)
    return (busy_us(test) > joined["top"] * WIDEN).to_numpy()


def fit_check(train: pd.DataFrame) -> dict:
    """The overhead references and limits learned from ``train``, as ``profet train`` does."""
    return learn_step_reference(train)


def evaluate(train: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """Alarm rates on ``test`` scaled by each of :data:`FACTORS`, signal and baseline.

    Returns
    -------
    pandas.DataFrame
        One row per (method, idle scaled, factor) with ``rate`` (share of test profiles
        flagged) and ``n``.
    """
    stored = fit_check(train)
    rows = []
    for idle in (True, False):
        for k in FACTORS:
            test_k = scaled(test, k, idle)
            for method, flags in (
                ("overhead", alarms(test_k, stored)),
                ("busy", busy_alarms(train, test_k)),
            ):
                rows.append(
                    {
                        "method": method,
                        "idle": idle,
                        "k": k,
                        "hits": int(flags.sum()),
                        "n": len(flags),
                    }
                )
    return pd.DataFrame(rows)


def leave_one_architecture_out(fit: pd.DataFrame) -> pd.DataFrame:
    """:func:`evaluate` for each architecture of ``fit``, learned on the others."""
    parts = []
    for arch in sorted(fit["model"].unique()):
        res = evaluate(fit[fit["model"] != arch], fit[fit["model"] == arch])
        parts.append(res.assign(arch=arch))
    return pd.concat(parts, ignore_index=True)


def _variants(test: pd.DataFrame) -> dict:
    """Stress variants of genuine 2-step profiles (false alarms) and their 5x scalings."""
    slow = {c: test[c] * 10 for c in ("Host_Dataset", "Host_IteratorGetNext")}
    return {
        "instance unknown (pooled reference)": test.assign(instance=POOLED),
        "input pipeline 10x slower (Dataset, IteratorGetNext x10)": test.assign(**slow),
        "summary ops absent (no WriteSummary/FlushSummaryWriter)": test.assign(
            Host_WriteSummary=0.0, Host_FlushSummaryWriter=0.0
        ),
        "only one overhead op (no verdict expected)": test.assign(
            Host_WriteSummary=0.0, Host_FlushSummaryWriter=0.0, Host_IteratorGetNext=0.0
        ),
    }


def stress(fit: pd.DataFrame) -> pd.DataFrame:
    """Leave-one-architecture-out alarm and no-verdict rates of :func:`_variants` at 1x and 5x."""
    counts: dict = {}
    for arch in sorted(fit["model"].unique()):
        stored = fit_check(fit[fit["model"] != arch])
        for name, test in _variants(fit[fit["model"] == arch]).items():
            for k in (1, 5):
                test_k = scaled(test, k)
                ratio, limit = ratio_and_limit(test_k, stored)
                flags, none = ratio > limit, np.isnan(ratio)
                c = counts.setdefault((name, k), np.zeros(3))
                c += (flags.sum(), none.sum(), len(flags))
    rows = [
        {"variant": name, "k": k, "alarm": c[0] / c[2], "no verdict": c[1] / c[2]}
        for (name, k), c in counts.items()
    ]
    return pd.DataFrame(rows).pivot(index="variant", columns="k")


def rate_table(res: pd.DataFrame, method: str, idle: bool) -> pd.DataFrame:
    """Per-architecture rates (rows) by scaling (columns), with an ``ALL`` row (pooled)."""
    sel = res[(res["method"] == method) & (res["idle"] == idle)]
    per = sel.pivot_table(index="arch", columns="k", values=["hits", "n"], aggfunc="sum")
    per.loc["ALL"] = per.sum()
    table = per["hits"] / per["n"]
    names = {1: "false alarm 1x", 1.5: "alarm 1.5x (3 steps)"}
    table.columns = [names.get(k, f"catch {k:g}x") for k in table.columns]
    return table.assign(n=per["n"][FACTORS[0]].astype(int))


def show(title: str, table: pd.DataFrame) -> None:
    """Print a rate table as percentages."""
    print(f"\n{title}")
    fmt = {c: (lambda v: f"{100 * v:6.2f}%") for c in table.columns if c != "n"}
    print(table.to_string(formatters=fmt))


def read_example(path: Path) -> tuple[pd.DataFrame, int]:
    """Read a PROFET JSON profile (list of one op dict, or object with ``ops``) and its steps."""
    obj = json.loads(Path(path).read_text())
    meta = obj[0] if isinstance(obj, list) else obj
    ops = meta.get("ops", meta)
    row = {k: float(v) for k, v in ops.items() if str(k).startswith(("Host_", "Device_"))}
    row["instance"] = meta.get("instance", "g3s.xlarge")
    return pd.DataFrame([row]), int(meta.get("steps", DEFAULT_STEPS))


def report_examples(folder: Path, stored: dict) -> None:
    """Print the overhead ratio and verdict for each JSON profile in ``folder``."""
    print(f"\nExamples in {folder} (instance g3s.xlarge where the file does not say):")
    for path in sorted(Path(folder).glob("*.json")):
        try:
            prof, steps = read_example(path)
        except (ValueError, AttributeError, TypeError):
            continue
        ratio, limit = (v[0] for v in ratio_and_limit(prof, stored, steps))
        verdict = "ALARM" if ratio > limit else "ok"
        print(
            f"  {path.name:32s} steps={steps} ratio={ratio:6.2f} (limit {limit:.2f}) {verdict}"
            f"  -> about {ratio * steps:.0f} steps"
        )


def report_spec(fit: pd.DataFrame) -> dict:
    """Print the references and limits learned on the whole fit set (what training ships)."""
    stored = fit_check(fit)
    table = pd.DataFrame(
        {
            name: [*entry["reference_us"], entry["high"], entry["low"]]
            for name, entry in stored["instances"].items()
        },
        index=[*OVERHEAD_OPS, "high", "low"],
    ).T
    print(
        "\nLearned on all fit architectures (what `profet train` stores): references (us / 2 steps), limits"
    )
    print(table.round(3).to_string())
    ratio, _ = ratio_and_limit(fit, stored)
    qs = np.nanquantile(ratio, [0, 0.005, 0.5, 0.995, 0.999, 1])
    print(
        "overhead ratio on fit profiles: min/q0.5%/median/q99.5%/q99.9%/max = "
        + " ".join(f"{v:.3f}" for v in qs)
        + f"; no verdict: {int(np.isnan(ratio).sum())}"
    )
    return stored


def parse_args(argv=None) -> argparse.Namespace:
    """Command-line arguments."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with profiles.parquet")
    ap.add_argument("--examples", type=Path, help="folder of JSON profiles to judge")
    ap.add_argument(
        "--reserve", nargs="*", default=list(RESERVED_ARCHITECTURES), help="held-out architectures"
    )
    return ap.parse_args(argv)


def main(argv=None) -> None:
    """Run the validation and print the tables."""
    args = parse_args(argv)
    prof = load(args.data)
    reserved = prof["model"].isin(args.reserve)
    fit, held = prof[~reserved], prof[reserved]
    absent = sorted(set(args.reserve) - set(prof["model"]))
    print(
        f"{len(fit)} fit profiles ({fit['model'].nunique()} architectures), {len(held)} "
        f"reserved ({', '.join(sorted(held['model'].unique()))}; absent: {absent or 'none'})"
    )
    print(
        f"signal: lower median over {', '.join(OVERHEAD_OPS)} of time / instance median; "
        f"threshold q{100 * QUANTILE_HIGH:g}% x {WIDEN}"
    )
    loao = leave_one_architecture_out(fit)
    held_res = evaluate(fit, held).assign(arch=lambda d: "held-out total") if len(held) else None
    for method, name in (("overhead", "OVERHEAD RATIO"), ("busy", "BASELINE device busy")):
        for idle in (True, False):
            scaling = "every column" if idle else "every column but IDLE"
            show(
                f"{name}, leave-one-architecture-out, scaling {scaling}",
                rate_table(loao, method, idle),
            )
            if held_res is not None:
                per_arch = pd.concat(
                    evaluate(fit, held[held["model"] == a]).assign(arch=a)
                    for a in sorted(held["model"].unique())
                )
                show(
                    f"{name}, reserved architectures (fit on all others), scaling {scaling}",
                    rate_table(per_arch, method, idle),
                )
    print("\nOVERHEAD RATIO stress tests, leave-one-architecture-out (1 = genuine, 5 = 10 steps)")
    print(stress(fit).to_string(float_format=lambda v: f"{100 * v:6.2f}%"))
    stored = report_spec(fit)
    if args.examples:
        report_examples(args.examples, stored)


if __name__ == "__main__":
    main()
