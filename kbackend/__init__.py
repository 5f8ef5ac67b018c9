"""kbackend: a Keras 3 backend on top of ``core``.

Choose it the ways Keras documents for its own backends::

    KERAS_BACKEND=kbackend python train.py      # the shell variable

    import os
    os.environ["KERAS_BACKEND"] = "kbackend"    # in the script, before `import keras`
    import keras

    # ~/.keras/keras.json (or $KERAS_HOME/keras.json): {"backend": "kbackend", ...}

or import this package before Keras (``import kbackend; import keras``).
``keras.config.backend()`` then returns ``'kbackend'``.

How the backend gets registered
-------------------------------
Keras 3.15 chooses among its built-in backends only: ``keras.src.backend`` (and
``keras.src.layers.layer``, ``keras.src.models.model``,
``keras.src.optimizers.optimizer``, ``keras.src.export.saved_model``, which pick a
backend-specific base class) run an ``if/elif`` chain on ``keras.config.backend()``
that fails for any other name; so does ``export_onnx`` in ``keras.src.export.onnx``
(the hook's branch there calls :mod:`kbackend.onnx_export`).

- The package installs ``kbackend_hook.pth`` in site-packages (hatchling's
  ``force-include``, in regular and editable wheels alike). Python runs it at start-up:
  it puts a one-method watcher on ``sys.meta_path`` and imports nothing.
- When Keras is imported, the top-level module ``kbackend_hook`` decides as Keras
  does: ``KERAS_BACKEND`` in ``os.environ`` at that moment, else the ``backend`` of
  ``keras.json`` in ``KERAS_HOME`` (default ``~/.keras``). For any other backend it
  steps aside and Keras runs unchanged (this package and ``core`` stay unimported).
- For ``"kbackend"`` it checks the installed Keras against the tested range
  (``>=3.15,<3.16``; otherwise an ImportError naming both) and loads the modules
  above from Keras' own source with one more branch, ``elif backend() ==
  "kbackend":``, inserted before the ``openvino`` one (the patched bytecode is cached
  beside Keras' own). That branch star-imports :mod:`kbackend.backend` (the
  equivalent of a Keras backend package's ``__init__``: ``core``, ``numpy``, ``nn``,
  ... and the names Keras takes from them) and the base classes of
  :mod:`kbackend.layer`, :mod:`kbackend.trainer`, :mod:`kbackend.optimizer` and
  :mod:`kbackend.export`. Keras' ``DynamicBackend`` (used by the preprocessing
  layers) is taught the name too.
- ``import kbackend`` before ``import keras`` works without the .pth file: it sets
  ``KERAS_BACKEND=kbackend`` when the variable is unset or empty (an explicit other
  value is left alone, with a warning) and installs the same finder. Importing it
  after Keras cannot switch Keras' backend; it warns.

This package's ``__init__`` imports nothing from ``core`` or Keras, so it is safe
to import before Keras; the backend modules load when Keras asks for them.

Status: every function of Keras 3.15's backend interface is implemented
(``core``, ``numpy``, ``nn``, ``math``, ``linalg``, ``image``, ``random``, ``rnn``,
the trainer, fused optimizers, ``distribution_lib`` over core's devices);
``jit_compile`` runs each step as a compiled core graph (:mod:`kbackend.jit`).
Keras' own test suite runs on it through ``tests/conformance/run_keras_suite.py``.

Export: ``kbackend.save_mxnet_model(model, prefix, epoch=0)`` writes a Keras model as
an MXNet 1.9 checkpoint (:mod:`kbackend.mxnet_export`), and ``model.export(path,
format="onnx")`` writes ONNX (:mod:`kbackend.onnx_export`); see docs/keras_export.md.
"""
from __future__ import annotations

import os
import sys
import warnings

import kbackend_hook

__all__: list = ["save_mxnet_model"]


def __getattr__(name: str):
    # save_mxnet_model needs Keras and core: imported when first used, not here.
    if name == "save_mxnet_model":
        from .mxnet_export import save_mxnet_model

        return save_mxnet_model
    raise AttributeError(f"module 'kbackend' has no attribute {name!r}")


def _register() -> None:
    if "keras.src.backend" in sys.modules:  # Keras has chosen already
        from keras.src.backend.config import backend

        if backend() != kbackend_hook.BACKEND_NAME:
            warnings.warn(
                f"kbackend was imported after keras, which already uses the "
                f"{backend()!r} backend; import kbackend before keras (or set "
                f"KERAS_BACKEND=kbackend) to use kbackend.", RuntimeWarning,
                stacklevel=3)
        return
    requested = os.environ.get("KERAS_BACKEND")
    if requested and requested != kbackend_hook.BACKEND_NAME:
        warnings.warn(
            f"kbackend was imported but KERAS_BACKEND={requested!r} is set; Keras "
            f"will use {requested!r}. Unset it or set KERAS_BACKEND=kbackend to use "
            f"kbackend.", RuntimeWarning, stacklevel=3)
        return
    os.environ["KERAS_BACKEND"] = kbackend_hook.BACKEND_NAME
    kbackend_hook.install()


_register()
