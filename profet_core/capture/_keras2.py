"""The training data's convention on today's TensorFlow: Keras 2 (``tf-keras``), no XLA, FP32.

Importing this module imports TensorFlow and ``tf_keras``. Keras 3 emits other op types for the
same network (batch normalisation as moments ops, SGD as ``AssignSubVariableOp``) and turns XLA
on whenever a GPU is present; ``tf-keras`` is TF 2.5's tf.keras and emits the data's ops.
"""

from __future__ import annotations

import json

import tensorflow as tf
import tf_keras

from ..errors import ProfetValueError
from ..inputs._convention import CONVENTION, CONVENTION_PARTS, ZOO_VERSION

# Keras 3 config keys Keras 2 does not know (all optional; their defaults change nothing here).
_KERAS3_ONLY = {"optional", "quantization_config", "lora_rank", "lora_alpha", "synchronized"}
_KERAS3_ONLY |= {"build_config", "compile_config"}
#: Keras 3 layer options Keras 2 lacks, dropped only at these values, where they change nothing
#: (attention without a gate or window, layer normalisation without RMS scaling); ``seed``
#: (dropped at any value) only seeds a dropout's random mask.
_KERAS3_DEFAULTS = {"use_gate": False, "sliding_window": None, "rms_scaling": False}


def is_keras2(model) -> bool:
    """Whether ``model`` is a ``tf-keras`` (Keras 2) model."""
    return isinstance(model, tf_keras.Model)


def _history(node) -> list:
    """``[layer, node, tensor, {}]`` of every Keras 3 tensor a call node takes (Keras 2 form)."""
    found = []

    def walk(v):
        if isinstance(v, dict) and v.get("class_name") == "__keras_tensor__":
            found.append([*v["config"]["keras_history"], {}])
        elif isinstance(v, dict):
            for w in v.values():
                walk(w)
        elif isinstance(v, list):
            for w in v:
                walk(w)

    walk(node.get("args", node) if isinstance(node, dict) else node)
    return found


def _to_keras2_config(obj):
    """A Keras 3 model config rewritten in Keras 2's terms (layers' own options kept)."""
    if isinstance(obj, list):
        return [_to_keras2_config(v) for v in obj]
    if not isinstance(obj, dict):
        return obj
    if obj.get("class_name") in ("DTypePolicy", "FloatDTypePolicy") and "config" in obj:
        return obj["config"]["name"]
    if obj.get("module") == "keras.initializers":
        return obj["class_name"]  # weights are random either way; Keras 3 adds init options
    attention = obj.get("class_name") == "MultiHeadAttention"
    if attention and isinstance(obj.get("config"), dict):
        obj = {**obj, "config": _attention_config(obj["config"], obj.get("inbound_nodes"))}
    if "inbound_nodes" in obj:
        nodes = [_history(n) for n in obj["inbound_nodes"]]
        obj = {**obj, "inbound_nodes": [_attention_node(n) if attention else n for n in nodes]}
    out = {}
    for key, value in obj.items():
        if key in _KERAS3_ONLY or key == "seed":
            continue
        if key in _KERAS3_DEFAULTS and value == _KERAS3_DEFAULTS[key]:
            continue  # a value other than the default stays, and Keras 2 refuses the layer
        out["batch_input_shape" if key == "batch_shape" else key] = _to_keras2_config(value)
    return out


def _attention_node(history: list) -> list:
    """A MultiHeadAttention call ``(query, value[, key])`` in Keras 2's node form: the query as
    the input, value and key as call arguments."""
    if len(history) < 2:
        return history  # called with keywords only: Keras 2 refuses it, nothing is rebuilt
    extra = {"value": history[1][:3]} | ({"key": history[2][:3]} if len(history) > 2 else {})
    return [[*history[0][:3], extra]]


def _attention_config(config: dict, nodes) -> dict:
    """A Keras 3 MultiHeadAttention config with the input shapes Keras 2's ``from_config``
    builds its weights from: those of its first call's query, value and key (key: the value)."""
    args = nodes[0].get("args", []) if isinstance(nodes, list) and nodes else []
    shapes = [
        a["config"].get("shape")
        for a in args
        if isinstance(a, dict) and a.get("class_name") == "__keras_tensor__"
    ]
    shapes += [None] * (2 - len(shapes))
    key = shapes[2] if len(shapes) > 2 else shapes[1]
    return {"query_shape": shapes[0], "value_shape": shapes[1], "key_shape": key, **config}


