"""The executor: a graph compiled into a flat program over numbered slots.

Compiling a graph (:class:`Program`) orders its operator nodes, gives every node
output a slot, resolves attributes once (the training flag, the context), and plans
memory (:mod:`core.symbol.memory`): arrays are released right after their last use
and elementwise results are written into dying inputs. Running a program calls each
operator's ``forward`` on raw NumPy/CuPy arrays: no NDArray wrappers, no autograd
tape, no dispatch checks, which is where a hybridized model's lower per-operator
overhead comes from.

A training program is the joint forward-and-backward graph
(:func:`core.symbol.autodiff.gradients`) split in two phases: the forward phase
(everything that does not depend on the gradients flowing into the outputs) and the
backward phase. Between them only the slots the backward phase reads stay alive.

:class:`Executor` is MXNet's ``Executor`` (``Symbol.bind``/``simple_bind``) on top.
"""
from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence

from .. import autograd as _ag
from .. import engine as _engine
from ..context import Context, current_context
from ..ndarray import NDArray
from ..ops.dispatch import describe
from ..ops.registry import Aval
from . import executor_info as _executor_info
from . import mirror
from .autodiff import gradients, specialize
from .graph import TRAIN, Entry, Graph, Node, map_graph, reachable
from .memory import INPLACE_UFUNCS, plan
from .shape_infer import close_creation_shapes
from .symbol import entry_name


class _Step:
    __slots__ = (
        "attrs",
        "fn",
        "in_avals",
        "inplace",
        "lits",
        "multi",
        "name",
        "op",
        "out_avals",
        "outs",
        "reuse",
        "slots",
        "ufunc",
    )


def infer_avals(graph: Graph, var_avals: Mapping[str, Aval], is_train: bool = False) -> Graph:
    """A copy of ``graph`` whose nodes all carry avals, from the variables' avals."""

    def rebuild(n: Node, inputs):
        if n.op is None:
            if n.is_variable and n.name in var_avals:
                a = var_avals[n.name]
                if n.avals is None or n.avals[0] != a:
                    return Node(None, n.name, (), {}, 1, [a], n.user_attrs, None, n.ctx)
            if n.avals is None:
                raise ValueError(f"executor: no shape and dtype for variable {n.name!r}")
            return n
        ins = [e.node.avals[e.index] if isinstance(e, Entry) else e for e in inputs]
        attrs = {k: (is_train if v is TRAIN else v) for k, v in n.attrs.items()}
        try:
            out = n.op.infer(*ins, **attrs)
        except (ValueError, TypeError, IndexError) as err:
            raise type(err)(f"node {n.name!r} ({n.op.name}): {err}") from None
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        return Node(n.op, n.name, inputs, n.attrs, len(outs), outs, n.user_attrs, n.value,
                    n.ctx)

    return map_graph(graph, rebuild)


def output_names(graph: Graph) -> list[str]:
    """MXNet's output names: a variable's name, ``<node>_output``, ``<node>_output<i>``
    or an operator's own output names (``rnn_state_output``; ``symbol.entry_name``)."""
    return [entry_name(e) for e in graph.outputs]


