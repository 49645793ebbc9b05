"""Build or load the model ``profet profile`` trains, and tell its kind (TensorFlow imported only
when a model file runs or loads): a zoo name (CNN or text), a ``.py`` file's ``build_model`` or a
``.keras`` file; a text model's input is one integer token sequence per example.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from ..errors import ProfetFileNotFoundError, ProfetValueError
from . import _textzoo, _zoo

VOCAB_SIZE = _textzoo.VOCAB_SIZE


def _load_py(path: Path, input_shape, classes):
    spec = importlib.util.spec_from_file_location(f"profet_user_model_{path.stem}", path)
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except SystemExit as exc:  # sys.exit() in user code: exit 0 with no profile, once
        raise ProfetValueError(
            f"model file {str(path)!r} exits while loading (SystemExit({_short(exc.code)})); a "
            "model file must define build_model(input_shape, classes) and not exit"
        ) from None
    except Exception as exc:  # user code: any error means the file does not load
        raise ProfetValueError(f"model file {str(path)!r} does not load: {exc!r}") from None
    if not callable(getattr(module, "build_model", None)):
        raise ProfetValueError(
            f"model file {str(path)!r} defines no build_model(input_shape, classes)"
        )
    try:
        return module.build_model(tuple(input_shape), int(classes))
    except SystemExit as exc:
        raise ProfetValueError(
            f"build_model in {str(path)!r} exits (SystemExit({_short(exc.code)})); it must "
            "return a Keras model"
        ) from None
    except Exception as exc:  # user code
        raise ProfetValueError(f"build_model in {str(path)!r} raised {exc!r}") from None


def _short(value) -> str:
    """A user value for a one-line message: repr, one line, cut short."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else text[:80] + "..."


def _load_keras_file(path: Path, spec: str):
    """A ``.keras`` file under Keras 2 where it loads there (saved by Keras 2, or a Keras 3 file
    Keras 2 reads), else under Keras 3."""
    from ._check import check_keras_archive

    check_keras_archive(path)  # member sizes, before Keras reads any
    import keras
    import tf_keras

    try:
        return tf_keras.models.load_model(path, compile=False)
    except Exception:  # not readable by Keras 2: Keras 3 below, and to_keras2 after it
        pass
    try:
        return keras.models.load_model(path, compile=False)
    except Exception as exc:  # keras raises many types for a bad file
        raise ProfetValueError(f"model file {spec!r} does not load: {exc!r}") from None


def load_model(
    spec: str, input_size: int, classes: int, model_kind: str | None = None, vocab_size=None
):
    """Build or load the model named by ``spec``, under Keras 2 where possible.

    Parameters
    ----------
    spec : str
        A saved ``.keras`` file, a ``.py`` file defining ``build_model(input_shape, classes)``, or
        a zoo name (:func:`profet_core.capture._zoo.zoo_names`).
    input_size, classes : int
        Square RGB input size (px), or a text model's sequence length (tokens), and classes; a
        ``.keras`` model must already take that input.
    model_kind : {"cnn", "text"}, optional
        Default: the zoo name's kind; a ``.py`` file's ``build_model`` gets ``(px, px, 3)``
        unless ``"text"`` (then ``(seq_len,)``); a ``.keras`` file's input decides.
    vocab_size : int, optional
        A text-zoo model's vocabulary (default ``_textzoo.VOCAB_SIZE``).

    Returns
    -------
    tf_keras.Model or keras.Model
        A Keras 3 model is rebuilt under Keras 2 from its config; it stays Keras 3 only where
        its layers do not allow that (``profile_model`` then records what differs).
    """
    path = Path(spec)
    kind = model_kind or _zoo.zoo_kind(spec)
    if _zoo.zoo_kind(spec) == "text":
        _same_kind(spec, "text", kind)
        return _textzoo.build_text_model(spec, input_size, classes, vocab_size or VOCAB_SIZE)
    if spec in _zoo.ZOO:
        _same_kind(spec, "cnn", kind)
        return _zoo.build_zoo_model(spec, input_size, classes)
    if path.suffix not in (".keras", ".py"):
        raise ProfetValueError(
            f"model {spec!r} is neither a .keras file, a .py file nor a zoo name "
            f"({', '.join(_zoo.zoo_names())})"
        )
    if not path.is_file():
        raise ProfetFileNotFoundError(f"model file {spec!r} does not exist")
    if path.suffix == ".py":
        model = _load_py(path, input_shape(kind or "cnn", input_size), classes)
    else:
        model = _load_keras_file(path, spec)
    import keras  # after the model file ran: one that exits is refused without TensorFlow
    import tf_keras

    from ._keras2 import to_keras2

    if not isinstance(model, (keras.Model, tf_keras.Model)):
        raise ProfetValueError(f"model {spec!r} gave {type(model).__name__}, not a keras.Model")
    check_input(model, spec, kind or model_kind_of(model), input_size)
    return to_keras2(model) or model


