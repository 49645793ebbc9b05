"""The text zoo: Keras 2 text classifiers trained on integer token sequences made here.

PROFET's authors profiled text models too (a SimpleRNN, an LSTM, a bidirectional LSTM and a small
BERT, batch 128, on Reuters, IMDB and bAbI); their generator for them is not public (the
original repository's ``data_generation/workload`` builds only the CNNs), so these are the
standard Keras text classifiers of the kinds their rows show: a token embedding, then a recurrent
layer or a Transformer encoder, then a softmax over the classes. Names start with ``Text`` so that
a row is never read as an image network's.

The data is Reuters-like and made locally with numpy (nothing is downloaded): 8,982 training and
2,246 validation sequences (``keras.datasets.reuters`` with ``test_split=0.2``), 46 classes,
10,000-word vocabulary, 200 tokens per sequence by default. For a text model PROFET's "input
size" is the sequence length in tokens (``--input-size``; ``seq_len`` in the metadata and the
collected rows, with ``model_kind: "text"``). Keras is imported only inside the builders.
"""

from __future__ import annotations

from ..errors import ProfetValueError

#: The text zoo's version, recorded in collect folders (``convention.json``'s ``text_zoo``).
TEXT_ZOO_VERSION = "profet-text-1"
#: Training and validation sequences, classes: Reuters' newswire split as Keras loads it.
TEXT_TRAIN, TEXT_TEST, TEXT_CLASSES = 8_982, 2_246, 46
#: Default sequence length (tokens) and vocabulary (words), as Reuters/IMDB are preprocessed.
SEQ_LEN, VOCAB_SIZE = 200, 10_000
#: ``profet collect``'s sequence lengths for text models (its "input sizes"), and ``--quick``'s.
SEQ_LENS = (100, 200, 400)
QUICK_SEQ_LENS = (200,)
#: Token embedding width and recurrent units (a bidirectional layer: half per direction).
EMBED_DIM, UNITS = 128, 128
#: Transformer encoder: width, heads, feed-forward width, layers.
TRANSFORMER = {"dim": 64, "heads": 2, "ff": 128, "layers": 2}
#: What ``profet profile``/``collect`` accept for a text model.
MIN_SEQ_LEN, MAX_SEQ_LEN = 2, 16_384
MIN_VOCAB, MAX_VOCAB = 2, 1_000_000


def _keras2():
    import tf_keras

    return tf_keras


def _recurrent(make_layer):
    """Embedding -> ``make_layer(L)`` -> softmax: the authors' RNN/LSTM/BiLSTM shape."""

    def build(seq_len, classes, vocab_size):
        k = _keras2()
        L = k.layers
        return k.Sequential(
            [
                L.InputLayer(input_shape=(int(seq_len),), dtype="int32"),
                L.Embedding(int(vocab_size), EMBED_DIM),
                make_layer(L),
                L.Dense(int(classes), activation="softmax"),
            ]
        )

    return build


def _position_embedding_layer():
    """Token embedding plus a learned position embedding (Keras 2 has no such layer)."""
    import tensorflow as tf

    k = _keras2()

    class TokenAndPositionEmbedding(k.layers.Layer):
        def __init__(self, seq_len, vocab_size, dim, **kwargs):
            super().__init__(**kwargs)
            self.tokens = k.layers.Embedding(vocab_size, dim)
            self.positions = k.layers.Embedding(seq_len, dim)

        def call(self, x):
            return self.tokens(x) + self.positions(tf.range(tf.shape(x)[-1]))

    return TokenAndPositionEmbedding


def transformer(seq_len, classes, vocab_size):
    """Keras' text-classification Transformer: token + position embedding, ``layers`` post-norm
    encoder blocks (multi-head self-attention, feed-forward), average pooling, softmax."""
    k = _keras2()
    L = k.layers
    dim, heads, ff = TRANSFORMER["dim"], TRANSFORMER["heads"], TRANSFORMER["ff"]
    inputs = k.Input(shape=(int(seq_len),), dtype="int32")
    x = _position_embedding_layer()(int(seq_len), int(vocab_size), dim)(inputs)
    for _ in range(TRANSFORMER["layers"]):
        attention = L.MultiHeadAttention(num_heads=heads, key_dim=dim // heads)(x, x)
        x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(attention))
        hidden = L.Dense(dim)(L.Dense(ff, activation="relu")(x))
        x = L.LayerNormalization(epsilon=1e-6)(x + L.Dropout(0.1)(hidden))
    x = L.Dropout(0.1)(L.GlobalAveragePooling1D()(x))
    return k.Model(inputs, L.Dense(int(classes), activation="softmax")(x))


#: Name -> builder(seq_len, classes, vocab_size). The LSTM, GRU and bidirectional LSTM keep
#: Keras' cuDNN conditions (default activations, no recurrent dropout, not unrolled): on a GPU
#: they run ``CudnnRNN*`` kernels; ``TextLSTMDropout``'s recurrent dropout keeps Keras on its
#: generic loop (per-step ``MatMul``/``Mul`` and dropout masks), as the authors' LSTM row shows.
TEXT_ZOO = {
    "TextRNN": _recurrent(lambda L: L.SimpleRNN(UNITS)),
    "TextLSTM": _recurrent(lambda L: L.LSTM(UNITS)),
    "TextLSTMDropout": _recurrent(lambda L: L.LSTM(UNITS, dropout=0.2, recurrent_dropout=0.2)),
    "TextGRU": _recurrent(lambda L: L.GRU(UNITS)),
    "TextBiLSTM": _recurrent(lambda L: L.Bidirectional(L.LSTM(UNITS // 2))),
    "TextTransformer": transformer,
}


def build_text_model(name: str, seq_len: int, classes: int, vocab_size: int = VOCAB_SIZE):
    """Build text-zoo model ``name`` for ``seq_len``-token sequences of ``vocab_size`` words."""
    if name not in TEXT_ZOO:
        raise ProfetValueError(f"unknown text zoo model {name!r}; known: {sorted(TEXT_ZOO)}")
    return TEXT_ZOO[name](int(seq_len), int(classes), int(vocab_size))


def text_steps_per_epoch(batch_size: int, cap: int | None = None) -> int:
    """Steps of one epoch over the Reuters-sized training set (at least 2), optionally capped."""
    steps = max(2, -(-TEXT_TRAIN // int(batch_size)))
    return max(2, min(steps, cap)) if cap else steps


def synthetic_tokens(n: int, seq_len: int, classes: int, vocab_size: int, seed: int = 0):
    """``n`` random token sequences (int32, shape (n, seq_len)) and one-hot labels (float32).

    Tokens are drawn from 1..vocab_size-1: 0 is the padding index, so a model that masks
    padding (``mask_zero=True``) sees every sequence at its full length, as the step's cost
    assumes; a random index within the vocabulary is all an embedding's gather cares about.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.integers(1, max(2, int(vocab_size)), (int(n), int(seq_len)), dtype=np.int32)
    y = np.zeros((int(n), int(classes)), dtype=np.float32)
    y[np.arange(int(n)), rng.integers(0, classes, int(n))] = 1.0
    return x, y
