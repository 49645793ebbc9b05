"""What a plan's table does not say by itself: ordered resources, ties, candidates without a
prediction, offerings of a variant GPU, picks launched elsewhere, network calls refused."""

from __future__ import annotations

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
