"""The ``pretrained`` check shared by the model-zoo architectures."""
from __future__ import annotations

__all__ = ["check_pretrained"]


def check_pretrained(name: str, pretrained: bool) -> None:
    """Refuse ``pretrained=True``: the model zoo never downloads weights.

    Args:
        name: the model's name in :func:`gluon.model_zoo.vision.get_model`.
        pretrained: the caller's ``pretrained`` argument.

    Raises:
        ValueError: when ``pretrained`` is true, saying how to load local weights.
    """
    if pretrained:
        raise ValueError(
            f"{name}: pretrained=True is not supported; kbackend does not download "
            "pretrained weights. Build the model with pretrained=False and load the "
            "weights from a local file: net = gluon.model_zoo.vision.get_model("
            f"'{name}'); net.load_parameters(path) (a file written by save_parameters, "
            ".npz or HDF5, with structural names such as 'features.0.weight'; MXNet's "
            "binary .params files must be converted first).")
