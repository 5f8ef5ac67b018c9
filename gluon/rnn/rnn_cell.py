"""Recurrent cells (MXNet Gluon 1.9's ``gluon.rnn`` cells): one time step at a time.

A cell is called as ``output, new_states = cell(x, states)`` on one step ``x`` of
shape ``(batch, features)``; :meth:`RecurrentCell.unroll` runs it over a sequence.
``RNNCell``, ``LSTMCell`` and ``GRUCell`` compute exactly the same functions as the
fused layers (``gluon.rnn.RNN``/``LSTM``/``GRU``, the operator ``nd.RNN``) with the
same weights: gates in MXNet's order (LSTM i, f, g, o; GRU r, z, n with the reset
gate applied after the hidden projection). A bidirectional fused layer with
``num_layers`` layers equals a ``HybridSequentialRNNCell`` of ``BidirectionalCell``
pairs (``layer._unfuse()`` builds it, sharing the layer's parameters).

Cells are written as MXNet 1.x ``hybrid_forward(self, F, x, states, i2h_weight, ...)``
with ``F`` the operator namespace ``core.nd``.

Example:
    >>> from core import nd
    >>> from gluon import rnn
    >>> cell = rnn.LSTMCell(4, prefix="lstm_")
    >>> cell.initialize()
    >>> x = nd.ones((2, 5, 3))                       # (batch, time, features): NTC
    >>> outputs, states = cell.unroll(5, x, layout="NTC", merge_outputs=True)
    >>> outputs.shape, [s.shape for s in states]
    ((2, 5, 4), [(2, 4), (2, 4)])
    >>> sorted(cell.collect_params().keys())
    ['lstm_h2h_bias', 'lstm_h2h_weight', 'lstm_i2h_bias', 'lstm_i2h_weight']
"""
from __future__ import annotations

import numbers

import numpy

from core import nd
from core.ndarray import NDArray

from ..block import Block, HybridBlock
from ..utils import _indent

__all__ = ["BidirectionalCell", "DropoutCell", "GRUCell", "HybridRecurrentCell",
           "HybridSequentialRNNCell", "LSTMCell", "ModifierCell", "RNNCell", "RecurrentCell",
           "ResidualCell", "SequentialRNNCell", "ZoneoutCell"]


# --------------------------------------------------------------------------- helpers
def _as_list(x) -> list:
    """Steps as a list: a list or tuple, the outputs of a grouped Symbol, or one array."""
    if isinstance(x, (list, tuple)) or (_is_symbol(x) and len(x) > 1):
        return list(x)
    return [x]


def _is_symbol(x) -> bool:
    return type(x).__name__ == "Symbol" and type(x).__module__ == "core.symbol.symbol"


def _is_tensor(x) -> bool:
    """One array: an NDArray, or a one-output Symbol (cells unroll on both)."""
    return isinstance(x, NDArray) or (_is_symbol(x) and len(x) == 1)


def _namespace(x):
    """``core.sym`` for Symbols (or lists of them), ``core.nd`` otherwise."""
    first = x[0] if isinstance(x, (list, tuple)) and x else x
    if _is_symbol(first):
        from core import sym

        return sym
    return nd


def _call_state_func(func, name: str, info: dict):
    """``func(name=..., **info)`` without the layout annotation, which only symbols keep."""
    info = {k: v for k, v in info.items() if k != "__layout__"}
    return func(name=name, **info)


def _cells_state_info(cells, batch_size) -> list:
    return [info for c in cells for info in c.state_info(batch_size)]


def _cells_begin_state(cells, **kwargs) -> list:
    return [state for c in cells for state in c.begin_state(**kwargs)]


def _get_begin_state(cell, F, begin_state, inputs, batch_size, batch_axis=0):
    """``begin_state``, or zeros on the inputs' context (in their dtype when that is not
    the default float32, where MXNet would make float32 states that its operators then
    refuse to mix with float64 or float16 weights); on Symbols, zeros whose batch size is
    the inputs' (axis ``batch_axis`` of a merged input, else of the first step), known
    when the graph is bound."""
    if begin_state is None:
        first = inputs if _is_tensor(inputs) else inputs[0]
        if _is_symbol(first):
            return cell.begin_state(func=_symbol_zeros(first, batch_axis), batch_size=0)
        extra = {} if first.dtype == numpy.float32 else {"dtype": first.dtype}
        with first.context:
            begin_state = cell.begin_state(func=F.zeros, batch_size=batch_size, **extra)
    return begin_state


