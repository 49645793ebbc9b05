"""One collect workload in its own process: ``python -m profet_core.capture._worker ...``.

Writes a JSON result file: ``{"ok": true, "profile": {op: us}, "meta": {...}}`` or
``{"ok": false, "error_kind": "oom"|"invalid"|"exception", "message": ...}``. A crash that
leaves no result is classified by the parent (``crash``, ``timeout``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path


def classify(exc: BaseException) -> str:
    """``oom`` for out-of-memory errors, ``invalid`` for bad input, else ``exception``."""
    from ..errors import ProfetError

    text = f"{type(exc).__name__} {exc}".lower()
    # User model errors reach here wrapped in a ProfetError that names the original type.
    oom = ("resourceexhausted", "out of memory", " oom", "memoryerror")
    if isinstance(exc, MemoryError) or any(s in text for s in oom):
        return "oom"
    return "invalid" if isinstance(exc, ProfetError) else "exception"


def _write(path: Path, obj: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m profet_core.capture._worker")
    p.add_argument("--model", required=True)
    p.add_argument("--input-size", type=int, required=True)
    p.add_argument("--batch-size", type=int, required=True)
    p.add_argument("--classes", type=int)
    p.add_argument("--steps-per-epoch", type=int)
    p.add_argument("--latency-steps", type=int, default=50)
    p.add_argument("--instance")
    p.add_argument("--model-kind", choices=["cnn", "text"])
    p.add_argument("--vocab-size", type=int)
    p.add_argument("--optimizer")
    p.add_argument("--result", required=True, type=Path)
    args = p.parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        from ._profile import PROFILE_OPTIONS, profile_model

        options = {name: getattr(args, name) for name in PROFILE_OPTIONS}
        profile, meta = profile_model(args.model, args.batch_size, args.input_size, **options)
    except Exception as exc:  # every failure is recorded by the parent, never dropped
        _write(args.result, {"ok": False, "error_kind": classify(exc), "message": str(exc)[:500]})
        return 3
    _write(args.result, {"ok": True, "profile": profile.iloc[0].to_dict(), "meta": meta.to_dict()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
