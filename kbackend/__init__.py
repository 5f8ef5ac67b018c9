"""kbackend: a Keras 3 backend on top of ``core``.

Using it::

    KERAS_BACKEND=kbackend python train.py      # the environment variable alone
    # or, in Python, before the first import of keras:
    import kbackend
    import keras
    keras.config.backend()                       # 'kbackend'

How the backend gets registered
-------------------------------
Keras 3.15 chooses among its built-in backends only: ``keras.src.backend`` (and
``keras.src.layers.layer``, ``keras.src.models.model``,
``keras.src.export.saved_model``, which pick a backend-specific base class) run an
``if/elif`` chain on ``keras.config.backend()`` that fails for any other name.

- The package installs ``kbackend_hook.pth`` in site-packages (a regular install
  through the ``build_py`` step of ``setup.py``, ``pip install -e .`` through its
  ``editable_wheel`` step). Python runs its one line at start-up: unless
  ``KERAS_BACKEND=kbackend`` is set it does nothing at all; if it is, it imports the
  small top-level module ``kbackend_hook`` and puts its meta-path finder first on
  ``sys.meta_path`` (importing neither ``core`` nor this package).
- When Keras is imported, the finder checks the installed Keras version against
  the tested range (``>=3.15,<3.16``; otherwise an ImportError naming both) and loads
  the modules above and ``keras.src.optimizers.optimizer`` (whose base class becomes
  :class:`kbackend.optimizer.KBackendOptimizer`) from Keras' own source with one more
  branch,
  ``elif backend() == "kbackend":``, inserted before the ``openvino`` one. That
  branch star-imports :mod:`kbackend.backend` (the equivalent of a Keras backend
  package's ``__init__``: ``core``, ``numpy``, ``nn``, ... and the names Keras
  takes from them) and the base classes of :mod:`kbackend.layer`,
  :mod:`kbackend.trainer` and :mod:`kbackend.export`. ``keras.config.backend()``
  then returns ``"kbackend"``. Keras' ``DynamicBackend`` (used by the preprocessing
  layers) is taught the name too.
- ``import kbackend`` before ``import keras`` does the same without the .pth file:
  it sets ``KERAS_BACKEND=kbackend`` when the variable is unset or empty (an explicit
  other value is left alone, with a warning) and installs the finder. Importing it
  after Keras cannot switch Keras' backend; it warns.

This package's ``__init__`` imports nothing from ``core`` or Keras, so it is safe
to import before Keras; the backend modules load when Keras asks for them.

Status: every function of Keras 3.15's backend interface is implemented
(``core``, ``numpy``, ``nn``, ``math``, ``linalg``, ``image``, ``random``, ``rnn``,
the trainer, fused optimizers, ``distribution_lib`` over core's devices);
``jit_compile`` runs steps eagerly until core's graph mode exists. Keras' own test
suite runs on it through ``tests/conformance/run_keras_suite.py``.
"""
from __future__ import annotations

import os
import sys
import warnings

import kbackend_hook

__all__: list = []


def _register() -> None:
    requested = os.environ.get("KERAS_BACKEND")
    if not requested:
        os.environ["KERAS_BACKEND"] = kbackend_hook.BACKEND_NAME
    elif requested != kbackend_hook.BACKEND_NAME:
        warnings.warn(
            f"kbackend was imported but KERAS_BACKEND={requested!r} is set; Keras "
            f"will use {requested!r}. Unset it or set KERAS_BACKEND=kbackend to use "
            f"kbackend.", RuntimeWarning, stacklevel=3)
        return
    if "keras.src.backend" in sys.modules:
        from keras.src.backend.config import backend

        if backend() != kbackend_hook.BACKEND_NAME:
            warnings.warn(
                f"kbackend was imported after keras, which already uses the "
                f"{backend()!r} backend; import kbackend before keras (or set "
                f"KERAS_BACKEND=kbackend) to use kbackend.", RuntimeWarning,
                stacklevel=3)
        return
    kbackend_hook.install()


_register()
