"""The published-measurements table (loader, provenance, held-out rows) and the
tensor-core efficiencies the cross-instance model learns from it (``published (n)`` basis)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from profet_core.crossgpu import CrossInstanceModel, all_pairs, median_table
from profet_core.crossgpu.spec._efficiency import (
    bandwidth_z,
    fit_published,
    predict_speedups,
    z_term,
)
from profet_core.crossgpu.spec._gpuref import gpu_table
from profet_core.crossgpu.spec._holdout import learn_published, published_logo
from profet_core.crossgpu.spec._published import (
    COLUMNS,
    held_out,
    load_published,
    published_pairs,
    validate_published,
)
from profet_core.errors import ProfetValueError
from profet_core.inputs._gpu_specs import load_specs
from tests.core.crossgpu._utils import make_multi_gpu, spec_table

COMMIT = "0123456789abcdef0123456789abcdef01234567"
#: Synthetic tensor-core GPUs: (fp32, tensor TF32, bandwidth, generation)
TENSOR = {
    "gpu-t": (20.0, 160.0, 1500.0, "GenT"),
    "gpu-t2": (30.0, 60.0, 600.0, "GenT"),
    "gpu-u": (60.0, 480.0, 3000.0, "GenU"),
    "gpu-t3": (25.0, 100.0, 900.0, "GenT"),  # nothing published of it
}
TRUE = {"gpu-t": 2.0, "gpu-t2": 0.9}


def _row(line, gpu, model, ips, data_model="", proxy=""):
    return {
        "source": f"test/bench@{COMMIT}:table.csv:{line}",
        "framework": "PyTorch",
        "framework_version": "test",
        "precision": "TF32",
        "xla": "off",
        "gpu_published": gpu,
        "catalog_gpu": f"GPU {gpu}",
        "variant_note": "same variant",
        "gpu_count": 1,
        "model": model,
        "data_model": data_model,
        "profile_proxy": proxy,
        "batch_size": 64,
        "image_size": 64,
        "images_per_s": ips,
        "notes": "",
    }


def synthetic_table(vgg_speedup=50.0) -> pd.DataFrame:
    rows = []
    for line, gpu in enumerate(["gpu-c", *TRUE], start=2):
        for a in range(4):
            ips = 100.0 * (1.0 if gpu == "gpu-c" else TRUE[gpu] * (1 + 0.02 * a))
            rows.append(_row(line, gpu, f"net{a}", ips, data_model=f"Net{a}"))
        vgg = 100.0 * (1.0 if gpu == "gpu-c" else vgg_speedup)
        rows.append(_row(line, gpu, "VGG16", vgg, proxy="Net1"))
    return validate_published(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def setup():
    from profet_core import make_dataset

    prof, lat = make_multi_gpu(n_arch=4)
    keep = ["gpu-a", "gpu-b", "gpu-c"]
    medians = median_table(
        make_dataset(prof[prof.instance.isin(keep)], lat[lat.instance.isin(keep)])
    )
    specs = spec_table()
    extra = specs.iloc[[0] * len(TENSOR)].copy()
    extra["instance"] = list(TENSOR)
    extra["gpu"] = [f"GPU {n}" for n in TENSOR]
    for col, i in (("fp32_tflops", 0), ("tensor_tflops_fp32_training", 1)):
        extra[col] = [v[i] for v in TENSOR.values()]
    extra["mem_bandwidth_gbs"] = [v[2] for v in TENSOR.values()]
    extra["arch"] = [v[3] for v in TENSOR.values()]
    specs = pd.concat([specs, extra], ignore_index=True)
    base = CrossInstanceModel(n_trees=20).fit_pairs(all_pairs(medians), specs)
    return base, medians, specs


def test_shipped_table_loads_with_provenance_and_catalog_gpus():
    table = load_published()
    assert len(table) >= 30
    assert table["source"].str.contains(r"@[0-9a-f]{40}:").all()
    mapped = set(table["catalog_gpu"]) - {""}
    # A catalog instance's GPU, or a published GPU of the reference sheet (no instance rents it)
    known = set(load_specs()["gpu"]) | set(gpu_table().index)
    assert mapped <= known, mapped - known
    assert held_out(table["model"]).sum() >= 2  # the VGG16 / Inception-v3 rows are there


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("source", "", r"'source' holds \[''\] on line\(s\) \[3\].*provenance"),
        ("source", "NVIDIA/DeepLearningExamples:README.md", r"'source'.*line\(s\) \[3\].*commit"),
        ("precision", "fp64", r"'precision' holds \['fp64'\] on line\(s\) \[3\]"),
        ("xla", "maybe", r"'xla' holds \['maybe'\]"),
        ("images_per_s", "-5", r"'images_per_s' holds \['-5'\] on line\(s\) \[3\]"),
        ("batch_size", "0", r"'batch_size'.*line\(s\) \[3\]"),
        ("profile_proxy", "Net2", r"exactly one of data_model / profile_proxy"),
    ],
    ids=[
        "no-source",
        "no-commit",
        "precision",
        "xla",
        "negative-ips",
        "zero-batch",
        "two-profiles",
    ],
)
def test_a_bad_row_is_refused_and_named(column, value, match):
    table = synthetic_table().astype(str)
    table.loc[1, column] = value
    with pytest.raises(ProfetValueError, match=match):
        validate_published(table)


def test_missing_column_and_missing_file_are_refused(tmp_path):
    with pytest.raises(ProfetValueError, match="lacks column"):
        validate_published(synthetic_table().drop(columns=["source"]))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_published(tmp_path / "nope.csv")
    assert list(COLUMNS)[0] == "source"


@pytest.mark.parametrize(
    ("name", "out"),
    [
        ("vgg16", True),
        ("VGG16", True),
        ("inception3", True),
        ("Inception-v3", True),
        ("InceptionV3", True),
        ("ResNet50", False),
        ("inception4", False),
        ("VGG19", False),
    ],
)
def test_held_out_names(name, out):
    assert bool(held_out([name])[0]) is out


def test_efficiency_is_learned_and_held_out_rows_never_fitted(setup):
    base, medians, specs = setup
    pairs = published_pairs(synthetic_table(), specs, medians)
    assert pairs["held_out"].sum() == 2 and len(pairs) == 10
    with pytest.raises(ProfetValueError, match="held-out"):
        fit_published(base, pairs)
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    other, _ = learn_published(base, medians, specs, table=synthetic_table(vgg_speedup=0.01))
    np.testing.assert_allclose(fitted.tensor_eta_, other.tensor_eta_)
    for gpu in ("GPU gpu-t", "GPU gpu-t2"):
        np.testing.assert_allclose(fitted.published_eta_[gpu], other.published_eta_[gpu])
    fit = pairs[~pairs["held_out"]]
    before = predict_speedups(base, fit)["cross"] / fit["speedup"]
    after = predict_speedups(fitted, fit)["cross"] / fit["speedup"]
    assert np.abs(np.log(before)).max() > np.log(1.5)  # the tensor peak alone misleads
    assert np.abs(np.log(after)).mean() < np.abs(np.log(before)).mean() / 2


def _pos(specs, instance):
    return int(np.flatnonzero(specs["instance"].to_numpy() == instance)[0])


def _gen_offset(fitted, instance):
    """What a GPU of ``instance``'s generation without pairs of its own takes on top of mu: the
    mean offset of its generation's published GPUs (GenT: gpu-t and gpu-t2), else 0."""
    gen = TENSOR[instance][3]
    own = [g for g in TENSOR if TENSOR[g][3] == gen and f"GPU {g}" in fitted.published_eta_]
    if not own:
        return np.zeros(2)
    return np.mean([fitted.published_eta_[f"GPU {g}"] - fitted.tensor_eta_ for g in own], axis=0)


