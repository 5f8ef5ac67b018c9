"""Convolution, pooling and padding layers (MXNet Gluon 1.9's ``gluon.nn.conv_layers``).

``Conv1D``/``Conv2D``/``Conv3D`` and their transposes, ``MaxPool*``/``AvgPool*``,
``GlobalMaxPool*``/``GlobalAvgPool*`` and ``ReflectionPad2D``, all HybridBlocks in
MXNet 1.x's ``hybrid_forward(self, F, x, ...)`` style over ``F.Convolution``,
``F.Deconvolution``, ``F.Pooling`` and ``F.pad``.

Layouts: channels first (``'NCW'``, ``'NCHW'``, ``'NCDHW'``, MXNet's default) or channels
last (``'NWC'``, ``'NHWC'``, ``'NDHWC'``). Weights follow ``core.ops.nn.conv``:
``Convolution`` ``(channels, in_channels / groups, *kernel)`` channels first and
``(channels, *kernel, in_channels / groups)`` channels last; the transposed
convolutions ``(in_channels, channels / groups, *kernel)`` and ``(in_channels, *kernel,
channels / groups)``. With ``in_channels=0`` the weight's input dimension is taken from
the first input (deferred initialization).

Example:
    >>> from core import nd
    >>> from gluon import nn
    >>> conv = nn.Conv2D(16, kernel_size=3, padding=1)
    >>> conv
    Conv2D(None -> 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))
    >>> conv.initialize()
    >>> conv(nd.zeros((2, 3, 8, 8))).shape, conv.weight.shape
    ((2, 16, 8, 8), (16, 3, 3, 3))
    >>> nn.MaxPool2D()(nd.zeros((2, 3, 8, 8))).shape
    (2, 3, 4, 4)
"""
from __future__ import annotations

import numbers

from ..block import HybridBlock
from .basic_layers import _add_bias_and_activation, _bias_act, _fuses_bias_act

__all__ = [
    "AvgPool1D",
    "AvgPool2D",
    "AvgPool3D",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "GlobalAvgPool1D",
    "GlobalAvgPool2D",
    "GlobalAvgPool3D",
    "GlobalMaxPool1D",
    "GlobalMaxPool2D",
    "GlobalMaxPool3D",
    "MaxPool1D",
    "MaxPool2D",
    "MaxPool3D",
    "ReflectionPad2D",
]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(name: str, what: str, value, n: int) -> tuple:
    """``value`` (an int or a sequence of ``n`` ints) as a tuple of ``n`` ints."""
    if isinstance(value, numbers.Integral):
        return (int(value),) * n
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a tuple of {n} ints, got "
                        f"{value!r}") from None
    if len(out) != n:
        raise ValueError(f"{name}: {what} must be an int or a tuple of {n} ints, got "
                         f"{value!r}")
    return out


def _check_layout(name: str, layout: str, n: int) -> None:
    if layout not in _LAYOUTS[n]:
        raise ValueError(f"{name}: layout must be one of {_LAYOUTS[n]}, got {layout!r}")