class Program:
    """A compiled graph (see the module doc).

    Args:
        graph: a graph whose nodes carry avals and no :data:`TRAIN` attributes.
        ctx: the context it runs on.
        backward_vars: variable nodes whose values arrive only for the backward phase
            (head gradients); every node depending on them runs in that phase.
        inplace: allow in-place writes (the memory plan's second half).
        n_forward_outputs: how many leading outputs the forward phase produces (the
            rest are gradients). Nodes that only the backward phase needs run in it,
            each just before its first use, as an imperative backward would compute
            them, so the forward phase keeps no more than the backward reads.
    """

    def __init__(self, graph: Graph, ctx: Context, backward_vars: Sequence[Node] = (),
                 inplace: bool = True, n_forward_outputs: int | None = None):
        self.graph = graph
        self.ctx = ctx
        self.xp = ctx.xp
        topo = graph.topo()
        slot: dict[tuple[int, int], int] = {}
        for n in topo:
            for i in range(n.num_outputs):
                slot[(n.id, i)] = len(slot)
        self.n_slots = len(slot)
        self.var_slots: dict[str, int] = {}
        self.consts: list[tuple[int, object]] = []
        fwd_ids = _forward_needed(graph, n_forward_outputs) if backward_vars else None
        fwd_steps, bwd_nodes = [], []
        producer: dict[int, str] = {}
        consumers: dict[int, list[str]] = {}
        nbytes: dict[int, int] = {}
        for n in topo:
            if n.is_variable:
                self.var_slots[n.name] = slot[(n.id, 0)]
                continue
            if n.is_constant:
                v = n.value
                raw = v._data if isinstance(v, NDArray) else v
                if not isinstance(raw, self.xp.ndarray):
                    raw = self.xp.asarray(raw)
                self.consts.append((slot[(n.id, 0)], raw))
                continue
            st = self._step(n, slot, ctx)
            for s, a in zip(st.outs, st.out_avals):
                producer[s] = n.op.name
                nbytes[s] = _nbytes(a)
            for s in st.slots:
                if s >= 0:
                    consumers.setdefault(s, []).append(n.op.name)
            if fwd_ids is None or n.id in fwd_ids:
                fwd_steps.append(st)
            else:
                bwd_nodes.append((n, st))
        bwd_steps = _backward_order(bwd_nodes, graph, n_forward_outputs)
        self.steps = fwd_steps + bwd_steps
        self.n_fwd = len(fwd_steps)
        self.out_slots = [slot[(e.node.id, e.index)] for e in graph.outputs]
        self.update_slots = {v.name: slot[(e.node.id, e.index)]
                             for v, e in graph.updates.items()}
        keep = set(self.out_slots) | set(self.update_slots.values())
        pinned = set(self.var_slots.values()) | {s for s, _ in self.consts}
        avals = {s: a for st in self.steps for s, a in zip(st.outs, st.out_avals)}
        self.plan = plan(self.steps, self.n_fwd, keep, pinned, nbytes, producer, consumers,
                         enable_inplace=inplace, slot_avals=avals)
        for st, ip, r in zip(self.steps, self.plan.inplace, self.plan.reuse):
            st.inplace = ip
            st.reuse = r
        self.last_read = self.plan.last
        # Outputs handed to callers must not alias an input, a constant or another output
        # (the passes may turn ``x * 1`` into ``x``): those are copied.
        seen: set[int] = set()
        self.copy_out = []
        for s in self.out_slots:
            self.copy_out.append(s in pinned or s in seen)
            seen.add(s)

    def output(self, env: list, k: int):
        """The raw array of output ``k``, copied when it would alias another array."""
        raw = env[self.out_slots[k]]
        return raw.copy() if self.copy_out[k] else raw

    @staticmethod
    def _step(n: Node, slot, ctx) -> _Step:
        st = _Step()
        op = n.op
        st.op, st.name, st.fn = op, n.name, op.forward
        attrs = dict(n.attrs)
        if op.needs_ctx:
            attrs["ctx"] = n.ctx if n.ctx is not None else ctx
        if op.place is not None:
            attrs["_from"] = ctx
        st.attrs = attrs
        st.slots = tuple(slot[(e.node.id, e.index)] if isinstance(e, Entry) else -1
                         for e in n.inputs)
        st.lits = tuple(None if isinstance(e, Entry) else e for e in n.inputs)
        st.in_avals = tuple(e.node.avals[e.index] if isinstance(e, Entry) else None
                            for e in n.inputs)
        st.outs = tuple(slot[(n.id, i)] for i in range(n.num_outputs))
        st.out_avals = tuple(n.avals)
        st.multi = n.num_outputs > 1
        st.ufunc = INPLACE_UFUNCS.get(op.name)
        st.inplace = None
        return st

    def new_env(self) -> list:
        """The slots of one run (the last element holds buffers kept for reuse)."""
        env = [None] * self.n_slots + [{}]
        for s, raw in self.consts:
            env[s] = raw
        return env

    def run(self, env: list, start: int, stop: int, sinks: dict | None = None) -> None:
        """Run steps ``start:stop`` on ``env`` (a list of raw arrays, one per slot).

        ``sinks`` maps output slots to callables ``sink(raw) -> bool`` called as soon as
        the slot is computed; when every sink of a slot returns True (it took the value)
        and no later step reads it, the slot is released at once.
        """
        xp = self.xp
        nd_type = xp.ndarray
        frees = self.plan.frees
        pooled = self.plan.pooled
        pool = env[-1]
        guard = self.ctx.device_guard() if self.ctx.device_type != "cpu" else None
        if guard is not None:
            guard.__enter__()
        try:
            for i in range(start, stop):
                st = self.steps[i]
                raw = [env[s] if s >= 0 else lit for s, lit in zip(st.slots, st.lits)]
                try:
                    ip = st.inplace
                    if ip is not None and _owns(raw[ip]):
                        name, extra = st.ufunc
                        out = getattr(xp, name)(*raw, *extra, out=raw[ip])
                    elif st.reuse is not None:
                        out = _into(xp, st, raw, pool.pop(st.reuse, None))
                    else:
                        out = st.fn(xp, *raw, **st.attrs)
                except Exception as e:
                    raise _step_error(st, raw, e) from e
                if st.multi or type(out) is tuple or type(out) is list:
                    for s, o in zip(st.outs, out):
                        env[s] = o if type(o) is nd_type else xp.asarray(o)
                else:
                    env[st.outs[0]] = out if type(out) is nd_type else xp.asarray(out)
                for s in frees[i]:
                    if s in pooled:
                        pool[s] = env[s]
                    env[s] = None
                out = o = None  # env holds the outputs (a sink may take one)
                if sinks:
                    for s in st.outs:
                        hit = sinks.get(s)
                        if hit is None:
                            continue
                        if len(hit) == 1 and self.last_read.get(s, -1) <= i and \
                                sys.getrefcount(env[s]) == 2:
                            # its one sink may take the buffer itself (nothing else holds
                            # it: no other slot, no pool); it comes back if not taken
                            val, env[s] = env[s], None
                            if not hit[0](val, True):
                                env[s] = val
                            val = None
                            continue
                        # every sink must see the value: no short-circuit
                        taken = [f(env[s]) for f in hit]
                        if all(taken) and self.last_read.get(s, -1) <= i:
                            env[s] = None
        finally:
            if guard is not None:
                guard.__exit__(None, None, None)