def _symbol_zeros(ref, batch_axis: int):
    """A ``begin_state`` function for Symbols: zeros of ``shape`` (batch 0: unknown)
    with the batch size of ``ref`` (MXNet uses ``sym.zeros`` with batch 0 and infers it
    backwards; here the batch comes from the data, the same value)."""
    from core import sym

    def zeros(name=None, shape=(), dtype=None, **kwargs):
        one = sym.zeros(shape=(1, *tuple(shape)[1:]), dtype=dtype or "float32")
        return sym.broadcast_like(one, ref, lhs_axes=(0,), rhs_axes=(batch_axis,))

    return zeros


def _step_names(cell, F):
    """``nm("out")`` -> ``{"name": "t<step>_out"}`` on Symbols (MXNet's node names in a
    cell's step, under the cell's prefix: ``rnn_t0_out``), ``{}`` on NDArrays."""
    if F is nd:
        return lambda s: {}
    return lambda s: {"name": f"t{cell._counter}_{s}"}


def _check_layout(layout: str) -> None:
    if not isinstance(layout, str) or "T" not in layout or "N" not in layout:
        raise ValueError(f"unroll: layout must name the time (T) and batch (N) axes, such as "
                         f"'NTC' or 'TNC', got {layout!r}")


def _format_sequence(length, inputs, layout, merge, in_layout=None):
    """Inputs as one array (``merge`` True) or a list of steps (False); None keeps the
    form given. Returns ``(inputs, time axis, F, batch size)``."""
    if inputs is None:
        raise ValueError("unroll(inputs=None) has been deprecated. Please create input "
                         "variables outside unroll.")
    _check_layout(layout)
    axis = layout.find("T")
    batch_axis = layout.find("N")
    in_axis = in_layout.find("T") if in_layout is not None else axis
    F = _namespace(inputs)
    if _is_symbol(inputs) and len(inputs) == 1:
        batch_size = 0
        if merge is False:
            if length is None:
                raise ValueError("unroll: length is required to split a Symbol into steps")
            inputs = _as_list(F.split(inputs, axis=in_axis, num_outputs=length,
                                      squeeze_axis=1))
    elif _is_symbol(inputs):
        raise TypeError(f"unroll: inputs is a grouped Symbol ({len(inputs)} outputs); pass "
                        "one Symbol (unroll splits it) or a list of one-output Symbols")
    elif isinstance(inputs, NDArray):
        batch_size = inputs.shape[batch_axis]
        if merge is False:
            steps = inputs.shape[in_axis]
            if length is not None and length != steps:
                raise ValueError(f"unroll: length={length} but the inputs have {steps} steps "
                                 f"on the time axis {in_axis} (shape {inputs.shape}, layout "
                                 f"{layout!r})")
            inputs = _as_list(nd.split(inputs, axis=in_axis, num_outputs=steps,
                                       squeeze_axis=1))
    else:
        inputs = list(inputs)
        F = _namespace(inputs)
        kind = NDArray if F is nd else type(inputs[0]) if inputs else NDArray
        if not inputs or not all(isinstance(x, kind) and _is_tensor(x) for x in inputs):
            raise TypeError("unroll: inputs must be an NDArray or a Symbol, or a non-empty "
                            "list of them (one per step, all of one kind)")
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length={length} but {len(inputs)} input steps were "
                             "given")
        batch_size = inputs[0].shape[0] if F is nd else 0
        if merge is True:
            inputs = F.stack(*inputs, axis=axis)
            in_axis = axis
    if _is_tensor(inputs) and axis != in_axis:
        inputs = F.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis, F, batch_size


def _mask_sequence_variable_length(F, data, length, valid_length, time_axis, merge):
    """Zero the steps past each sequence's valid length (one array, or a list)."""
    if not _is_tensor(data):
        data = F.stack(*data, axis=time_axis)
    outputs = F.SequenceMask(data, sequence_length=valid_length, use_sequence_length=True,
                             axis=time_axis)
    if not merge:
        outputs = _as_list(F.split(outputs, num_outputs=length, axis=time_axis,
                                   squeeze_axis=True))
    return outputs


