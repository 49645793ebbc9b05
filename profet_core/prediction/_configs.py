"""The per-target table as GPU configurations: a priced predictor's rows are the
(GPU, GPU count) configurations its price source rents, each priced by the on-demand offering
that rents it cheapest, the rule the time-cost front follows offering by offering, so both
name the same configuration and price as fastest, cheapest and best value.

The price source (:class:`Rentals`, built by :mod:`profet_core.offerings._prices`) is one row
per on-demand offering (each instance type at its cheapest region, as the offerings view
chooses it): the spec line its GPU is predicted as (``target``), its GPU count and price, and
what that price needs said (``price_check``, ``regions_at_price``, ``note``). A configuration
of N GPUs takes the cheapest offering of its GPU with at least N GPUs (the whole instance
paid, as the front prices it), so it is never priced above an offering that rents at least as
many of that GPU. Spec lines nothing rents keep their own count, unpriced.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._schema import MS_PER_HOUR


@dataclass(frozen=True)
class Rentals:
    """What the price source rents on demand.

    Attributes
    ----------
    source : callable
        Returns the table (built on first use, so that loading a predictor stays fast):
        ``target`` (the spec line a GPU is predicted as), ``gpus`` (int, the offering's GPU
        count), ``usd_per_hour``, ``offering`` (``"<cloud> <instance type> (<region>)"``), one
        row per offering, cheapest first (ties in the offerings view's order); and
        ``instance``, ``price_check``, ``regions_at_price`` and ``note`` where the source has
        them (what the offering's price needs said).
    checked : callable, optional
        Returns the sentence that counts the price source's instance types with a catalog
        price to check (every view says the same count).
    """

    source: object
    checked: object = None
    _kept: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def table(self) -> pd.DataFrame:
        """The rented offerings (see :attr:`source`)."""
        if "table" not in self._kept:
            self._kept["table"] = self.source()
        return self._kept["table"]

    def counts(self) -> dict:
        """``{target: sorted GPU counts rented}``."""
        if "counts" not in self._kept:
            t = self.table
            got: dict = {}
            for target, n in zip(t["target"].tolist(), t["gpus"].tolist(), strict=True):
                got.setdefault(target, set()).add(int(n))
            self._kept["counts"] = {k: sorted(v) for k, v in got.items()}
        return self._kept["counts"]

    def cheapest(self, target: str, used: int):
        """``(USD/h, offering, offering's GPU count, row of the table)`` of the cheapest
        offering renting ``target``'s GPU with at least ``used`` GPUs, or None."""
        key = (target, int(used))
        kept = self._kept.setdefault("cheapest", {})
        if key not in kept:
            t = self.table
            n = t["gpus"].to_numpy(int)
            ok = (t["target"].to_numpy(object) == target) & (n >= used)
            i = np.flatnonzero(ok)  # cheapest first: the first one
            kept[key] = (
                None
                if not len(i)
                else (
                    float(t["usd_per_hour"].iat[i[0]]),
                    str(t["offering"].iat[i[0]]),
                    int(n[i[0]]),
                    int(i[0]),
                )
            )
        return kept[key]

    def own(self, instance: str):
        """``(USD/h, offering, GPUs)`` of the instance type ``instance`` itself where the price
        source rents it (its cheapest region), else None."""
        kept = self._kept.setdefault("own", {})
        if instance not in kept:
            t = self.table
            hit = (
                np.flatnonzero(t["instance"].to_numpy(object) == instance)
                if "instance" in t
                else []
            )
            kept[instance] = (
                None
                if not len(hit)
                else (
                    float(t["usd_per_hour"].iat[hit[0]]),
                    str(t["offering"].iat[hit[0]]),
                    int(t["gpus"].iat[hit[0]]),
                )
            )
        return kept[instance]

    def checked_text(self) -> str:
        """How many instance types of the price source have a catalog price to check (one
        count, the same in every view: :func:`profet_core.offerings.prices_to_check`)."""
        return self.checked() if self.checked is not None else ""

    def flags(self, row: int) -> tuple:
        """``(price_check, regions_at_price, note)`` of the table's offering ``row``: what its
        price needs said (a catalog price to check, the regions that share it)."""
        t = self.table
        get = {c: t[c].iat[row] if c in t else None for c in ("price_check", "note")}
        regions = t["regions_at_price"].iat[row] if "regions_at_price" in t else np.nan
        return (
            str(get["price_check"] or ""),
            float(regions) if pd.notna(regions) else np.nan,
            str(get["note"] or ""),
        )


def rented_counts(rentals: Rentals, targets, gpus) -> dict:
    """``{target: [GPU counts]}`` of the targets ``rentals`` rents under ``gpus`` (1,
    ``"all"`` or a list of counts: those up to the most GPUs an offering of it has); targets
    it does not rent are absent (their spec line's count applies)."""
    have = rentals.counts()
    want = [1] if gpus == 1 else gpus
    out = {}
    for t in targets:
        counts = have.get(t)
        if counts is not None:
            out[t] = counts if gpus == "all" else [g for g in want if g <= counts[-1]]
    return out


def short_gpu(gpu: str) -> str:
    """A GPU's name without the vendor (``"NVIDIA H100 SXM5 80GB"`` -> ``"H100 SXM5 80GB"``)."""
    return str(gpu).removeprefix("NVIDIA ")


def priced_configurations(table: pd.DataFrame, rentals: Rentals, gpus=1) -> tuple:
    """``table`` (a prediction's) priced per configuration: ``usd_per_hour`` and ``offering``
    of the cheapest offering renting (target, at least the GPUs used), ``usd_per_1000_steps``,
    what that price needs said (``price_check``, ``regions_at_price``, ``note``: the offering's
    catalog checks and ties, a whole instance paid for fewer GPUs, the instance type named as
    target renting elsewhere at its own price, a measured GPU on another host), and
    ``configuration`` after ``target``; and the notes on prices. Looked up once per
    configuration, not per row (``gpus`` is the request's: each row's own count is used)."""
    out = table.copy(deep=False)
    used = out["gpus"].to_numpy(int) if "gpus" in out else np.ones(len(out), dtype=int)
    codes, names = pd.factorize(out["target"], sort=False)  # a categorical's own codes
    # One key per (target, GPUs used), numbered without a sort: a 100,000-profile table has
    # millions of rows and a few dozen configurations.
    width = int(used.max()) + 1 if len(used) else 1
    key = codes.astype(np.int64) * width + used
    at = np.full(len(names) * width, -1, dtype=np.int64)
    at[key] = np.arange(len(key))  # a row of each key (any: gpu and basis are the target's)
    present = np.flatnonzero(at >= 0)
    number = np.zeros(len(at), dtype=np.int64)
    number[present] = np.arange(len(present))
    inv, first = number[key], at[present]
    pairs = [(str(names[k // width]), int(k % width)) for k in present.tolist()]
    gpu = out["gpu"].iloc[first].astype(str).tolist()
    gpu_of = {t: g for (t, _), g in zip(pairs, gpu, strict=True)}
    hits = [rentals.cheapest(t, n) for t, n in pairs]
    usd = np.array([np.nan if h is None else h[0] for h in hits], dtype=float)[inv]
    out["usd_per_hour"] = usd
    out["offering"] = _categorical(["" if h is None else h[1] for h in hits], inv)
    out["usd_per_1000_steps"] = out["batch_latency_ms"].to_numpy(float) * 1000 / MS_PER_HOUR * usd
    config = [f"{n} x {short_gpu(gpu_of[t])}" for t, n in pairs]
    out.insert(out.columns.get_loc("target") + 1, "configuration", _categorical(config, inv))
    measured = [str(b) == "measured" for b in out["basis"].iloc[first].tolist()]
    flags = [
        _row_flags(rentals, c, p, h, m)
        for c, p, h, m in zip(config, pairs, hits, measured, strict=True)
    ]
    out["price_check"] = _categorical([f[0] for f in flags], inv)
    out["regions_at_price"] = np.array([f[1] for f in flags], dtype=float)[inv]
    out["note"] = _categorical([f[2] for f in flags], inv)
    notes = _notes(config, [n for _, n in pairs], hits)
    notes += _other_hosts(config, pairs, hits, measured) + _own_prices(rentals, config, pairs, hits)
    checked = [(c, f[0]) for c, f in zip(config, flags, strict=True) if f[0]]
    return out, notes + _checked_note(rentals, checked)


def _row_flags(rentals: Rentals, config: str, pair: tuple, hit, measured: bool) -> tuple:
    """``(price_check, regions_at_price, note)`` of one configuration's price."""
    if hit is None:
        return "", np.nan, "no offering rents this configuration: no price"
    check, regions, note = rentals.flags(hit[3])
    said = []
    if hit[2] > pair[1]:
        said.append(
            f"the price is the whole instance's ({hit[2]} GPUs; the step uses {pair[1]}): the "
            "cheapest offering renting at least this many"
        )
    own = rentals.own(pair[0])
    if own is not None and own[2] == pair[1] and own[1] != hit[1]:
        said.append(
            f"{pair[0]} itself rents at {own[0]:.4g} USD/h ({own[1]}); this price is the "
            f"cheapest offering's renting {config}"
        )
    if measured and hit[1].split()[1:2] != [pair[0]]:
        # the offerings view's words for the same offering
        said.append(
            f"the GPU measured on {pair[0]}, on another host (CPU, PCIe and clocks may differ)"
        )
    return check, regions, "; ".join([*said, *([note] if note else [])])


def _own_prices(rentals: Rentals, config: list, pairs: list, hits: list) -> list[str]:
    """A note on configurations predicted as an instance type that rents at another price than
    the configuration's (its own price is what the anchor list and About page show)."""
    other = []
    for c, (t, n), h in zip(config, pairs, hits, strict=True):
        own = rentals.own(t)
        if h is not None and own is not None and own[2] == n and own[1] != h[1]:
            other.append(f"{c} (as {t}, which rents at {own[0]:.4g} USD/h; here {h[0]:.4g})")
    if not other:
        return []
    return [
        f"{', '.join(dict.fromkeys(other))}: an instance type has its own price wherever it is "
        "named; these rows are priced by the cheapest offering renting their configuration, "
        "which the offering column names."
    ]


def _checked_note(rentals: Rentals, checked: list) -> list[str]:
    """One note naming the configurations priced by an offering whose catalog price needs a
    check, with the price source's count of such instance types (the same in every view)."""
    if not checked:
        return []
    named = "; ".join(f"{c} ({why})" for c, why in dict.fromkeys(checked))
    return [f"{rentals.checked_text()}; here the price of {named} (the note column says why)."]


def _other_hosts(config: list, pairs: list, hits: list, measured: list) -> list[str]:
    """A note on measured GPUs priced as another instance type (another host), as the
    offerings view says of them."""
    other = [
        f"{c} ({t}; priced as {h[1]})"
        for c, (t, _), h, m in zip(config, pairs, hits, measured, strict=True)
        if m and h is not None and h[1].split()[1:2] != [t]
    ]
    if not other:
        return []
    return [
        f"{', '.join(other)}: measured on the instance named, priced as the offering renting "
        "that GPU cheapest, on another host (CPU, PCIe and clocks may differ)."
    ]


def _categorical(labels: list, inv: np.ndarray) -> pd.Categorical:
    """Per row ``labels[inv]``, as a categorical (one string per label, not per row; its dtype
    built once per list of labels)."""
    from ._engine import categorical

    uniq = list(dict.fromkeys(labels))
    codes = np.array([uniq.index(v) for v in labels], dtype=np.int64)
    return categorical(codes[inv], uniq)


def _notes(config: list, used: list, hits: list) -> list[str]:
    """What the prices need said: configurations paid as a bigger instance, and those nothing
    rents (shown without a price)."""
    bigger = {
        c: f"{c} ({h[1]}, {h[2]} GPUs)"
        for c, n, h in zip(config, used, hits, strict=True)
        if h is not None and h[2] > n
    }
    gone = list(dict.fromkeys(c for c, h in zip(config, hits, strict=True) if h is None))
    notes = []
    if bigger:
        notes.append(
            f"{', '.join(bigger.values())}: the cheapest offering renting at least this many "
            "of the GPU has more, so the price and cost are the whole instance's, which is what "
            "renting it costs even when the run uses fewer of its GPUs."
        )
    if gone:
        notes.append(
            f"{', '.join(gone)}: no offering of the price source rents "
            f"{'this configuration' if len(gone) == 1 else 'these configurations'} (retired or "
            "never offered), so its latency is shown without a price or cost."
        )
    return notes


#: Notes of the spec lines' prices that configurations replace (their own words).
SPEC_PRICE_NOTES = (
    "the latency is for one of the instance's GPUs",
    "no offering of the price source rents",
)


def configurations(pred, rentals, gpus):
    """``pred`` (a :class:`~._result.Prediction`) priced per GPU configuration, its spec lines'
    price notes replaced by the configurations'."""
    import dataclasses

    table, more = priced_configurations(pred.table, rentals, gpus)
    kept = [n for n in pred.notes if not any(s in n for s in SPEC_PRICE_NOTES)]
    return dataclasses.replace(pred, table=table, notes=tuple(kept), price_notes=tuple(more))