@pytest.mark.parametrize("unseen", ["gpu-u", "gpu-t3"], ids=["hbm-like", "gddr-like"])
def test_an_unseen_tensor_gpu_moves_with_its_bandwidth_per_peak_flop(setup, unseen):
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    assert fitted.roof_ is not None and fitted.roof_.shape == (2, 2)
    # centred on the catalog's tensor-core GPUs: their mean z is 0
    tensor = np.flatnonzero(fitted.spec_tensor_)
    assert abs(np.mean(bandwidth_z(fitted, tensor))) < 1e-9
    z = bandwidth_z(fitted, [_pos(specs, unseen)])[0]
    np.testing.assert_allclose(
        fitted._eta([unseen])[0],
        fitted.tensor_eta_ + _gen_offset(fitted, unseen) + z_term(fitted, [z])[0],
    )
    back = CrossInstanceModel.from_state(*fitted.to_state())
    np.testing.assert_allclose(back._eta([unseen])[0], fitted._eta([unseen])[0])
    # artifacts made before the bandwidth term: the shared mu, no slope
    meta, arrays = fitted.to_state()
    meta["published"] = {
        k: v for k, v in meta["published"].items() if k in ("tensor_eta", "eta", "pairs")
    }
    np.testing.assert_allclose(
        CrossInstanceModel.from_state(meta, arrays)._eta([unseen])[0], fitted.tensor_eta_
    )