def _forward_needed(graph: Graph, n_out: int | None) -> set[int]:
    """Ids of the nodes the first ``n_out`` outputs and the updates depend on."""
    heads = graph.outputs[:n_out] if n_out is not None else graph.outputs
    return reachable([e.node for e in heads] + [e.node for e in graph.updates.values()])


def _backward_order(nodes: list, graph: Graph, n_fwd: int | None) -> list:
    """Order the backward phase.

    A depth-first walk from the gradient outputs, last parameter first (the order in
    which an imperative backward finishes them), emitting each node right after the
    nodes it needs. So the gradients of one layer are completed, and the values they
    read released, before the walk moves on to the layer below; and a value derived
    from the forward pass is computed just before its first use.
    """
    by_id = {n.id: st for n, st in nodes}
    order: list = []
    done: set[int] = set()
    roots = [e.node for e in graph.outputs[n_fwd or 0:]]
    for root in reversed(roots):
        if root.id not in by_id or root.id in done:
            continue
        stack = [(root, False)]
        while stack:
            m, expanded = stack.pop()
            if m.id in done:
                continue
            if expanded:
                done.add(m.id)
                order.append(by_id[m.id])
                continue
            stack.append((m, True))
            for e in reversed(m.inputs):
                if isinstance(e, Entry) and e.node.id in by_id and e.node.id not in done:
                    stack.append((e.node, False))
    order.extend(st for n, st in nodes if n.id not in done)
    return order


def _into(xp, st: _Step, raw, buf):
    """Run ``st`` writing into the dead buffer ``buf`` when that gives exactly the
    operator's own result (C-contiguous operands, so the same layout); else normally."""
    if buf is None or not (_owns(buf) and buf.flags.c_contiguous) or not all(
            r.flags.c_contiguous for r in raw if isinstance(r, xp.ndarray)):
        return st.fn(xp, *raw, **st.attrs)
    if st.ufunc is not None:
        name, extra = st.ufunc
        return getattr(xp, name)(*raw, *extra, out=buf)
    lhs, rhs = raw  # dot
    if lhs.ndim != 2 or rhs.ndim != 2 or lhs.dtype != buf.dtype or rhs.dtype != buf.dtype:
        return st.fn(xp, *raw, **st.attrs)
    a = st.attrs
    return xp.dot(lhs.T if a.get("transpose_a") else lhs,
                  rhs.T if a.get("transpose_b") else rhs, out=buf)


