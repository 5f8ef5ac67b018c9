"""MXNet 1.9's convolutional recurrent cells (``gluon.contrib.rnn.conv_rnn_cell``).

``Conv{1,2,3}D{RNN,LSTM,GRU}Cell`` are the RNN, LSTM and GRU cells with convolutions in
place of the matrix products (Shi et al., 2015): ``i2h`` convolves the input (kernel
``i2h_kernel``, padding ``i2h_pad``, dilation ``i2h_dilate``), ``h2h`` the state (an odd
``h2h_kernel``, padded to keep the state's spatial size). Parameters are MXNet's:
``i2h_weight (G*hidden, C, *i2h_kernel)``, ``h2h_weight (G*hidden, hidden, *h2h_kernel)``
(channels last for an ``N...C`` layout), ``i2h_bias``/``h2h_bias (G*hidden,)``.
"""
from __future__ import annotations

from ...rnn import HybridRecurrentCell
from ...rnn.rnn_cell import _step_names

__all__ = ["Conv1DGRUCell", "Conv1DLSTMCell", "Conv1DRNNCell", "Conv2DGRUCell",
           "Conv2DLSTMCell", "Conv2DRNNCell", "Conv3DGRUCell", "Conv3DLSTMCell",
           "Conv3DRNNCell"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _conv_out_size(dimensions, kernels, paddings, dilations) -> tuple:
    return tuple(int(x + 2 * p - d * (k - 1) - 1) + 1 if x else 0
                 for x, k, p, d in zip(dimensions, kernels, paddings, dilations))


def _spec(name: str, what: str, v, dims: int) -> tuple:
    t = (v,) * dims if isinstance(v, int) else tuple(v)
    if len(t) != dims or not all(isinstance(k, int) for k in t):
        raise ValueError(f"{name}: for {dims}D convolution, {what} must be an int or a "
                         f"tuple of {dims} ints, got {v!r}")
    return t


class _BaseConvRNNCell(HybridRecurrentCell):
    """What the convolutional cells share: shapes, parameters, the two convolutions."""

    _gate_names: tuple = ("",)
    _dims = 0

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        name, dims = type(self).__name__, self._dims
        if conv_layout not in _LAYOUTS[dims]:
            raise ValueError(f"{name}: conv_layout must be one of {_LAYOUTS[dims]}, got "
                             f"{conv_layout!r}")
        input_shape = tuple(input_shape)
        if len(input_shape) != dims + 1:
            raise ValueError(f"{name}: input_shape must be the {dims + 1} axes of one step "
                             f"without the batch ({conv_layout[1:]}), got {input_shape}")
        self._hidden_channels = hidden_channels
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _spec(name, "i2h_kernel", i2h_kernel, dims)
        self._stride = (1,) * dims
        self._i2h_pad = _spec(name, "i2h_pad", i2h_pad, dims)
        self._i2h_dilate = _spec(name, "i2h_dilate", i2h_dilate, dims)
        self._h2h_kernel = _spec(name, "h2h_kernel", h2h_kernel, dims)
        if not all(k % 2 == 1 for k in self._h2h_kernel):
            raise ValueError(f"{name}: only odd h2h_kernel sizes keep the state's shape, got "
                             f"h2h_kernel={h2h_kernel!r}")
        self._h2h_dilate = _spec(name, "h2h_dilate", h2h_dilate, dims)
        self._channel_axis = conv_layout.find("C")
        in_channels = input_shape[self._channel_axis - 1]
        spatial = input_shape[1:] if self._channel_axis == 1 else input_shape[:-1]
        total = hidden_channels * len(self._gate_names)
        out_size = _conv_out_size(spatial, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        if self._channel_axis == 1:
            i2h_shape = (total, in_channels) + self._i2h_kernel
            h2h_shape = (total, hidden_channels) + self._h2h_kernel
            self._state_shape = (hidden_channels,) + out_size
        else:
            i2h_shape = (total,) + self._i2h_kernel + (in_channels,)
            h2h_shape = (total,) + self._h2h_kernel + (hidden_channels,)
            self._state_shape = out_size + (hidden_channels,)
        self._in_channels = in_channels
        self.i2h_weight = self.params.get("i2h_weight", shape=i2h_shape,
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=h2h_shape,
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(total,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(total,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def infer_shape(self, inputs, *args) -> None:
        """The input channels (0 in ``input_shape``) come from the first input."""
        shape = list(self.i2h_weight.shape)
        shape[1 if self._channel_axis == 1 else -1] = inputs.shape[self._channel_axis]
        self.i2h_weight.shape = tuple(shape)

    def __repr__(self) -> str:
        shape = self.i2h_weight.shape
        c = shape[1 if self._channel_axis == 1 else -1]
        return (f"{type(self).__name__}({c if c else None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _conv_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        nm = _step_names(self, F)
        n = self._hidden_channels * len(self._gate_names)
        i2h = F.Convolution(data=inputs, num_filter=n, kernel=self._i2h_kernel,
                            stride=self._stride, pad=self._i2h_pad, dilate=self._i2h_dilate,
                            weight=i2h_weight, bias=i2h_bias, layout=self._conv_layout,
                            **nm("i2h"))
        h2h = F.Convolution(data=states[0], num_filter=n, kernel=self._h2h_kernel,
                            dilate=self._h2h_dilate, pad=self._h2h_pad, stride=self._stride,
                            weight=h2h_weight, bias=h2h_bias, layout=self._conv_layout,
                            **nm("h2h"))
        return i2h, h2h

    def state_info(self, batch_size: int = 0) -> list:
        one = {"shape": (batch_size,) + self._state_shape, "__layout__": self._conv_layout}
        return [dict(one) for _ in range(2 if len(self._gate_names) == 4 else 1)]


class _ConvRNNCell(_BaseConvRNNCell):
    def _alias(self) -> str:
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias)
        output = self._get_activation(F, i2h + h2h, self._activation,
                                      **_step_names(self, F)("out"))
        return output, [output]


class _ConvLSTMCell(_BaseConvRNNCell):
    _gate_names = ("_i", "_f", "_c", "_o")

    def _alias(self) -> str:
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        nm = _step_names(self, F)
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis,
                               **nm("slice"))
        in_gate = F.Activation(gates[0], act_type="sigmoid", **nm("i"))
        forget_gate = F.Activation(gates[1], act_type="sigmoid", **nm("f"))
        in_transform = self._get_activation(F, gates[2], self._activation, **nm("c"))
        out_gate = F.Activation(gates[3], act_type="sigmoid", **nm("o"))
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                **nm("state"))
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                **nm("out"))
        return next_h, [next_h, next_c]


class _ConvGRUCell(_BaseConvRNNCell):
    _gate_names = ("_r", "_z", "_o")

    def _alias(self) -> str:
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        nm = _step_names(self, F)
        i2h, h2h = self._conv_forward(F, inputs, states, i2h_weight, h2h_weight, i2h_bias,
                                      h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                           **nm("i2h_slice"))
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                           **nm("h2h_slice"))
        reset_gate = F.Activation(i2h_r + h2h_r, act_type="sigmoid", **nm("r_act"))
        update_gate = F.Activation(i2h_z + h2h_z, act_type="sigmoid", **nm("z_act"))
        next_h_tmp = self._get_activation(F, i2h + reset_gate * h2h, self._activation,
                                          **nm("h_act"))
        next_h = F.elemwise_add((1. - update_gate) * next_h_tmp, update_gate * states[0],
                                **nm("out"))
        return next_h, [next_h]


_DOC = """{dims}D convolutional {kind} cell ({math}).

    Args:
        input_shape: one step's shape without the batch, in ``conv_layout``
            (e.g. ``{example}`` for ``{layout}``).
        hidden_channels: the number of state channels.
        i2h_kernel: the input convolution's kernel (an int or {dims} ints).
        h2h_kernel: the state convolution's kernel (odd sizes).
        i2h_pad: the input convolution's padding.
        i2h_dilate: the input convolution's dilation.
        h2h_dilate: the state convolution's dilation.
        i2h_weight_initializer: initializer of the input weights.
        h2h_weight_initializer: initializer of the state weights.
        i2h_bias_initializer: initializer of the input bias (``'zeros'``).
        h2h_bias_initializer: initializer of the state bias (``'zeros'``).
        conv_layout: ``'{layout}'`` (default) or ``'{layout_last}'``.
        activation: the activation (``'tanh'``), a name, a LeakyReLU block or a callable.
        prefix: the name prefix.
        params: a ParameterDict to share parameters with.

    Example:
        >>> from core import nd
        >>> cell = {name}({example}, 4, 3, 3)
        >>> cell.initialize()
        >>> out, states = cell(nd.ones((2,) + {example}), cell.begin_state(2))
        >>> out.shape
        {out}
    """

_MATH = {"RNN": "``h_t = tanh(W_i * x_t + R_i * h_{t-1} + b_i)``",
         "LSTM": "gates i, f, c, o from ``W * x_t + R * h_{t-1} + b``",
         "GRU": "reset, update and candidate gates as ``gluon.rnn.GRUCell``"}
_EXAMPLES = {1: ((3, 8), (2, 4, 6)), 2: ((3, 8, 8), (2, 4, 6, 6)),
             3: ((3, 5, 5, 5), (2, 4, 3, 3, 3))}


def _make(kind: str, base, dims: int):
    layout, layout_last = _LAYOUTS[dims]
    zero, one = (0,) * dims, (1,) * dims

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad=zero,
                 i2h_dilate=one, h2h_dilate=one, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", conv_layout=layout, activation="tanh",
                 prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, conv_layout, activation,
                      prefix=prefix, params=params)

    name = f"Conv{dims}D{kind}Cell"
    example, out = _EXAMPLES[dims]
    cls = type(name, (base,), {"__init__": __init__, "_dims": dims, "__module__": __name__,
                               "__qualname__": name})
    cls.__doc__ = _DOC.format(dims=dims, kind=kind, math=_MATH[kind], example=example,
                              layout=layout, layout_last=layout_last, name=name, out=out)
    return cls


Conv1DRNNCell = _make("RNN", _ConvRNNCell, 1)
Conv2DRNNCell = _make("RNN", _ConvRNNCell, 2)
Conv3DRNNCell = _make("RNN", _ConvRNNCell, 3)
Conv1DLSTMCell = _make("LSTM", _ConvLSTMCell, 1)
Conv2DLSTMCell = _make("LSTM", _ConvLSTMCell, 2)
Conv3DLSTMCell = _make("LSTM", _ConvLSTMCell, 3)
Conv1DGRUCell = _make("GRU", _ConvGRUCell, 1)
Conv2DGRUCell = _make("GRU", _ConvGRUCell, 2)
Conv3DGRUCell = _make("GRU", _ConvGRUCell, 3)