def _with_gpu(model, specs, name, fp32, tf32, bw):
    """``model`` predicting with one more catalog GPU of generation GenT (nothing published)."""
    row = specs[specs["instance"] == "gpu-t3"].copy()
    row["instance"], row["gpu"] = name, f"GPU {name}"
    row["fp32_tflops"], row["tensor_tflops_fp32_training"], row["mem_bandwidth_gbs"] = (
        fp32,
        tf32,
        bw,
    )
    return model.with_specs(pd.concat([specs, row], ignore_index=True))


def test_a_geforce_style_tensor_gpu_gets_the_shared_efficiency(setup):
    # TF32 rate = FP32 rate (GeForce RTX 3090 / 4090): its FP32 training runs on TF32 tensor
    # cores all the same; it fell back to the data-only model (efficiency 0) before
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    model = _with_gpu(fitted, specs, "gpu-g", 35.0, 35.0, 936.0)
    eta = model._eta(["gpu-g"])[0]
    z = bandwidth_z(model, [len(model.specs_) - 1])
    # a GenT GPU: the shared roofline plus GenT's published GPUs' mean offset
    np.testing.assert_allclose(
        eta, fitted.tensor_eta_ + _gen_offset(fitted, "gpu-t3") + z_term(fitted, z)[0]
    )
    assert np.all(np.abs(eta) > 1e-3)
    assert model.basis("gpu-g") == "specs only"


def test_the_shared_efficiency_is_a_roofline_in_bandwidth_per_flop(setup):
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())

    def eta(tf32, bw):
        return _with_gpu(fitted, specs, "gpu-x", min(tf32 / 2, 500.0), tf32, bw)._eta(["gpu-x"])[0]

    # plenty of bandwidth per FLOP: compute-bound, no more than a share exp(-a) of the peak
    # however much more bandwidth (a linear slope kept promising more)
    np.testing.assert_allclose(eta(0.4, 50000.0), eta(0.4, 25000.0), atol=1e-3)
    np.testing.assert_allclose(
        eta(0.4, 50000.0), fitted.roof_[0] + _gen_offset(fitted, "gpu-t3"), atol=1e-3
    )
    # starved of bandwidth: time per FLOP ~ peak / bandwidth, twice the bandwidth halves it
    np.testing.assert_allclose(eta(5000.0, 20.0) - eta(5000.0, 40.0), np.log(2), atol=0.02)


def test_artifacts_with_the_linear_slope_predict_as_they_were_fitted(setup):
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    meta, arrays = fitted.to_state()
    keep = ("tensor_eta", "tensor_beta", "bw_centre", "eta", "pairs")
    meta["published"] = {k: v for k, v in meta["published"].items() if k in keep}
    meta["published"]["tensor_beta"] = [0.3, -0.2]
    old = CrossInstanceModel.from_state(meta, arrays)
    assert old.roof_ is None
    z = bandwidth_z(old, [_pos(specs, "gpu-u")])[0]
    np.testing.assert_allclose(old._eta(["gpu-u"])[0], old.tensor_eta_ + np.array([0.3, -0.2]) * z)
    # their rule: a GPU whose TF32 rate is its FP32 rate had no tensor-core efficiency
    np.testing.assert_allclose(_with_gpu(old, specs, "gpu-g", 35.0, 35.0, 936.0)._eta(["gpu-g"]), 0)