def _owns(a) -> bool:
    return a.base is None and a.flags.writeable


def _nbytes(a: Aval) -> int:
    n = a.dtype.itemsize
    for d in a.shape:
        n *= d
    return n


def _step_error(st: _Step, raw, e: Exception) -> Exception:
    msg = (f"node {st.name!r} (operator {st.op.name}) failed: {e} "
           f"({describe(raw, {k: v for k, v in st.attrs.items() if k != 'ctx'})})")
    return (type(e) if isinstance(e, (ValueError, TypeError, IndexError)) else RuntimeError)(msg)


# --------------------------------------------------------------------------- compilation

def compile_graph(graph: Graph, ctx: Context, is_train: bool, wrt: Sequence[str] = (),
                  optimize: bool = True):
    """Specialize, differentiate (when ``wrt`` is not empty), optimize and compile.

    Args:
        graph: a forward graph whose nodes carry avals.
        ctx: the context.
        is_train: the value of :data:`TRAIN` attributes.
        wrt: names of the variables to differentiate with respect to.
        optimize: run the optimizer passes (``core.symbol.passes``).

    Returns:
        ``(program, head_names)``: the program's outputs are the forward outputs
        followed by one gradient per ``wrt`` name; ``head_names`` are the variables that
        take the head gradients before the backward phase.
    """
    g = specialize(graph, is_train)
    head_vars: list[Node] = []
    if wrt:
        by_name = {v.name: v for v in g.variables()}
        missing = [w for w in wrt if w not in by_name]
        if missing:
            raise ValueError(f"executor: no variable named {missing} in the graph")
        g, head_vars = gradients(g, [by_name[w] for w in wrt], ctx)
    n_fwd = len(graph.outputs)
    if optimize:
        g = _optimize(g, ctx)
    if wrt and mirror.enabled():
        g = mirror.run(g, n_fwd)
    return Program(g, ctx, head_vars, n_forward_outputs=n_fwd), [v.name for v in head_vars]


def _optimize(g: Graph, ctx: Context) -> Graph:
    from .passes import optimize

    return optimize(g, ctx=ctx)


# --------------------------------------------------------------------------- Executor

_GRAD_REQS = ("write", "add", "null")


