"""MXNet 1.9's ``gluon.contrib.cnn``: ``DeformableConvolution`` and
``ModulatedDeformableConvolution`` (NCHW).

A convolution computes the offsets (and, modulated, the masks ``2 * sigmoid(.)``) from
the input; :func:`~.deformable.deformable_convolution` then samples the input at the
shifted positions. Parameters are MXNet's: ``offset_weight``/``offset_bias`` and
``deformable_conv_weight (channels, C / groups, kh, kw)``/``deformable_conv_bias``; with
the default zero offset initializers the layer starts as a plain convolution.
"""
from __future__ import annotations

from ...block import HybridBlock
from ...nn import Activation
from .deformable import deformable_convolution

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(name, what, v) -> tuple:
    t = (v,) * 2 if isinstance(v, int) else tuple(v)
    if len(t) != 2 or not all(isinstance(x, int) for x in t):
        raise ValueError(f"{name}: {what} must be an int or a pair of ints, got {v!r}")
    return t


class _Deformable(HybridBlock):
    _offsets_per_point = 2

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        if layout != "NCHW":
            raise ValueError(f"{name}: only layout 'NCHW' is supported here, got {layout!r}")
        if adj:
            raise ValueError(f"{name}: adj (transposed convolution) is not supported")
        kernel = _pair(name, "kernel_size", kernel_size)
        self._channels, self._in_channels = channels, in_channels
        self._groups, self._dgroups = groups, num_deformable_group
        self._kw = {"kernel": kernel, "stride": _pair(name, "strides", strides),
                    "pad": _pair(name, "padding", padding),
                    "dilate": _pair(name, "dilation", dilation)}
        k = kernel[0] * kernel[1]
        self._offset_channels = self._offsets_per_point * k * num_deformable_group
        self._split = 2 * k * num_deformable_group
        cin = in_channels // groups if in_channels else 0
        with self.name_scope():
            self.offset_weight = self.params.get(
                "offset_weight", shape=(self._offset_channels, cin) + kernel,
                init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = (self.params.get("offset_bias", shape=(self._offset_channels,),
                                                init=offset_bias_initializer,
                                                allow_deferred_init=True)
                                if offset_use_bias else None)
            self.deformable_conv_weight = self.params.get(
                "deformable_conv_weight", shape=(channels, cin) + kernel,
                init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = (self.params.get("deformable_conv_bias",
                                                         shape=(channels,),
                                                         init=bias_initializer,
                                                         allow_deferred_init=True)
                                         if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def infer_shape(self, x, *args) -> None:
        """The input channels come from the first input (axis 1)."""
        cin = x.shape[1] // self._groups
        kernel = self._kw["kernel"]
        self.offset_weight.shape = (self._offset_channels, cin) + kernel
        self.deformable_conv_weight.shape = (self._channels, cin) + kernel

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        kw = self._kw
        offset = F.Convolution(x, offset_weight, offset_bias, num_filter=self._offset_channels,
                               num_group=self._groups, no_bias=offset_bias is None, **kw)
        mask = None
        if self._offsets_per_point == 3:
            mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self._split, end=None)) * 2
            offset = F.slice_axis(offset, axis=1, begin=0, end=self._split)
        out = deformable_convolution(F, x, offset, deformable_conv_weight,
                                     deformable_conv_bias, mask, num_group=self._groups,
                                     num_deformable_group=self._dgroups,
                                     where=f"{type(self).__name__} '{self.name}'", **kw)
        return self.act(out) if self.act else out

    def __repr__(self) -> str:
        shape = self.deformable_conv_weight.shape
        s = (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]}, "
             f"kernel_size={self._kw['kernel']}, stride={self._kw['stride']}")
        if self._kw["pad"] != (0, 0):
            s += f", padding={self._kw['pad']}"
        if self._kw["dilate"] != (1, 1):
            s += f", dilation={self._kw['dilate']}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        if self.deformable_conv_bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        return s + ")"


class DeformableConvolution(_Deformable):
    """2-D deformable convolution (Dai et al., 2017): offsets from a convolution of the
    input shift where each kernel point reads.

    Args:
        channels: the number of output channels.
        kernel_size: the kernel (an int or a pair).
        strides: the stride.
        padding: the zero padding.
        dilation: the dilation.
        groups: convolution groups.
        num_deformable_group: channel groups with their own offsets.
        layout: ``'NCHW'``.
        use_bias: add ``deformable_conv_bias``.
        in_channels: the input channels (0: from the first input).
        activation: an activation applied to the output (a name) or None.
        weight_initializer, bias_initializer: of the convolution.
        offset_weight_initializer, offset_bias_initializer: of the offsets' convolution
            (default zeros).
        offset_use_bias: the offsets' convolution has a bias.
        op_name: accepted for MXNet's signature.
        adj: must be None.
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd
        >>> layer = DeformableConvolution(4, kernel_size=3, padding=1)
        >>> layer.initialize()
        >>> layer(nd.ones((2, 3, 5, 5))).shape
        (2, 4, 5, 5)
    """

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="DeformableConvolution", adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, prefix, params)

    def _alias(self) -> str:
        return "deformable_conv"


class ModulatedDeformableConvolution(_Deformable):
    """2-D modulated deformable convolution (DCNv2, Zhu et al., 2019): besides the
    offsets, the offsets' convolution gives a mask ``2 * sigmoid(.)`` per kernel point
    that scales each sample.

    Args:
        As :class:`DeformableConvolution` (the offsets' convolution has
        ``3 * kh * kw * num_deformable_group`` filters: offsets, then masks).

    Example:
        >>> from core import nd
        >>> layer = ModulatedDeformableConvolution(2, kernel_size=(3, 2))
        >>> layer.initialize()
        >>> layer(nd.ones((1, 3, 6, 6))).shape
        (1, 2, 4, 5)
    """

    _offsets_per_point = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout="NCHW",
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True,
                 op_name="ModulatedDeformableConvolution", adj=None, prefix=None,
                 params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, adj, prefix, params)

    def _alias(self) -> str:
        return "modulated_deformable_conv"
