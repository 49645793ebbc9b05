"""The training data's convention: unseen op types refused or warned about at predict time
(library and CLI), and dataset folders of different conventions or zoos never joined."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from profet_core import load_artifacts
from profet_core.cli._main import main
from profet_core.errors import ProfetValueError
from profet_core.inputs._convention import (
    CONVENTION,
    CONVENTION_FILE,
    UNRECORDED,
    folder_convention,
    write_folder_convention,
)
from profet_core.inputs._dataset import combine_datasets, load_dataset
from profet_core.inputs._sanity import profile_checks
from tests._utils import ROOT, make_synthetic

EXAMPLE = ROOT / "examples" / "profile_g3s.json"
VOCAB = {"Device_Conv2D", "Device_Relu", "Device_IDLE", "Host_IDLE"}


def _profile(unknown_share: float) -> pd.DataFrame:
    """1,000 us of device busy time, ``unknown_share`` of it in two op types XLA emits."""
    known = 1000.0 * (1 - unknown_share)
    row = {"Device_Conv2D": known * 0.8, "Device_Relu": known * 0.2, "Device_IDLE": 50.0}
    row |= {"Device_fusion": 1000.0 * unknown_share * 0.7}
    row |= {"Device_convolution": 1000.0 * unknown_share * 0.3}
    return pd.DataFrame([row])


@pytest.mark.parametrize(
    "share, level, text",
    [(0.01, None, None), (0.05, "warning", "5% of the device time"), (0.2, "error", "Refused")],
    ids=["1pct-silent", "5pct-warned", "20pct-refused"],
)
def test_unknown_op_share_is_warned_from_2_and_refused_from_20_percent(share, level, text):
    found = [
        f for f in profile_checks(_profile(share), vocabulary=VOCAB) if f.code == "unknown_ops"
    ]
    assert [f.level for f in found] == ([level] if level else [])
    if level:
        assert text in found[0].message and "fusion" in found[0].message
        assert "XLA" in found[0].message and "profet profile" in found[0].message


def test_other_framework_is_named_as_the_likely_cause():
    profile = pd.DataFrame([{"Device_aten::convolution_backward": 900.0, "Device_Conv2D": 100.0}])
    (finding,) = profile_checks(profile, vocabulary=VOCAB)
    assert finding.level == "error" and "aten::convolution_backward 90%" in finding.message
    assert "another framework" in finding.message and "XLA" not in finding.message


def _xla_json(tmp_path, share: float) -> Path:
    """The shipped example profile with ``share`` of its device busy time moved to XLA kernels."""
    doc = json.loads(EXAMPLE.read_text())
    ops = doc["ops"]
    busy = sum(v for k, v in ops.items() if k.startswith("Device_") and k != "Device_IDLE")
    for k in ops:
        if k.startswith("Device_") and k != "Device_IDLE":
            ops[k] *= 1 - share
    ops["Device_fusion"] = busy * share * 0.6
    ops["Device_convolution"] = busy * share * 0.4
    doc.pop("batch_latency_s")
    path = tmp_path / f"xla{share}.json"
    path.write_text(json.dumps(doc))
    return path


def test_predictor_refuses_an_xla_profile(tmp_path):
    from profet_core import read_profile

    # beyond the trained models' vocabulary the spec family model reads what its rules name
    # (XLA's "convolution" as convolutions); most of the time in unnamed fusions is refused
    with pytest.raises(ProfetValueError, match=r"60% of the device time .*fusion 60%.* XLA"):
        load_artifacts().predict("g3s.xlarge", read_profile(_xla_json(tmp_path, 1.0)))


def test_cli_refuses_an_xla_profile_in_one_line(tmp_path, capsys):
    assert main(["predict", "--profile", str(_xla_json(tmp_path, 1.0))]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("profet: error:") and "jit_compile" in err[0]


def test_cli_warns_with_the_share(tmp_path, capsys):
    assert main(["predict", "--profile", str(_xla_json(tmp_path, 0.05))]) == 0
    err = capsys.readouterr().err
    assert "5% of the device time is in op types PROFET's models never saw" in err


def _folder(path: Path, convention=None, collect=False) -> Path:
    prof, lat = make_synthetic(n_arch=2, n_exp=1)
    path.mkdir()
    prof.to_csv(path / "profiles.csv", index=False)
    lat.to_csv(path / "latencies.csv", index=False)
    if collect:
        (path / "status.csv").write_text("exp\n")
    if convention:
        (path / CONVENTION_FILE).write_text(json.dumps({"convention": convention, "zoo": "z9"}))
    return path


def test_folder_convention_defaults_and_file(tmp_path):
    assert folder_convention(_folder(tmp_path / "shared")) == (CONVENTION, CONVENTION)
    assert folder_convention(_folder(tmp_path / "old", collect=True)) == (UNRECORDED, UNRECORDED)
    assert folder_convention(_folder(tmp_path / "x", "mine")) == ("mine", "z9")
    new = _folder(tmp_path / "new", collect=True)
    write_folder_convention(new, {"made_by": "test"})
    assert folder_convention(new) == (CONVENTION, CONVENTION)
    (new / CONVENTION_FILE).write_text("[1, 2]")
    with pytest.raises(ProfetValueError, match="text 'convention' and 'zoo'"):
        folder_convention(new)


@pytest.mark.parametrize(
    "other, kw",
    [("old", {"collect": True}), ("keras3", {"convention": "keras3-xla"})],
    ids=["unrecorded-collect", "other-convention"],
)
def test_combine_refuses_folders_of_different_conventions(tmp_path, other, kw):
    shared = load_dataset(_folder(tmp_path / "shared"))
    odd = load_dataset(_folder(tmp_path / other, **kw))
    with pytest.raises(ProfetValueError, match=rf"cannot join folder .*shared.* with .*{other}"):
        combine_datasets([shared, odd])
    same = _folder(tmp_path / "same", collect=True)
    write_folder_convention(same)
    assert combine_datasets([shared, load_dataset(same)]).convention == CONVENTION


@pytest.mark.parametrize("command", ["train", "add-instance"], ids=["train", "add-instance"])
def test_cli_refuses_to_join_in_one_line(tmp_path, capsys, command):
    a, b = _folder(tmp_path / "a"), _folder(tmp_path / "b", "keras3-xla")
    argv = ["--data", str(a), "--data", str(b)]
    argv = (
        ["train", *argv, "--out", str(tmp_path / "o")]
        if command == "train"
        else ["add-instance", "--instance", "gpu-a", *argv]
    )
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "convention 'profet-2021'" in err[0] and "'keras3-xla'" in err[0]


def test_a_profile_outside_the_convention_is_warned_about(tmp_path, capsys):
    doc = json.loads(EXAMPLE.read_text())
    doc["convention_differs"] = "Keras 3 (3.15.1) instead of Keras 2"
    path = tmp_path / "k3.json"
    path.write_text(json.dumps(doc))
    assert main(["predict", "--profile", str(path)]) == 0
    err = capsys.readouterr().err
    assert "was not taken in PROFET's convention (Keras 3 (3.15.1) instead of Keras 2)" in err
    assert main(["predict", "--profile", str(EXAMPLE)]) == 0
    assert "convention" not in capsys.readouterr().err