def test_published_basis_per_gpu_unseen_gpu_and_state(setup):
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    assert fitted.basis("gpu-t") == "published (4)"
    assert fitted.pair_basis("gpu-a", "gpu-t2") == "published (4)"
    # Per GPU: GenT's two published GPUs differ (2.0x vs 0.9x); a third GenT GPU with nothing
    # published starts from the shared mu at its bandwidth per peak FLOP plus GenT's mean
    # offset (shared per architecture), GenU's (nothing published) from mu alone.
    assert not np.allclose(fitted._eta(["gpu-t"]), fitted._eta(["gpu-t2"]), atol=0.05)
    assert set(fitted.published_arch_) == {"GenT"}
    assert np.abs(_gen_offset(fitted, "gpu-t3")).max() > 1e-3
    for unseen in ("gpu-u", "gpu-t3"):
        assert fitted.basis(unseen) == "specs only"
        np.testing.assert_allclose(
            fitted._eta([unseen])[0],
            fitted.tensor_eta_
            + _gen_offset(fitted, unseen)
            + z_term(fitted, bandwidth_z(fitted, [_pos(specs, unseen)]))[0],
        )
    np.testing.assert_allclose(base._eta(["gpu-u"])[0], 0.0)
    back = CrossInstanceModel.from_state(*fitted.to_state())
    fam = np.abs(np.random.default_rng(0).normal(size=(3, 10))) * 100
    for t in ("gpu-t", "gpu-u"):
        np.testing.assert_allclose(
            back.predict_families("gpu-a", t, fam, 0.01)[0],
            fitted.predict_families("gpu-a", t, fam, 0.01)[0],
        )
    assert back.basis("gpu-t") == "published (4)"
    np.testing.assert_allclose(back._eta(["gpu-t3"]), fitted._eta(["gpu-t3"]))


def test_a_gpu_without_pairs_takes_its_architectures_offset_not_none(setup):
    """The H200 (specs only) got no offset while the H100 (published) had its own;
    now a GPU without pairs takes its architecture's published GPUs' mean offset. Artifacts
    made before (no ``arch`` in their state) and the switch off answer as before."""
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    v = {g: fitted.published_eta_[f"GPU {g}"] - fitted.tensor_eta_ for g in TRUE}
    np.testing.assert_allclose(fitted.published_arch_["GenT"], (v["gpu-t"] + v["gpu-t2"]) / 2)
    z = z_term(fitted, bandwidth_z(fitted, [_pos(specs, "gpu-t3")]))[0]
    before = fitted.tensor_eta_ + z
    np.testing.assert_allclose(fitted._eta(["gpu-t3"])[0], before + fitted.published_arch_["GenT"])
    meta, arrays = fitted.to_state()
    assert set(meta["published"]["arch"]) == {"GenT"}
    del meta["published"]["arch"]
    np.testing.assert_allclose(
        CrossInstanceModel.from_state(meta, arrays)._eta(["gpu-t3"])[0], before
    )
    off, _ = learn_published(
        copy.deepcopy(base).set_params(share_arch=False), medians, specs, table=synthetic_table()
    )
    assert off.published_arch_ == {}
    assert off.to_state()[0]["params"]["share_arch"] is False  # the choice travels with it
    np.testing.assert_allclose(off._eta(["gpu-t3"])[0], before)


def test_artifacts_with_generation_keys_still_read(setup):
    """Artifacts trained before the per-GPU terms keyed them by generation."""
    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    meta, arrays = fitted.to_state()
    meta["published"] = {
        "tensor_eta": [0.1, 0.2],
        "eta": {"GenT": [0.5, 0.6]},
        "pairs": {"GenT": 8},
    }
    old = CrossInstanceModel.from_state(meta, arrays)
    assert old.basis("gpu-t3") == "published (8)" and old.basis("gpu-u") == "specs only"
    np.testing.assert_allclose(old._eta(["gpu-t3"])[0], [0.5, 0.6])