class Executor:
    """A bound graph (MXNet's ``Executor``): ``forward``, ``backward`` and the arrays.

    Args:
        graph: the forward graph (``Symbol.graph``).
        ctx: the context.
        args: the argument arrays, by name or as a list in argument order.
        args_grad: arrays receiving the gradients (by name or list; None: none).
        grad_req: ``'write'``, ``'add'`` or ``'null'``, or one per argument (dict or list).
        aux_states: the auxiliary-state arrays (variables the graph updates).

    Example:
        >>> from core import nd
        >>> from core.symbol import Tracer
        >>> from core.symbol.executor import Executor
        >>> with Tracer() as t:
        ...     x = t.variable("x", (3,), "float32")
        ...     y = (x * x).sum()
        >>> ex = Executor(t.graph([y]), None, {"x": nd.array([1.0, 2.0, 3.0])},
        ...               args_grad={"x": nd.zeros((3,))})
        >>> ex.forward(is_train=True)[0].asnumpy().item()
        14.0
        >>> ex.backward(); ex.grad_dict["x"].asnumpy().tolist()
        [2.0, 4.0, 6.0]
    """

    def __init__(self, graph: Graph, ctx: Context | None, args, args_grad=None,
                 grad_req="write", aux_states=None):
        self.ctx = ctx if ctx is not None else current_context()
        aux_names = [v.name for v in graph.updates]
        arg_names = [v.name for v in graph.variables() if v.name not in set(aux_names)]
        self._arg_names, self._aux_names = arg_names, aux_names
        self.arg_dict = _as_dict("args", args, arg_names, required=True)
        self.aux_dict = _as_dict("aux_states", aux_states, aux_names, required=True)
        self.grad_dict = _as_dict("args_grad", args_grad, arg_names, required=False)
        if isinstance(grad_req, str):
            reqs = {n: grad_req for n in arg_names}
        elif isinstance(grad_req, Mapping):
            reqs = {n: grad_req.get(n, "null") for n in arg_names}
        else:
            reqs = dict(zip(arg_names, grad_req))
        for n, r in reqs.items():
            if r not in _GRAD_REQS:
                raise ValueError(f"Executor: grad_req for {n!r} must be one of {_GRAD_REQS}, "
                                 f"got {r!r}")
            if r != "null" and n not in self.grad_dict:
                reqs[n] = "null"
        self._grad_req = reqs
        var_avals = {n: Aval(a.shape, a.dtype) for n, a in
                     list(self.arg_dict.items()) + list(self.aux_dict.items())}
        graph = close_creation_shapes(graph, {n: a.shape for n, a in var_avals.items()},
                                      {n: a.dtype for n, a in var_avals.items()}, "bind")
        self._graph = infer_avals(graph, var_avals)
        self._programs: dict = {}
        self._env = None
        self._prog = None
        self._last_train = False
        self._output_names = output_names(graph)
        self._out_stypes = _output_stypes(self._graph, self.arg_dict)
        self.outputs: list[NDArray] = _bound_outputs(self._graph, self.ctx, self._out_stypes)
        # MXNet reads its graph-rewrite switches when it binds (get_optimized_symbol)
        self._eliminate_common_expr = _executor_info.eliminate_common_expr()
        _executor_info.check_gradients(self)

    # ------------------------------------------------------------------ views
    @property
    def arg_arrays(self) -> list[NDArray]:
        return [self.arg_dict[n] for n in self._arg_names]

    @property
    def grad_arrays(self) -> list:
        return [self.grad_dict.get(n) for n in self._arg_names]

    @property
    def aux_arrays(self) -> list[NDArray]:
        return [self.aux_dict[n] for n in self._aux_names]

    @property
    def output_dict(self) -> dict:
        return dict(zip(self._output_names, self.outputs))

    # ------------------------------------------------------------------ running
    def _program(self, is_train: bool, grads: bool | None = None):
        wrt = tuple(n for n in self._arg_names if self._grad_req[n] != "null") \
            if (is_train if grads is None else grads) else ()
        key = (is_train, wrt)
        hit = self._programs.get(key)
        if hit is None:
            hit = compile_graph(self._graph, self.ctx, is_train, wrt)
            self._programs[key] = hit
        return hit, wrt

    def forward(self, is_train: bool = False, **kwargs) -> list[NDArray]:
        """Run the forward pass; ``kwargs`` give new values for arguments by name."""
        for k, v in kwargs.items():
            if k not in self.arg_dict:
                raise ValueError(f"Executor.forward: unknown argument {k!r}; arguments: "
                                 f"{self._arg_names}")
            self.arg_dict[k][:] = v
        return self._forward(bool(is_train), None)

    def _forward(self, is_train: bool, grads: bool | None) -> list[NDArray]:
        (prog, heads), wrt = self._program(is_train, grads)
        env = prog.new_env()
        for name, arr in list(self.arg_dict.items()) + list(self.aux_dict.items()):
            s = prog.var_slots.get(name)
            if s is not None:
                if arr._var is not None:  # pushed engine work writes it
                    _engine.wait_to_write(arr)  # aux states are written back below
                env[s] = arr._data
        with _ag.pause(bool(is_train)):
            prog.run(env, 0, prog.n_fwd)
        n_out = len(self._graph.outputs)
        self.outputs = [NDArray._make(prog.output(env, k), self.ctx, None) for k in range(n_out)]
        if self._out_stypes is not None:  # sparse inputs: MXNet's output storage types
            from ..sparse.ops import keep_node

            self.outputs = [keep_node(o, st) for o, st in zip(self.outputs, self._out_stypes)]
        for name, s in prog.update_slots.items():
            dst = self.aux_dict[name]
            if env[s] is not dst._data:
                dst._data[...] = env[s]
        self._env, self._prog, self._heads, self._wrt = env, prog, heads, wrt
        self._last_train = is_train
        return self.outputs

    def backward(self, out_grads=None, is_train: bool = True) -> None:
        """Run the backward pass of the last forward.

        After ``forward(is_train=False)`` (MXNet's default), the forward runs again in
        inference mode with the gradient program (same outputs; no auxiliary state
        changes in inference mode), as MXNet differentiates an inference forward too.

        Args:
            out_grads: gradients of the outputs (NDArray, list, or None for ones).
            is_train: accepted for MXNet compatibility.
        """
        if self._prog is not None and not self._wrt and not self._last_train \
                and any(self._grad_req[n] != "null" for n in self._arg_names):
            self._forward(False, True)
        if self._prog is None or not self._wrt:
            raise RuntimeError("Executor.backward: call forward(is_train=True) first, with "
                               "at least one argument whose grad_req is not 'null'")
        prog, env = self._prog, self._env
        if out_grads is None:
            out_grads = [None] * len(self.outputs)
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        xp = self.ctx.xp
        for name, o, g in zip(self._heads, self.outputs, out_grads):
            s = prog.var_slots.get(name)
            if s is None:
                continue
            env[s] = (xp.ones(o.shape, o.dtype) if g is None else
                      g._data if isinstance(g, NDArray) else xp.asarray(g, dtype=o.dtype))
        with _ag.pause(True):
            prog.run(env, prog.n_fwd, len(prog.steps))
        n_out = len(self.outputs)
        for name, s in zip(self._wrt, prog.out_slots[n_out:]):
            dst = self.grad_dict[name]
            if dst._is_sparse:  # a sparse gradient array keeps its storage type
                dst._take_grad(NDArray._make(env[s], self.ctx, None), self._grad_req[name])
                continue
            if self._grad_req[name] == "add":
                dst._data += env[s]
            else:
                dst._data[...] = env[s]
        self._env = None

    def debug_str(self) -> str:
        """The bound graph and ``Total <n> MB allocated``, the memory plan's estimate of the
        executor's own arrays (MXNet's ``debug_str``; :mod:`core.symbol.executor_info`)."""
        return _executor_info.debug_str(self)

    def get_optimized_symbol(self):
        """The bound graph after MXNet's executor rewrites (common-subexpression
        elimination unless ``MXNET_ELIMINATE_COMMON_EXPR=0`` at bind), as a Symbol."""
        return _executor_info.optimized_symbol(self)

    def __repr__(self) -> str:
        return f"<Executor {len(self._arg_names)} args, {len(self._aux_names)} aux @{self.ctx}>"