def _same_kind(spec: str, kind: str, given: str | None) -> None:
    if given not in (None, kind):
        raise ProfetValueError(f"zoo model {spec!r} is a {kind} model, not --model-kind {given}")


def input_shape(kind: str, input_size: int) -> tuple:
    """The input shape a model of ``kind`` takes (no batch axis): ``(px, px, 3)`` or
    ``(seq_len,)``."""
    size = int(input_size)
    return (size,) if kind == "text" else (size, size, 3)


def check_input(model, spec: str, kind: str, input_size: int) -> None:
    """Refuse a model whose input is not ``input_shape(kind, input_size)``, naming both."""
    want = (None, *input_shape(kind, input_size))
    got = model.input_shape
    if isinstance(got, list) or tuple(got) != want:
        unit = "tokens" if kind == "text" else "px"
        hint = (
            "; a model of token sequences is profiled with --model-kind text"
            if kind != "text" and not isinstance(got, list) and len(got) == 2
            else ""
        )
        raise ProfetValueError(
            f"model {spec!r} takes input {_short(got)}; a {kind} model at --input-size "
            f"{input_size} ({unit}) needs {want}{hint}"
        )


def model_kind_of(model) -> str:
    """``"text"`` for a model of one integer token sequence per example (an embedding reads
    it), else ``"cnn"``."""
    shape = model.input_shape
    if isinstance(shape, list) or len(shape) != 2:
        return "cnn"
    dtype = str(getattr(model.inputs[0], "dtype", "")) if getattr(model, "inputs", None) else ""
    return "text" if "int" in dtype or embedding_sizes(model) else "cnn"


def embedding_sizes(model) -> list[int]:
    """``input_dim`` of every embedding layer in ``model`` (nested ones too; Keras 2 or 3)."""
    layers = getattr(model, "_flatten_layers", None)
    found = layers(include_self=False) if layers else getattr(model, "layers", [])
    return [
        int(layer.input_dim)
        for layer in found
        if type(layer).__name__ == "Embedding" and hasattr(layer, "input_dim")
    ]


def token_range(model, vocab_size: int | None, seq_len: int) -> int:
    """Tokens are drawn below this.

    ``vocab_size`` where given; it may not exceed the model's largest embedding (its tokens
    would index beyond every table: an error on a CPU, and on a GPU a gather that returns
    zeros). By default the smallest embedding longer than the sequence (a table of positions
    has ``seq_len`` rows: tokens below that would leave a vocabulary of a few hundred words
    and make the sparse update of the token table cheaper than on text), else the smallest
    embedding, else ``_textzoo.VOCAB_SIZE``.
    """
    sizes = embedding_sizes(model)
    if vocab_size is None:
        return min([s for s in sizes if s > int(seq_len)] or sizes, default=VOCAB_SIZE)
    if sizes and int(vocab_size) > max(sizes):
        raise ProfetValueError(
            f"vocabulary size {vocab_size:,} is larger than every embedding of the model "
            f"(the largest: {max(sizes):,} words): its tokens would index beyond them; give "
            f"--vocab-size at most {max(sizes):,}"
        )
    return int(vocab_size)


def kind_hint(spec: str) -> str | None:
    """A spec's kind before it is loaded: the zoo's, ``"cnn"`` for a ``.py`` file (its
    ``build_model`` is told the input shape), None for a ``.keras`` file (its input says)."""
    return _zoo.zoo_kind(spec) or (None if Path(spec).suffix == ".keras" else "cnn")
