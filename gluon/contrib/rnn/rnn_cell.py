"""MXNet 1.9's ``gluon.contrib.rnn.rnn_cell``: ``VariationalDropoutCell``, ``LSTMPCell``
and ``dynamic_unroll``.
"""
from __future__ import annotations

from ...rnn import BidirectionalCell, HybridRecurrentCell, ModifierCell, SequentialRNNCell
from ...rnn.rnn_cell import (
    _as_list,
    _format_sequence,
    _get_begin_state,
    _is_tensor,
    _mask_sequence_variable_length,
    _step_names,
)

__all__ = ["LSTMPCell", "VariationalDropoutCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Variational dropout (Gal and Ghahramani, 2016) on a base cell: one dropout mask per
    sequence, shared by all time steps, for the inputs, the first state and the outputs.

    The masks are drawn at the first step and kept until :meth:`reset` (``unroll`` resets);
    stepping the cell by hand, call ``reset()`` between sequences. Like ``Dropout``, the
    masks act in training mode only.

    Args:
        base_cell: the cell to modify.
        drop_inputs: the dropout rate of the inputs (0: none).
        drop_states: the dropout rate of the first state (``h``) fed to each step.
        drop_outputs: the dropout rate of the outputs.

    Example:
        >>> from core import nd, autograd
        >>> from gluon import rnn
        >>> cell = VariationalDropoutCell(rnn.RNNCell(4), drop_outputs=0.5)
        >>> cell.initialize()
        >>> with autograd.train_mode():
        ...     out, _ = cell.unroll(3, nd.ones((2, 3, 5)), merge_outputs=True)
        >>> zero = (out.asnumpy() == 0)
        >>> bool((zero[:, 0] == zero[:, 2]).all())   # the same mask at every step
        True
    """

    def __init__(self, base_cell, drop_inputs: float = 0., drop_states: float = 0.,
                 drop_outputs: float = 0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise ValueError("BidirectionalCell doesn't support variational state dropout. "
                             "Please add VariationalDropoutCell to the cells underneath "
                             "instead.")
        if (drop_states and isinstance(base_cell, SequentialRNNCell)
                and getattr(base_cell, "_bidirectional", False)):
            raise ValueError("Bidirectional SequentialRNNCell doesn't support variational "
                             "state dropout. Please add VariationalDropoutCell to the cells "
                             "underneath instead.")
        for what, p in (("drop_inputs", drop_inputs), ("drop_states", drop_states),
                        ("drop_outputs", drop_outputs)):
            if not 0 <= p < 1:
                raise ValueError(f"VariationalDropoutCell: {what} must be in [0, 1), got {p!r}")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _alias(self) -> str:
        return "vardrop"

    def reset(self) -> None:
        """Forget the masks (and reset the step counters)."""
        super().reset()
        self.drop_inputs_mask = None
        self.drop_states_mask = None
        self.drop_outputs_mask = None

    def _initialize_input_masks(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)

    def _initialize_output_mask(self, F, output):
        if self.drop_outputs and self.drop_outputs_mask is None:
            self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)

    def hybrid_forward(self, F, inputs, states):
        cell = self.base_cell
        self._initialize_input_masks(F, inputs, states)
        if self.drop_states:
            states = list(states)
            # only h, always the first state, is dropped
            states[0] = states[0] * self.drop_states_mask
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        next_output, next_states = cell(inputs, states)
        self._initialize_output_mask(F, next_output)
        if self.drop_outputs:
            next_output = next_output * self.drop_outputs_mask
        return next_output, next_states

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run the cell over ``length`` steps (see :meth:`gluon.rnn.RecurrentCell.unroll`).

        Without state dropout, input and output dropout act on the whole sequence at once
        (one mask broadcast along the time axis), as in MXNet.
        """
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = _format_sequence(length, inputs, layout, True)
        states = _get_begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = _is_tensor(outputs)
        outputs, _, _, _ = _format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = _mask_sequence_variable_length(F, outputs, length, valid_length, axis,
                                                     merge_outputs)
        return outputs, states


class LSTMPCell(HybridRecurrentCell):
    r"""LSTM with a projected recurrent state (LSTMP, Sak et al., 2014)::

        i, f, o = sigmoid(W_i* x + b_i* + W_r* r_{t-1} + b_r*);  g = tanh(...)
        c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t);  r_t = W_hr h_t

    Parameters (MXNet's names and shapes): ``i2h_weight (4H, C)``, ``h2h_weight (4H, P)``,
    ``h2r_weight (P, H)``, ``i2h_bias``/``h2h_bias (4H,)``; gate order i, f, g, o.

    Args:
        hidden_size: the cell state size H.
        projection_size: the output (projected) size P.
        i2h_weight_initializer: initializer of the input weights.
        h2h_weight_initializer: initializer of the recurrent weights.
        h2r_weight_initializer: initializer of the projection.
        i2h_bias_initializer: initializer of the input bias (``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent bias (``'zeros'``).
        input_size: C; 0 infers it from the first input.
        prefix: the name prefix (default ``'lstmp0_'``, ...).
        params: a ParameterDict to share parameters with.

    Inputs are ``(batch, C)`` and the states ``[r (batch, P), c (batch, H)]``; outputs
    are ``r_t`` and ``[r_t, c_t]``.

    Example:
        >>> from core import nd
        >>> cell = LSTMPCell(6, 2, input_size=3)
        >>> cell.initialize()
        >>> out, states = cell(nd.ones((4, 3)), cell.begin_state(4))
        >>> out.shape, [s.shape for s in states], cell
        ((4, 2), [(4, 2), (4, 6)], LSTMPCell(3 -> 24 -> 2))
    """

    def __init__(self, hidden_size: int, projection_size: int, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 input_size: int = 0, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        for what, v in (("hidden_size", hidden_size), ("projection_size", projection_size)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"LSTMPCell: {what} must be a positive integer, got {v!r}")
        self._hidden_size = hidden_size
        self._input_size = input_size
        self._projection_size = projection_size
        h4 = 4 * hidden_size
        self.i2h_weight = self.params.get("i2h_weight", shape=(h4, input_size),
                                          init=i2h_weight_initializer, allow_deferred_init=True)
        self.h2h_weight = self.params.get("h2h_weight", shape=(h4, projection_size),
                                          init=h2h_weight_initializer, allow_deferred_init=True)
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer, allow_deferred_init=True)
        self.i2h_bias = self.params.get("i2h_bias", shape=(h4,), init=i2h_bias_initializer,
                                        allow_deferred_init=True)
        self.h2h_bias = self.params.get("h2h_bias", shape=(h4,), init=h2h_bias_initializer,
                                        allow_deferred_init=True)

    def infer_shape(self, inputs, *args) -> None:
        """The input size is the size of a flattened step."""
        size = 1
        for d in inputs.shape[1:]:
            size *= d
        self.i2h_weight.shape = (4 * self._hidden_size, size)

    def state_info(self, batch_size: int = 0) -> list:
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self) -> str:
        return "lstmp"

    def __repr__(self) -> str:
        shape, proj = self.i2h_weight.shape, self.h2r_weight.shape
        return (f"{type(self).__name__}({shape[1] if shape[1] else None} -> {shape[0]} -> "
                f"{proj[0]})")

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight, i2h_bias,
                       h2h_bias):
        nm = _step_names(self, F)
        h4 = self._hidden_size * 4
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias, num_hidden=h4,
                               **nm("i2h"))
        h2h = F.FullyConnected(data=states[0], weight=h2h_weight, bias=h2h_bias, num_hidden=h4,
                               **nm("h2h"))
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, **nm("slice"))
        in_gate = F.Activation(gates[0], act_type="sigmoid", **nm("i"))
        forget_gate = F.Activation(gates[1], act_type="sigmoid", **nm("f"))
        in_transform = F.Activation(gates[2], act_type="tanh", **nm("c"))
        out_gate = F.Activation(gates[3], act_type="sigmoid", **nm("o"))
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * in_transform,
                                **nm("state"))
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                **nm("hidden"))
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, **nm("out"))
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs: float = 0, drop_outputs: float = 0,
                   layout: str = "TNC", valid_length=None):
    """Run ``cell`` over the whole sequence ``inputs`` (MXNet's ``contrib.rnn.dynamic_unroll``).

    MXNet runs the steps with ``contrib.foreach``; here they are unrolled, with the same
    results: past a sequence's ``valid_length`` the states stop changing and the outputs
    are 0.

    Args:
        cell: the recurrent cell.
        inputs: one array, ``(T, N, ...)`` for ``'TNC'`` or ``(N, T, ...)`` for ``'NTC'``.
        begin_state: the initial states (a list).
        drop_inputs: dropout rate of the inputs (one mask along time).
        drop_outputs: dropout rate of the outputs (one mask along time).
        layout: the layout of ``inputs`` and of the outputs.
        valid_length: None or ``(N,)`` sequence lengths.

    Returns:
        ``(outputs, states)``: one array in ``layout`` and the list of final states.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> cell = rnn.LSTMCell(5)
        >>> cell.initialize()
        >>> states = [nd.zeros((2, 5)), nd.zeros((2, 5))]
        >>> out, states = dynamic_unroll(cell, nd.ones((3, 2, 4)), states,
        ...                              valid_length=nd.array([2, 3]))
        >>> out.shape, float(out[2, 0].abs().sum().asscalar())
        ((3, 2, 5), 0.0)
    """
    inputs, axis, F, _ = _format_sequence(None, inputs, layout, True)
    if not _is_tensor(inputs):
        raise TypeError("dynamic_unroll: inputs must be one array (the whole sequence)")
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(axis,))
    try:
        steps = int(inputs.shape[axis])
    except (AttributeError, TypeError, ValueError, IndexError):
        steps = None
    if not steps:
        raise ValueError("dynamic_unroll: the number of steps must be known (call it on "
                         "NDArrays, or in a hybridized block, which traces with shapes)")
    seq = _as_list(F.split(inputs, axis=axis, num_outputs=steps, squeeze_axis=True))
    states = list(_as_list(begin_state))
    outputs = []
    for t, x in enumerate(seq):
        out, new_states = cell(x, states)
        if valid_length is not None:  # past a sequence's end its states stay
            alive = F.broadcast_greater(valid_length, F.ones_like(valid_length) * t)
            new_states = [F.where(F.broadcast_like(F.reshape(alive, shape=(-1,) + (1,) * (
                len(n.shape) - 1)), n), n, s) for n, s in zip(new_states, states)]
        states = list(new_states)
        outputs.append(out)
    outputs = F.stack(*outputs, axis=axis)
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(axis,))
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
    return outputs, states