def _reverse_sequences(sequences, unroll_step, valid_length=None):
    """The list of steps reversed; with ``valid_length`` each sequence's valid part only."""
    if valid_length is None:
        return list(reversed(sequences))
    F = _namespace(sequences)
    rev = F.SequenceReverse(F.stack(*sequences, axis=0), sequence_length=valid_length,
                            use_sequence_length=True)
    return _as_list(F.split(rev, axis=0, num_outputs=unroll_step, squeeze_axis=True))


def _not_modified(cell) -> None:
    if cell._modified:
        raise ValueError(f"After applying modifier cells (e.g. ZoneoutCell) the base cell "
                         f"'{cell.name}' cannot be called directly. Call the modifier cell "
                         "instead.")


# --------------------------------------------------------------------------- base classes
class RecurrentCell(Block):
    """Abstract base class of the recurrent cells.

    Subclasses define :meth:`state_info` and the step (``forward``, or
    ``hybrid_forward`` for :class:`HybridRecurrentCell`).

    Args:
        prefix: the prefix of the cell's name and of its parameters' names (also used
            for weights if ``params`` is None).
        params: a ParameterDict to share parameters with another cell.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset the step counters before reusing the cell on another sequence."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size: int = 0) -> list:
        """Shape and layout of each state: a list of dicts (``shape``, ``__layout__``)."""
        raise NotImplementedError(f"{type(self).__name__} must define state_info()")

    def begin_state(self, batch_size: int = 0, func=nd.zeros, **kwargs) -> list:
        """Initial states for the first step.

        Args:
            batch_size: the size of the batch (``N``).
            func: the function that creates each state from ``shape`` (and ``name``,
                ``dtype``, ...), e.g. ``nd.zeros``, ``nd.ones``, ``nd.random.uniform``.
            **kwargs: more arguments of ``func`` (``ctx``, ``dtype``, ...).

        Returns:
            A list of NDArrays, one per entry of :meth:`state_info`.

        Raises:
            ValueError: this cell is wrapped by a modifier cell (call that instead).
        """
        _not_modified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info) if info is not None else {}
            info.update(kwargs)
            states.append(_call_state_func(func, f"{self._prefix}begin_state_"
                                                 f"{self._init_counter}", info))
        return states

    def unroll(self, length: int, inputs, begin_state=None, layout: str = "NTC",
               merge_outputs=None, valid_length=None):
        """Run the cell over ``length`` time steps.

        Args:
            length: the number of steps.
            inputs: one NDArray, ``(batch, length, ...)`` for layout ``'NTC'`` or
                ``(length, batch, ...)`` for ``'TNC'``, or a list of ``length`` NDArrays
                ``(batch, ...)``.
            begin_state: the initial states (from :meth:`begin_state` or another
                cell); zeros if None.
            layout: the layout of ``inputs`` and of merged outputs.
            merge_outputs: True returns the outputs as one NDArray in ``layout``, False
                as a list of steps, None as is cheapest.
            valid_length: None, or an NDArray ``(batch,)`` of sequence lengths (at most
                ``length``): outputs past a sequence's length are 0 and the states
                returned are those of its last valid step.

        Returns:
            ``(outputs, states)``: the outputs (an NDArray or a list) and the final
            states (a list).
        """
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        outputs = []
        all_states = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = [F.SequenceLast(F.stack(*ele_list, axis=0), sequence_length=valid_length,
                                     use_sequence_length=True, axis=0)
                      for ele_list in zip(*all_states)]
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     True)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        """Apply ``activation``: a name, a ``gluon.nn.LeakyReLU`` block or a callable."""
        func = {"tanh": F.tanh, "relu": F.relu, "sigmoid": F.sigmoid,
                "softsign": F.softsign}.get(activation) if isinstance(activation, str) else None
        if func is not None:
            return func(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if type(activation).__name__ == "LeakyReLU" and hasattr(activation, "_alpha"):
            return F.LeakyReLU(inputs, act_type="leaky", slope=activation._alpha, **kwargs)
        kwargs.pop("name", None)  # a block or function names its own nodes
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        """One time step: ``(output, new_states)`` from ``inputs`` ``(batch, ...)`` and
        the list ``states``."""
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized; define ``hybrid_forward(self, F, x,
    states, **params)``.

    Args:
        prefix: see :class:`RecurrentCell`.
        params: see :class:`RecurrentCell`.
    """

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward(self, F, "
                                  "x, states, ...)")