class _Conv(HybridBlock):
    """The n-d convolution layers' shared implementation (``Convolution`` or
    ``Deconvolution``)."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", op_name="Convolution", adj=None, prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        n = len(kernel_size)
        if groups < 1 or channels % groups or in_channels % groups:
            raise ValueError(f"{name}: groups={groups} must be positive and divide channels="
                             f"{channels} and in_channels={in_channels}")
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._groups = groups
            self._op_name = op_name
            self._kwargs = {
                "kernel": tuple(kernel_size), "stride": _tuple(name, "strides", strides, n),
                "dilate": _tuple(name, "dilation", dilation, n),
                "pad": _tuple(name, "padding", padding, n), "num_filter": channels,
                "num_group": groups, "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = adj
            self.weight = self.params.get("weight", shape=self._weight_shape(in_channels),
                                          init=weight_initializer, allow_deferred_init=True)
            _add_bias_and_activation(self, channels, use_bias, bias_initializer, activation)

    @property
    def _channels_last(self) -> bool:
        return self._kwargs["layout"].endswith("C")

    def _weight_shape(self, in_channels: int) -> tuple:
        k = self._kwargs["kernel"]
        if self._op_name == "Deconvolution":
            first, inner = in_channels, self._channels // self._groups
        else:
            first, inner = self._channels, in_channels // self._groups
        if self._channels_last:
            return (first, *k, inner)
        return (first, inner, *k)

    def infer_shape(self, x, *args) -> None:
        layout = self._kwargs["layout"]
        if x.ndim != len(layout):
            raise ValueError(f"{type(self).__name__}: expected {len(layout)}-D input in "
                             f"layout {layout}, got shape {tuple(x.shape)}")
        c = int(x.shape[layout.find("C")])
        if c % self._groups:
            raise ValueError(f"{type(self).__name__}: the input's {c} channels (shape "
                             f"{tuple(x.shape)}, layout {layout}) are not divisible by "
                             f"groups={self._groups}")
        self.weight.shape = self._weight_shape(c)

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if _fuses_bias_act(F, self, bias):
            out = op(x, weight, **{**self._kwargs, "no_bias": True})
            return _bias_act(out, bias, self.act, -1 if self._channels_last else 1)
        if bias is None:
            out = op(x, weight, **self._kwargs)
        else:
            out = op(x, weight, bias, **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self) -> str:
        return "conv"

    def _in_out(self) -> tuple:
        """(input channels or None, output channels) as shown by ``repr``."""
        shape = self.weight.shape
        if self._op_name == "Deconvolution":
            return shape[0] if shape[0] else None, self._channels
        inner = shape[-1] if self._channels_last else shape[1]
        return inner if inner else None, shape[0]

    def __repr__(self) -> str:
        kw = self._kwargs
        n = len(kw["kernel"])
        s = f"{type(self).__name__}({'{} -> {}'.format(*self._in_out())}, " \
            f"kernel_size={kw['kernel']}, stride={kw['stride']}"
        if kw["pad"] != (0,) * n:
            s += f", padding={kw['pad']}"
        if kw["dilate"] != (1,) * n:
            s += f", dilation={kw['dilate']}"
        if "adj" in kw and kw["adj"] != (0,) * n:
            s += f", output_padding={kw['adj']}"
        if kw["num_group"] != 1:
            s += f", groups={kw['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        return s + ")"


_CONV_ARGS = """
    Args:
        channels: the number of output channels (filters).
        kernel_size: the window size: an int or a tuple of {n} ints.
        strides: the stride: an int or a tuple of {n} ints.
        padding: zeros added on both sides of each spatial axis: an int or a tuple of {n}
            ints.{extra}
        dilation: the dilation: an int or a tuple of {n} ints.
        groups: split the input and output channels into this many groups, each
            convolved separately (``groups == in_channels`` is a depthwise convolution).
        layout: ``'{cf}'`` (channels first) or ``'{cl}'`` (channels last).
        activation: the name of an activation applied to the output (see
            :class:`Activation`); None for none.
        use_bias: add a bias vector.
        weight_initializer: the weight's initializer; None uses the one given to
            ``initialize()``.
        bias_initializer: the bias's initializer.
        in_channels: the number of input channels; 0 infers it from the first input
            (deferred initialization).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
"""
_OUTPAD_ARG = """
        output_padding: extra cells added at the end of each spatial axis of the
            output: an int or a tuple of {n} ints (smaller than the stride)."""


def _conv_doc(summary: str, n: int, transpose: bool, example: str) -> str:
    cf, cl = _LAYOUTS[n]
    extra = _OUTPAD_ARG.format(n=n) if transpose else ""
    return summary + "\n" + _CONV_ARGS.format(n=n, cf=cf, cl=cl, extra=extra) + example


class _ConvND(_Conv):
    _ndim = 0
    _transpose = False

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout=None, activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        name, n = type(self).__name__, self._ndim
        layout = _LAYOUTS[n][0] if layout is None else layout
        _check_layout(name, layout, n)
        kernel_size = _tuple(name, "kernel_size", kernel_size, n)
        adj = _tuple(name, "output_padding", output_padding, n) if self._transpose else None
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, layout,
                         in_channels, activation, use_bias, weight_initializer,
                         bias_initializer,
                         op_name="Deconvolution" if self._transpose else "Convolution",
                         adj=adj, **kwargs)
        if self._transpose:
            self.outpad = adj


class Conv1D(_ConvND):
    __doc__ = _conv_doc(
        "1-D convolution (e.g. over time): ``(N, C, W)`` to ``(N, channels, out_W)`` with\n"
        "    ``out_W = floor((W + 2 * padding - dilation * (kernel_size - 1) - 1) / stride) + 1``.",
        1, False, """
    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> conv = nn.Conv1D(4, 3)
        >>> conv.initialize()
        >>> conv(nd.zeros((2, 3, 10))).shape
        (2, 4, 8)
""")
    _ndim = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout="NCW", activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, 0, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv2D(_ConvND):
    __doc__ = _conv_doc(
        "2-D convolution (e.g. over images): ``(N, C, H, W)`` to ``(N, channels, out_H,\n"
        "    out_W)``, each spatial size ``floor((x + 2 * padding - dilation * (kernel - 1) -\n"
        "    1) / stride) + 1``.",
        2, False, """
    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> conv = nn.Conv2D(8, (3, 3), strides=2, layout="NHWC")
        >>> conv.initialize()
        >>> conv(nd.zeros((2, 9, 9, 3))).shape
        (2, 4, 4, 8)