def test_logo_intervals_per_basis_and_held_out_report(setup):
    base, medians, specs = setup
    fitted, reports = learn_published(base, medians, specs, {"specs only": 0.5}, synthetic_table())
    rows = reports["published_pairs.csv"]
    oof = rows[rows["fold"] == "gpu"]
    assert set(oof["left_out"]) == {"GPU gpu-t", "GPU gpu-t2"}
    assert set(oof["basis"]) == {"specs only"}  # a left-out GPU keeps only mu
    # Each basis' interval comes from its own folds: published from one (document, CNN, GPU)
    # group left out (the GPU keeps its other pairs), specs only from the whole generation left
    # out; the data's specs-only width (0.5) is replaced.
    gen = rows[(rows["fold"] == "specs only") & ~rows["held_out"]]
    assert set(gen["left_out"]) == {"GenT"} and set(gen["basis"]) == {"specs only"}
    err = np.sort(np.abs(np.log(gen["cross"] / gen["speedup"])).to_numpy())
    # ... times one factor that makes them hold with a source left out too
    scale = fitted.source_calibration_["fp32"]["scale"]
    assert fitted.interval_log_["specs only"] == pytest.approx(
        scale * err[int(np.ceil(0.8 * 8)) - 1]
    )
    pub = rows[(rows["fold"] == "published") & ~rows["held_out"]]
    assert len(pub) == 8 and set(pub["basis"]) == {"published"}
    assert 0 < fitted.interval_log_["published"] < fitted.interval_log_["specs only"]
    summary = reports["published.csv"]
    assert summary.loc[summary["scope"] == "all", "pairs"].item() == 8
    bases = summary[summary["scope"] == "basis"].set_index("group")
    # the report gives the width set with GPUs left out, before the source factor
    assert bases.loc["specs only", "half_width_log"] == pytest.approx(
        fitted.interval_log_["specs only"] / scale
    )
    held = summary[summary["scope"] == "held-out"]
    assert held["pairs"].sum() == 2 and held["group"].str.startswith("VGG16").all()
    direct = published_logo(base, published_pairs(synthetic_table(), specs, medians))
    np.testing.assert_allclose(direct["cross"], oof["cross"])


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("images_per_s", "1e-300", "images_per_s"),
        ("images_per_s", "1e300", "images_per_s"),
        ("gpu_count", "1.5", "gpu_count"),
        ("gpu_count", "100000", "gpu_count"),
        ("batch_size", "1e9", "batch_size"),
        ("image_size", "3.5", "image_size"),
    ],
    ids=["ips-1e-300", "ips-1e300", "gpus-fraction", "gpus-huge", "batch-huge", "image-fraction"],
)
def test_out_of_range_numbers_are_refused(column, value, match):
    # rows at 1e-300 images/s once predicted an A100 at 1e294 ms
    table = synthetic_table().astype(str)
    table.loc[1, column] = value
    with pytest.raises(ProfetValueError, match=match):
        validate_published(table)


def test_duplicated_rows_are_refused_naming_their_lines():
    # duplicated rows once counted twice in `published (n)`
    table = synthetic_table().astype(str)
    doubled = pd.concat([table, table.iloc[[1]]], ignore_index=True)
    with pytest.raises(ProfetValueError, match=r"repeats.*line"):
        validate_published(doubled)


@pytest.mark.parametrize(
    "data",
    [b"", b"\xff\xfe\x00bad", b"source\n" + b"x" * 10],
    ids=["empty", "not-utf8", "one-column"],
)
def test_unreadable_published_files_are_profet_errors(tmp_path, data):
    path = tmp_path / "published.csv"
    path.write_bytes(data)
    with pytest.raises(ProfetValueError, match="published table"):
        load_published(path)


def test_the_shipped_table_has_no_duplicates_and_reads():
    assert len(load_published()) > 10


@pytest.mark.parametrize(
    ("published", "catalog"),
    [
        ("A100 40GB PCIe", "NVIDIA A100 PCIe 40GB"),
        ("A100 80GB PCIe", "NVIDIA A100 PCIe 80GB"),
        ("A100 80GB SXM4", "NVIDIA A100 SXM4 80GB"),
        ("A100 80GB (DGX A100)", "NVIDIA A100 SXM4 80GB"),
        ("H100 80GB PCIe Gen5", "NVIDIA H100 PCIe 80GB"),
        ("RTX 6000 Ada", "NVIDIA RTX 6000 Ada"),
    ],
    ids=[
        "a100-pcie-40",
        "a100-pcie-80",
        "a100-sxm4-80",
        "dgx-a100-80",
        "h100-pcie",
        "rtx-6000-ada",
    ],
)
def test_a_published_gpu_the_catalog_rents_is_that_gpu_at_every_precision(published, catalog):
    # FP32/TF32 rows stood in for the catalog's A100 SXM4 40GB (other bandwidth and power) before
    # the catalog rented these variants; AMP and multi-GPU rows already named them
    t = load_published()
    rows = t[t["gpu_published"].str.contains(published, regex=False)]
    assert len(rows) and set(rows["catalog_gpu"]) == {catalog}
    assert set(rows["precision"]) - {"AMP"}


