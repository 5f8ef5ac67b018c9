"""``SymbolBlock``: a Block made from a Symbol, and ``export``/``imports``.

``HybridBlock.export(path, epoch)`` writes the graph its hybridized forward traced
(``path-symbol.json``, MXNet's JSON layout) and its parameters
(``path-%04d.params``, names prefixed ``arg:``/``aux:`` as MXNet does).
``SymbolBlock.imports(symbol_file, input_names, param_file, ctx)`` reads them back
into a block that runs, trains and hybridizes like any other.

Example:
    >>> import os, tempfile
    >>> from core import nd
    >>> from gluon import nn, SymbolBlock
    >>> net = nn.HybridSequential()
    >>> net.add(nn.Dense(3, in_units=2), nn.BatchNorm(in_channels=3))
    >>> net.initialize(); net.hybridize()
    >>> x = nd.ones((4, 2))
    >>> y = net(x)
    >>> path = os.path.join(tempfile.mkdtemp(), "net")
    >>> sym_file, param_file = net.export(path)
    >>> back = SymbolBlock.imports(sym_file, ["data"], param_file)
    >>> bool((back(x) == y).asnumpy().all())
    True
"""
from __future__ import annotations

import os

from core import autograd, serialization
from core.context import current_context
from core.ndarray import NDArray
from core.ops.abstract import is_tracing
from core.symbol.graph import evaluate
from core.symbol.json_io import graph_to_json
from core.symbol.symbol import Symbol

from .block import HybridBlock
from .parameter import InvalidStypeError, ParameterDict

_ROW_SPARSE_ID = "1"  # MXNet's storage-type id of 'row_sparse' (the __storage_type__ attr)


def export(block, path: str, epoch: int = 0, mxnet_compatible: bool = True) -> tuple[str, str]:
    """Write ``block``'s traced graph and parameters (see the module doc).

    With ``mxnet_compatible`` (the default) the graph holds only operators and
    attributes MXNet 1.9 has (anything else is refused, naming the node and operator)
    and constants captured while tracing become parameters (``arg:<name>``), since
    MXNet's JSON has no constants; without it, operators MXNet lacks are written in
    our own spelling and the files load here only.
    """
    entry = getattr(block, "_last_cached", None)
    if not block._active or entry is None:
        raise RuntimeError(
            f"{type(block).__name__} '{block.name}': please first call block.hybridize() and "
            "then run forward with this block at least once before calling export (the "
            "graph is traced on the first hybridized call).")
    graph = entry.op.graph
    aux = {v.name for v in graph.updates}
    arrays = {}
    for name, p in entry.params.items():
        arrays[("aux:" if name in aux else "arg:") + name] = p.list_data()[0]
    if mxnet_compatible:
        graph, consts = _constants_as_variables(graph, set(entry.params) | aux)
        arrays.update({"arg:" + k: v for k, v in consts.items()})
    sym_file = f"{path}-symbol.json"
    param_file = f"{path}-{epoch:04d}.params"
    d = os.path.dirname(os.path.abspath(sym_file))
    os.makedirs(d, exist_ok=True)
    try:
        text = graph_to_json(graph, strict=mxnet_compatible)
    except ValueError as e:
        raise ValueError(f"{type(block).__name__} '{block.name}'.export: {e}") from None
    data = text.encode("utf-8")
    serialization.atomic_write(sym_file, lambda f: f.write(data))
    serialization.save(param_file, arrays)
    return sym_file, param_file


def _constants_as_variables(graph, taken: set):
    """The graph with each constant node replaced by a variable, and their values."""
    from core.symbol.graph import Node, map_graph

    values = {}
    names = set(taken) | {v.name for v in graph.variables()}

    def rebuild(n, inputs):
        if not n.is_constant:
            if tuple(inputs) == n.inputs:
                return n
            return Node(n.op, n.name, inputs, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                        n.value, n.ctx)
        name, k = n.name or "const", 0
        while name in names:
            k += 1
            name = f"{n.name or 'const'}{k}"
        names.add(name)
        values[name] = n.value
        shape = tuple(n.avals[0].shape) if n.avals else None
        attrs = {"__shape__": str(shape)} if shape else {}
        return Node(None, name, user_attrs=attrs)

    if not any(n.is_constant for n in graph.topo()):
        return graph, {}
    return map_graph(graph, rebuild), values


