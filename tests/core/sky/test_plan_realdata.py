"""The plan on the shared SkyPilot catalog (6 clouds) against the offerings view of the same
catalog, same profile and run: equal where SkyPilot's one run time per accelerator name is the
offering's own, and otherwise different only by the variants the plan names."""

from __future__ import annotations

import pytest

from profet_core import OfferingFilter, load_artifacts, predict_offerings, refresh_offerings
from profet_core.offerings import GPU_OF_ACCELERATOR, spec_gpu
from profet_core.sky import sky_plan
from tests._utils import SHARED
from tests.core.sky._utils import heavy_profile, needs_sky, task_yaml

CATALOG = SHARED.parent / "skypilot-catalog"
pytestmark = [
    needs_sky,
    pytest.mark.slow,
    pytest.mark.realdata,
    pytest.mark.skipif(
        not (CATALOG / "common" / "accelerators.csv").is_file(),
        reason=f"needs the shared SkyPilot catalog at {CATALOG} (CI has it)",
    ),
]
RUN = {"dataset_images": 50_000, "epochs": 10, "batch_size": 32}


def test_plan_and_offerings_view_differ_only_by_named_variants(tmp_path):
    plan = sky_plan(
        task_yaml(tmp_path / "t.yaml"), heavy_profile(), anchor="g3s.xlarge", catalog=CATALOG, **RUN
    )
    off = predict_offerings(
        load_artifacts(),
        "g3s.xlarge",
        heavy_profile(),
        offerings=refresh_offerings(CATALOG)["table"],
        filter=OfferingFilter(),
        gpus="all",
        **RUN,
    ).table
    wanted = set(zip(plan.table["accelerator"], plan.table["gpus"], strict=True))
    off = off[[(a, g) in wanted for a, g in zip(off["accelerator"], off["gpus"], strict=True)]]
    off = off.assign(
        variant=[
            spec_gpu(c, i, a) != GPU_OF_ACCELERATOR[a]
            for c, i, a in zip(off["cloud"], off["instance"], off["accelerator"], strict=True)
        ]
    )
    # 1. Where the offering rents its name's GPU, the run time is the plan's.
    hours = plan.table.set_index(["accelerator", "gpus"])["run_hours"]
    same = off[~off["variant"]]
    assert len(same) > 20
    for r in same.itertuples():
        assert r.run_hours == pytest.approx(hours[(r.accelerator, r.gpus)], rel=1e-9)
    # 2. With each offering at its name's run time (what SkyPilot asks for), the cheapest run is
    # the plan's pick; the offerings view, predicting each variant, picks its own cheapest.
    named = (
        off["run_usd"]
        / off["run_hours"]
        * [hours[k] for k in zip(off["accelerator"], off["gpus"], strict=True)]
    )
    as_sky = off.loc[named.idxmin()]
    pick = plan.profet_pick
    assert (as_sky["cloud"], as_sky["instance"]) == (pick["cloud"], pick["instance"])
    own = off.loc[off["run_usd"].idxmin()]
    print(
        f"\nplan's pick: {pick['cloud']} {pick['instance']} {pick['run_usd']:.4g} USD per run; "
        f"the offerings view's: {own['cloud']} {own['instance']} {own['run_usd']:.4g} USD"
    )
    if (own["cloud"], own["instance"]) != (pick["cloud"], pick["instance"]):
        # the difference is a variant, and the plan says so
        assert off.set_index(["cloud", "instance"]).loc[
            (pick["cloud"], pick["instance"]), "variant"
        ]
        assert any(f"{pick['cloud']} {pick['instance']} rents the" in n for n in plan.notes)
