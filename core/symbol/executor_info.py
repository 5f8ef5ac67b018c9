"""What an :class:`~core.symbol.executor.Executor` tells about itself (MXNet 1.x's
``Executor.debug_str`` and ``Executor.get_optimized_symbol``).

``debug_str`` lists the bound graph (outputs, variables, operator nodes and their
inputs) and ends with ``Total <n> MB allocated``: the memory plan's estimate of the
executor's own arrays at their peak in the program a training step runs (forward and,
when some argument wants a gradient, backward). The argument, gradient and auxiliary
arrays that ``bind``/``simple_bind`` hand in are not counted, as in MXNet, so a graph
whose gradients are all zero (``stop_gradient``) reports what its forward alone needs.

``optimized_symbol`` is the bound graph after the rewrites MXNet's executor applies to
it: common-subexpression elimination unless ``MXNET_ELIMINATE_COMMON_EXPR=0``
(:mod:`core.symbol.passes.cse`), with a ``_copy`` node for every output after the first
that reads an entry another output already reads (MXNet's isolation of outputs).
"""
from __future__ import annotations

import os

from ..ops.registry import REGISTRY
from .graph import Entry, Graph, Node
from .passes import cse


def eliminate_common_expr() -> bool:
    """Whether ``MXNET_ELIMINATE_COMMON_EXPR`` asks for CSE now (default: yes, as MXNet)."""
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").strip() not in ("0", "false",
                                                                              "False")


def _isolate_outputs(graph: Graph) -> Graph:
    seen: set[tuple[int, int]] = set()
    outs = []
    copy = REGISTRY["copy"]
    for e in graph.outputs:
        key = (e.node.id, e.index)
        if key in seen:
            avals = None if e.node.avals is None else (e.node.avals[e.index],)
            n = Node(copy, f"{e.node.name}_copy{len(outs)}", [e], {}, avals=avals)
            e = Entry(n, 0)
        seen.add(key)
        outs.append(e)
    return Graph(outs, graph.updates)


def optimized_graph(graph: Graph, eliminate: bool | None = None) -> Graph:
    """``graph`` after MXNet's executor rewrites (see the module doc); ``eliminate``:
    run CSE (None: as ``MXNET_ELIMINATE_COMMON_EXPR`` says now)."""
    if eliminate_common_expr() if eliminate is None else eliminate:
        graph = cse.run(graph)
    return _isolate_outputs(graph)


def optimized_symbol(executor):
    """The bound graph after MXNet's executor rewrites, as a Symbol.

    Args:
        executor: an Executor.

    Returns:
        A :class:`~core.symbol.symbol.Symbol`.
    """
    from .symbol import Symbol

    return Symbol.from_graph(optimized_graph(
        executor._graph, getattr(executor, "_eliminate_common_expr", None)))


def allocated_bytes(executor) -> int:
    """The estimate of the executor's own arrays at their peak (see the module doc)."""
    (prog, _heads), _wrt = executor._program(True)
    n_out = len(executor._graph.outputs)
    grads = 0
    for s in prog.out_slots[n_out:]:  # written into the bound gradient arrays
        for st in prog.steps:
            if s in st.outs:
                a = st.out_avals[st.outs.index(s)]
                n = a.dtype.itemsize
                for d in a.shape:
                    n *= d
                grads += n
                break
    return max(0, prog.plan.planned_bytes - grads)


def check_gradients(executor) -> None:
    """Raise at bind, as MXNet does, when an argument wants a gradient through an operator
    that has none (its VJP is marked ``no_gradient``): the training program is compiled
    now (and kept), so the operator's error names it."""
    if not any(r != "null" for r in executor._grad_req.values()):
        return
    if any(getattr(getattr(n.op, "vjp", None), "no_gradient", False)
           for n in executor._graph.op_nodes()):
        executor._program(True)


def _entry(e) -> str:
    if isinstance(e, Entry):
        n = e.node
        return f"{n.name}({e.index})" if not n.is_variable else f"{n.name}(0)"
    return repr(e)


def debug_str(executor) -> str:
    """MXNet's ``Executor.debug_str()``: the graph and ``Total <n> MB allocated``.

    Args:
        executor: an Executor.

    Returns:
        The text.
    """
    g = executor._graph
    lines = ["Symbol Outputs:"]
    lines += [f"\toutput[{i}]={_entry(e)}" for i, e in enumerate(g.outputs)]
    for n in g.topo():
        if n.is_variable:
            lines.append(f"Variable:{n.name}")
            continue
        if n.is_constant:
            continue
        lines.append("-" * 20)
        lines.append(f"Op:{n.op_name}, Name={n.name}")
        lines.append("Inputs:")
        lines += [f"\targ[{i}]={_entry(e)}" for i, e in enumerate(n.inputs)
                  if isinstance(e, Entry)]
        if n.attrs:
            lines.append("Attrs:")
            lines += [f"\t{k}={v}" for k, v in n.attrs.items() if k != "ctx"]
    mb = (allocated_bytes(executor) + (1 << 20) - 1) >> 20
    lines.append(f"Total {mb} MB allocated")
    return "\n".join(lines) + "\n"
