"""A small SkyPilot catalog folder the tests write themselves (rows of SkyPilot's public catalog,
v8, AWS us-east-1 and Lambda, as in ../shared/data/skypilot-catalog), and the task YAMLs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SKY = importlib.util.find_spec("sky") is not None
#: Skip a test that runs SkyPilot where it is not installed. ``find_spec``, not an import: importing
#: ``sky`` writes ``~/.sky`` into the home folder of whoever runs the tests; the plans import it
#: in a child process with a home of their own.
needs_sky = pytest.mark.skipif(not SKY, reason="needs SkyPilot: pip install 'profet[sky]'")

AWS = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone,Arch
g4dn.xlarge,T4,1.0,4.0,16.0,,0.526,0.215800,us-east-1,use1-az1,x86_64
g4dn.metal,T4,8.0,96.0,384.0,,7.824,3.729200,us-east-1,use1-az1,x86_64
g5.xlarge,A10G,1.0,4.0,16.0,,1.006,0.450700,us-east-1,use1-az1,x86_64
g5.48xlarge,A10G,8.0,192.0,768.0,,16.288,4.540800,us-east-1,use1-az1,x86_64
g6.xlarge,L4,1.0,4.0,16.0,,0.8048,0.401100,us-east-1,use1-az1,x86_64
g6.48xlarge,L4,8.0,192.0,768.0,,13.3504,3.728900,us-east-1,use1-az1,x86_64
p4d.24xlarge,A100,8.0,96.0,1152.0,,21.957642,2.465500,us-east-1,use1-az1,x86_64
p5.4xlarge,H100,1.0,16.0,256.0,,6.88,,us-east-1,use1-az1,x86_64
p5.48xlarge,H100,8.0,192.0,2048.0,,55.04,10.239700,us-east-1,use1-az1,x86_64
g4ad.xlarge,Radeon Pro V520,1.0,4.0,16.0,,0.37853,0.133200,us-east-1,use1-az1,x86_64
"""
LAMBDA = """InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
gpu_1x_a100_sxm4,A100,1.0,30.0,200.0,1.99,us-east-1,,
gpu_8x_a100,A100,8.0,124.0,1800.0,15.92,us-east-1,,
"""
ACCELERATORS = """AcceleratorName,Clouds
A100,"['AWS', 'Azure', 'GCP', 'Lambda']"
A10G,['AWS']
H100,"['AWS', 'Azure', 'GCP', 'Lambda']"
L4,"['AWS', 'GCP']"
Radeon Pro V520,['AWS']
T4,"['AWS', 'Azure', 'GCP']"
"""
#: The candidates of the issue's test: T4, A10G, L4, A100 and H100, on 1 and 8 GPUs.
CANDIDATES = [f"{gpu}:{n}" for gpu in ("T4", "A10G", "L4", "A100", "H100") for n in (1, 8)]


def write_catalog(folder: Path) -> Path:
    """``folder`` laid out as ``~/.sky/catalogs/v8``: aws, lambda and common."""
    for cloud, text, name in (
        ("aws", AWS, "vms.csv"),
        ("lambda", LAMBDA, "vms.csv"),
        ("common", ACCELERATORS, "accelerators.csv"),
    ):
        (folder / cloud).mkdir(parents=True, exist_ok=True)
        (folder / cloud / name).write_text(text)
    return folder


def task_yaml(path: Path, candidates=CANDIDATES, extra: str = "") -> Path:
    """A task whose resources are ``any_of`` the candidates (``T4:1`` ...)."""
    lines = "".join(f"    - accelerators: {c}\n" for c in candidates)
    path.write_text(f"name: train\n{extra}resources:\n  any_of:\n{lines}run: python train.py\n")
    return path


def heavy_profile():
    """The heaviest example profile (0.78 s a step on the anchor, g3s.xlarge): the one where a
    faster GPU costs less per run than the cheapest per hour."""
    from profet_core import read_profile

    return read_profile(ROOT / "examples" / "profiles_g3s.csv").iloc[[2]].reset_index(drop=True)
