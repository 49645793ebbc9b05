"""Small Kineto traces built in code, and the committed real ones (``data/torch_traces``)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

DATA = Path(__file__).parent / "data" / "torch_traces"
MAIN = (1, 1)  # pid, tid of the host thread
TRAINING = {
    "resnet50_v100_train": DATA / "resnet50_v100_train.pt.trace.json.gz",
    "resnet50_a100_ddp": DATA / "resnet50_a100_ddp_rank0.pt.trace.json.gz",
    "resnet50_v100_torch19": DATA / "resnet50_v100_torch19.pt.trace.json.gz",
    "recsys_a100_16ranks": DATA / "recsys_a100_16ranks.pt.trace.json.gz",
}


def load(path: Path) -> dict:
    return json.loads(gzip.decompress(path.read_bytes()))


def dump(trace: dict, gz: bool = False) -> bytes:
    data = json.dumps(trace).encode()
    return gzip.compress(data, mtime=0) if gz else data


class Builder:
    """Events of a made-up trace: frames on the host, launches linked to GPU events."""

    def __init__(self, gpu="NVIDIA H100 80GB HBM3", sms=132, memory=85520809984, world=None):
        self.events: list = []
        self.corr = 0
        props = [{"id": 0, "name": gpu, "totalGlobalMem": memory, "numSms": sms}]
        self.meta = {"deviceProperties": [dict(p, computeMajor=9, computeMinor=0) for p in props]}
        if world:
            self.meta["distributedInfo"] = {"backend": "nccl", "rank": 0, "world_size": world}

    def frame(self, name, ts, dur, cat="cpu_op", thread=MAIN, **args):
        event = {"ph": "X", "cat": cat, "name": name, "pid": thread[0], "tid": thread[1]}
        self.events.append({**event, "ts": ts, "dur": dur, "args": args})
        return self

    def step(self, n, ts, dur):
        return self.frame(f"ProfilerStep#{n}", ts, dur, cat="user_annotation")

    def launch(self, ts, kernel, start, dur, cat="kernel", thread=MAIN, call="cudaLaunchKernel"):
        """A runtime call at ``ts`` (1 us) and the GPU event it launched at ``start``."""
        self.corr += 1
        self.frame(call, ts, 1, cat="cuda_runtime", thread=thread, correlation=self.corr)
        gpu = {"ph": "X", "cat": cat, "name": kernel, "pid": 0, "tid": 7, "ts": start}
        self.events.append({**gpu, "dur": dur, "args": {"correlation": self.corr, "device": 0}})
        return self

    def trace(self) -> dict:
        return {**self.meta, "traceEvents": list(self.events)}


def training_step(b: Builder, n: int, t0: float) -> Builder:
    """One step of a made-up CNN at host time ``t0`` (1000 us long): a convolution and an
    addmm forward, their backward nodes, an SGD step; GPU events from ``t0 + 10``."""
    b.step(n, t0, 1000)
    b.frame("aten::conv2d", t0 + 10, 50).frame("aten::convolution", t0 + 11, 48)
    b.frame("aten::cudnn_convolution", t0 + 12, 40).launch(t0 + 20, "conv_fwd", t0 + 100, 100)
    b.frame("aten::linear", t0 + 70, 30).frame("aten::addmm", t0 + 71, 20)
    b.launch(t0 + 75, "ampere_sgemm_64x64_nn", t0 + 200, 50)
    b.frame("autograd::engine::evaluate_function: AddmmBackward0", t0 + 300, 40)
    b.frame("AddmmBackward0", t0 + 301, 38).frame("aten::mm", t0 + 302, 30)
    b.launch(t0 + 305, "ampere_sgemm_64x64_tn", t0 + 310, 60)
    b.frame("autograd::engine::evaluate_function: ConvolutionBackward0", t0 + 400, 100)
    b.frame("ConvolutionBackward0", t0 + 401, 98).frame("aten::convolution_backward", t0 + 402, 90)
    b.launch(t0 + 410, "conv_dgrad", t0 + 420, 120).launch(t0 + 420, "conv_wgrad", t0 + 540, 80)
    b.frame("Optimizer.step#SGD.step", t0 + 600, 100, cat="user_annotation")
    b.frame("aten::_foreach_add_", t0 + 610, 50)
    b.launch(t0 + 620, "multi_tensor_apply_kernel", t0 + 700, 20)
    return b
