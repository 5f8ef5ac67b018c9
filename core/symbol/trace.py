"""Tracing: running Python code on placeholder arrays to record a :class:`Graph`.

Inside ``with Tracer() as t:``, every operator call that has a traced array among its
inputs runs no kernel: the dispatcher (``core.ops.dispatch.invoke``) hands it to the
tracer, which adds a node and returns placeholder NDArrays (shapes and dtypes from the
operator's ``infer`` rule) that stand for the node's outputs. Random operators are
recorded even without traced inputs, so a graph draws anew on every run; other calls
on concrete arrays run as usual, and their results enter the graph as constants.

In-place writes into a traced array (``x += 1``, ``x[0] = y``, ``out=``) rebind that
NDArray to a new node; when the array was bound with :meth:`Tracer.bind` (a parameter
or auxiliary state), the write becomes one of the graph's ``updates``.

Reading a traced array's values (``asnumpy()``, ``float(x)``, ``if x > 0:``) raises
:class:`~core.ndarray.AbstractValueError`: the code's control flow depends on data and
cannot be captured in a graph.

Example:
    >>> from core import nd
    >>> from core.symbol.trace import Tracer
    >>> with Tracer() as t:
    ...     x = t.variable("x", (2, 3), "float32")
    ...     y = nd.relu(x * 2 + 1)
    >>> g = t.graph([y])
    >>> [n.op_name for n in g.topo()]
    ['null', 'multiply', 'add', 'relu']
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Self

import numpy

from ..context import Context, current_context
from ..ndarray import AbstractValueError, NDArray, Placeholder
from ..ops import abstract as _abstract
from ..ops.dispatch import _context_error
from ..ops.registry import Aval
from .graph import Entry, Graph, Node, is_random

_SCALARS = (bool, int, float, numbers.Number, str)


class Tracer:
    """Records operator calls on traced arrays into a graph (see the module doc)."""

    def __init__(self, prefix: str = ""):
        self._prefix = prefix
        self._entries: dict[int, tuple[Entry, object]] = {}
        self._consts: dict[int, tuple[Node, object]] = {}
        self._bound: list[tuple[NDArray, object, Node, object]] = []
        self._counts: dict[str, int] = {}
        self._prev = None
        self._active = False
        self._final: list | None = None
        self._made: set[int] = set()       # ids of concrete data made during the trace
        self._keep_made: list = []
        self._external: list = []          # (array, data): concrete arrays written to

    # ------------------------------------------------------------------ scope
    def __enter__(self) -> Self:
        self._prev = _abstract._enter_tracer(self)
        self._active = True
        return self

    def __exit__(self, *exc) -> None:
        self._active = False
        _abstract._exit_tracer(self._prev)
        self._final = [array._data for array, _d, _n, _p in self._bound]
        self.restore()
        for array, data in self._external:
            array._data = data

    # ------------------------------------------------------------------ inputs
    def _name(self, base: str) -> str:
        k = self._counts.get(base, 0)
        self._counts[base] = k + 1
        return f"{self._prefix}{base}{k}"

    def _register(self, data, entry: Entry) -> None:
        self._entries[id(data)] = (entry, data)

    def _placeholder(self, shape, dtype, ctx) -> NDArray:
        return _abstract.placeholder(shape, dtype, ctx)

    def variable(self, name: str, shape, dtype, ctx: Context | None = None,
                 **user_attrs) -> NDArray:
        """A new graph input ``name``: a placeholder NDArray that stands for it."""
        ctx = ctx if ctx is not None else current_context()
        x = self._placeholder(shape, dtype, ctx)
        node = Node(None, name, avals=[Aval(shape, dtype)], user_attrs=user_attrs, ctx=ctx)
        self._register(x._data, Entry(node, 0))
        return x

    def stand_in(self, entry: Entry, aval, ctx: Context) -> NDArray:
        """A placeholder NDArray standing for an existing graph ``entry`` (used to
        trace VJP rules against a forward graph)."""
        x = self._placeholder(aval.shape, aval.dtype, ctx)
        self._register(x._data, entry)
        return x

    def bind(self, array: NDArray, name: str, **user_attrs) -> Node:
        """Make the existing NDArray ``array`` a graph input ``name`` while tracing.

        Its data is swapped for a placeholder until :meth:`restore` (at the end of
        the ``with`` block); in-place writes to it become graph updates.
        """
        data = array._data
        ph = self._placeholder(data.shape, data.dtype, array._ctx)._data
        node = Node(None, name, avals=[Aval(data.shape, data.dtype)], user_attrs=user_attrs,
                    ctx=array._ctx)
        self._register(ph, Entry(node, 0))
        self._bound.append((array, data, node, ph))
        array._data = ph
        return node

    def restore(self) -> None:
        """Give bound arrays their data back (idempotent)."""
        for array, data, _node, _ph in self._bound:
            array._data = data

    def made_here(self, arrays) -> None:
        """Note arrays computed concretely during the trace (they belong to it)."""
        for a in arrays:
            if isinstance(a, NDArray):
                self._made.add(id(a._data))
                self._keep_made.append(a._data)

    def note_write(self, array: NDArray) -> None:
        """An in-place write of a traced value is about to rebind ``array``."""
        data = array._data
        if type(data) is Placeholder or id(data) in self._made:
            return
        self._external.append((array, data))

    # ------------------------------------------------------------------ queries
    def is_traced(self, x) -> bool:
        return isinstance(x, NDArray) and id(x._data) in self._entries

    def entry_of(self, x) -> Entry:
        """The graph entry of ``x``: traced arrays map to their node; concrete arrays
        become constant nodes (one per array)."""
        if isinstance(x, NDArray):
            hit = self._entries.get(id(x._data))
            if hit is not None:
                return hit[0]
            if type(x._data) is Placeholder:
                raise AbstractValueError("tracing: an abstract array from outside this trace "
                                         "was used")
            return self._constant(x._data, x._ctx)
        arr = numpy.asarray(x)
        if arr.dtype == object:
            raise TypeError(f"tracing: cannot use a {type(x).__name__} as an array input")
        return self._constant(arr, None)

    def _constant(self, data, ctx) -> Entry:
        hit = self._consts.get(id(data))
        if hit is not None:
            return Entry(hit[0], 0)
        node = Node(None, self._name("_const"), avals=[Aval(data.shape, data.dtype)],
                    value=data, ctx=ctx)
        self._consts[id(data)] = (node, data)
        return Entry(node, 0)

    # ------------------------------------------------------------------ recording
    def record(self, op, inputs: Sequence, attrs: dict, ctx: Context | None):
        """Called by ``invoke`` for every operator call inside the trace; returns the
        outputs, or None to let the call run concretely."""
        entries = self._entries
        traced = False
        for x in inputs:
            if isinstance(x, NDArray) and type(x._data) is Placeholder:
                if id(x._data) not in entries:
                    return None  # a placeholder of an abstract_eval outside: not ours
                traced = True
                break
        if not traced and not is_random(op):
            return None
        in_ctx = None
        slots = []
        avals = []
        for x in inputs:
            if isinstance(x, NDArray):
                if in_ctx is None:
                    in_ctx = x._ctx
                elif x._ctx is not in_ctx:
                    raise _context_error(op, inputs)
                e = self.entry_of(x)
                slots.append(e)
                avals.append(Aval(x._data.shape, x._data.dtype))
            elif x is None or isinstance(x, _SCALARS):
                slots.append(x)
                avals.append(x)
            else:
                e = self.entry_of(x)
                slots.append(e)
                avals.append(e.node.avals[0])
        if in_ctx is None:
            in_ctx = ctx if ctx is not None else current_context()
        if op.infer is None:
            raise AbstractValueError(f"{op.name}: no infer rule, cannot be traced")
        out = op.infer(*avals, **attrs)
        multi = isinstance(out, (tuple, list))
        outs = tuple(out) if multi else (out,)
        for a in outs:
            if not all(isinstance(d, numbers.Integral) for d in a.shape):
                raise AbstractValueError(f"{op.name}: the output shape {a.shape} depends on "
                                         "values, so it cannot be traced into a graph")
        out_ctx = op.place(attrs, in_ctx) if op.place is not None else in_ctx
        node = Node(op, self._name(op.name.lower().lstrip("_")), slots, attrs,
                    num_outputs=len(outs), avals=[Aval(a.shape, a.dtype) for a in outs],
                    ctx=in_ctx)
        results = []
        for i, a in enumerate(outs):
            ph = self._placeholder(a.shape, a.dtype, out_ctx)
            self._register(ph._data, Entry(node, i))
            results.append(ph)
        return tuple(results) if multi else results[0]

    # ------------------------------------------------------------------ result
    def graph(self, outputs: Sequence, replaced: dict | None = None) -> Graph:
        """The graph computing ``outputs`` (NDArrays of this trace, or concrete ones),
        with the in-place writes to bound arrays as its updates.

        ``replaced`` maps bound arrays to NDArrays that took their place during the
        trace (an owner that rebinds instead of writing in place): those become
        updates too.
        """
        if self._external:
            array = self._external[0][0]
            raise AbstractValueError(
                f"tracing: a traced value was written into an array that is not an input "
                f"of the graph (shape {tuple(array.shape)}, {array.dtype}); the graph "
                "could not update it. Make it a graph input (Tracer.bind), or compute a "
                "new array instead of writing into it")
        heads = [self.entry_of(o) for o in outputs]
        updates = {}
        for array, new in (replaced or {}).items():
            node = next((n for a, _d, n, _p in self._bound if a is array), None)
            if node is None:
                raise ValueError("Tracer.graph: a replaced array was not bound")
            updates[node] = self.entry_of(new)
        for k, (array, data, node, ph) in enumerate(self._bound):
            cur = array._data if self._final is None else self._final[k]
            if node in updates:
                continue
            if cur is not ph and cur is not data:
                hit = self._entries.get(id(cur))
                updates[node] = hit[0] if hit is not None else self._constant(cur, array._ctx)
        return Graph(heads, updates)