class _GatedCell(HybridRecurrentCell):
    """RNN/LSTM/GRU cells: i2h and h2h weights and biases, deferred input size."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        gh = self._gates * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(gh, input_size),
                                          init=i2h_weight_initializer,
                                          allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(gh, hidden_size),
                                          init=h2h_weight_initializer,
                                          allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(gh,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(gh,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def infer_shape(self, inputs, *args) -> None:
        """The input size is the size of a flattened step, ``prod(inputs.shape[1:])``."""
        self.i2h_weight.shape = (self._gates * self._hidden_size,
                                 int(numpy.prod(inputs.shape[1:])))

    def _mapping(self) -> str:
        shape = self.i2h_weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._mapping()})"

    def _projections(self, F, inputs, h, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        n = self._gates * self._hidden_size
        nm = _step_names(self, F)
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=n,
                               **nm("i2h"))
        h2h = F.FullyConnected(data=h, weight=h2h_weight, bias=h2h_bias, num_hidden=n,
                               **nm("h2h"))
        return i2h, h2h


# --------------------------------------------------------------------------- cells
class RNNCell(_GatedCell):
    """Elman RNN cell: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``.

    Args:
        hidden_size: the number of units of the state and output.
        activation: ``'tanh'`` (default), ``'relu'``, ``'sigmoid'``, ``'softsign'``,
            another ``Activation`` type name, a ``gluon.nn.LeakyReLU`` or a callable.
        i2h_weight_initializer: initializer of the input weights ``(H, C)`` (None: the
            global initializer).
        h2h_weight_initializer: initializer of the recurrent weights ``(H, H)``.
        i2h_bias_initializer: initializer of the input bias (default ``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent bias (default ``'zeros'``).
        input_size: the number of input features C; 0 infers it from the first input.
        prefix: the name prefix (default ``'rnn0_'``, ``'rnn1_'``, ...).
        params: a ParameterDict to share parameters with.

    Inputs are ``(batch, C)`` and the list of one state ``(batch, H)``; outputs are
    ``(batch, H)`` and the list of the new state.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.RNNCell(3, input_size=2, prefix="rnn_")
        >>> cell.initialize()
        >>> out, states = cell(nd.ones((4, 2)), cell.begin_state(4))
        >>> out.shape, len(states), cell
        ((4, 3), 1, RNNCell(2 -> 3, tanh))
    """

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "rnn"

    def __repr__(self) -> str:
        return f"RNNCell({self._mapping()}, {self._activation})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        nm = _step_names(self, F)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, **nm("plus0")),
                                      self._activation, **nm("out"))
        return output, [output]


class LSTMCell(_GatedCell):
    """Long short-term memory cell (MXNet's gate order i, f, g, o)::

        i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*);  g = tanh(W_ig x + ... )
        c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t)

    Args:
        hidden_size: the number of units H.
        i2h_weight_initializer: initializer of the input weights ``(4H, C)``.
        h2h_weight_initializer: initializer of the recurrent weights ``(4H, H)``.
        i2h_bias_initializer: initializer of the input bias (default ``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent bias (default ``'zeros'``).
        input_size: the number of input features C; 0 infers it from the first input.
        prefix: the name prefix (default ``'lstm0_'``, ...).
        params: a ParameterDict to share parameters with.
        activation: the activation of the cell input and of the cell state (``'tanh'``).
        recurrent_activation: the activation of the gates (``'sigmoid'``).

    Inputs are ``(batch, C)`` and the states ``[h, c]``, each ``(batch, H)``; outputs
    are ``h_t`` and ``[h_t, c_t]``.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.LSTMCell(3, prefix="lstm_")
        >>> cell.initialize()
        >>> out, (h, c) = cell(nd.ones((4, 2)), cell.begin_state(4))
        >>> out.shape, c.shape, cell
        ((4, 3), (4, 3), LSTMCell(2 -> 12))
    """

    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        i2h, h2h = self._projections(F, inputs, states[0], i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        nm = _step_names(self, F)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, **nm("plus0")), num_outputs=4,
                               **nm("slice"))
        act, rec = self._activation, self._recurrent_activation
        in_gate = self._get_activation(F, gates[0], rec, **nm("i"))
        forget_gate = self._get_activation(F, gates[1], rec, **nm("f"))
        in_transform = self._get_activation(F, gates[2], act, **nm("c"))
        out_gate = self._get_activation(F, gates[3], rec, **nm("o"))
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], **nm("mul0")),
                                F.elemwise_mul(in_gate, in_transform, **nm("mul1")),
                                **nm("state"))
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, act,
                                                               **nm("activation0")),
                                **nm("out"))
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """Gated recurrent unit cell, cuDNN's variant (the reset gate multiplies the hidden
    projection, after the matrix product), gates in MXNet's order r, z, n::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr);  z = sigmoid(W_iz x + ... )
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h_t = (1 - z) * n + z * h

    Args:
        hidden_size: the number of units H.
        i2h_weight_initializer: initializer of the input weights ``(3H, C)``.
        h2h_weight_initializer: initializer of the recurrent weights ``(3H, H)``.
        i2h_bias_initializer: initializer of the input bias (default ``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent bias (default ``'zeros'``).
        input_size: the number of input features C; 0 infers it from the first input.
        prefix: the name prefix (default ``'gru0_'``, ...).
        params: a ParameterDict to share parameters with.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.GRUCell(3, prefix="gru_")
        >>> cell.initialize()
        >>> out, states = cell(nd.ones((4, 2)), cell.begin_state(4))
        >>> out.shape, cell
        ((4, 3), GRUCell(2 -> 9))
    """

    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prev_h = states[0]
        i2h, h2h = self._projections(F, inputs, prev_h, i2h_weight, h2h_weight, i2h_bias,
                                     h2h_bias)
        nm = _step_names(self, F)
        i2h_r, i2h_z, i2h_n = F.SliceChannel(i2h, num_outputs=3, **nm("i2h_slice"))
        h2h_r, h2h_z, h2h_n = F.SliceChannel(h2h, num_outputs=3, **nm("h2h_slice"))
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, **nm("plus0")),
                                  act_type="sigmoid", **nm("r_act"))
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, **nm("plus1")),
                                   act_type="sigmoid", **nm("z_act"))
        new_h = F.Activation(F.elemwise_add(i2h_n, F.elemwise_mul(reset_gate, h2h_n,
                                                                  **nm("mul0")),
                                            **nm("plus2")),
                             act_type="tanh", **nm("h_act"))
        ones = F.ones_like(update_gate, **nm("ones_like0"))
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, **nm("minus0")), new_h,
                           **nm("mul1")),
            F.elemwise_mul(update_gate, prev_h, **nm("mul20")), **nm("out"))
        return next_h, [next_h]


# --------------------------------------------------------------------------- stacks
class _CellStack:
    """What :class:`SequentialRNNCell` and :class:`HybridSequentialRNNCell` share: the
    cells, their states in order, a step through all of them and the unroll of one
    after the other."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)

    def __repr__(self) -> str:
        modstr = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{modstr}\n)"

    def add(self, cell) -> None:
        """Append a cell to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs) -> list:
        """The initial states of all cells, in order (see
        :meth:`RecurrentCell.begin_state` for the arguments)."""
        _not_modified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def __call__(self, inputs, states):
        """One step through the stacked cells, each taking its share of ``states``."""
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError(f"{type(self).__name__} '{self.name}' holds a "
                                          "BidirectionalCell, which cannot be stepped; use "
                                          "unroll()")
            n = len(cell.state_info())
            state = states[p:p + n]
            p += n
            inputs, state = cell(inputs, state)
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Unroll each stacked cell over the whole sequence in turn (see
        :meth:`RecurrentCell.unroll` for the arguments)."""
        self.reset()
        inputs, _, F, batch_size = _format_sequence(length, inputs, layout, None)
        num_cells = len(self._children)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size,
                                       layout.find("N") if _is_tensor(inputs) else 0)
        p = 0
        next_states = []
        for i, cell in enumerate(self._children.values()):
            n = len(cell.state_info())
            states = begin_state[p:p + n]
            p += n
            last = i == num_cells - 1
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=merge_outputs if last else None,
                                         valid_length=valid_length)
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self) -> int:
        return len(self._children)


