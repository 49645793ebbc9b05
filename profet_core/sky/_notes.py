"""What a plan's table does not say by itself: ordered resources, ties, candidates without a
prediction, offerings of a variant GPU, picks launched elsewhere, network calls refused; and
what each candidate's price needs said, as the offerings view says it (price_flags)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .._format import format_number
from ..errors import ProfetValueError

#: Hours in a year (365.25 days): a run predicted to take longer is said to (a 600,000-year
#: plan was printed without a word).
YEAR_HOURS = 8766.0


def plan_notes(answer: dict, table: pd.DataFrame, minimize: str, picked: dict) -> list[str]:
    """The notes of a plan, from the child's answer, the plan's table and its two picks."""
    return _notes(answer, table, minimize) + _tie_notes(table, picked)


def _notes(answer: dict, table: pd.DataFrame, minimize: str) -> list[str]:
    """What the table does not say by itself."""
    notes = []
    if answer["ordered"]:
        notes.append(
            "the task lists its resources in order: SkyPilot takes the first one offered "
            "whatever its run time (any_of lets it choose)"
        )
    if minimize == "time":
        notes.append(
            "with its 1-hour default every candidate takes 1 h, so SkyPilot's time pick without "
            "PROFET is a tie broken by order"
        )
    for label, reason in answer["unanswered"].items():
        notes.append(f"{label}: no PROFET run time ({reason}); it was never preferred")
    notes.extend(_variant_notes(table))
    if answer["network"]:
        notes.append(f"SkyPilot tried the network and was refused: {'; '.join(answer['network'])}")
    return notes


def _variant_notes(table: pd.DataFrame) -> list[str]:
    """Offerings whose GPU is another variant than their accelerator name's (the offerings view
    predicts the variant; SkyPilot gives every offering of one name the same time)."""
    from ..offerings import GPU_OF_ACCELERATOR, spec_gpu

    notes = []
    for r in table.itertuples():
        if not isinstance(r.instance, str) or not r.accelerator:
            continue
        named = GPU_OF_ACCELERATOR.get(r.accelerator, "")
        rented = spec_gpu(r.cloud, r.instance, r.accelerator)
        if named and rented and rented != named:
            notes.append(
                f"{r.cloud} {r.instance} rents the {rented}: SkyPilot gives every {r.accelerator} "
                f"offering one run time, PROFET's for the {named} (the offerings view, profet "
                "predict --offerings, predicts the variant)"
            )
    return notes


def _tie_notes(table: pd.DataFrame, picked: dict) -> list[str]:
    """Picks launched elsewhere than their candidate's cheapest offering (a tie on time)."""
    notes = []
    for who, row in picked.items():
        if row is None:
            continue
        cheapest = table[table["candidate"] == row["candidate"]].iloc[0]
        if (row["cloud"], row["instance"]) != (cheapest["cloud"], cheapest["instance"]):
            notes.append(
                f"the {'1-hour default' if who == 'default' else 'PROFET'} pick launches "
                f"{row['candidate']} on {row['cloud']} {row['instance']} "
                f"({format_number(row['usd_per_hour'])} USD/h), not on its cheapest offering "
                f"{cheapest['cloud']} {cheapest['instance']} "
                f"({format_number(cheapest['usd_per_hour'])} USD/h): every cloud's offering of "
                "it takes the same time, and SkyPilot breaks the tie by order"
            )
    return notes


def sense_warnings(table: pd.DataFrame) -> list[str]:
    """Warnings on a plan that makes no sense as it stands: runs longer than a year."""
    long = table[table["run_hours"] > YEAR_HOURS]
    if long.empty:
        return []
    best = long.loc[long["run_hours"].idxmin()]
    return [
        f"the run takes more than a year on {len(long)} of {len(table)} candidate(s) (at the "
        f"least {format_number(best['run_hours'])} h, {format_number(best['run_hours'] / YEAR_HOURS)}"
        f" years, on {best['candidate']}): check its length (dataset_images x epochs, or "
        "run_steps); a plan that long is no plan"
    ]


