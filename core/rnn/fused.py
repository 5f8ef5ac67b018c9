"""``FusedRNNCell``: every layer and step in one fused ``RNN`` operator, with its flat
parameter vector; ``FusedRNN``, the initializer of that vector; ``unfuse()`` to the
equivalent stack of step cells.

The vector holds, for each layer and direction (``l``, then ``r``), the input weights
of every gate then the recurrent weights of every gate, and after all the weights the
biases in the same order; ``unpack_weights`` names the pieces as the unfused cells'
per-gate arrays (``<prefix>l0_i2h_i_weight``, ...).
"""
from __future__ import annotations

import warnings

import numpy

from .. import initializer, nd
from .. import sym as symbol
from .base import BaseRNNCell
from .params import RNNParams
from .sequence import normalize_sequence

__all__ = ["FusedRNN", "FusedRNNCell"]

_GATES = {"rnn_relu": [""], "rnn_tanh": [""], "lstm": ["_i", "_f", "_c", "_o"],
          "gru": ["_r", "_z", "_o"]}


def _check_mode(where: str, mode) -> None:
    if mode not in _GATES:
        raise ValueError(f"{where}: mode must be one of {sorted(_GATES)}, got {mode!r}")


def _layout(prefix: str, mode: str, num_layers: int, directions, num_input: int, h: int):
    """``[(name, shape)]`` of the flat vector's pieces, in order."""
    gates = _GATES[mode]
    b = len(directions)
    weights, biases = [], []
    for layer in range(num_layers):
        cols = num_input if layer == 0 else b * h
        for d in directions:
            weights += [(f"{prefix}{d}{layer}_i2h{g}_weight", (h, cols)) for g in gates]
            weights += [(f"{prefix}{d}{layer}_h2h{g}_weight", (h, h)) for g in gates]
            biases += [(f"{prefix}{d}{layer}_i2h{g}_bias", (h,)) for g in gates]
            biases += [(f"{prefix}{d}{layer}_h2h{g}_bias", (h,)) for g in gates]
    return weights + biases