""")
    _ndim = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout="NCHW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, 0, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv3D(_ConvND):
    __doc__ = _conv_doc(
        "3-D convolution (e.g. over volumes): ``(N, C, D, H, W)`` to ``(N, channels, out_D,\n"
        "    out_H, out_W)``.", 3, False, "")
    _ndim = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout="NCDHW", activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, 0, dilation, groups, layout,
                         activation, use_bias, weight_initializer, bias_initializer,
                         in_channels, **kwargs)


class Conv1DTranspose(_ConvND):
    __doc__ = _conv_doc(
        "1-D transposed convolution (the data gradient of a convolution): ``(N, C, W)`` to\n"
        "    ``(N, channels, out_W)`` with ``out_W = (W - 1) * stride - 2 * padding +\n"
        "    dilation * (kernel_size - 1) + 1 + output_padding``.", 1, True, "")
    _ndim = 1
    _transpose = True

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout="NCW", activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvND):
    __doc__ = _conv_doc(
        "2-D transposed convolution (\"deconvolution\"): each spatial size becomes ``(x - 1)\n"
        "    * stride - 2 * padding + dilation * (kernel - 1) + 1 + output_padding``.", 2, True,
        """
    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> up = nn.Conv2DTranspose(4, 4, strides=2, padding=1)
        >>> up.initialize()
        >>> up(nd.zeros((1, 3, 5, 5))).shape, up.weight.shape
        ((1, 4, 10, 10), (3, 4, 4, 4))
""")
    _ndim = 2
    _transpose = True

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout="NCHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvND):
    __doc__ = _conv_doc(
        "3-D transposed convolution: each spatial size becomes ``(x - 1) * stride - 2 *\n"
        "    padding + dilation * (kernel - 1) + 1 + output_padding``.", 3, True, "")
    _ndim = 3
    _transpose = True

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout="NCDHW",
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer="zeros", in_channels=0, **kwargs):
        super().__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                         groups, layout, activation, use_bias, weight_initializer,
                         bias_initializer, in_channels, **kwargs)


# --------------------------------------------------------------------------- pooling
class _Pooling(HybridBlock):
    """The pooling layers' shared implementation (``F.Pooling``)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        name, n = type(self).__name__, len(pool_size)
        _check_layout(name, layout, n)
        if strides is None:
            strides = pool_size
        self._kwargs = {
            "kernel": tuple(pool_size), "stride": _tuple(name, "strides", strides, n),
            "pad": _tuple(name, "padding", padding, n), "global_pool": global_pool,
            "pool_type": pool_type, "layout": layout,
            "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self) -> str:
        return "pool"

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name="fwd", **self._kwargs)  # MXNet's node name

    def __repr__(self) -> str:
        kw = self._kwargs
        return (f"{type(self).__name__}(size={kw['kernel']}, stride={kw['stride']}, "
                f"padding={kw['pad']}, ceil_mode={kw['pooling_convention'] == 'full'}, "
                f"global_pool={kw['global_pool']}, pool_type={kw['pool_type']}, "
                f"layout={kw['layout']})")


_POOL_ARGS = """
    Args:
        pool_size: the window size: an int or a tuple of {n} ints.
        strides: the stride: an int or a tuple of {n} ints; None uses ``pool_size``.
        padding: cells added on both sides of each spatial axis (they never win a max):
            an int or a tuple of {n} ints.
        layout: ``'{cf}'`` (channels first) or ``'{cl}'`` (channels last).
        ceil_mode: round the output size up (MXNet's ``pooling_convention='full'``)
            instead of down.{extra}
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
"""
_COUNT_PAD_ARG = """
        count_include_pad: count padded cells in the divisor of the average."""


def _pool_doc(summary: str, n: int, avg: bool, example: str = "") -> str:
    cf, cl = _LAYOUTS[n]
    extra = _COUNT_PAD_ARG if avg else ""
    return summary + "\n" + _POOL_ARGS.format(n=n, cf=cf, cl=cl, extra=extra) + example


class _PoolND(_Pooling):
    _ndim = 0
    _type = "max"

    def __init__(self, pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                 **kwargs):
        n = self._ndim
        pool_size = _tuple(type(self).__name__, "pool_size", pool_size, n)
        super().__init__(pool_size, strides, padding, ceil_mode, False, self._type, layout,
                         count_include_pad, **kwargs)


class MaxPool1D(_PoolND):
    __doc__ = _pool_doc("Max pooling over 1-D windows (e.g. time).", 1, False)
    _ndim, _type = 1, "max"

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, None, **kwargs)


