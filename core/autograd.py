"""Automatic differentiation: recording scopes, backward, grad and ``Function``.

This is the public module (MXNet's ``mx.autograd``). The tape itself (recording state,
the scopes :func:`record`/:func:`pause`/..., the recorded nodes) lives in
``core.tape`` and is re-exported here. :func:`backward` walks the tape in reverse
topological order and calls each operator's VJP, which is written with core operators,
so the backward pass is itself recorded when ``create_graph=True`` (higher-order
gradients).
"""
from __future__ import annotations

from .ndarray import AbstractValueError, NDArray, Placeholder
from .ops.abstract import is_tracing
from .ops.dispatch import invoke
from .ops.registry import Aval, OpDef
from .tape import (
    Node,
    VarNode,
    _state,
    is_recording,
    is_training,
    on_grad_ready,
    pause,
    predict_mode,
    record,
    record_op,
    set_recording,
    set_training,
    train_mode,
)

__all__ = [
    "Function",
    "backward",
    "get_symbol",
    "grad",
    "is_recording",
    "is_training",
    "mark_variables",
    "on_grad_ready",
    "pause",
    "predict_mode",
    "record",
    "set_implicit_head_grads",
    "set_recording",
    "set_training",
    "stop_gradient",
    "train_mode",
]

# MXNet (and so Gluon and Dive into Deep Learning code) treats ``y.backward()`` on a
# non-scalar ``y`` as ``y.backward(ones_like(y))``, i.e. the gradient of ``y.sum()``.
_implicit_head_grads = True


def set_implicit_head_grads(enabled: bool) -> bool:
    """Choose what ``backward`` does for a non-scalar head given no head gradient.

    Args:
        enabled: True (the default, MXNet's behaviour): use ones, as for ``y.sum()``.
            False: raise a ValueError naming the head's shape, for code that wants
            every non-scalar backward to be explicit (PyTorch's rule).

    Returns:
        The previous setting.
    """
    global _implicit_head_grads
    prev, _implicit_head_grads = _implicit_head_grads, bool(enabled)
    return prev


class VjpContext:
    """What a VJP rule sees of the forward call."""

    __slots__ = ("_inputs", "_outputs", "create_graph", "deliver", "node", "retain_graph")

    def __init__(self, node, create_graph):
        self.node = node
        self.create_graph = create_graph
        self.retain_graph = True  # whether this node may be run backward again
        self.deliver = _no_delivery
        self._inputs = None
        self._outputs = None

    @property
    def attrs(self) -> dict:
        return self.node.attrs

    @property
    def in_shapes(self):
        return tuple(m[0] if m is not None else None for m in self.node.in_meta)

    @property
    def in_dtypes(self):
        return tuple(m[1] if m is not None else None for m in self.node.in_meta)

    @property
    def out_shapes(self):
        return tuple(m[0] for m in self.node.out_meta)

    @property
    def inputs(self):
        """The forward inputs as NDArrays (connected to the graph under create_graph)."""
        if self._inputs is None:
            make = NDArray._make
            n = self.node
            ctx = n.ctx
            keep = self.create_graph
            self._inputs = tuple(
                d if m is None else make(d, ctx, p if keep else None)
                for d, p, m in zip(n.in_data, n.parents, n.in_meta))
        return self._inputs

    @property
    def outputs(self):
        """The forward outputs as NDArrays (connected to the graph under create_graph)."""
        if self._outputs is None:
            n = self.node
            if n.out_data is None:
                raise RuntimeError(f"{n.op.name}: its VJP reads the outputs, but the "
                                   "operator is registered with save='inputs'")
            ctx = n.ctx
            self._outputs = tuple(
                NDArray._make(d, ctx, (n, i) if self.create_graph else None)
                for i, d in enumerate(n.out_data))
        return self._outputs

    @property
    def out(self):
        """The single output (for one-output operators)."""
        return self.outputs[0]


def _no_delivery(i, g, owned: bool = False) -> bool:
    return False


def _leaf_uses(order) -> dict:
    """How many input slots of the recorded nodes in ``order`` refer to each leaf."""
    uses: dict = {}
    for node in order:
        if isinstance(node, Node):
            for p in node.parents:
                if p is not None and isinstance(p[0], VarNode):
                    uses[id(p[0])] = uses.get(id(p[0]), 0) + 1
    return uses


