"""The profile document ``profet profile`` writes names its instance:
without TensorFlow, from a fixed profile and metadata."""

import json

import pandas as pd
import pytest

from profet_core import read_profile
from profet_core.capture._profile import ProfileMeta, write_profile


def _meta(instance, latency=0.113, differs=()):
    return ProfileMeta(
        model="LeNet5", batch_size=32, input_size=128, classes=10, steps_per_epoch=20,
        traced_steps=(30, 31), steps_traced=2, batch_latency_s=latency, latency_steps=20,
        epoch_latency_s=2.0, instance=instance, gpu_name=None, gpu_memory_bytes=None,
        tensorflow_version="x", keras_version="x", profiler_version="x",
        convention={"differs": list(differs)},
    )  # fmt: skip


PROFILE = pd.DataFrame([{"Device_Conv2D": 1500.0, "Host_IDLE": 20.0}])


def test_the_document_names_the_instance_and_is_read_back_with_it(tmp_path):
    path, meta_path = write_profile(PROFILE, _meta("g4dn.xlarge"), tmp_path / "p.json")
    doc = json.loads(path.read_text())
    assert doc["instance"] == "g4dn.xlarge" and doc["ops"] == PROFILE.iloc[0].to_dict()
    assert (doc["steps"], doc["batch_size"], doc["input_size"]) == (2, 32, 128)
    assert doc["batch_latency_s"] == pytest.approx(0.113)
    assert json.loads(meta_path.read_text())["instance"] == "g4dn.xlarge"
    back = read_profile(path)
    assert back["instance"].tolist() == ["g4dn.xlarge"]
    assert back["Device_Conv2D"].tolist() == [1500.0]


@pytest.mark.parametrize(
    ("instance", "latency", "differs", "absent"),
    [(None, 0.113, (), "instance"), ("g3s.xlarge", float("nan"), ("Keras 3",), "batch_latency_s")],
    ids=["no-instance", "no-latency"],
)
def test_what_is_unknown_is_left_out(tmp_path, instance, latency, differs, absent):
    path, _ = write_profile(PROFILE, _meta(instance, latency, differs), tmp_path / "p.json")
    doc = json.loads(path.read_text())
    assert absent not in doc
    assert ("convention_differs" in doc) == bool(differs)
    read_profile(path)  # the readers accept it