def to_keras2(model):
    """Rebuild a Keras 3 model under Keras 2 from its config, or None where its layers do not
    allow it (custom layers, Keras-3-only options) or the rebuilt network differs in size."""
    if is_keras2(model):
        return model
    try:
        config = _to_keras2_config(json.loads(model.to_json()))
        rebuilt = tf_keras.models.model_from_json(json.dumps(config))
    except Exception:  # any layer Keras 2 cannot build means: no rebuild
        return None
    return rebuilt if rebuilt.count_params() == model.count_params() else None


def _policy_name(model) -> str:
    policy = getattr(model, "dtype_policy", None) or getattr(model, "_dtype_policy", None)
    return str(getattr(policy, "name", policy or "float32"))


_NOT_FLOAT = ("int", "uint", "bool", "string")


def check_model(model, xla: bool = True) -> None:
    """Refuse a model compiled with XLA or under a mixed-precision policy, saying how to fix it.

    Parameters
    ----------
    model : keras.Model
        Keras 2 or 3; compiled, where ``xla`` is checked.
    xla : bool
        Check ``jit_compile`` (Keras 3 resolves its default ``"auto"`` to True on a GPU). Off
        where the model is about to be recompiled with ``jit_compile=False``.

    Raises
    ------
    ProfetValueError
        One line naming the setting and the fix.
    """
    jit = getattr(model, "jit_compile", None) if xla else False
    if jit is None:
        jit = getattr(model, "_jit_compile", None)
    if jit is True:
        raise ProfetValueError(
            "the model is compiled with XLA (jit_compile=True), whose fused kernels the "
            "training data never saw: compile with jit_compile=False, or profile the "
            "architecture with `profet profile` and give your own step latency as the anchor "
            "latency"
        )
    policies = {_policy_name(model)} | {_policy_name(layer) for layer in model.layers}
    # An input layer of integer tokens has an integer dtype: no compute precision of its own.
    mixed = sorted(p for p in policies if p != "float32" and not p.startswith(_NOT_FLOAT))
    if mixed:
        raise ProfetValueError(
            f"the model runs under dtype policy {mixed[0]!r}; the training data is FP32: set "
            "the policy to 'float32' (keras.mixed_precision.set_global_policy('float32')) "
            "before building the model, or profile the architecture with `profet profile` "
            "and give your own step latency as the anchor latency"
        )


def tf32_state() -> str:
    """TF32 matmul/convolution state and whether this GPU has it (Ampere or later)."""
    enabled = tf.config.experimental.tensor_float_32_execution_enabled()
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return f"no GPU (TF32 {'enabled' if enabled else 'disabled'} in TensorFlow)"
    cc = tf.config.experimental.get_device_details(gpus[0]).get("compute_capability", (0, 0))
    has = tuple(cc) >= (8, 0)
    return f"{'enabled' if enabled else 'disabled'}; GPU {'has' if has else 'lacks'} TF32"


def convention_record(model, differs=()) -> dict:
    """The convention a profile was taken in (JSON-ready), with what differs from the data's.

    Parameters
    ----------
    model : keras.Model
        The profiled model (Keras 2 or 3).
    differs : sequence of str
        Parts of the convention this run did not follow (empty: conformant).

    Returns
    -------
    dict
        ``convention`` (:data:`CONVENTION`, or ``"non-conformant"`` when anything differs),
        ``zoo``, ``framework``, ``keras``, ``optimizer``, ``xla``, ``precision``, ``tf32``,
        ``differs``.
    """
    keras2 = is_keras2(model)
    optimizer = getattr(model, "optimizer", None)
    if keras2:
        flavour = f"tf-keras {tf_keras.__version__} (Keras 2)"
    else:
        import keras

        flavour = f"keras {keras.__version__} (Keras 3)"
    return {
        **CONVENTION_PARTS,
        "convention": "non-conformant" if differs else CONVENTION,
        "zoo": ZOO_VERSION,
        "framework": f"tensorflow {tf.__version__}",
        "keras": flavour,
        "optimizer": f"{type(optimizer).__module__}.{type(optimizer).__name__}",
        "xla": bool(getattr(model, "jit_compile", False) or False),
        "precision": _policy_name(model),
        "tf32": tf32_state(),
        "differs": list(differs),
    }


def keras3_differences(model) -> list[str]:
    """What differs from the convention when a Keras 3 model is trained as it is."""
    import keras

    out = [
        f"Keras 3 ({keras.__version__}) instead of Keras 2: batch normalisation runs as moments "
        "ops and the optimizer as AssignSubVariableOp, op types the training data lacks"
    ]
    opt = getattr(model, "optimizer", None)
    if opt is not None and type(opt).__name__ != "SGD":
        out.append(f"optimizer {type(opt).__name__} instead of SGD")
    return out