def _as_dict(what: str, values, names: list[str], required: bool) -> dict:
    if values is None:
        values = {}
    if isinstance(values, Mapping):
        d = dict(values)
    else:
        values = list(values)
        if len(values) != len(names):
            raise ValueError(f"Executor: {what} has {len(values)} arrays for {len(names)} "
                             f"names {names}")
        d = dict(zip(names, values))
    if required:
        missing = [n for n in names if n not in d]
        if missing:
            raise ValueError(f"Executor: {what} is missing {missing}")
    for k, v in d.items():
        if v is not None and not isinstance(v, NDArray):
            raise TypeError(f"Executor: {what}[{k!r}] must be an NDArray, got "
                            f"{type(v).__name__}")
    return {k: v for k, v in d.items() if v is not None}


def _output_stypes(graph, arg_dict) -> list | None:
    """The outputs' storage types when an argument is sparse (``core.sparse``), else
    None (every output dense, nothing to do)."""
    stypes = {n: a.stype for n, a in arg_dict.items() if a._is_sparse}
    if not stypes:
        return None
    from ..sparse.graph_storage import output_stypes

    out = output_stypes(graph, stypes)
    return out if any(s != "default" for s in out) else None


def _bound_outputs(graph, ctx, stypes) -> list:
    """Zero outputs of the inferred shapes, as MXNet's executor holds from bind on (the
    first ``forward`` replaces them); none when a shape is unknown."""
    from ..sparse.create import zeros

    avals = []
    for e in graph.outputs:
        a = e.node.avals[e.index] if e.node.avals else None
        if a is None or None in tuple(a.shape):
            return []
        avals.append(a)
    stypes = stypes or ["default"] * len(avals)
    try:
        return [zeros(st if (st != "csr" or len(a.shape) == 2) else "default", a.shape,
                      ctx=ctx, dtype=a.dtype) for a, st in zip(avals, stypes)]
    except (TypeError, ValueError):
        return []
