"""Keras backend ``export``: what ``keras.export.ExportArchive`` is on kbackend.

Keras writes most of its export formats with another framework's machinery: a
TensorFlow SavedModel (``model.export(path)``, ``format="tf_saved_model"``, and
``keras.export.ExportArchive``) is built from TensorFlow functions, LiteRT through
TensorFlow or PyTorch, OpenVINO through one of those. kbackend computes with ``core``
and depends on none of them.

- ``format="onnx"`` works: the import hook gives Keras' ``export_onnx`` a kbackend
  branch, which traces the model's inference pass into a core graph and writes it with
  ``core.onnx.export_graph`` (:mod:`kbackend.onnx_export`; dynamic ``None`` axes, input
  names as on Keras' other backends).
- ``kbackend.save_mxnet_model(model, prefix)`` writes an MXNet 1.9 checkpoint
  (:mod:`kbackend.mxnet_export`).
- A SavedModel (the only format Keras asks the backend for) raises
  :class:`UnsupportedExportFormat`, a ``NotImplementedError`` that is also a
  ``ValueError``, naming the format and what to use instead; ``openvino``, ``litert``
  and ``torch`` fail in Keras' own code with an error naming the format.

What to use instead of a SavedModel:

- ``model.export(path, format="onnx")`` for serving (onnxruntime, or
  ``kbackend-serve``);
- ``model.save("model.keras")`` and ``keras.saving.load_model`` (the native Keras
  format: architecture, weights and optimizer state) work with kbackend;
- ``model.save_weights("model.weights.h5")`` keeps the weights alone;
- to serve a SavedModel, load the ``.keras`` file under ``KERAS_BACKEND=tensorflow``
  (or jax/torch) and export it there.
"""
from __future__ import annotations

ALTERNATIVES = (
    "Export it as ONNX (model.export(path, format='onnx')), or save the model in the "
    "native Keras format instead (model.save('model.keras'), "
    "reloaded with keras.saving.load_model on any backend, kbackend included), or "
    "load that file under KERAS_BACKEND=tensorflow, jax or torch and export it there.")


class UnsupportedExportFormat(NotImplementedError, ValueError):
    """An export format kbackend cannot write (a NotImplementedError and a ValueError).

    Keras' own tests expect a NotImplementedError from a backend without SavedModel
    export; Keras raises ValueError for other format/backend mismatches. Either
    ``except`` clause catches this error.
    """


def unsupported_format_error(fmt: str, keras_message: str = "") -> UnsupportedExportFormat:
    """The error raised when an export format needs a framework kbackend lacks.

    Args:
        fmt: the format asked for, e.g. ``"tf_saved_model"``.
        keras_message: the sentence Keras uses for this case, put first.

    Returns:
        an UnsupportedExportFormat naming the format, why it is unsupported and the
        alternatives.
    """
    return UnsupportedExportFormat(
        f"{keras_message}{' ' if keras_message else ''}Export format {fmt!r} is not "
        f"supported by the kbackend backend: writing it needs TensorFlow (SavedModel, "
        f"LiteRT) or OpenVINO's converters, which trace that framework's own tensors, "
        f"while kbackend computes with its own engine. {ALTERNATIVES}")


class KBackendExportArchive:
    """``keras.export.ExportArchive(format="saved_model")`` on kbackend.

    A TensorFlow SavedModel cannot be written without TensorFlow tensors and
    functions, so creating the archive (which ``model.export(path)`` does first)
    raises at once, before any endpoint is traced.

    Raises:
        UnsupportedExportFormat: always (a NotImplementedError and a ValueError),
            naming the ``tf_saved_model`` format and the alternatives
            (``model.save("model.keras")``).
    """

    def __init__(self):
        raise unsupported_format_error(
            "tf_saved_model",
            "`export_saved_model` only currently supports the tensorflow, jax and "
            "torch backends.")
