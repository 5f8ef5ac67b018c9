"""Fused recurrent layers (MXNet Gluon 1.9's ``gluon.rnn.RNN``, ``LSTM``, ``GRU``).

Each layer keeps one set of parameters per layer ``i`` and direction (``l`` forward,
``r`` reverse), named as in MXNet 1.9: ``l0_i2h_weight`` ``(G*H, C)``,
``l0_h2h_weight`` ``(G*H, H)``, ``l0_i2h_bias`` and ``l0_h2h_bias`` ``(G*H,)``, then
``r0_...``, ``l1_...`` (G = 1 for RNN, 4 for LSTM, 3 for GRU). Every call
concatenates them into the flat vector of the fused operator ``nd.RNN`` in MXNet's
packing order (all weights by layer, direction, i2h then h2h; then all biases in the
same order), so gradients reach each parameter. ``save_parameters`` names them as
MXNet 1.9 does (``_unfused.0.i2h_weight``; ``_unfused.0.l_cell.i2h_weight`` when
bidirectional).

Called as ``layer(x)`` the layer returns the output only; ``layer(x, states)``
returns ``(output, new_states)``. Dropout between layers acts in training mode
only (``autograd.record()`` or ``train_mode()``).

Example:
    >>> from core import nd
    >>> from gluon import rnn
    >>> layer = rnn.LSTM(8, num_layers=2, prefix="lstm_")
    >>> layer.initialize()
    >>> x = nd.ones((5, 3, 4))                       # (time, batch, features): TNC
    >>> layer(x).shape
    (5, 3, 8)
    >>> out, (h, c) = layer(x, layer.begin_state(3))
    >>> h.shape, c.shape
    ((2, 3, 8), (2, 3, 8))
    >>> layer
    LSTM(4 -> 8, TNC, num_layers=2)
"""
from __future__ import annotations

import re

from core import nd
from core.ndarray import NDArray

from ..block import HybridBlock
from ..hybrid import has_symbol
from . import lstm_projection, rnn_cell