class MaxPool2D(_PoolND):
    __doc__ = _pool_doc("Max pooling over 2-D windows (e.g. images).", 2, False, """
    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> pool = nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)
        >>> pool(nd.zeros((1, 2, 8, 8))).shape
        (1, 2, 4, 4)
""")
    _ndim, _type = 2, "max"

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, None, **kwargs)


class MaxPool3D(_PoolND):
    __doc__ = _pool_doc("Max pooling over 3-D windows (e.g. volumes).", 3, False)
    _ndim, _type = 3, "max"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, layout="NCDHW",
                 ceil_mode=False, **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, None, **kwargs)


class AvgPool1D(_PoolND):
    __doc__ = _pool_doc("Average pooling over 1-D windows (e.g. time).", 1, True)
    _ndim, _type = 1, "avg"

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False,
                 count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                         **kwargs)


class AvgPool2D(_PoolND):
    __doc__ = _pool_doc("Average pooling over 2-D windows (e.g. images).", 2, True, """
    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.AvgPool2D()(nd.ones((1, 1, 4, 4))).asnumpy().tolist()
        [[[[1.0, 1.0], [1.0, 1.0]]]]
""")
    _ndim, _type = 2, "avg"

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW",
                 ceil_mode=False, count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                         **kwargs)


class AvgPool3D(_PoolND):
    __doc__ = _pool_doc("Average pooling over 3-D windows (e.g. volumes).", 3, True)
    _ndim, _type = 3, "avg"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, layout="NCDHW",
                 ceil_mode=False, count_include_pad=True, **kwargs):
        super().__init__(pool_size, strides, padding, layout, ceil_mode, count_include_pad,
                         **kwargs)


_GLOBAL_DOC = """Global {kind} pooling over all {n}-D spatial positions: the spatial axes
    become size 1 (``{example}``).

    Args:
        layout: ``'{cf}'`` (channels first) or ``'{cl}'`` (channels last).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
"""


def _global_doc(kind: str, n: int) -> str:
    cf, cl = _LAYOUTS[n]
    shapes = {1: "(N, C, W) -> (N, C, 1)", 2: "(N, C, H, W) -> (N, C, 1, 1)",
              3: "(N, C, D, H, W) -> (N, C, 1, 1, 1)"}
    return _GLOBAL_DOC.format(kind=kind, n=n, cf=cf, cl=cl, example=shapes[n])


class _GlobalPool(_Pooling):
    _ndim = 0
    _type = "max"

    def __init__(self, layout=None, **kwargs):
        n = self._ndim
        layout = _LAYOUTS[n][0] if layout is None else layout
        super().__init__((1,) * n, None, 0, True, True, self._type, layout, **kwargs)


class GlobalMaxPool1D(_GlobalPool):
    __doc__ = _global_doc("max", 1)
    _ndim, _type = 1, "max"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool2D(_GlobalPool):
    __doc__ = _global_doc("max", 2)
    _ndim, _type = 2, "max"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalMaxPool3D(_GlobalPool):
    __doc__ = _global_doc("max", 3)
    _ndim, _type = 3, "max"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool1D(_GlobalPool):
    __doc__ = _global_doc("average", 1)
    _ndim, _type = 1, "avg"

    def __init__(self, layout="NCW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool2D(_GlobalPool):
    __doc__ = _global_doc("average", 2)
    _ndim, _type = 2, "avg"

    def __init__(self, layout="NCHW", **kwargs):
        super().__init__(layout, **kwargs)


class GlobalAvgPool3D(_GlobalPool):
    __doc__ = _global_doc("average", 3)
    _ndim, _type = 3, "avg"

    def __init__(self, layout="NCDHW", **kwargs):
        super().__init__(layout, **kwargs)


class ReflectionPad2D(HybridBlock):
    """Pads the two spatial axes of NCHW data with reflections of the input (the edge
    itself not repeated).

    Args:
        padding: cells added on every side (an int), or MXNet's ``pad_width``: 8 ints,
            (before, after) for each of the 4 axes, the first two pairs 0.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Inputs:
        data: ``(N, C, H, W)``.

    Outputs:
        out: ``(N, C, H + 2 * padding, W + 2 * padding)``.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> x = nd.array([[[[1.0, 2.0, 3.0]]]])
        >>> nn.ReflectionPad2D(1)(x).asnumpy()[0, 0, 1].tolist()
        [2.0, 1.0, 2.0, 3.0, 2.0]
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        padding = tuple(int(p) for p in padding)
        if len(padding) != 8:
            raise ValueError(f"ReflectionPad2D: padding must be an int or 8 ints (MXNet's "
                             f"pad_width), got {padding!r}")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
