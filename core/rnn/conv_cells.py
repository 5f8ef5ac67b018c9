"""Convolutional step cells: ``ConvRNNCell``, ``ConvLSTMCell``, ``ConvGRUCell``.

The dense cells' gates with ``Convolution`` in place of ``FullyConnected``: ``i2h``
convolves the input (``i2h_kernel``/``stride``/``pad``/``dilate``), ``h2h`` the state
(``h2h_kernel``, odd sizes, padded to keep the state's spatial shape). The state shape
is the ``i2h`` convolution's output for ``input_shape``.
"""
from __future__ import annotations

import functools

from .. import sym as symbol
from .base import BaseRNNCell
from .params import RNNParams

__all__ = ["BaseConvRNNCell", "ConvGRUCell", "ConvLSTMCell", "ConvRNNCell"]


def _leaky(slope: float = 0.2):
    return functools.partial(symbol.LeakyReLU, act_type="leaky", slope=slope)


class BaseConvRNNCell(BaseRNNCell):
    """Abstract base class of the convolutional cells (see the module doc).

    Args:
        input_shape: the shape of one step's input, batch first (``(N, C, H, W)``).
        num_hidden: the number of state channels.
        h2h_kernel, h2h_dilate: the state convolution's kernel (odd sizes) and dilation.
        i2h_kernel, i2h_stride, i2h_pad, i2h_dilate: the input convolution's.
        i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
            h2h_bias_initializer: initializers (``__init__`` attributes) or None.
        activation: an ``act_type`` name or a callable ``f(symbol, name=...)``.
        prefix: prefix of names.
        params: an ``RNNParams`` to share weights (None: the cell's own).
        conv_layout: the convolutions' layout (``'NCHW'``, ...).
    """

    def __init__(self, input_shape, num_hidden, h2h_kernel, h2h_dilate, i2h_kernel, i2h_stride,
                 i2h_pad, i2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, activation, prefix="",
                 params: RNNParams | None = None, conv_layout: str = "NCHW"):
        super().__init__(prefix=prefix, params=params)
        self._h2h_kernel = tuple(h2h_kernel)
        if any(k % 2 != 1 for k in self._h2h_kernel):
            raise ValueError(f"{type(self).__name__}: only odd h2h_kernel sizes are supported "
                             f"(the state keeps its shape), got h2h_kernel={h2h_kernel}")
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, self._h2h_kernel))
        self._h2h_dilate = h2h_dilate
        self._i2h_kernel = i2h_kernel
        self._i2h_stride = i2h_stride
        self._i2h_pad = i2h_pad
        self._i2h_dilate = i2h_dilate
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        data = symbol.var("data")
        probe = symbol.Convolution(data=data, num_filter=num_hidden, kernel=i2h_kernel,
                                   stride=i2h_stride, pad=i2h_pad, dilate=i2h_dilate,
                                   layout=conv_layout)
        shapes = probe.infer_shape(data=tuple(input_shape))[1]
        if shapes is None:
            raise ValueError(f"{type(self).__name__}: cannot infer the state shape from "
                             f"input_shape={tuple(input_shape)} and the i2h convolution")
        self._state_shape = (0,) + tuple(shapes[0][1:])
        self._iW = self.params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self.params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self.params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self.params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    @property
    def state_info(self) -> list:
        info = {"shape": self._state_shape, "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._num_states)]

    _num_states = 2

    def _conv_forward(self, inputs, states, name):
        n = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(name=f"{name}i2h", data=inputs, num_filter=n,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate, weight=self._iW,
                                 bias=self._iB, layout=self._conv_layout)
        h2h = symbol.Convolution(name=f"{name}h2h", data=states[0], num_filter=n,
                                 kernel=self._h2h_kernel, dilate=self._h2h_dilate,
                                 pad=self._h2h_pad, stride=(1,) * len(self._h2h_kernel),
                                 weight=self._hW, bias=self._hB, layout=self._conv_layout)
        return i2h, h2h

    def __call__(self, inputs, states):
        raise NotImplementedError("BaseConvRNNCell is abstract class for convolutional RNN")


def _conv_init(cls):
    """The shared constructor signature of the three convolutional cells."""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=None, prefix=None, params=None, conv_layout="NCHW"):
        BaseConvRNNCell.__init__(
            self, input_shape=input_shape, num_hidden=num_hidden, h2h_kernel=h2h_kernel,
            h2h_dilate=h2h_dilate, i2h_kernel=i2h_kernel, i2h_stride=i2h_stride,
            i2h_pad=i2h_pad, i2h_dilate=i2h_dilate,
            i2h_weight_initializer=i2h_weight_initializer,
            h2h_weight_initializer=h2h_weight_initializer,
            i2h_bias_initializer=i2h_bias_initializer,
            h2h_bias_initializer=h2h_bias_initializer,
            activation=_leaky() if activation is None else activation,
            prefix=cls._default_prefix if prefix is None else prefix, params=params,
            conv_layout=conv_layout)

    cls.__init__ = __init__
    return cls


@_conv_init
class ConvRNNCell(BaseConvRNNCell):
    """A convolutional Elman RNN step (see the module doc; default activation
    ``LeakyReLU(slope=0.2)``, default prefix ``'ConvRNN_'``).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.ConvRNNCell((1, 3, 16, 10), num_hidden=10, prefix="c_")
        >>> out, _ = cell(sym.var("x"), cell.begin_state())
        >>> out.infer_shape(x=(1, 3, 16, 10))[1]
        [(1, 10, 16, 10)]
    """

    _default_prefix = "ConvRNN_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


@_conv_init
class ConvLSTMCell(BaseConvRNNCell):
    """A convolutional LSTM step (Xingjian et al., NIPS 2015); states ``[h, c]``
    (default prefix ``'ConvLSTM_'``).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.ConvLSTMCell((2, 3, 8, 8), num_hidden=4, prefix="cl_")
        >>> out, (h, c) = cell(sym.var("x"), cell.begin_state())
        >>> c.infer_shape(x=(2, 3, 8, 8))[1]
        [(2, 4, 8, 8)]
    """

    _default_prefix = "ConvLSTM_"

    @property
    def _gate_names(self):
        return ["_i", "_f", "_c", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4,
                                    axis=self._conv_layout.find("C"), name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                     name=f"{name}state")
        next_h = symbol.elemwise_mul(out_gate, self._get_activation(next_c, self._activation),
                                     name=f"{name}out")
        return next_h, [next_h, next_c]


@_conv_init
class ConvGRUCell(BaseConvRNNCell):
    """A convolutional GRU step (default prefix ``'ConvGRU_'``).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.ConvGRUCell((1, 3, 6, 6), num_hidden=2, prefix="cg_")
        >>> out, _ = cell(sym.var("x"), cell.begin_state())
        >>> out.name
        'cg_t0_out'
    """

    _default_prefix = "ConvGRU_"
    _num_states = 1

    @property
    def _gate_names(self):
        return ["_r", "_z", "_o"]

    def __call__(self, inputs, states):
        self._counter += 1
        name = f"{self._prefix}t{self._counter}_"
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset_gate = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update_gate = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid",
                                        name=f"{name}_z_act")
        next_h_tmp = self._get_activation(i2h + reset_gate * h2h, self._activation,
                                          name=f"{name}_h_act")
        next_h = symbol.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                     name=f"{name}out")
        return next_h, [next_h]