class SequentialRNNCell(_CellStack, RecurrentCell):
    """Cells stacked one on top of the other (each step runs them in order).

    Args:
        prefix: see :class:`RecurrentCell`.
        params: see :class:`RecurrentCell`.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> stack = rnn.SequentialRNNCell()
        >>> with stack.name_scope():
        ...     stack.add(rnn.LSTMCell(4))
        ...     stack.add(rnn.GRUCell(3))
        >>> stack.initialize()
        >>> out, states = stack.unroll(5, nd.ones((2, 5, 3)), merge_outputs=True)
        >>> out.shape, [s.shape for s in states]
        ((2, 5, 3), [(2, 4), (2, 4), (2, 3)])
    """


class HybridSequentialRNNCell(_CellStack, HybridRecurrentCell):
    """Hybrid cells stacked one on top of the other.

    Args:
        prefix: see :class:`RecurrentCell`.
        params: see :class:`RecurrentCell`.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> stack = rnn.HybridSequentialRNNCell(prefix="stack_")
        >>> with stack.name_scope():
        ...     stack.add(rnn.RNNCell(4))
        ...     stack.add(rnn.DropoutCell(0.5))
        >>> len(stack), stack[0].name
        (2, 'stack_rnn0')
    """

    def hybrid_forward(self, F, inputs, states):
        return self.__call__(inputs, states)