class FusedRNNCell(BaseRNNCell):
    """A multi-layer RNN in one fused ``RNN`` operator (it cannot be stepped: use
    :meth:`unroll`); its weights are one variable ``<prefix>parameters``.

    Args:
        num_hidden: the number of hidden units.
        num_layers: the number of layers.
        mode: ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
        bidirectional: run each layer in both directions (outputs twice as wide).
        dropout: dropout between layers (training runs).
        get_next_state: return the last states from :meth:`unroll` (else ``[]``).
        forget_bias: the LSTM forget-gate bias the initializer sets.
        prefix: prefix of names (default ``'<mode>_'``).
        params: an ``RNNParams`` to share weights (None: the cell's own).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.FusedRNNCell(8, num_layers=2, mode="gru", prefix="g_")
        >>> out, _ = cell.unroll(5, sym.var("data"), layout="TNC", merge_outputs=True)
        >>> out.infer_shape(data=(5, 3, 4))[1]
        [(5, 3, 8)]
    """

    def __init__(self, num_hidden: int, num_layers: int = 1, mode: str = "lstm",
                 bidirectional: bool = False, dropout: float = 0., get_next_state: bool = False,
                 forget_bias: float = 1.0, prefix: str | None = None,
                 params: RNNParams | None = None):
        _check_mode("FusedRNNCell", mode)
        if prefix is None:
            prefix = f"{mode}_"
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        self._directions = ["l", "r"] if bidirectional else ["l"]
        init = FusedRNN(None, num_hidden, num_layers, mode, bidirectional, forget_bias)
        self._parameter = self.params.get("parameters", init=init)

    @property
    def state_info(self) -> list:
        b = self._bidirectional + 1
        n = (self._mode == "lstm") + 1
        return [{"shape": (b * self._num_layers, 0, self._num_hidden), "__layout__": "LNC"}
                for _ in range(n)]

    @property
    def _gate_names(self):
        return _GATES[self._mode]

    @property
    def _num_gates(self) -> int:
        return len(self._gate_names)

    def _num_input(self, size: int, what: str) -> int:
        b, m, h, n = len(self._directions), self._num_gates, self._num_hidden, self._num_layers
        upper = (n - 1) * m * h * (h + b * h + 2) * b
        per_input, rem = divmod(size - upper - (h + 2) * h * m * b, h * m * b)
        if rem or per_input < 1:
            raise ValueError(f"{what}: a parameter vector of {size} entries fits no input size "
                             f"for mode={self._mode!r}, num_layers={n}, num_hidden={h}, "
                             f"bidirectional={self._bidirectional}")
        return per_input

    def unpack_weights(self, args: dict) -> dict:
        """The flat ``<prefix>parameters`` split into the unfused cells' per-gate arrays
        (see the module doc)."""
        args = dict(args)
        name = self._parameter.name
        if name not in args:
            raise KeyError(f"FusedRNNCell.unpack_weights: no array named {name!r}")
        arr = args.pop(name)
        flat = arr.asnumpy().reshape(-1)
        num_input = self._num_input(flat.size, "FusedRNNCell.unpack_weights")
        p = 0
        for piece, shape in _layout(self._prefix, self._mode, self._num_layers,
                                    self._directions, num_input, self._num_hidden):
            size = int(numpy.prod(shape))
            args[piece] = nd.array(flat[p:p + size].reshape(shape), ctx=arr.context,
                                   dtype=arr.dtype)
            p += size
        return args

    def pack_weights(self, args: dict) -> dict:
        """The per-gate arrays of :meth:`unpack_weights` packed into ``<prefix>parameters``."""
        args = dict(args)
        first = f"{self._prefix}l0_i2h{self._gate_names[0]}_weight"
        if first not in args:
            raise KeyError(f"FusedRNNCell.pack_weights: no array named {first!r}")
        w0 = args[first]
        pieces = []
        for piece, shape in _layout(self._prefix, self._mode, self._num_layers,
                                    self._directions, w0.shape[1], self._num_hidden):
            if piece not in args:
                raise KeyError(f"FusedRNNCell.pack_weights: no array named {piece!r}")
            a = args.pop(piece)
            if tuple(a.shape) != shape:
                raise ValueError(f"FusedRNNCell.pack_weights: {piece!r} has shape "
                                 f"{tuple(a.shape)}, expected {shape}")
            pieces.append(a.asnumpy().reshape(-1))
        args[self._parameter.name] = nd.array(numpy.concatenate(pieces), ctx=w0.context,
                                              dtype=w0.dtype)
        return args

    def __call__(self, inputs, states):
        raise NotImplementedError("FusedRNNCell cannot be stepped. Please use unroll")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis == 1:
            warnings.warn("NTC layout detected. Consider using TNC for FusedRNNCell for "
                          "faster speed", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        elif axis != 0:
            raise ValueError(f"FusedRNNCell.unroll: unsupported layout {layout!r}")
        if begin_state is None:
            begin_state = self.begin_state()
        states = {"state": begin_state[0]}
        if self._mode == "lstm":
            states["state_cell"] = begin_state[1]
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=f"{self._prefix}rnn", **states)
        if not self._get_next_state:
            outputs, states = rnn, []
        else:
            n = 3 if self._mode == "lstm" else 2
            for i in range(1, n):
                rnn[i]._set_attr(__layout__="LNC")
            outputs, states = rnn[0], [rnn[i] for i in range(1, n)]
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a stack of step cells (which can be stepped), named so
        that :meth:`unpack_weights`' arrays are its weights.

        Returns:
            A ``SequentialRNNCell`` of ``RNNCell``/``LSTMCell``/``GRUCell`` (in
            ``BidirectionalCell`` pairs when bidirectional), with ``DropoutCell`` between
            layers when ``dropout`` > 0.
        """
        from .cells import GRUCell, LSTMCell, RNNCell
        from .containers import BidirectionalCell, SequentialRNNCell
        from .modifiers import DropoutCell

        h = self._num_hidden

        def get_cell(prefix):
            if self._mode == "rnn_relu":
                return RNNCell(h, activation="relu", prefix=prefix)
            if self._mode == "rnn_tanh":
                return RNNCell(h, activation="tanh", prefix=prefix)
            if self._mode == "lstm":
                return LSTMCell(h, prefix=prefix, forget_bias=self._forget_bias)
            return GRUCell(h, prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(get_cell(f"{self._prefix}l{i}_"),
                                            get_cell(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(get_cell(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack


@initializer.register
class FusedRNN(initializer.Initializer):
    """Initializes a ``FusedRNNCell``'s flat parameter vector piece by piece.

    Each piece (see :meth:`FusedRNNCell.unpack_weights`) is filled by ``init`` (or,
    if None, the initializer that called this one) under its unpacked name, so weights
    get the weight rule and biases 0; an LSTM's forget-gate biases (``i2h`` and ``h2h``
    both, as in MXNet) get ``forget_bias``.

    Args:
        init: the initializer of the pieces (an Initializer, its JSON, or None).
        num_hidden, num_layers, mode, bidirectional, forget_bias: the cell's.

    Example:
        >>> from core import initializer, nd, rnn
        >>> arr = nd.zeros((4 * 3 * (2 + 3 + 2),))            # LSTM, hidden 3, input 2
        >>> init = rnn.FusedRNN(None, 3, 1, "lstm", forget_bias=2.0)
        >>> desc = initializer.InitDesc("lstm_parameters", {"__init__": init.dumps()})
        >>> initializer.One()(desc, arr)                      # weights 1, biases 0
        >>> arr.asnumpy()[-24:].tolist() == ([0.0] * 3 + [2.0] * 3 + [0.0] * 6) * 2
        True
        >>> float(arr.asnumpy()[:60].min())
        1.0
    """

    def __init__(self, init, num_hidden: int, num_layers: int, mode: str,
                 bidirectional: bool = False, forget_bias: float = 1.0):
        _check_mode("FusedRNN", mode)
        if init is not None and not isinstance(init, initializer.Initializer):
            init = initializer.create(init)
        super().__init__(init=init.dumps() if init is not None else None,
                         num_hidden=num_hidden, num_layers=num_layers, mode=mode,
                         bidirectional=bidirectional, forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        cell = FusedRNNCell(self._num_hidden, self._num_layers, self._mode, self._bidirectional,
                            forget_bias=self._forget_bias, prefix="")
        args = cell.unpack_weights({"parameters": arr})
        fallback = getattr(desc, "global_init", None)
        if fallback is self:
            fallback = None
        for name, piece in args.items():
            sub = initializer.InitDesc(name, global_init=fallback)
            if self._mode == "lstm" and name.endswith("_f_bias"):
                piece[:] = self._forget_bias
            elif self._init is not None:
                self._init(sub, piece)
            elif fallback is not None:
                fallback(sub, piece)
            else:
                raise ValueError(f"FusedRNN: {desc!r} has no initializer for its pieces: give "
                                 "FusedRNN an init, or call it through another initializer")
        arr[:] = cell.pack_weights(args)["parameters"]
