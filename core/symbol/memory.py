"""Memory planning for the executor: liveness, early release and in-place execution.

The executor runs a graph as a list of steps over numbered slots (one per node
output). The plan says, for every step,

- which slots are read for the last time there, so their arrays are released right
  after it (the peak of a training step is then what backward really needs, not the
  sum of all intermediates, which an imperative tape keeps alive);
- whether the step may write its result into one of its inputs' buffers (in-place),
  which is allowed when that input dies at this step, has the output's shape and
  dtype, owns its memory (it was produced by an operator that always returns a fresh
  array), and no other live value may be a view of it.

Planning is static (done once per compiled program, ``static_alloc``); the executor
re-checks ownership at run time before writing in place, so a wrong table entry can
only cost an allocation, never a wrong result.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Operators whose forward is one NumPy/CuPy ufunc on its inputs: name -> (ufunc name,
# extra trailing operands). ``ufunc(*inputs, *extra, out=buf)`` is then bitwise equal to
# the operator's own forward when ``buf`` has the result's shape and dtype.
INPLACE_UFUNCS: dict[str, tuple[str, tuple]] = {
    "add": ("add", ()),
    "subtract": ("subtract", ()),
    "multiply": ("multiply", ()),
    "divide": ("true_divide", ()),
    "maximum": ("maximum", ()),
    "minimum": ("minimum", ()),
    "power": ("power", ()),
    "negative": ("negative", ()),
    "exp": ("exp", ()),
    "log": ("log", ()),
    "sqrt": ("sqrt", ()),
    "square": ("square", ()),
    "tanh": ("tanh", ()),
    "abs": ("absolute", ()),
    "sin": ("sin", ()),
    "cos": ("cos", ()),
    "relu": ("maximum", (0,)),
}

# Operators that can write their result into a given buffer (``out=``) with the same
# values as their own forward: the ufunc operators, and 2-D ``dot``.
OUT_OPS = frozenset(INPLACE_UFUNCS) | {"dot"}

# Operators whose outputs are always freshly allocated (never views of an input), so
# their buffers may be overwritten once dead.
FRESH_OPS = frozenset(INPLACE_UFUNCS) | {
    "dot", "matmul", "batch_dot", "FullyConnected", "Convolution", "Deconvolution",
    "Pooling", "softmax", "log_softmax", "sigmoid", "BatchNorm", "_batch_norm_train",
    "_batch_norm_infer", "_fused_elemwise", "_conv_grad_data", "_conv_grad_weight",
    "_unreduce", "greater", "less", "equal", "Activation", "_layer_norm",
    "_pooling_max_route", "_pooling_spread", "_norm_grad",
}


@dataclass
class Plan:
    """The memory plan of one program (see the module doc)."""

    frees: list[list[int]] = field(default_factory=list)   # per step: slots to release
    reuse: list[int | None] = field(default_factory=list)  # per step: dead slot's buffer
    pooled: set[int] = field(default_factory=set)          # slots kept for a reuse
    reuse_count: int = 0
    inplace: list[int | None] = field(default_factory=list)  # per step: input position
    saved: list[int] = field(default_factory=list)         # forward slots backward reads
    last: dict[int, int] = field(default_factory=dict)     # slot -> last step reading it
    inplace_count: int = 0
    planned_bytes: int = 0   # the largest sum of live planned intermediates (estimate)


def plan(steps, n_fwd: int, keep: set[int], pinned: set[int], slot_bytes: dict[int, int],
         slot_producer: dict[int, str], consumers_of: dict[int, list[str]],
         enable_inplace: bool = True, slot_avals: dict | None = None) -> Plan:
    """Plan releases, in-place writes and buffer reuse for ``steps``.

    A step that can write into a given buffer (:data:`OUT_OPS`) and does not run in
    place takes the buffer of a value that died earlier with the same shape and dtype
    (buffer reuse across non-overlapping lifetimes), when one is free.

    The backward phase never writes into a value the forward phase produced: a
    backward run with ``retain_graph`` works on a copy of the slots, and the forward
    values must stay intact for the next run.

    Args:
        steps: the executor's steps (``.slots``: input slots, -1 for literals; ``.outs``:
            output slots; ``.op``: the operator), forward steps first.
        n_fwd: how many of ``steps`` form the forward phase.
        keep: slots that must survive the program (its outputs).
        pinned: slots never released nor overwritten (variables and constants).
        slot_bytes: the size of each slot's array, for the estimate.
        slot_producer: the operator name that produces each slot.
        consumers_of: for each slot, the names of the operators that read it.
        enable_inplace: allow in-place writes.
    """
    last: dict[int, int] = {}
    for i, st in enumerate(steps):
        for s in st.slots:
            if s >= 0:
                last[s] = i
    p = Plan()
    p.last = last
    produced_fwd = {s for st in steps[:n_fwd] for s in st.outs}
    p.saved = sorted(s for s, i in last.items() if i >= n_fwd and s in produced_fwd)
    live = 0
    born: dict[int, int] = {}
    free_pool: dict = {}  # aval -> dead poolable slots
    slot_avals = slot_avals or {}

    def writable(s, i):
        return (s not in keep and s not in pinned
                and slot_producer.get(s) in FRESH_OPS
                and all(c in FRESH_OPS for c in consumers_of.get(s, ()))
                and not (i >= n_fwd and s in produced_fwd))

    for i, st in enumerate(steps):
        ip = None
        if enable_inplace and st.op.name in INPLACE_UFUNCS and len(st.outs) == 1:
            for pos, s in enumerate(st.slots):
                if (s >= 0 and last.get(s) == i and st.slots.count(s) == 1
                        and writable(s, i) and st.out_avals[0] == st.in_avals[pos]):
                    ip = pos
                    break
        p.inplace.append(ip)
        reuse = None
        if enable_inplace and ip is None and st.op.name in OUT_OPS and len(st.outs) == 1:
            a = st.out_avals[0]
            cands = free_pool.get((a.shape, a.dtype))
            while cands:
                s = cands.pop()
                if not (i >= n_fwd and s in produced_fwd):
                    reuse = s
                    break
        p.reuse.append(reuse)
        if reuse is not None:
            p.pooled.add(reuse)
            p.reuse_count += 1
        if ip is None:
            for s in st.outs:
                live += slot_bytes.get(s, 0)
                born[s] = i
        else:
            p.inplace_count += 1
            born.pop(st.slots[ip], None)  # its bytes now belong to the output
            born[st.outs[0]] = i
        p.planned_bytes = max(p.planned_bytes, live)
        dead = [s for s in set(st.slots) if s >= 0 and last.get(s) == i and s not in keep
                and s not in pinned]
        dead += [s for s in st.outs if s not in last and s not in keep]
        p.frees.append(dead)
        for s in dead:
            if born.pop(s, None) is not None:
                live -= slot_bytes.get(s, 0)
            # (an input written in place lives on as this step's output: not free)
            if enable_inplace and s in slot_avals and writable(s, i) and not (
                    ip is not None and s == st.slots[ip]):
                a = slot_avals[s]
                free_pool.setdefault((a.shape, a.dtype), []).append(s)
    return p