class SymbolBlock(HybridBlock):
    """A Block that runs a Symbol (MXNet's ``gluon.SymbolBlock``).

    Args:
        outputs: a Symbol, or a list of Symbols (grouped).
        inputs: the input variable Symbol(s), in the order the block is called with.
        params: a ParameterDict holding (some of) the other variables' parameters;
            the rest are created, with deferred initialization (their shapes are
            inferred from the first input). Auxiliary states get ``grad_req='null'``.

    Raises:
        InvalidStypeError: (a ``ValueError`` and, as in MXNet, an ``AssertionError``) a
            variable of the graph has storage type ``'row_sparse'``.
    """

    def __init__(self, outputs, inputs, params: ParameterDict | None = None):
        super().__init__(prefix="", params=None)
        from core.sym import Group

        if isinstance(outputs, (list, tuple)):
            outputs = outputs[0] if len(outputs) == 1 else Group(list(outputs))
        if not isinstance(outputs, Symbol):
            raise TypeError(f"SymbolBlock: outputs must be a Symbol or a list of Symbols, got "
                            f"{type(outputs).__name__}")
        inputs = [inputs] if isinstance(inputs, Symbol) else list(inputs)
        names = []
        for s in inputs:
            if not isinstance(s, Symbol) or len(s.list_outputs()) != 1 or \
                    s.list_outputs()[0] not in s.list_inputs():
                raise TypeError("SymbolBlock: inputs must be variable Symbols (sym.var)")
            names.append(s.name)
        self._symbol = outputs
        self._graph = outputs.graph
        self._input_names = names
        aux = set(outputs.list_auxiliary_states())
        given = dict(params.items()) if params is not None else {}
        unknown = [n for n in names if n not in outputs.list_inputs()]
        if unknown:
            raise ValueError(f"SymbolBlock: inputs {unknown} are not variables of the graph "
                             f"(its inputs: {outputs.list_inputs()})")
        for v in self._graph.variables():
            if v.user_attrs.get("__storage_type__") == _ROW_SPARSE_ID:
                raise InvalidStypeError(f"SymbolBlock doesn't support Parameter '{v.name}' "
                                        "because its storage type is 'row_sparse'.")
            if v.name in names:
                continue
            if v.name in given:
                self._reg_params[v.name] = self.params._params.setdefault(v.name, given[v.name])
                continue
            shape = _parse_shape(v.user_attrs.get("__shape__"))
            dtype = v.user_attrs.get("__dtype__", "float32")
            p = self.params.get(v.name, grad_req="null" if v.name in aux else "write",
                                shape=shape, dtype=_dtype_name(dtype),
                                allow_deferred_init=True)
            self._reg_params[v.name] = p
        # MXNet 1.9 names the parameters structurally without their common prefix
        # ('backbone.conv0_weight' for 'resnetv10_conv0_weight'), so a model that holds
        # a SymbolBlock saves and loads whatever prefix counters its variables got
        # (MXNet would leave a lone parameter an empty name; it keeps its name here)
        common = len(os.path.commonprefix(list(self._reg_params)))
        self._common = common if all(len(k) > common for k in self._reg_params) else 0

    def _structural_name(self, name: str) -> str:
        """``name`` without the common prefix of the parameters' names (MXNet 1.9)."""
        return name[self._common:]

    @staticmethod
    def imports(symbol_file: str, input_names, param_file: str | None = None, ctx=None,
                allow_missing: bool = False, ignore_extra: bool = False) -> SymbolBlock:
        """Load a block written by ``HybridBlock.export`` (or MXNet 1.x).

        Args:
            symbol_file: the ``-symbol.json`` file.
            input_names: the input variables' names (a str or a list).
            param_file: the ``.params`` file (None: parameters stay uninitialized).
            ctx: the context(s) to load the parameters on.
            allow_missing: parameters missing from the file are left uninitialized.
            ignore_extra: names in the file that the graph does not use are skipped.

        Returns:
            The SymbolBlock.
        """
        from core import sym

        graph_sym = sym.load(symbol_file)
        names = [input_names] if isinstance(input_names, str) else list(input_names)
        block = SymbolBlock(graph_sym, [sym.var(n) for n in names])
        if param_file is not None:
            block.collect_params().load(param_file, ctx=ctx, allow_missing=allow_missing,
                                        ignore_extra=ignore_extra)
        return block

    def infer_shape(self, *args) -> None:
        """Set the parameters' shapes from the inputs' through symbolic shape inference."""
        shapes = {n: tuple(a.shape) for n, a in zip(self._input_names, args)}
        arg_shapes, _, aux_shapes = self._symbol.infer_shape_partial(**shapes)
        found = dict(zip(self._symbol.list_arguments(), arg_shapes))
        found.update(zip(self._symbol.list_auxiliary_states(), aux_shapes))
        for name, p in self._reg_params.items():
            s = found.get(name)
            if s is not None and all(d > 0 for d in s):
                p.shape = tuple(s)

    def forward(self, x, *args):
        arrays = (x, *args)
        if len(arrays) != len(self._input_names):
            raise ValueError(f"SymbolBlock: expected {len(self._input_names)} inputs "
                             f"({self._input_names}), got {len(arrays)}")
        ctx = x.context if isinstance(x, NDArray) else current_context()
        values = dict(zip(self._input_names, arrays))
        aux = self._graph.updates
        aux_names = {v.name for v in aux}
        copy_aux = autograd.is_recording() and not is_tracing()
        for name, p in self._reg_params.items():
            values[name] = p.data(ctx)
            if copy_aux and name in aux_names:
                # The operator reads the statistics before they are updated in place
                # below; the tape must keep the value it read.
                values[name] = values[name].copy()
        outs, updates = evaluate(self._graph, values, ctx, is_train=autograd.is_training())
        for name, new in updates.items():
            dst = self._reg_params[name].data(ctx)
            with autograd.pause(autograd.is_training()):
                dst[...] = new
        return outs[0] if len(outs) == 1 else outs


def _parse_shape(text):
    if not text:
        return None
    from core.symbol.json_io import parse_value

    v = parse_value(text)
    return tuple(v) if isinstance(v, (list, tuple)) else None


def _dtype_name(d):
    """A variable's ``__dtype__``: a name, or MXNet's numeric code (``"0"``: float32)."""
    from core.symbol.json_mxnet import MX_DTYPE_NAMES

    text = d if isinstance(d, str) else str(d)
    if text.strip().isdigit():
        return MX_DTYPE_NAMES.get(int(text), "float32")
    return text
