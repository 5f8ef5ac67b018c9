"""What Keras' backend package takes from kbackend (``from kbackend.backend import *``).

The equivalent of ``keras/src/backend/<name>/__init__.py`` in Keras' own backends;
the import hook (``kbackend_hook``) makes ``keras.src.backend`` star-import it when
``KERAS_BACKEND=kbackend``. It is imported from Keras' backend package only, never
from ``kbackend/__init__.py``, so that ``import kbackend`` stays free of Keras.
"""
from keras.src.backend.common.name_scope import name_scope

from kbackend import core, image, linalg, math, nn, numpy, random
from kbackend.core import (
    IS_THREAD_SAFE,
    SUPPORTS_COMPLEX_DTYPES,
    SUPPORTS_RAGGED_TENSORS,
    SUPPORTS_SPARSE_TENSORS,
    Variable,
    cast,
    compute_output_spec,
    cond,
    convert_to_numpy,
    convert_to_tensor,
    device_scope,
    is_tensor,
    random_seed_dtype,
    shape,
    vectorized_map,
)
from kbackend.rnn import bidirectional_gru, bidirectional_lstm, cudnn_ok, gru, lstm, rnn

__all__ = [
    "IS_THREAD_SAFE",
    "SUPPORTS_COMPLEX_DTYPES",
    "SUPPORTS_RAGGED_TENSORS",
    "SUPPORTS_SPARSE_TENSORS",
    "Variable",
    "bidirectional_gru",
    "bidirectional_lstm",
    "cast",
    "compute_output_spec",
    "cond",
    "convert_to_numpy",
    "convert_to_tensor",
    "core",
    "cudnn_ok",
    "device_scope",
    "gru",
    "image",
    "is_tensor",
    "linalg",
    "lstm",
    "math",
    "name_scope",
    "nn",
    "numpy",
    "random",
    "random_seed_dtype",
    "rnn",
    "shape",
    "vectorized_map",
]