def check_prices(table: pd.DataFrame) -> None:
    """Refuse a plan with a price no offering has: 0 or less, or outside the plausible range
    the catalog's reader keeps (SkyPilot composes GCP's prices from rows that may be 0)."""
    from ..offerings._vms import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR

    price = table["usd_per_hour"]
    bad = table[price.notna() & ~price.between(MIN_USD_PER_HOUR, MAX_USD_PER_HOUR)]
    if len(bad):
        r = bad.iloc[0]
        raise ProfetValueError(
            f"SkyPilot prices {r['candidate']} on {r['cloud']} {r['instance']} ({r['region']}) "
            f"at {format_number(r['usd_per_hour'])} USD/h, outside the plausible "
            f"{MIN_USD_PER_HOUR:g}..{MAX_USD_PER_HOUR:,g} USD/h (a cost of 0 or less is no "
            "cost): fix that row of the catalog, or leave its cloud out (--cloud)"
        )


def price_flags(table: pd.DataFrame, copy) -> tuple[pd.DataFrame, str]:
    """``table`` with what each row's price needs said (``regions_at_price``, ``price_check``,
    ``note``: the offerings view's words for the same offering of the catalog, from the checked
    ``copy`` SkyPilot was handed), and the note counting the catalog's instance types with a
    price to check ("" where no row has one). A row is matched by cloud, instance, region and
    market (SkyPilot reads the catalog's raw prices: a swapped pair's on-demand row is its spot
    price here, and says so)."""
    from ..offerings import OfferingFilter, choose
    from ..offerings._filter import markets
    from ..offerings._notes import price_check_note

    snapshot = _snapshot_of(copy)
    every = markets(snapshot).assign(market=lambda t: np.where(t["spot"], "spot", "on-demand"))
    said = every.drop_duplicates(KEY).set_index(KEY)[["price_check", "note"]]
    shown = choose(snapshot, OfferingFilter(spot=None))
    shown = shown.assign(market=np.where(shown["spot"], "spot", "on-demand"))
    ties = shown.set_index(["cloud", "instance", "market"])[["region", "regions_at_price"]]
    out = table.copy()
    out["regions_at_price"], out["price_check"], out["note"] = np.nan, "", ""
    for i, r in out.iterrows():
        k = (r["cloud"], r["instance"], r["region"], r["market"])
        if k in said.index:
            out.at[i, "price_check"] = str(said.at[k, "price_check"] or "")
            out.at[i, "note"] = str(said.at[k, "note"] or "")
        t = k[:2] + k[3:]
        if t in ties.index and ties.at[t, "regions_at_price"] > 1:
            out.at[i, "regions_at_price"] = ties.at[t, "regions_at_price"]
            out.at[i, "note"] = "; ".join(
                x
                for x in (
                    out.at[i, "note"],
                    f"{int(ties.at[t, 'regions_at_price'])} regions share the type's cheapest "
                    "price; SkyPilot names one",
                )
                if x
            )
    return out, price_check_note(out, snapshot)


#: The key of one offering in one market.
KEY = ["cloud", "instance", "region", "market"]


def _snapshot_of(copy):
    """The offerings snapshot of a checked catalog copy (its texts laid out as a catalog folder
    in a scratch folder, derived as ``profet offerings refresh`` derives one)."""
    import tempfile
    from pathlib import Path

    from ..offerings._read import read_accounted
    from ..offerings._snapshot import derive_offerings

    with tempfile.TemporaryDirectory(prefix="profet-flags-") as root:
        for cloud, text in copy.files.items():
            name = "accelerators.csv" if cloud == "common" else "vms.csv"
            (Path(root) / cloud).mkdir()
            (Path(root) / cloud / name).write_text(text)
        return derive_offerings(read_accounted(root)[0])