def _delivery(node, uses, on_final=None):
    """``VjpContext.deliver`` for ``node``: a VJP may hand over the gradient of input
    ``i`` as soon as it is computed; when that input is a leaf that no other recorded
    node uses, the gradient is final and goes into the leaf's ``.grad`` at once (so the
    VJP can release it) and ``deliver`` returns True; otherwise it returns False and the
    VJP returns the gradient as usual. ``owned=True``: the VJP hands over the only
    reference to ``g``'s buffer, which ``.grad`` may then take instead of copying."""

    def deliver(i, g, owned: bool = False) -> bool:
        p = node.parents[i]
        if p is None or not isinstance(p[0], VarNode) or uses.get(id(p[0])) != 1:
            return False
        arr = p[0].ref()
        if arr is not None:
            arr._receive_grad(g, p[0].grad_req, False, adopt="owned" if owned else False)
            if on_final is not None:
                on_final(arr)
        return True

    return deliver


def _release_final(node, remaining, grads, on_final):
    """After ``node``'s VJP: a leaf input whose last use this was has its final
    gradient; write it into the leaf's ``.grad`` now and report it (on_grad_ready)."""
    for p in node.parents:
        if p is None or type(p[0]) is not VarNode:
            continue
        k = id(p[0])
        left = remaining[k] - 1
        remaining[k] = left
        if left:
            continue
        g = grads.pop((k, 0), None)
        if g is None:  # delivered by the VJP already (and reported), or no gradient
            continue
        grads.pop(("var", k), None)
        arr = p[0].ref()
        if arr is not None:
            arr._receive_grad(g, p[0].grad_req, False, adopt=True)  # g: popped, ours alone
            on_final(arr)


