"""Which instance a profile was taken on, told from the profile itself.

A g3s.xlarge profile read as a p3.2xlarge one is predicted from the wrong op times (412.8 ms on
g3s.xlarge where 113 ms was measured), and a file that does not name its instance (a TensorBoard
export, a list-form JSON) gives nothing to check. The same CNN's op mix differs by GPU: how long
a backward kernel takes against its forward twin (``ReluGrad``/``Relu``,
``Conv2DBackpropFilter``/``Conv2DBackpropInput``, ``MaxPoolGrad``/``MaxPool``...) depends on the
GPU's kernels rather than on the workload, and so do the shares of device time per op family,
the device idle share and the host/device ratio. All of these are ratios of times in one
profile, so the step count and the workload size cancel out.

A multinomial logistic regression on those features (standardised) is learned by ``profet
train`` (:func:`fit_anchor_classifier`) and stored as plain arrays; a prediction whose profile
names no instance is warned about when the classifier finds it very likely taken on another
instance than the anchor (:func:`anchor_findings`). ``python bench/studies/anchor_signal.py`` measures
it leave-one-architecture-out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._schema import RESERVED_ARCHITECTURES
from ..inputs._sanity import Finding, _rows, _where
from ._profile_features import FAMILY_COLUMNS, family_matrix

#: Backward/forward twins (and per-step kernels against one another): their time ratio is set
#: by the GPU's kernels more than by the workload.
PAIRS = (
    ("Device_ReluGrad", "Device_Relu"),
    ("Device_Conv2DBackpropFilter", "Device_Conv2DBackpropInput"),
    ("Device_MaxPoolGrad", "Device_MaxPool"),
    ("Device_BiasAddGrad", "Device_BiasAdd"),
    ("Device_FusedBatchNormGradV3", "Device_FusedBatchNormV3"),
    ("Device_Conv2D", "Device_Conv2DBackpropInput"),
    ("Device__FusedConv2D", "Device_Conv2DBackpropInput"),
    ("Device_AvgPoolGrad", "Device_AvgPool"),
    ("Device_Relu6Grad", "Device_Relu6"),
    ("Device_DepthwiseConv2dNativeBackpropFilter", "Device_DepthwiseConv2dNativeBackpropInput"),
    ("Device_DepthwiseConv2dNative", "Device_DepthwiseConv2dNativeBackpropInput"),
    ("Device_Mul", "Device_ResourceApplyGradientDescent"),
    ("Device_Softmax", "Device_SoftmaxCrossEntropyWithLogits"),
    ("Device_ArgMax", "Device_SoftmaxCrossEntropyWithLogits"),
    ("Device_Cast", "Device_ArgMax"),
    ("Device_Equal", "Device_ArgMax"),
    ("Device_Sum", "Device_ArgMax"),
    ("Device_Tile", "Device_ArgMax"),
    ("Device_DivNoNan", "Device_ArgMax"),
    ("Device_AssignAddVariableOp", "Device_ArgMax"),
    ("Device_BiasAddGrad", "Device_ResourceApplyGradientDescent"),
    ("Device_MatMul", "Device_BiasAdd"),
    ("Device__Recv", "Device_ArgMax"),
    ("Device__Send", "Device_ArgMax"),
    ("Device_Transpose", "Device_ArgMax"),
    ("Host_WriteSummary", "Host_FlushSummaryWriter"),
    ("Host_Dataset", "Host_IteratorGetNext"),
    ("Host_Identity", "Host_IteratorGetNext"),
    ("Host_GatherV2", "Host_IteratorGetNext"),
    ("Host_LogicalAnd", "Host_IteratorGetNext"),
)
#: Smallest share of device busy time told apart (an absent family counts as this much).
SHARE_FLOOR = 1e-4
#: L2 penalty of the logistic regression (on standardised features).
PENALTY = 1.0
#: Warn when the anchor's probability is below ANCHOR_BELOW and another's at least OTHER_FROM.
#: Kept by docs/anchor_hint_rule.md: no single threshold keeps the held-out false
#: alarms at 5% or under on every instance, so the rule leaves these as they were.
ANCHOR_BELOW = 1e-5
OTHER_FROM = 0.9999
#: How often the warning is wrong and right, measured by the rule (`python
#: bench/studies/anchor_signal.py --rule`, leave-one-architecture-out over the 11 CNNs but
#: VGG16 and InceptionV3): the share of genuine profiles flagged (mean, worst instance), and
#: of profiles given another instance as the anchor that are flagged (percent).
FALSE_ALARM_PCT, FALSE_ALARM_WORST_PCT, CATCH_PCT = 10.1, 14.8, 23.9


def anchor_features(profiles: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Scale-free features of each profile's op mix.

    Parameters
    ----------
    profiles : pandas.DataFrame
        Shape (n, ...): ``Host_*``/``Device_*`` op times (us); absent ops count as 0.

    Returns
    -------
    X : ndarray of shape (n, 2 * len(PAIRS) + 10 + 3)
        Log time ratio of each of :data:`PAIRS` (0 where either op is absent) and whether it is
        absent; log share of device busy time per op family; log device idle, host idle and
        host busy time over device busy time.
    ok : ndarray of shape (n,)
        False where the profile has no device busy time (no verdict).
    """
    ops = sorted({op for pair in PAIRS for op in pair})
    values = profiles.reindex(columns=ops).fillna(0.0).to_numpy(dtype=float)
    col = {op: i for i, op in enumerate(ops)}
    ratios, absent = [], []
    for a, b in PAIRS:
        va, vb = values[:, col[a]], values[:, col[b]]
        both = (va > 0) & (vb > 0)
        ratios.append(np.log(np.where(both, va, 1.0) / np.where(both, vb, 1.0)))
        absent.append(~both)
    dev, host = family_matrix(profiles, "Device"), family_matrix(profiles, "Host")
    idle = FAMILY_COLUMNS.index("idle")
    busy = np.delete(dev, idle, axis=1).sum(axis=1)
    host_busy = np.delete(host, idle, axis=1).sum(axis=1)
    denom = np.where(busy > 0, busy, 1.0)[:, None]
    others = np.column_stack([dev[:, idle], host[:, idle], host_busy])
    shares = np.log(np.maximum(np.delete(dev, idle, axis=1) / denom, SHARE_FLOOR))
    rest = np.log(np.maximum(others / denom, SHARE_FLOOR))
    X = np.column_stack([*ratios, *absent, shares, rest]).astype(float)
    return X, busy > 0


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_anchor_classifier(
    profiles: pd.DataFrame, penalty: float = PENALTY, reserved=RESERVED_ARCHITECTURES
) -> tuple[dict, dict]:
    """Learn which instance a profile was taken on (multinomial logistic regression).

    Parameters
    ----------
    profiles : pandas.DataFrame
        Training profiles: ``instance``, ``model`` and op columns (us). Rows of ``reserved``
        are left out.
    penalty : float
        L2 penalty on the standardised coefficients.
    reserved : sequence of str
        Architectures (``model``) never fitted on (default: the data's held-out VGG16 and
        InceptionV3); recorded in the meta.

    Returns
    -------
    (dict, dict)
        ``(meta, arrays)``: meta ``{"instances": [...], "anchor_below", "other_from",
        "reserved"}`` (model.json's ``anchor_signal``); arrays ``mean``, ``scale``, ``coef``
        (n_features, n_instances), ``intercept`` (n_instances,). ``({}, {})`` with fewer than
        two instances.
    """
    from scipy.optimize import minimize

    fit = profiles[~profiles["model"].isin(list(reserved))]
    X, ok = anchor_features(fit)
    names = sorted(pd.unique(fit["instance"].astype(str)))
    if len(names) < 2 or not ok.any():
        return {}, {}
    X, y = X[ok], pd.Categorical(fit["instance"].astype(str)[ok], categories=names).codes
    mean, scale = X.mean(axis=0), X.std(axis=0)
    scale = np.where(scale > 1e-12, scale, 1.0)
    Z = (X - mean) / scale
    n, d, k = len(Z), Z.shape[1], len(names)
    Y = np.eye(k)[y]

    def loss(w):
        W, b = w[: d * k].reshape(d, k), w[d * k :]
        P = _softmax(Z @ W + b)
        value = -np.log(np.clip(P[np.arange(n), y], 1e-300, None)).sum() / n
        value += 0.5 * penalty * (W**2).sum() / n
        G = (P - Y) / n
        return value, np.concatenate([(Z.T @ G + penalty * W / n).ravel(), G.sum(axis=0)])

    res = minimize(loss, np.zeros(d * k + k), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    W, b = res.x[: d * k].reshape(d, k), res.x[d * k :]
    meta = {
        "instances": names,
        "anchor_below": ANCHOR_BELOW,
        "other_from": OTHER_FROM,
        "reserved": list(reserved),
    }
    return meta, {"mean": mean, "scale": scale, "coef": W, "intercept": b}


def anchor_probabilities(profiles: pd.DataFrame, arrays: dict) -> np.ndarray:
    """Probability of each instance per profile: shape (n, n_instances); NaN rows: no verdict."""
    X, ok = anchor_features(profiles)
    Z = (X - arrays["mean"]) / arrays["scale"]
    P = _softmax(Z @ arrays["coef"] + arrays["intercept"])
    P[~ok] = np.nan
    return P


def anchor_findings(profiles: pd.DataFrame, anchor, meta: dict | None, arrays) -> list[Finding]:
    """A warning for rows that name no instance but look taken on another one than ``anchor``.

    Parameters
    ----------
    profiles : pandas.DataFrame
        As ``parse_profile`` returns it (an ``instance`` column, where present, names rows
        already checked against the anchor: those are skipped).
    anchor : str
        The anchor instance asked for.
    meta, arrays
        From :func:`fit_anchor_classifier` (model.json's ``anchor_signal``, arrays
        ``anchor|*``); nothing is said without them (artifacts trained before the check) or
        for an anchor the classifier never saw.

    Returns
    -------
    list of Finding
        ``anchor_mismatch`` warnings, one per instance the rows look taken on.
    """
    names = list((meta or {}).get("instances") or ())
    if anchor not in names or not arrays or not len(profiles):
        return []
    unnamed = np.ones(len(profiles), dtype=bool)
    if "instance" in profiles.columns:
        unnamed = profiles["instance"].isna().to_numpy()
    if not unnamed.any():  # every row names its instance: nothing to flag
        return []
    P = anchor_probabilities(profiles, arrays)
    best = np.nanargmax(np.nan_to_num(P, nan=-1.0), axis=1)
    p_anchor, p_best = P[:, names.index(anchor)], P[np.arange(len(P)), best]
    with np.errstate(invalid="ignore"):
        flag = unnamed & (p_anchor < meta["anchor_below"]) & (p_best >= meta["other_from"])
    out = []
    for j in sorted(set(best[flag].tolist())):
        rows = _rows(flag & (best == j))
        i, other = rows[0], names[j]
        message = (
            f"the profile{_where(rows, len(profiles))} names no instance and its op mix looks "
            f"taken on {other} (probability {p_best[i]:.4f}), not on the anchor {anchor} "
            f"({p_anchor[i]:.1e}): if it was taken on {other}, give that as the anchor "
            f"(--anchor {other} on the command line, the anchor instance in the app), or the "
            f"predictions are made from another GPU's op times and may be far off (a hint, "
            f"often wrong: on CNNs held out of its training it flags {FALSE_ALARM_PCT:g}% of "
            f"genuine profiles, {FALSE_ALARM_WORST_PCT:g}% on the worst instance, and catches "
            f"{CATCH_PCT:g}% of wrong anchors)"
        )
        out.append(Finding("warning", "anchor_mismatch", message, rows))
    return out
