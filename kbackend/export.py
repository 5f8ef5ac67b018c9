"""Keras backend ``export``: what ``keras.export.ExportArchive`` is on kbackend.

Keras writes its export formats with another framework's machinery: a TensorFlow
SavedModel (``model.export(path)``, ``format="tf_saved_model"``, and
``keras.export.ExportArchive``) is built from TensorFlow functions, ONNX through
tf2onnx / jax2tf / torch.onnx, LiteRT through TensorFlow or PyTorch, OpenVINO through
one of those. kbackend computes with ``core`` and depends on none of them, so it
cannot write these formats; asking for one raises a ``ValueError`` that names the
format and says what to use instead:

- ``model.save("model.keras")`` and ``keras.saving.load_model`` (the native Keras
  format: architecture, weights and optimizer state) work with kbackend;
- ``model.save_weights("model.weights.h5")`` keeps the weights alone;
- to serve a SavedModel, load the ``.keras`` file under ``KERAS_BACKEND=tensorflow``
  (or jax/torch) and export it there.
"""
from __future__ import annotations

ALTERNATIVES = (
    "Save the model in the native Keras format instead (model.save('model.keras'), "
    "reloaded with keras.saving.load_model on any backend, kbackend included), or "
    "load that file under KERAS_BACKEND=tensorflow, jax or torch and export it there.")


def unsupported_format_error(fmt: str) -> ValueError:
    """The error raised when an export format needs a framework kbackend lacks.

    Args:
        fmt: the format asked for, e.g. ``"tf_saved_model"``.

    Returns:
        a ValueError naming the format, why it is unsupported and the alternatives.
    """
    return ValueError(
        f"Export format {fmt!r} is not supported by the kbackend backend: writing it "
        f"needs TensorFlow (SavedModel, LiteRT), tf2onnx/jax2tf/torch.onnx (ONNX) or "
        f"OpenVINO's converters, which trace that framework's own tensors, while "
        f"kbackend computes with its own engine. {ALTERNATIVES}")


class KBackendExportArchive:
    """``keras.export.ExportArchive(format="saved_model")`` on kbackend.

    A TensorFlow SavedModel cannot be written without TensorFlow tensors and
    functions, so creating the archive (which ``model.export(path)`` does first)
    raises at once, before any endpoint is traced.

    Raises:
        ValueError: always, naming the ``tf_saved_model`` format and the
            alternatives (``model.save("model.keras")``).
    """

    def __init__(self):
        raise unsupported_format_error("tf_saved_model")