def _toposort(head_nodes):
    """Nodes reachable from ``head_nodes``, each after every node that consumes it."""
    order, seen = [], set()
    for h in head_nodes:
        if id(h) in seen:
            continue
        stack = [(h, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            if isinstance(node, Node) and not node.freed:
                for p in node.parents:
                    if p is not None and id(p[0]) not in seen:
                        stack.append((p[0], False))
    order.reverse()
    return order


def _run_backward(heads, head_grads, retain_graph, create_graph, targets=None,
                  early=False, on_final=None):
    """Propagate gradients from ``heads``; returns {id(entry node, idx): grad}."""
    if is_tracing():
        raise AbstractValueError(
            "autograd.backward/grad was called while tracing a graph (a hybridized block "
            "or a jit-compiled step): gradients inside the traced function cannot be "
            "captured; take them outside it")
    if not isinstance(heads, (list, tuple)):
        heads = [heads]
    if head_grads is None:
        head_grads = [None] * len(heads)
    elif not isinstance(head_grads, (list, tuple)):
        head_grads = [head_grads]
    if len(head_grads) != len(heads):
        raise ValueError(f"backward: got {len(heads)} heads but {len(head_grads)} head gradients")
    grads: dict = {}
    head_nodes = []
    for h, hg in zip(heads, head_grads):
        if not isinstance(h, NDArray):
            raise TypeError(f"backward: heads must be NDArrays, got {type(h).__name__}")
        if h._node is None:
            raise ValueError(
                "backward: this array is not part of a recorded graph; compute it inside "
                "`with autograd.record():` from arrays that called attach_grad()")
        if hg is None:
            if h.size != 1 and not _implicit_head_grads:
                raise ValueError(
                    f"backward: the head has shape {tuple(h.shape)}; a head that is not a "
                    "scalar needs head_grads (out_grad) of the same shape, or call "
                    "y.sum().backward()")
            hg = NDArray._make(h._ctx.xp.ones(h.shape, h.dtype), h._ctx, None)
        elif not isinstance(hg, NDArray):
            hg = NDArray._make(h._ctx.xp.asarray(hg, dtype=h.dtype), h._ctx, None)
        if tuple(hg.shape) != tuple(h.shape):
            raise ValueError(f"backward: head gradient shape {tuple(hg.shape)} does not match "
                             f"the head's shape {tuple(h.shape)}")
        _accumulate(grads, h._node, hg)
        head_nodes.append(h._node[0])
    prev = _state.recording
    _state.recording = create_graph
    try:
        order = _toposort(head_nodes)
        uses = _leaf_uses(order) if early and not create_graph and targets is None else None
        remaining = dict(uses) if on_final is not None and uses is not None else None
        for node in order:
            if not isinstance(node, Node):
                continue
            n_out = len(node.out_meta)
            if n_out == 1:
                gs = (grads.pop((id(node), 0), None),)
                if gs[0] is None:
                    continue
            else:
                gs = [grads.pop((id(node), i), None) for i in range(n_out)]
                if all(g is None for g in gs):
                    continue
            if targets is not None:
                for i, g in enumerate(gs):
                    if (id(node), i) in targets and g is not None:
                        targets[(id(node), i)] = g
            if node.freed and not any(node is h for h in head_nodes):
                # MXNet clears a graph after a backward without retain_graph: an array it
                # computed is a constant to graphs recorded later (gradients stop there).
                continue
            if node.freed:
                raise RuntimeError(
                    f"backward: the graph through operator {node.op.name!r} was already "
                    "freed by an earlier backward; pass retain_graph=True to the first "
                    "backward to go through it twice")
            _check_versions(node)
            if n_out == 1:
                g = gs[0]
            else:
                ctx_arr = _first_ctx(gs)
                g = tuple(x if x is not None else NDArray._make(
                    ctx_arr.xp.zeros(s, d), ctx_arr, None) for x, (s, d) in zip(gs, node.out_meta))
            vctx = VjpContext(node, create_graph)
            vctx.retain_graph = retain_graph
            if uses is not None:
                vctx.deliver = _delivery(node, uses, on_final)
            in_grads = node.op.vjp(vctx, g)
            if not isinstance(in_grads, (tuple, list)):
                in_grads = (in_grads,)
            if len(in_grads) != len(node.parents):
                raise RuntimeError(f"{node.op.name}: VJP returned {len(in_grads)} gradients "
                                   f"for {len(node.parents)} inputs")
            for p, gx in zip(node.parents, in_grads):
                if p is not None and gx is not None:
                    _accumulate(grads, p, gx)
            in_grads = gx = None  # grads holds them now (.grad may adopt a sole reference)
            if remaining is not None:
                _release_final(node, remaining, grads, on_final)
            if not retain_graph:
                node.freed = True
                node.in_data = node.out_data = None
                node.checks = ()
    finally:
        _state.recording = prev
    return grads


def _first_ctx(gs):
    for g in gs:
        if g is not None:
            return g._ctx
    raise RuntimeError("no gradient")


def _accumulate(grads, entry, g):
    key = (id(entry[0]), entry[1])
    prev = grads.get(key)
    if prev is None:
        grads[key] = g
        if isinstance(entry[0], VarNode):
            grads[("var", id(entry[0]))] = entry[0]
    else:
        grads[key] = prev + g


def _check_versions(node):
    for x, v in node.checks:
        if x._version != v:
            raise RuntimeError(
                f"backward: an input of operator {node.op.name!r} (shape {tuple(x.shape)}, "
                f"{x.dtype.name}) was modified in place after it was used; its old value is "
                "needed for the gradient. Use an out-of-place operation (y = y + 1) instead")
    for ref, v in node.out_refs:
        o = ref()
        if o is not None and o._version != v:
            raise RuntimeError(
                f"backward: the output of operator {node.op.name!r} (shape {tuple(o.shape)}) "
                "was modified in place after it was recorded; its value is needed for the "
                "gradient. Use an out-of-place operation instead")


def backward(heads, head_grads=None, retain_graph: bool = False, train_mode: bool = True,
             create_graph: bool = False) -> None:
    """Compute gradients of ``heads`` and write them into the marked variables' ``.grad``.

    Args:
        heads: an NDArray or a list of them.
        head_grads: gradients of the heads (default: ones, so a non-scalar head means
            the gradient of its sum, as in MXNet; see ``set_implicit_head_grads``).
        retain_graph: keep the graph so backward can run through it again.
        train_mode: accepted for MXNet compatibility (the graph keeps its own mode).
        create_graph: record the backward pass too, for higher-order gradients.
    """
    on_final = _state.grad_ready
    grads = _run_backward(heads, head_grads, retain_graph, create_graph, early=True,
                          on_final=on_final)
    # (the variables listed alone: a list of grads' items would hold the gradients too)
    for node in [v for k, v in grads.items() if k[0] == "var"]:
        g = grads.pop((id(node), 0), None)
        arr = node.ref()
        if arr is not None and g is not None:
            arr._receive_grad(g, node.grad_req, create_graph, adopt=True)
            if on_final is not None:
                on_final(arr)


def grad(heads, variables, head_grads=None, retain_graph: bool | None = None,
         create_graph: bool = False, train_mode: bool = True):
    """Gradients of ``heads`` with respect to ``variables``, returned (not written to .grad).

    Args:
        heads: an NDArray or a list of them.
        variables: an NDArray or a list of them; each must be a marked variable or an
            array computed inside ``record()``.
        head_grads: gradients of the heads (default: ones for scalar heads).
        retain_graph: keep the graph (defaults to ``create_graph``).
        create_graph: record the gradient computation for higher-order gradients.

    Returns:
        An NDArray per variable (a list if ``variables`` is a list).

    Example:
        >>> from core import nd, autograd
        >>> x = nd.array([3.0]); x.attach_grad()
        >>> with autograd.record():
        ...     y = x * x * x
        >>> dy = autograd.grad(y, x, create_graph=True)
        >>> dy.asnumpy().tolist()
        [27.0]
    """
    single = isinstance(variables, NDArray)
    var_list = [variables] if single else list(variables)
    targets = {}
    for v in var_list:
        if not isinstance(v, NDArray):
            raise TypeError(f"grad: variables must be NDArrays, got {type(v).__name__}")
        if v._node is None:
            raise ValueError(
                f"grad: a variable (shape {tuple(v.shape)}, {v.dtype.name}) was never marked "
                "for gradients; call attach_grad() on it (or autograd.mark_variables) before "
                "recording")
        targets[(id(v._node[0]), v._node[1])] = None
    if retain_graph is None:
        retain_graph = create_graph
    grads = _run_backward(heads, head_grads, retain_graph, create_graph, targets)
    out = []
    for v in var_list:
        key = (id(v._node[0]), v._node[1])
        g = targets.get(key)
        if g is None:
            g = grads.get(key)
        if g is None:
            g = NDArray._make(v._ctx.xp.zeros(v.shape, v.dtype), v._ctx, None)
        elif not create_graph:
            g = g.detach()
        out.append(g)
    return out[0] if single else out


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Mark arrays as variables whose gradients go into the given buffers.

    Args:
        variables: NDArrays (or one NDArray).
        gradients: the gradient buffers, one per variable, same shapes.
        grad_reqs: ``'write'``, ``'add'`` or ``'null'`` (one, or one per variable).
    """
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not (len(variables) == len(gradients) == len(grad_reqs)):
        raise ValueError("mark_variables: variables, gradients and grad_reqs differ in length")
    for v, g, req in zip(variables, gradients, grad_reqs):
        if tuple(v.shape) != tuple(g.shape):
            raise ValueError(f"mark_variables: variable shape {tuple(v.shape)} and gradient "
                             f"shape {tuple(g.shape)} differ")
        v._attach(g, req)


def get_symbol(x):
    """The recorded computation history of ``x`` as a Symbol (MXNet's ``get_symbol``).

    Args:
        x: an NDArray computed under :func:`record`.

    Returns:
        A Symbol; its arguments (``var0``, ``var1``, ...) are the arrays the recorded
        computation started from, scalars are literals.

    Example:
        >>> from core import autograd, nd
        >>> x = nd.ones((1,))
        >>> x.attach_grad()
        >>> with autograd.record():
        ...     y = x * x + 2 * x - 1
        >>> autograd.get_symbol(y).list_arguments()
        ['var0']
    """
    from .symbol.from_tape import tape_symbol

    return tape_symbol(x)


def stop_gradient(x):
    """Identity whose gradient is zero (``BlockGrad`` in MXNet)."""
    return x.detach()


class Function:
    """A user-defined differentiable operator with its own forward and backward.

    Subclass it and define ``forward(self, *inputs)`` and ``backward(self, *out_grads)``
    on NDArrays; use ``save_for_backward`` to keep what backward needs.

    Example:
        >>> from core import nd, autograd
        >>> class Sigmoid(autograd.Function):
        ...     def forward(self, x):
        ...         y = 1 / (1 + nd.exp(-x)); self.save_for_backward(y); return y
        ...     def backward(self, dy):
        ...         y, = self.saved_tensors; return dy * y * (1 - y)
        >>> x = nd.array([0.0]); x.attach_grad()
        >>> with autograd.record():
        ...     y = Sigmoid()(x)
        >>> y.backward(); x.grad.asnumpy().tolist()
        [0.25]
    """

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *arrays) -> None:
        self.saved_tensors = arrays

    def forward(self, *inputs):
        raise NotImplementedError("autograd.Function subclasses must define forward")

    def backward(self, *output_grads):
        raise NotImplementedError("autograd.Function subclasses must define backward")

    def __call__(self, *inputs):
        if is_tracing() and any(isinstance(x, NDArray) and type(x._data) is Placeholder
                                for x in inputs):
            return _trace_function(self, inputs)
        with pause(_state.training):
            outputs = self.forward(*inputs)
        multi = isinstance(outputs, (list, tuple))
        outs = tuple(outputs) if multi else (outputs,)
        for o in outs:
            if not isinstance(o, NDArray):
                raise TypeError(f"{type(self).__name__}.forward must return NDArrays, "
                                f"got {type(o).__name__}")
        if _state.recording and any(isinstance(x, NDArray) and x._node is not None
                                    for x in inputs):
            fn = self

            def vjp(ctx, g):
                gs = g if isinstance(g, tuple) else (g,)
                with pause(_state.training):
                    res = fn.backward(*gs)
                res = res if isinstance(res, (list, tuple)) else (res,)
                if len(res) != len(inputs):
                    raise ValueError(f"{type(fn).__name__}.backward returned {len(res)} "
                                     f"gradients for {len(inputs)} inputs")
                return tuple(r if isinstance(x, NDArray) else None
                             for r, x in zip(res, inputs))

            op = OpDef(name=type(self).__name__, forward=None, infer=None, vjp=vjp,
                       inputs=(), attrs={}, nd=(), np=(),
                       variadic=True, needs_ctx=False, differentiable=True, save=False,
                       doc="")
            fresh = tuple(o.detach() for o in outs)
            raw = [x._data if isinstance(x, NDArray) else x for x in inputs]
            record_op(op, list(inputs), raw, {}, fresh if multi else fresh[0])
            outs = fresh
        return tuple(outs) if multi else outs[0]


def _trace_function(fn: Function, inputs):
    """A Function called while tracing a graph: one node whose forward runs
    ``fn.forward`` and whose VJP is ``fn.backward`` (so the custom gradient is kept)."""
    with pause(_state.training):
        outputs = fn.forward(*inputs)  # traced once, for the outputs' shapes and dtypes
    multi = isinstance(outputs, (list, tuple))
    avals = tuple(Aval(o.shape, o.dtype) for o in (outputs if multi else (outputs,)))
    training = _state.training

    def infer(*_avals, **_attrs):
        return avals if multi else avals[0]

    def forward(xp, *raw, ctx=None):
        arrays = [NDArray._make(r, ctx, None) if isinstance(r, xp.ndarray) else r for r in raw]
        with pause(training):
            res = fn.forward(*arrays)
        res = tuple(res) if isinstance(res, (list, tuple)) else (res,)
        out = tuple(r._data for r in res)
        return out if multi else out[0]

    def vjp(c, g):
        if is_tracing():
            # fn.backward reads what fn.forward saved, which exists only once the
            # forward has run: the gradient graph runs it at execution time.
            raise AbstractValueError(f"{type(fn).__name__}.backward runs at execution time")
        gs = g if isinstance(g, tuple) else (g,)
        with pause(training):
            res = fn.backward(*gs)
        res = tuple(res) if isinstance(res, (list, tuple)) else (res,)
        if len(res) != len(inputs):
            raise ValueError(f"{type(fn).__name__}.backward returned {len(res)} gradients "
                             f"for {len(inputs)} inputs")
        return tuple(r if isinstance(x, NDArray) else None for r, x in zip(res, inputs))

    op = OpDef(name=type(fn).__name__, forward=forward, infer=infer, vjp=vjp, inputs=(),
               attrs={}, nd=(), np=(), variadic=True, needs_ctx=True,
               differentiable=True, save=True, place=None, random=False, updates={},
               visible_outputs=None, doc=f"autograd.Function {type(fn).__name__}")
    return invoke(op, list(inputs), {})
