"""Tell the instance a profile was taken on from its op mix, leave-one-architecture-out.

The PROFET data holds the same workloads profiled on four instances. For each of the 12 CNNs,
the classifier ``profet train`` learns (:func:`profet_core.features._anchor.fit_anchor_classifier`,
scale-free op-mix features, multinomial logistic regression) is fitted on the other 11 and asked
about every profile of the one left out (here every CNN is left out in turn, VGG16 and
InceptionV3 included: this is a check of the signal, not of the published measurements). Printed:
the confusion matrix, accuracy per instance and per architecture, and the warning that
``profet predict`` gives (:func:`~profet_core.features._anchor.anchor_findings`): its false-alarm
rate (a profile given its own instance as the anchor) and its catch rate (given each other
instance), and the verdict on the example profiles.

    python bench/studies/anchor_signal.py --data ../shared/data/profet [--examples examples]
    python bench/studies/anchor_signal.py --data ../shared/data/profet --rule

``--rule`` applies docs/anchor_hint_rule.md: the hint's threshold chosen on the 10
non-reserved CNNs held out in turn (largest t whose false-alarm rate is at most 5% on every
instance), then VGG16 and InceptionV3 and the demo's VGG16 file judged at that t.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from profet_core import read_profile
from profet_core.features import _anchor
from profet_core.features._anchor import anchor_findings, anchor_probabilities


def leave_one_architecture_out(prof: pd.DataFrame, reserved=_anchor.RESERVED_ARCHITECTURES):
    """Probabilities (n, k) for every profile from a classifier that never saw its CNN (nor the
    ``reserved`` ones: pass ``()`` to leave every CNN out in turn, the reserved ones too)."""
    names = sorted(prof["instance"].unique())
    P = np.full((len(prof), len(names)), np.nan)
    for arch in sorted(prof["model"].unique()):
        test = (prof["model"] == arch).to_numpy()
        meta, arrays = _anchor.fit_anchor_classifier(prof[~test], reserved=reserved)
        assert meta["instances"] == names
        P[test] = anchor_probabilities(prof[test], arrays)
        print(f"  fitted without {arch}", flush=True)
    return names, P, meta


def alarm_rates(prof, names, P, meta) -> pd.DataFrame:
    """Share flagged per true instance: given as its own anchor (false alarm) and as another."""
    best = np.nanargmax(np.nan_to_num(P, nan=-1.0), axis=1)
    p_best = P[np.arange(len(P)), best]
    truth = prof["instance"].to_numpy()
    rows = []
    for j, true in enumerate(names):
        mine = truth == true
        for k, anchor in enumerate(names):
            flag = (P[mine, k] < meta["anchor_below"]) & (p_best[mine] >= meta["other_from"])
            named = flag & (best[mine] == j)
            rows.append(
                {
                    "taken on": true,
                    "given as": anchor,
                    "flagged %": 100 * flag.mean(),
                    "naming the true one %": 100 * named.mean(),
                }
            )
    return pd.DataFrame(rows)


#: The thresholds the rule may choose from (docs/anchor_hint_rule.md): log10 steps of 0.5.
GRID = tuple(10.0 ** np.arange(-6.0, -0.25, 0.5))
#: The most a genuine profile may be flagged, on the worst instance.
FALSE_ALARM_BOUND = 0.05


def hint_rates(truth, names, P, t) -> tuple[pd.Series, float]:
    """At threshold ``t``: the false-alarm rate per instance (own instance as the anchor) and
    the catch rate (every other instance as the anchor)."""
    best = np.nanargmax(np.nan_to_num(P, nan=-1.0), axis=1)
    valid = ~np.isnan(P).any(axis=1)
    false, caught, tried = {}, 0, 0
    for j, true in enumerate(names):
        mine = (truth == true) & valid
        false[true] = float(((P[mine, j] <= t) & (best[mine] != j)).mean())
        for k in range(len(names)):
            if k != j:
                caught += int(((P[mine, k] <= t) & (best[mine] != k)).sum())
                tried += int(mine.sum())
    return pd.Series(false), caught / tried


def _old_flag(p, k) -> bool:
    return p[k] < _anchor.ANCHOR_BELOW and np.nanmax(p) >= _anchor.OTHER_FROM


def old_rule_rates(truth, names, P) -> tuple[pd.Series, float]:
    """:func:`hint_rates` under the old two thresholds (anchor below, another from)."""
    best = np.nanargmax(np.nan_to_num(P, nan=-1.0), axis=1)
    p_best = P[np.arange(len(P)), best]
    valid = ~np.isnan(P).any(axis=1)
    false, caught, tried = {}, 0, 0
    for j, true in enumerate(names):
        mine = (truth == true) & valid
        sure = p_best[mine] >= _anchor.OTHER_FROM
        false[true] = float(((P[mine, j] < _anchor.ANCHOR_BELOW) & sure).mean())
        for k in range(len(names)):
            if k != j:
                caught += int(((P[mine, k] < _anchor.ANCHOR_BELOW) & sure).sum())
                tried += int(mine.sum())
    return pd.Series(false), caught / tried


def apply_rule(prof: pd.DataFrame, examples: Path | None) -> None:
    """docs/anchor_hint_rule.md: choose t on the non-reserved CNNs, then check it."""
    reserved = ("VGG16", "InceptionV3")
    fit = prof[~prof["model"].isin(reserved)].reset_index(drop=True)
    print(f"rule: {len(fit)} profiles of {fit['model'].nunique()} CNNs (VGG16, InceptionV3 out)")
    names, P, _ = leave_one_architecture_out(fit)
    truth = fit["instance"].to_numpy()
    rows, chosen = [], None
    for t in GRID:
        false, catch = hint_rates(truth, names, P, t)
        rows.append(
            {
                "t": t,
                "worst false alarm %": 100 * false.max(),
                "mean false alarm %": 100 * false.mean(),
                "catch %": 100 * catch,
            }
        )
        if false.max() <= FALSE_ALARM_BOUND:
            chosen = (t, false, catch)
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    old = old_rule_rates(truth, names, P)
    print(
        f"the old thresholds (anchor < {_anchor.ANCHOR_BELOW:g}, another >= "
        f"{_anchor.OTHER_FROM:g}): false alarms {100 * old[0].max():.2f}% worst instance "
        f"({100 * old[0].mean():.2f}% mean), catch {100 * old[1]:.1f}%"
    )
    if chosen is None:
        print("no threshold meets the bound: the old thresholds stay (checked below)")
        t, flag_of = None, _old_flag
    else:
        t, false, catch = chosen
        print(
            f"\nchosen t = {t:.3g}: false alarms {100 * false.max():.2f}% worst instance "
            f"({', '.join(f'{k} {100 * v:.2f}%' for k, v in false.items())}), catch "
            f"{100 * catch:.1f}%"
        )
        flag_of = lambda p, k: p[k] <= t and int(np.nanargmax(p)) != k  # noqa: E731
    meta, arrays = _anchor.fit_anchor_classifier(fit)
    held = prof[prof["model"].isin(reserved)].reset_index(drop=True)
    Pr = anchor_probabilities(held, arrays)
    if t is None:
        false_r, catch_r = old_rule_rates(held["instance"].to_numpy(), names, Pr)
    else:
        false_r, catch_r = hint_rates(held["instance"].to_numpy(), names, Pr, t)
    print(
        f"independent check (VGG16, InceptionV3; classifier of the others): false alarms "
        f"{100 * false_r.max():.2f}% worst instance ({100 * false_r.mean():.2f}% mean), "
        f"catch {100 * catch_r:.1f}%"
    )
    if examples:
        for path in sorted(Path(examples).glob("*.json")):
            profile = read_profile(path).drop(columns="instance", errors="ignore")
            p = anchor_probabilities(profile, arrays)[0]
            flagged = flag_of(p, names.index("p3.2xlarge"))
            print(
                f"  {path.name:30s} "
                + " ".join(f"{n} {v:.4f}" for n, v in zip(names, p, strict=True))
                + f"; given as p3.2xlarge: {'flagged' if flagged else 'not flagged'}"
            )


def main(argv=None) -> None:
    """Run the validation and print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="folder with profiles.parquet")
    ap.add_argument("--examples", type=Path, help="folder of JSON profiles to judge")
    ap.add_argument("--rule", action="store_true", help="apply docs/anchor_hint_rule.md")
    args = ap.parse_args(argv)
    prof = pd.read_parquet(args.data / "profiles.parquet")
    if args.rule:
        return apply_rule(prof, args.examples)
    # Every CNN left out in turn: the reserved ones too (fit_anchor_classifier skips them in
    # training, so none is reserved here).
    print(f"{len(prof)} profiles, {prof['model'].nunique()} CNNs, leave-one-architecture-out")
    names, P, meta = leave_one_architecture_out(prof, reserved=())
    pred = np.array(names)[np.nanargmax(np.nan_to_num(P, nan=-1.0), axis=1)]
    truth = prof["instance"].to_numpy()
    print("\nConfusion matrix (rows: taken on, columns: told)")
    print(pd.crosstab(pd.Series(truth, name="taken on"), pd.Series(pred, name="told")).to_string())
    ok = pd.Series(pred == truth)
    print(f"\naccuracy {100 * ok.mean():.1f}% over {len(ok)} profiles")
    print(
        "per instance: "
        + ", ".join(f"{k} {100 * v:.1f}%" for k, v in ok.groupby(truth).mean().items())
    )
    print(
        "per CNN: "
        + ", ".join(
            f"{k} {100 * v:.0f}%" for k, v in ok.groupby(prof["model"].to_numpy()).mean().items()
        )
    )
    rates = alarm_rates(prof, names, P, meta)
    print(
        f"\nWarning rule: anchor probability < {meta['anchor_below']:g} and another's >= "
        f"{meta['other_from']:g} (percent of profiles)"
    )
    print(rates.round(1).to_string(index=False))
    own = rates[rates["taken on"] == rates["given as"]]
    other = rates[rates["taken on"] != rates["given as"]]
    print(
        f"false alarms (own instance as anchor): {own['flagged %'].mean():.2f}% mean, "
        f"{own['flagged %'].max():.2f}% worst instance; caught when given as another: "
        f"{other['naming the true one %'].mean():.1f}% (naming the true instance)"
    )
    if args.examples:
        meta, arrays = _anchor.fit_anchor_classifier(prof)
        print(f"\nExamples in {args.examples} (classifier fitted as `profet train` does):")
        for path in sorted(Path(args.examples).glob("profile*.json")):
            profile = read_profile(path).drop(columns="instance", errors="ignore")
            p = anchor_probabilities(profile, arrays)[0]
            found = anchor_findings(profile, "p3.2xlarge", meta, arrays)
            print(
                f"  {path.name:30s} "
                + " ".join(f"{n} {v:.3f}" for n, v in zip(names, p, strict=True))
                + f"; given as p3.2xlarge: {'flagged' if found else 'not flagged'}"
            )


if __name__ == "__main__":
    main()
