"""What the model-zoo architectures share: the ``features``-then-``output`` forward of
every model, the ``pretrained`` check, the model builder of every ``get_*`` function,
the depth lookup of the families and the public one-line constructors
(``resnet18_v1()``, ``vgg11_bn()``, ...)."""
from __future__ import annotations

from ...block import HybridBlock

__all__ = ["FeaturesOutput", "build_model", "check_pretrained", "spec_entry", "variant"]


class FeaturesOutput(HybridBlock):
    """A model of two children run in turn: ``features``, then the classifier
    ``output`` (the subclass creates both)."""

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


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


def build_model(name: str, cls, *args, pretrained: bool = False, **kwargs):
    """The model ``name`` with random weights: ``cls(*args, **kwargs)``, after
    :func:`check_pretrained`.

    Args:
        name: the model's name in :func:`gluon.model_zoo.vision.get_model`.
        cls: the model's class.
        *args: the architecture's arguments (depths, channels, version, ...).
        pretrained: must be False.
        **kwargs: the caller's options (``classes``, ``prefix``, ``params``, ...).

    Returns:
        The model, not initialized.

    Raises:
        ValueError: for ``pretrained=True``.
    """
    check_pretrained(name, pretrained)
    return cls(*args, **kwargs)


def spec_entry(func: str, spec: dict, num_layers):
    """The architecture of depth ``num_layers`` in a family's ``spec`` table.

    Args:
        func: the calling function's name, for the error message.
        spec: the family's table, depth to architecture.
        num_layers: the requested depth.

    Returns:
        ``spec[num_layers]``.

    Raises:
        ValueError: for a depth not in ``spec``, listing the valid ones.
    """
    if num_layers not in spec:
        raise ValueError(f"{func}: invalid number of layers {num_layers!r}; options are "
                         f"{sorted(spec)}")
    return spec[num_layers]


def variant(getter, *args, name: str, summary: str, options: str = "``classes``",
            **fixed):
    """A public constructor of one model of a family: ``name(**kwargs)`` returns
    ``getter(*args, **kwargs)`` with ``fixed`` overriding ``kwargs``.

    Args:
        getter: the family's ``get_*`` function.
        *args: its leading arguments for this model (version, depth, width, ...).
        name: the constructor's name, as exported by the family's module.
        summary: the first line of its docstring.
        options: the family's options listed in the docstring.
        **fixed: arguments this model always has (``batch_norm=True``).

    Returns:
        The constructor, a function of ``**kwargs`` documented like the family's others.
    """
    def constructor(**kwargs):
        kwargs.update(fixed)
        return getter(*args, **kwargs)

    constructor.__name__ = constructor.__qualname__ = name
    constructor.__module__ = getter.__module__
    constructor.__doc__ = (
        f"{summary}\n\n"
        f"    Args:\n"
        f"        **kwargs: see :func:`{getter.__name__}` ({options}, ``pretrained`` (must\n"
        f"            be False), ``prefix``, ...).\n\n"
        f"    Returns:\n"
        f"        The model, not initialized.\n"
        f"    ")
    return constructor
