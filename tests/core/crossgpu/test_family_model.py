"""The spec family model (crossgpu/spec/_family_model.py) on hand-made steps: device work moved per
family, what the step spends beyond it kept, launch-bound loops and kernels, the interval."""

from __future__ import annotations

import numpy as np
import pytest

from profet_core.crossgpu.spec._family_model import (
    FIXED_SHARE,
    KERNEL_MIN_S,
    W_HOST,
    half_width,
    predict_step,
    step_parts,
)
from profet_core.features._families import FINE_FAMILIES

F = {f: i for i, f in enumerate(FINE_FAMILIES)}


def _fine(**us) -> np.ndarray:
    """One row of device time per family (us, over 2 steps)."""
    row = np.zeros((1, len(FINE_FAMILIES)))
    for fam, t in us.items():
        row[0, F[fam]] = t
    return row


def _ratios(default=0.5, **per) -> np.ndarray:
    r = np.full(len(FINE_FAMILIES), default)
    for fam, v in per.items():
        r[F[fam]] = v
    return r


def test_device_work_moves_and_the_rest_of_the_step_stays():
    # 2 steps: 20 ms of matmul, 10 ms of elementwise (15 ms per step) in a 25 ms step
    parts = step_parts(_fine(matmul=20_000, elementwise=10_000), [0.0], [0.025])
    assert parts.overhead[0] == pytest.approx(0.010)
    step, new = predict_step(parts, _ratios(matmul=0.25, elementwise=0.5))
    assert step[0] == pytest.approx(0.010 * 0.25 + 0.005 * 0.5 + 0.010)
    assert new[0] == 0.0  # both families were measured in CNN steps
    same, _ = predict_step(parts, _ratios(default=1.0))
    assert same[0] == pytest.approx(0.025)  # the anchor's own GPU gives its own step


def test_without_a_latency_the_step_is_device_work_and_idle():
    parts = step_parts(_fine(conv=30_000), [10_000.0], None)
    assert parts.latency[0] == pytest.approx(0.020)  # (30 + 10) ms over 2 steps


def test_a_step_with_little_idle_keeps_the_fitted_fixed_share():
    parts = step_parts(_fine(conv=39_800), [0.0], [0.020])  # 19.9 of 20 ms busy
    assert parts.overhead[0] == pytest.approx(FIXED_SHARE * 0.020)
    assert parts.busy[0] == pytest.approx((1 - FIXED_SHARE) * 0.020)


def test_a_generic_loop_keeps_its_cell_and_moves_the_rest():
    parts = step_parts(_fine(loop=100, matmul=10_000, recurrent=10_000), [0.0], [0.030])
    assert parts.loop[0]
    step, new = predict_step(parts, _ratios(matmul=0.2, elementwise=0.5))
    # matmul and the loop ops are the cell (launch-bound): kept; cuDNN recurrent work moves
    assert step[0] == pytest.approx(0.00505 + 0.005 * 0.5 + 0.01995, rel=1e-6)
    assert new[0] > 0  # loop and recurrent work were never measured


def test_collectives_leave_the_one_gpu_step():
    parts = step_parts(_fine(conv=20_000, communication=8_000), [50_000.0], [0.060], world_size=[2])
    assert parts.busy[0] == pytest.approx(0.010)
    assert parts.latency[0] == pytest.approx(0.010 / (1 - FIXED_SHARE))
    step, _ = predict_step(parts, _ratios(default=1.0))
    assert step[0] == pytest.approx(parts.latency[0])


def test_no_kernel_runs_faster_than_its_launch():
    # 1,000 kernels of 5 us a step: a 100x faster GPU still takes their launches
    parts = step_parts(_fine(elementwise=10_000), [0.0], [0.0054], kernels=[2_000])
    step, _ = predict_step(parts, _ratios(elementwise=0.01))
    assert step[0] >= 1_000 * KERNEL_MIN_S
    # kernels that took 1 us on the anchor are not floored above it
    short = step_parts(_fine(elementwise=2_000), [0.0], [0.00108], kernels=[2_000])
    assert predict_step(short, _ratios(default=1.0))[0][0] == pytest.approx(0.00108)


def test_a_launch_bound_traced_step_is_not_faster_on_a_faster_gpu():
    # 2 ms of kernels in a 10 ms step (its host launches them): host-bound
    parts = step_parts(_fine(conv=4_000), [16_000.0], [0.010], kernels=[4_000])
    fast, _ = predict_step(parts, _ratios(conv=0.1))
    slow, _ = predict_step(parts, _ratios(conv=8.0))
    assert fast[0] == pytest.approx(0.010) and slow[0] > 0.010


def test_the_interval_grows_with_overhead_and_unmeasured_work():
    base = step_parts(_fine(conv=36_000), [0.0], [0.020])
    hosty = step_parts(_fine(conv=10_000), [0.0], [0.020])
    new = step_parts(_fine(recurrent=36_000), [0.0], [0.020])
    widths = []
    for parts in (base, hosty, new):
        step, share = predict_step(parts, _ratios(default=0.5))
        widths.append(half_width(parts, step, share, 0.1)[0])
    assert widths[1] > widths[0] and widths[2] > widths[0]
    assert widths[1] <= np.hypot(0.1, W_HOST) + 1e-9


def test_a_profile_spanning_many_steps_is_read_by_its_busy_share():
    # 20 ms busy, 380 ms idle over an unstated span, 10 ms steps: 40 step latencies, far
    # beyond two steps' (at most ~4.2): the steps' busy share is the span's, 5%
    fine, idle = _fine(matmul=20_000), [380_000.0]
    told = step_parts(fine, idle, [0.010], assumed=[True])
    assert told.busy[0] == pytest.approx(0.0005) and told.overhead[0] == pytest.approx(0.0095)
    said = step_parts(fine, idle, [0.010], assumed=[False])  # said to be two steps: as given
    assert said.busy[0] == pytest.approx(0.010 * (1 - FIXED_SHARE))
    short = step_parts(_fine(matmul=20_000), [10_000.0], [0.010], assumed=[True])
    assert short.busy[0] == pytest.approx(0.010 * (1 - FIXED_SHARE))  # a two-step span