__all__ = ["GRU", "LSTM", "RNN"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_PARAM_RE = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")


class _RNNLayer(HybridBlock):
    """The implementation shared by :class:`RNN`, :class:`LSTM` and :class:`GRU`."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 use_sequence_length=False, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if layout not in ("TNC", "NTC"):
            raise ValueError(f"Invalid layout {layout!r}; must be one of ['TNC' or 'NTC']")
        if projection_size and mode != "lstm":
            raise ValueError(f"{name}: projection_size is for LSTM only, got "
                             f"projection_size={projection_size!r}")
        if projection_size and (isinstance(projection_size, bool)
                                or not isinstance(projection_size, int) or projection_size < 1):
            raise ValueError(f"{name}: projection_size must be a positive integer or None, "
                             f"got {projection_size!r}")
        if lstm_state_clip_min is not None or lstm_state_clip_max is not None:
            raise ValueError(f"{name}: state_clip_min/state_clip_max are not supported "
                             "(MXNet offers LSTM state clipping with cuDNN only); leave "
                             "them None")
        for what, v, low in (("hidden_size", hidden_size, 1), ("num_layers", num_layers, 1),
                             ("input_size", input_size, 0)):
            if isinstance(v, bool) or not isinstance(v, int) or v < low:
                raise ValueError(f"{name}: {what} must be an integer >= {low}, got {v!r}")
        if not 0 <= dropout < 1:
            raise ValueError(f"{name}: dropout must be in [0, 1), got {dropout!r}")
        self._hidden_size = hidden_size
        self._projection_size = projection_size if projection_size else None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._h2r_weight_initializer = h2r_weight_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_state_clip_nan = lstm_state_clip_nan
        self._dtype = dtype
        self._use_sequence_length = use_sequence_length
        self.skip_states = None
        self._gates = _GATES[mode]
        ng, ni, nh = self._gates, input_size, hidden_size
        npj = self._projection_size
        for i in range(num_layers):
            for j in "lr"[:self._dir]:
                self._register_param(f"{j}{i}_i2h_weight", (ng * nh, ni),
                                     i2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_h2h_weight", (ng * nh, npj or nh),
                                     h2h_weight_initializer, dtype)
                self._register_param(f"{j}{i}_i2h_bias", (ng * nh,), i2h_bias_initializer,
                                     dtype)
                self._register_param(f"{j}{i}_h2h_bias", (ng * nh,), h2h_bias_initializer,
                                     dtype)
                if npj:  # MXNet's LSTMP: the projection of the hidden state, (P, H)
                    self._register_param(f"{j}{i}_h2r_weight", (npj, nh),
                                         h2r_weight_initializer, dtype)
            ni = (npj or nh) * self._dir

    def _register_param(self, name, shape, init, dtype):
        p = self.params.get(name, shape=shape, init=init, allow_deferred_init=True,
                            dtype=dtype)
        setattr(self, name, p)
        return p

    def __repr__(self) -> str:
        s = f"{type(self).__name__}({{mapping}}, {self._layout}"
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        shape = self.l0_i2h_weight.shape
        mapping = f"{shape[1] if shape[1] else None} -> {shape[0] // self._gates}"
        return s.format(mapping=mapping) + ")"

    # ------------------------------------------------------------------ parameter names
    def _structural_name(self, name: str) -> str:
        """MXNet 1.9's structural names: ``_unfused.<layer>.<i2h|h2h>_<weight|bias>``, or
        ``_unfused.<layer>.<l|r>_cell.<...>`` when bidirectional (the names of the
        equivalent stack of cells), for ``_collect_params_with_prefix``,
        ``save_parameters``/``load_parameters`` and ``share_parameters``."""
        d, layer, g, t = _PARAM_RE.match(name).groups()
        if self._dir == 2:
            return f"_unfused.{layer}.{d}_cell.{g}_{t}"
        return f"_unfused.{layer}.{g}_{t}"

    # ------------------------------------------------------------------ shapes and states
    def infer_shape(self, inputs, *args) -> None:
        """The input size of the first layer is the last axis of ``inputs``."""
        ni = inputs.shape[-1]
        for j in "lr"[:self._dir]:
            p = getattr(self, f"{j}0_i2h_weight")
            p.shape = (self._gates * self._hidden_size, ni)

    def state_info(self, batch_size: int = 0) -> list:
        """Shape, layout and dtype of each state (a list of dicts): ``h`` (and ``c`` for
        the LSTM), each ``(num_layers * D, N, H)``."""
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        info = [{"shape": shape, "__layout__": "LNC", "dtype": self._dtype}
                for _ in range(2 if self._mode == "lstm" else 1)]
        if self._projection_size:  # h is the projected state
            info[0]["shape"] = (shape[0], batch_size, self._projection_size)
        return info

    def _unfuse(self):
        """The equivalent stack of cells, sharing this layer's parameters: a
        ``HybridSequentialRNNCell`` of cells (``BidirectionalCell`` pairs when
        bidirectional) with ``DropoutCell`` between layers."""
        hidden = self._hidden_size
        if self._projection_size:
            raise ValueError(f"{type(self).__name__} '{self.name}': a layer with "
                             "projection_size has no equivalent stack of gluon.rnn cells "
                             "(use gluon.contrib.rnn.LSTMPCell to build one)")

        def get_cell(**kwargs):
            if self._mode == "rnn_relu":
                return rnn_cell.RNNCell(hidden, activation="relu", **kwargs)
            if self._mode == "rnn_tanh":
                return rnn_cell.RNNCell(hidden, activation="tanh", **kwargs)
            if self._mode == "lstm":
                return rnn_cell.LSTMCell(hidden, **kwargs)
            return rnn_cell.GRUCell(hidden, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            ni = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": ni,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(get_cell(prefix=f"l{i}_", **kwargs),
                                                         get_cell(prefix=f"r{i}_", **kwargs)))
                else:
                    stack.add(get_cell(prefix=f"l{i}_", **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                ni = hidden * self._dir
        return stack

    def cast(self, dtype) -> None:
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size: int = 0, func=nd.zeros, **kwargs) -> list:
        """Initial states for the first step.

        Args:
            batch_size: the size of the batch (``N``).
            func: the function that creates each state from ``shape``, ``dtype`` (and
                ``name``), e.g. ``nd.zeros``, ``nd.ones``, ``nd.random.uniform``.
            **kwargs: more arguments of ``func`` (``ctx``, ``dtype``, ...).

        Returns:
            A list of NDArrays ``(num_layers * directions, batch_size, hidden_size)``:
            ``[h]``, or ``[h, c]`` for LSTM.
        """
        states = []
        for i, info in enumerate(self.state_info(batch_size)):
            info = dict(info) if info is not None else {}
            info.update(kwargs)
            states.append(rnn_cell._call_state_func(func, f"{self.prefix}h0_{i}", info))
        return states

    # ------------------------------------------------------------------ forward
    def __call__(self, inputs, states=None, sequence_length=None, **kwargs):
        """Run the layer over the sequence ``inputs``.

        Args:
            inputs: ``(T, N, C)`` for layout ``'TNC'``, ``(N, T, C)`` for ``'NTC'``.
            states: the initial states (an NDArray, or a list: ``[h, c]`` for LSTM),
                each ``(num_layers * directions, N, hidden_size)``; zeros if None.
            sequence_length: ``(N,)`` valid lengths, used (and required) when the
                layer was built with ``use_sequence_length=True``.

        Returns:
            The output ``(T, N, directions * hidden_size)`` (``(N, T, ...)`` for NTC)
            when ``states`` is None, else ``(output, new_states)`` with the list of
            final states.
        """
        if has_symbol((inputs,)):
            return self._call_on_symbols(inputs, states, sequence_length, **kwargs)
        skip = self.skip_states = states is None
        if states is None:
            if not isinstance(inputs, NDArray):
                raise TypeError(f"{type(self).__name__}: inputs must be an NDArray, got "
                                f"{type(inputs).__name__}")
            batch_size = inputs.shape[self._layout.find("N")] if inputs.ndim == 3 else 0
            states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
        if isinstance(states, NDArray):
            states = [states]
        states = list(states)
        if self._use_sequence_length:
            if sequence_length is None:
                raise ValueError(f"{type(self).__name__} '{self.name}' was built with "
                                 "use_sequence_length=True: pass sequence_length, an NDArray "
                                 "(batch_size,) of valid lengths")
            out = super().__call__(inputs, states, sequence_length, **kwargs)
        else:
            out = super().__call__(inputs, states, **kwargs)
        # The states are always computed (one graph whether or not the caller wants them).
        return out[0] if skip else out

    def _call_on_symbols(self, inputs, states, sequence_length, **kwargs):
        """MXNet 1.x's symbolic call: zero states of the inputs' batch size unless given,
        and the output (with the final states when ``states`` were given) as Symbols."""
        skip = states is None
        if states is None:
            states = self._symbol_begin_state(inputs)
        elif has_symbol((states,)) and not isinstance(states, (list, tuple)):
            states = [states]
        extra = (sequence_length,) if self._use_sequence_length else ()
        if self._use_sequence_length and sequence_length is None:
            raise ValueError(f"{type(self).__name__} '{self.name}' was built with "
                             "use_sequence_length=True: pass sequence_length")
        out = super().__call__(inputs, list(states), *extra, **kwargs)
        return out[0] if skip else out

    def _symbol_begin_state(self, inputs) -> list:
        """Zero states ``(layers * directions, N, H)`` whose ``N`` is the inputs' batch
        size (known when the Symbol is bound), for layer calls on Symbols."""
        from core import sym

        n_axis = self._layout.find("N")
        shape = (self._num_layers * self._dir, 1, self._hidden_size)
        return [sym.broadcast_like(sym.zeros(shape=shape, dtype=self._dtype), inputs,
                                   lhs_axes=(1,), rhs_axes=(n_axis,))
                for _ in self.state_info(0)]

    def hybrid_forward(self, F, inputs, states, sequence_length=None, **kwargs):
        if F is not nd:  # Symbols: shapes are checked when the graph is bound
            return self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        if inputs.ndim != 3:
            raise ValueError(f"{type(self).__name__}: inputs must be 3-D ({self._layout}), "
                             f"got shape {inputs.shape}")
        batch_size = inputs.shape[self._layout.find("N")]
        info = self.state_info(batch_size)
        if len(states) != len(info):
            raise ValueError(f"{type(self).__name__}: expected {len(info)} state(s) "
                             f"({'[h, c]' if len(info) == 2 else '[h]'}), got {len(states)}")
        for state, inf in zip(states, info):
            if state.shape != inf["shape"]:
                raise ValueError(f"Invalid recurrent state shape. Expecting {inf['shape']}, "
                                 f"got {state.shape}.")
        out = self._forward_kernel(F, inputs, states, sequence_length, **kwargs)
        return out

    def _forward_kernel(self, F, inputs, states, sequence_length, **kwargs):
        """The fused operator on the flat parameter vector (MXNet's packing order)."""
        if self._projection_size:
            if F is not nd and not isinstance(getattr(inputs, "shape", None), tuple):
                raise ValueError(f"{type(self).__name__} '{self.name}' with projection_size "
                                 "runs step by step and needs the sequence length: call it "
                                 "on NDArrays (hybridized or not), not on Symbols")
            return lstm_projection.lstmp_forward(F, self, inputs, states, sequence_length,
                                                 kwargs)
        params = [kwargs[f"{d}{layer}_{g}_{t}"].reshape(-1)
                  for t in ("weight", "bias")
                  for layer in range(self._num_layers)
                  for d in "lr"[:self._dir]
                  for g in ("i2h", "h2h")]
        flat = F.concat(*params, dim=0)
        lstm = self._mode == "lstm"
        rnn = F.RNN(inputs, flat, states[0], states[1] if lstm else None,
                    sequence_length if self._use_sequence_length else None,
                    use_sequence_length=self._use_sequence_length,
                    state_size=self._hidden_size, num_layers=self._num_layers,
                    bidirectional=self._dir == 2, p=self._dropout, state_outputs=True,
                    mode=self._mode, lstm_state_clip_nan=self._lstm_state_clip_nan,
                    layout=self._layout)
        if lstm:
            return rnn[0], [rnn[1], rnn[2]]
        return rnn[0], [rnn[1]]


class RNN(_RNNLayer):
    """A multi-layer Elman RNN with ``tanh`` or ``relu``:
    ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` in each layer.

    Args:
        hidden_size: the number of features H of the hidden state.
        num_layers: the number of stacked layers.
        activation: ``'relu'`` (default) or ``'tanh'``.
        layout: ``'TNC'`` (default; time, batch, features) or ``'NTC'``.
        dropout: dropout rate on the outputs of each layer but the last (training
            mode only).
        bidirectional: also run each layer backward in time (outputs concatenated).
        i2h_weight_initializer: initializer of the input weights (None: the global
            initializer).
        h2h_weight_initializer: initializer of the recurrent weights.
        i2h_bias_initializer: initializer of the input biases (default ``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent biases (default ``'zeros'``).
        input_size: the number of input features C; 0 infers it from the first input.
        dtype: the dtype of the parameters and default states.
        use_sequence_length: take a ``sequence_length`` ``(N,)`` argument: outputs past
            a sequence's length are 0 and its final state is that of its last valid
            step.
        **kwargs: ``prefix`` and ``params`` (see :class:`gluon.Block`).

    Inputs are ``data`` and optionally ``states`` (a list of one array
    ``(num_layers * D, N, H)``, D = 2 if bidirectional); the output is ``(T, N, D*H)``
    (``(N, T, D*H)`` for NTC), with the final states when ``states`` were given.

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> layer = rnn.RNN(6, 2, bidirectional=True)
        >>> layer.initialize()
        >>> out, hn = layer(nd.ones((5, 3, 4)), nd.zeros((4, 3, 6)))
        >>> out.shape, hn[0].shape
        ((5, 3, 12), (4, 3, 6))
    """

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        if activation not in ("relu", "tanh"):
            raise ValueError(f"RNN: activation must be 'relu' or 'tanh', got {activation!r}")
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)



class LSTM(_RNNLayer):
    """A multi-layer long short-term memory RNN (gates i, f, g, o as in MXNet)::

        i, f, o = sigmoid(W_i* x + b_i* + W_h* h + b_h*);  g = tanh(...)
        c_t = f * c_{t-1} + i * g;  h_t = o * tanh(c_t)

    Args:
        hidden_size: the number of features H of the hidden state.
        num_layers: the number of stacked layers.
        layout: ``'TNC'`` (default) or ``'NTC'``.
        dropout: dropout rate on the outputs of each layer but the last (training
            mode only).
        bidirectional: also run each layer backward in time.
        input_size: the number of input features C; 0 infers it from the first input.
        i2h_weight_initializer: initializer of the input weights.
        h2h_weight_initializer: initializer of the recurrent weights.
        i2h_bias_initializer: initializer of the input biases (default ``'zeros'``;
            ``'lstmbias'`` sets the forget gate's to 1).
        h2h_bias_initializer: initializer of the recurrent biases (default ``'zeros'``).
        projection_size: P, to project the hidden state to P features (MXNet's LSTMP:
            ``r_t = W_h2r h_t`` is the output and the recurrent state; parameters
            ``l0_h2r_weight (P, H)``, ``h2h_weight (4H, P)``). None: no projection.
        h2r_weight_initializer: the projection's initializer.
        state_clip_min: not supported (cuDNN only in MXNet); must be None.
        state_clip_max: not supported (cuDNN only in MXNet); must be None.
        state_clip_nan: accepted for compatibility.
        dtype: the dtype of the parameters and default states.
        use_sequence_length: take a ``sequence_length`` ``(N,)`` argument (see
            :class:`RNN`).
        **kwargs: ``prefix`` and ``params`` (see :class:`gluon.Block`).

    States are ``[h, c]``, each ``(num_layers * D, N, H)`` (``h`` is ``(..., P)`` with a
    projection).

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> layer = rnn.LSTM(5, layout="NTC", input_size=4)
        >>> layer.initialize()
        >>> layer(nd.ones((3, 7, 4))).shape
        (3, 7, 5)
        >>> [s.shape for s in layer.begin_state(3)]
        [(1, 3, 5), (1, 3, 5)]
        >>> lstmp = rnn.LSTM(8, projection_size=3, input_size=4)
        >>> lstmp.initialize()
        >>> out, (h, c) = lstmp(nd.ones((7, 2, 4)), lstmp.begin_state(2))
        >>> out.shape, h.shape, c.shape, lstmp.l0_h2r_weight.shape
        ((7, 2, 3), (1, 2, 3), (1, 2, 8), (3, 8))
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", projection_size=None,
                 h2r_weight_initializer=None, state_clip_min=None, state_clip_max=None,
                 state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)



class GRU(_RNNLayer):
    """A multi-layer gated recurrent unit RNN, cuDNN's variant (gates r, z, n; the reset
    gate multiplies the hidden projection)::

        r = sigmoid(W_ir x + b_ir + W_hr h + b_hr);  z = sigmoid(...)
        n = tanh(W_in x + b_in + r * (W_hn h + b_hn));  h_t = (1 - z) * n + z * h

    Args:
        hidden_size: the number of features H of the hidden state.
        num_layers: the number of stacked layers.
        layout: ``'TNC'`` (default) or ``'NTC'``.
        dropout: dropout rate on the outputs of each layer but the last (training
            mode only).
        bidirectional: also run each layer backward in time.
        input_size: the number of input features C; 0 infers it from the first input.
        i2h_weight_initializer: initializer of the input weights.
        h2h_weight_initializer: initializer of the recurrent weights.
        i2h_bias_initializer: initializer of the input biases (default ``'zeros'``).
        h2h_bias_initializer: initializer of the recurrent biases (default ``'zeros'``).
        dtype: the dtype of the parameters and default states.
        use_sequence_length: take a ``sequence_length`` ``(N,)`` argument (see
            :class:`RNN`).
        **kwargs: ``prefix`` and ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import rnn
        >>> layer = rnn.GRU(5, prefix="gru_")
        >>> layer.initialize()
        >>> out, hn = layer(nd.ones((7, 3, 4)), layer.begin_state(3))
        >>> out.shape, hn[0].shape
        ((7, 3, 5), (1, 3, 5))
        >>> list(layer.collect_params().keys())
        ['gru_l0_i2h_weight', 'gru_l0_h2h_weight', 'gru_l0_i2h_bias', 'gru_l0_h2h_bias']
    """

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0,
                 bidirectional=False, input_size=0, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)

