"""``CachedOp``: a traced graph run as one operator from imperative code.

This is what a hybridized Gluon block (and kbackend's ``jit_compile``) calls. The
graph is compiled once per (training mode, set of inputs that need gradients) into a
:class:`~core.symbol.executor.Program`. Under ``autograd.record()`` the whole graph
becomes one node on the imperative tape: its forward phase runs now, and its VJP
runs the backward phase on the slots the forward phase kept, so ``loss.backward()``
works exactly as with the imperative model.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from .. import autograd as _ag
from .. import engine as _engine
from ..context import Context
from ..ndarray import NDArray
from ..ops.registry import OpDef
from .autodiff import specialize
from .executor import compile_graph
from .graph import Graph, evaluate


def _sink(c, i: int, ctx, taken: set):
    def sink(raw, owned: bool = False) -> bool:
        if c.deliver(i, NDArray._make(raw, ctx, None), owned):
            taken.add(i)
            return True
        return False

    return sink


class CachedOp:
    """Run ``graph`` on NDArrays, with autograd support (see the module doc).

    Args:
        graph: a traced graph (nodes carry avals) whose variables are named.
        ctx: the context it runs on.
        optimize: run the optimizer passes when compiling.

    Example:
        >>> from core import nd, autograd
        >>> from core.symbol import Tracer
        >>> from core.symbol.cached_op import CachedOp
        >>> with Tracer() as t:
        ...     x = t.variable("x", (2,), "float32")
        ...     y = nd.exp(x) * 2
        >>> op = CachedOp(t.graph([y]), None)
        >>> a = nd.array([0.0, 1.0]); a.attach_grad()
        >>> with autograd.record():
        ...     out, = op({"x": a})
        >>> out.backward(); a.grad.asnumpy().round(3).tolist()
        [2.0, 5.437]
    """

    def __init__(self, graph: Graph, ctx: Context | None, optimize: bool = True):
        from ..context import current_context

        self.graph = graph
        self.ctx = ctx if ctx is not None else current_context()
        self.optimize = optimize
        self.var_names = [v.name for v in graph.variables()]
        self.aux_names = [v.name for v in graph.updates]
        self._programs: dict = {}

    def program(self, is_train: bool, wrt: tuple = ()):
        key = (is_train, wrt)
        hit = self._programs.get(key)
        if hit is None:
            hit = compile_graph(self.graph, self.ctx, is_train, wrt, self.optimize)
            self._programs[key] = hit
        return hit

    def __call__(self, values: Mapping[str, NDArray]) -> list[NDArray]:
        """Run on ``values`` (``{variable name: NDArray}``); returns the outputs."""
        state = _ag._state
        is_train = bool(state.training)
        wrt = tuple(n for n in self.var_names
                    if state.recording and values[n]._node is not None)
        prog, heads = self.program(is_train, wrt)
        env = prog.new_env()
        for name in self.var_names:
            s = prog.var_slots.get(name)
            if s is not None:
                v = values[name]
                if v._var is not None:  # pushed engine work writes it (an all-reduce, ...)
                    _engine.wait_to_read(v)
                env[s] = v._data
        prog.run(env, 0, prog.n_fwd)
        ctx = self.ctx
        n_out = len(self.graph.outputs)
        outs = [NDArray._make(prog.output(env, k), ctx, None) for k in range(n_out)]
        for name, s in prog.update_slots.items():
            dst = values[name]
            if env[s] is not dst._data:
                if dst._var is not None:
                    _engine.wait_to_write(dst)
                dst._data[...] = env[s]
                dst._version += 1
        if wrt:
            self._record(prog, env, heads, wrt, values, outs, is_train)
        return outs

    def _record(self, prog, env, heads, wrt, values, outs, is_train) -> None:
        """Put one node on the tape whose VJP runs the program's backward phase."""
        n_out = len(outs)
        grad_slots = prog.out_slots[n_out:]
        head_slots = [prog.var_slots.get(h) for h in heads]
        ctx = self.ctx
        inputs = [values[n] for n in wrt]
        cached = self
        kept = [env]  # the forward phase's slots; released by a final backward

        def vjp(c, g):
            gs = g if isinstance(g, tuple) else (g,)
            if c.create_graph:  # second order: recompute through the dispatcher
                return cached._vjp_recorded(is_train, wrt, c.inputs, gs, values)
            if kept[0] is None:
                raise RuntimeError("backward: the graph of this hybridized block was already "
                                   "freed by an earlier backward; pass retain_graph=True to "
                                   "the first backward to go through it twice")
            if c.retain_graph:
                run_env = list(kept[0])
                run_env[-1] = {}  # its own pool of dead buffers
            else:  # run on the slots themselves so each is released after its last use
                run_env, kept[0] = kept[0], None
            for s, gr in zip(head_slots, gs):
                if s is not None:
                    run_env[s] = gr._data
            # Each gradient goes to its parameter's .grad as soon as it is computed (when
            # autograd says it is final), so gradients are not all alive at the end.
            taken: set[int] = set()
            sinks: dict = {}
            for i, s in enumerate(grad_slots):
                sinks.setdefault(s, []).append(_sink(c, i, ctx, taken))
            with _ag.pause(is_train):
                prog.run(run_env, prog.n_fwd, len(prog.steps), sinks)
            return tuple(None if i in taken else NDArray._make(run_env[s], ctx, None)
                         for i, s in enumerate(grad_slots))

        # save="inputs": a second-order backward (create_graph) reads the inputs.
        op = OpDef(name="CachedOp", forward=None, infer=None, vjp=vjp, inputs=(), attrs={},
                   nd=(), np=(), variadic=True, needs_ctx=False,
                   differentiable=True, save="inputs", place=None, random=False, updates={},
                   visible_outputs=None, doc="")
        raw = [x._data for x in inputs]
        _ag.record_op(op, inputs, raw, {}, tuple(outs) if n_out > 1 else outs[0])

    def _vjp_recorded(self, is_train, wrt, inputs: Sequence[NDArray], gs, given):
        values = dict(given)  # inputs without gradient (integer indices, ...) as given
        values.update(zip(wrt, inputs))
        g = specialize(self.graph, is_train)
        with _ag.record(is_train):
            outs, _ = evaluate(g, values, self.ctx, is_train)
        return tuple(_ag.grad(outs, list(inputs), head_grads=list(gs), create_graph=True,
                              retain_graph=True))