def test_the_note_names_the_architecture_a_specs_only_gpu_took(setup):
    from profet_core.crossgpu.spec._efficiency import arch_note

    base, medians, specs = setup
    fitted, _ = learn_published(base, medians, specs, table=synthetic_table())
    note = arch_note(fitted, ["gpu-t3", "gpu-u"])
    assert note is not None and "GenT from GPU gpu-t, GPU gpu-t2 (8 pairs)" in note
    assert "GenU" not in note
    # a GPU with its own pairs, or one of an architecture nobody published: no note
    assert arch_note(fitted, ["gpu-t", "gpu-u"]) is None
    assert arch_note(base, ["gpu-t3"]) is None


@pytest.mark.parametrize("mode", ["gpu", "none", "arch"], ids=["own-z", "no-credit", "arch-z"])
def test_the_compute_class_bandwidth_credit_follows_the_chosen_mode(setup, mode):
    """docs/family_roofline_rule.md: with ``none`` the compute class (convolutions,
    matrix products) of a tensor-core GPU gets no credit for bandwidth, with ``arch`` the credit
    of its architecture's mean bytes per FLOP; the memory class moves with the GPU's own in
    every mode; the mode travels with the state, and a state without it reads its own z."""
    base, medians, specs = setup
    variant = copy.deepcopy(base).set_params(compute_z=mode)
    fitted, _ = learn_published(variant, medians, specs, table=synthetic_table())
    slow, fast = (_with_gpu(fitted, specs, "gpu-x", 30.0, 200.0, bw) for bw in (1000.0, 2000.0))
    e_slow, e_fast = slow._eta(["gpu-x"])[0], fast._eta(["gpu-x"])[0]
    assert e_fast[1] < e_slow[1] - 1e-3  # the memory class: more bandwidth, less time
    if mode == "gpu":
        assert e_fast[0] < e_slow[0] - 1e-3
    else:
        np.testing.assert_allclose(e_fast[0], e_slow[0])
    if mode == "arch":
        mean_z = np.mean(bandwidth_z(fitted, [_pos(specs, g) for g in TRUE]))
        assert fitted.z_arch_ == pytest.approx({"GenT": mean_z})
        expect = fitted.tensor_eta_[0] + _gen_offset(fitted, "gpu-t3")[0]
        expect += z_term(fitted, [mean_z])[0][0]
        np.testing.assert_allclose(e_slow[0], expect)
    meta, arrays = fitted.to_state()
    assert meta["published"].get("compute_z", "gpu") == mode
    assert meta["params"]["compute_z"] == mode
    back = CrossInstanceModel.from_state(meta, arrays)
    np.testing.assert_allclose(back._eta(["gpu-t3", "gpu-u"]), fitted._eta(["gpu-t3", "gpu-u"]))
    meta["published"].pop("compute_z", None)
    old = CrossInstanceModel.from_state(meta, arrays)
    z = bandwidth_z(old, [_pos(specs, "gpu-t3")])
    np.testing.assert_allclose(
        old._eta(["gpu-t3"])[0],
        old.tensor_eta_ + _gen_offset(old, "gpu-t3") + z_term(old, z)[0],
    )


@pytest.mark.parametrize(
    "params", [{"compute_z": "own"}, {"share_arch": "no"}], ids=["compute-z", "share-arch"]
)
def test_a_model_choice_outside_its_values_is_refused_by_name(setup, params):
    base, medians, specs = setup
    pairs = published_pairs(synthetic_table(), specs, medians)
    with pytest.raises(ProfetValueError, match=next(iter(params))):
        fit_published(copy.deepcopy(base).set_params(**params), pairs[~pairs["held_out"]])
