"""What the model-zoo architectures share: the ``features``-then-``output`` forward of
every model, the local pretrained-weights lookup, the model builder of every ``get_*`` function,
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


def check_pretrained(name: str, pretrained: bool, root: str | None = None) -> str | None:
    """The local weights file for ``pretrained=True`` (nothing is ever downloaded).

    Args:
        name: the model's name in :func:`gluon.model_zoo.vision.get_model`.
        pretrained: the caller's ``pretrained`` argument.
        root: where to look (default ``$MXNET_HOME/models`` or ``~/.mxnet/models``).

    Returns:
        None when ``pretrained`` is false, else the file's path
        (:func:`gluon.model_zoo.model_store.get_model_file`).

    Raises:
        FileNotFoundError: no weights file; the message lists where it looked.
    """
    if not pretrained:
        return None
    from ..model_store import get_model_file

    return get_model_file(name, root=root)


def build_model(name: str, cls, *args, pretrained: bool = False, ctx=None,
                root: str | None = None, **kwargs):
    """The model ``name``: ``cls(*args, **kwargs)``, with the pretrained weights loaded
    from a local file when ``pretrained`` (as MXNet's model zoo, without downloading).

    Args:
        name: the model's name in :func:`gluon.model_zoo.vision.get_model`.
        cls: the model's class.
        *args: the architecture's arguments (depths, channels, version, ...).
        pretrained: load the weights from ``{root}/{name}-{short sha1}.params`` (MXNet's
            file, checked against its SHA-1) or ``{root}/{name}.params``.
        ctx: the context(s) of the loaded weights (default cpu(0)).
        root: the weights' directory (default ``$MXNET_HOME/models``, else
            ``~/.mxnet/models``).
        **kwargs: the caller's options (``classes``, ``prefix``, ``params``, ...).

    Returns:
        The model: not initialized, or initialized with the weights if ``pretrained``.

    Raises:
        FileNotFoundError: ``pretrained`` and no file (the message lists where it looked).
        ValueError: the file does not fit the model (names, shapes), naming the parameter.
    """
    path = check_pretrained(name, pretrained, root)
    net = cls(*args, **kwargs)
    if path is not None:
        net.load_parameters(path, ctx=ctx)
    return net


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
        f"        **kwargs: see :func:`{getter.__name__}` ({options}, ``pretrained``,\n"
        f"            ``ctx``, ``root``, ``prefix``, ...).\n\n"
        f"    Returns:\n"
        f"        The model (with its local pretrained weights if ``pretrained``).\n"
        f"    ")
    return constructor