# --------------------------------------------------------------------------- dropout
class DropoutCell(HybridRecurrentCell):
    """Dropout on the input, in training mode only (``autograd.record()`` or
    ``train_mode()``); states pass through unchanged.

    Args:
        rate: the fraction of elements to drop.
        axes: axes on which the dropout mask is shared (``()``: regular dropout).
        prefix: see :class:`RecurrentCell`.
        params: see :class:`RecurrentCell`.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.DropoutCell(0.5)
        >>> out, states = cell(nd.ones((2, 3)), [])
        >>> out.asnumpy().tolist()                   # not training: the identity
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real):
            raise TypeError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self) -> str:
        return f"DropoutCell(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self) -> str:
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if _is_tensor(inputs):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs, valid_length=None)


# --------------------------------------------------------------------------- modifiers
class ModifierCell(HybridRecurrentCell):
    """Base class of the cells that modify another cell (``ZoneoutCell``,
    ``ResidualCell``).

    The base cell becomes a child named ``base_cell``; from then on, call the modifier
    cell, not the base cell (whose ``begin_state`` refuses). Subclasses define
    ``hybrid_forward(self, F, inputs, states)``.

    Args:
        base_cell: the cell to modify (a hybrid cell, not modified already).
    """

    def __init__(self, base_cell):
        if not isinstance(base_cell, HybridRecurrentCell):
            raise TypeError(f"{type(self).__name__}: base_cell must be a hybrid recurrent "
                            f"cell, got {type(base_cell).__name__}")
        if base_cell._modified:
            raise ValueError(f"Cell {base_cell.name} is already modified. One cell cannot be "
                             "modified twice")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        """The base cell's ParameterDict."""
        base = self.__dict__.get("base_cell")
        return base.params if base is not None else self._params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=nd.zeros, **kwargs) -> list:
        """The base cell's initial states (see :meth:`RecurrentCell.begin_state`)."""
        _not_modified(self)
        self.base_cell._modified = False
        try:
            begin = self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True
        return begin

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward(self, F, "
                                  "inputs, states)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout (Krueger et al., 2016) on a base cell: in training, each output and
    state unit keeps its previous value with probability ``zoneout_outputs`` /
    ``zoneout_states``; in inference the base cell runs unchanged.

    Args:
        base_cell: the cell to modify (not bidirectional).
        zoneout_outputs: the probability of keeping the previous output.
        zoneout_states: the probability of keeping the previous states.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.ZoneoutCell(rnn.GRUCell(3, prefix="gru_"), 0.5, 0.5)
        >>> cell.initialize()
        >>> out, states = cell.unroll(4, nd.ones((2, 4, 5)), merge_outputs=True)
        >>> out.shape, cell.name
        ((2, 4, 3), 'gru_zoneout')
    """

    def __init__(self, base_cell, zoneout_outputs=0.0, zoneout_states=0.0):
        if isinstance(base_cell, BidirectionalCell) or any(
                isinstance(c, BidirectionalCell) for c in base_cell._children.values()):
            raise ValueError("BidirectionalCell doesn't support zoneout since it doesn't "
                             "support step. Please add ZoneoutCell to the cells underneath "
                             "instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self) -> str:
        return (f"ZoneoutCell(p_out={self.zoneout_outputs}, p_state={self.zoneout_states}, "
                f"{self.base_cell!r})")

    def _alias(self) -> str:
        return "zoneout"

    def reset(self) -> None:
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        cell, p_outputs, p_states = self.base_cell, self.zoneout_outputs, self.zoneout_states
        next_output, next_states = cell(inputs, states)

        def mask(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0.0 else next_output)
        states = ([F.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0.0 else next_states)
        self._prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """A residual connection around a base cell (Wu et al., 2016): the output is the base
    cell's output plus the input (so their sizes must agree).

    Args:
        base_cell: the cell to modify.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.ResidualCell(rnn.GRUCell(3, prefix="gru_"))
        >>> cell.initialize()
        >>> out, states = cell.unroll(4, nd.ones((2, 4, 3)), merge_outputs=True)
        >>> out.shape
        (2, 4, 3)
    """

    def __init__(self, base_cell):
        super().__init__(base_cell)

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        name = {} if F is nd else {"name": f"t{self._counter}_fwd"}
        return F.elemwise_add(output, inputs, **name), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs,
                                                    valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = _is_tensor(outputs)
        inputs, axis, F, _ = _format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = _mask_sequence_variable_length(F, inputs, length, valid_length, axis,
                                                    merge_outputs)
        if merge_outputs:
            outputs = F.elemwise_add(outputs, inputs)
        else:
            outputs = [F.elemwise_add(i, j) for i, j in zip(outputs, inputs)]
        return outputs, states


# --------------------------------------------------------------------------- bidirectional
class BidirectionalCell(HybridRecurrentCell):
    """Run one cell forward and another backward in time, concatenating their outputs
    on the feature axis. It can only be unrolled, not stepped.

    Args:
        l_cell: the cell for the forward direction (child ``'l_cell'``).
        r_cell: the cell for the reverse direction (child ``'r_cell'``).
        output_prefix: the prefix of the outputs' names (symbolic mode).

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> bi = rnn.BidirectionalCell(rnn.LSTMCell(4, prefix="l0_"),
        ...                            rnn.LSTMCell(4, prefix="r0_"))
        >>> bi.initialize()
        >>> out, states = bi.unroll(5, nd.ones((5, 2, 3)), layout="TNC", merge_outputs=True)
        >>> out.shape, len(states)
        ((5, 2, 8), 4)
    """

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise NotImplementedError("Bidirectional cannot be stepped. Please use unroll")

    def __repr__(self) -> str:
        return (f"BidirectionalCell(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return _cells_state_info(self._children.values(), batch_size)

    def begin_state(self, **kwargs) -> list:
        """The initial states of the forward cell, then of the reverse cell."""
        _not_modified(self)
        return _cells_begin_state(self._children.values(), **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, False)
        reversed_inputs = _reverse_sequences(inputs, length, valid_length)
        begin_state = _get_begin_state(self, F, begin_state, inputs, batch_size)
        states = begin_state
        l_cell, r_cell = self._children.values()
        n_l = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_l],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_l:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        reversed_r_outputs = _reverse_sequences(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = _is_tensor(l_outputs)
            l_outputs, _, _, _ = _format_sequence(None, l_outputs, layout, merge_outputs)
            reversed_r_outputs, _, _, _ = _format_sequence(None, reversed_r_outputs, layout,
                                                           merge_outputs)
        if merge_outputs:
            if not _is_tensor(reversed_r_outputs):
                reversed_r_outputs = F.stack(*reversed_r_outputs, axis=axis)
            outputs = F.concat(l_outputs, reversed_r_outputs, dim=2,
                               **({} if F is nd else {"name": f"{self._output_prefix}out"}))
        else:
            outputs = [F.concat(l_o, r_o, dim=1,
                                **({} if F is nd else {"name": f"{self._output_prefix}t{i}"}))
                       for i, (l_o, r_o) in enumerate(zip(l_outputs, reversed_r_outputs))]
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, l_states + r_states
