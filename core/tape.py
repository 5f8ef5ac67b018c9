"""The autograd tape: recording state, scopes and the recorded nodes.

While :func:`record` is active, every operator whose inputs are attached to the graph
(through ``NDArray.attach_grad`` or ``autograd.mark_variables``) adds a :class:`Node`
(:func:`record_op`, called by the dispatcher); leaves are :class:`VarNode`. The
backward walker that reads the tape is ``core.autograd`` (the public module, which
re-exports the scopes defined here). This module imports nothing from ``core``, so
the dispatcher and NDArray can depend on it without a cycle.
"""
from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager

__all__ = [
    "Node",
    "VarNode",
    "is_recording",
    "is_training",
    "on_grad_ready",
    "pause",
    "predict_mode",
    "record",
    "record_op",
    "set_recording",
    "set_training",
    "train_mode",
]


class _State(threading.local):
    def __init__(self):
        self.recording = False
        self.training = False
        self.grad_ready = None  # on_grad_ready's callback, or None


_state = _State()


def is_recording() -> bool:
    """Whether operators are being recorded for gradient computation."""
    return _state.recording


def is_training() -> bool:
    """Whether layers run in training mode (dropout active, batch statistics used)."""
    return _state.training


def set_recording(is_recording: bool) -> bool:
    """Set recording on or off; returns the previous state."""
    prev, _state.recording = _state.recording, bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set training mode on or off; returns the previous state."""
    prev, _state.training = _state.training, bool(train_mode)
    return prev


@contextmanager
def _scope(recording, training):
    prev_r, prev_t = _state.recording, _state.training
    if recording is not None:
        _state.recording = recording
    if training is not None:
        _state.training = training
    try:
        yield
    finally:
        _state.recording, _state.training = prev_r, prev_t


def record(train_mode: bool = True):
    """Scope in which operators are recorded for autograd.

    Args:
        train_mode: also switch layers to training mode (default True).

    Example:
        >>> from core import nd, autograd
        >>> x = nd.array([1.0, 2.0]); x.attach_grad()
        >>> with autograd.record():
        ...     y = (x * x).sum()
        >>> y.backward(); x.grad.asnumpy().tolist()
        [2.0, 4.0]
    """
    return _scope(True, train_mode)


def pause(train_mode: bool = False):
    """Scope in which recording is off (e.g. for metric computation inside record)."""
    return _scope(False, train_mode)


def train_mode():
    """Scope with training mode on, recording unchanged."""
    return _scope(None, True)


def predict_mode():
    """Scope with training mode off, recording unchanged."""
    return _scope(None, False)


@contextmanager
def on_grad_ready(callback):
    """Scope in which :func:`backward` calls ``callback(leaf)`` as soon as a leaf's
    gradient is final (written into ``leaf.grad``), in this thread only.

    A leaf's gradient is final once every recorded operator that used the leaf has
    run its VJP, so the last layers' gradients are ready while backward still works
    on the first layers: ``core.parallel`` starts each parameter's all-reduce there.
    Leaves whose gradients arrive only at the end (or not at all) are reported at the
    end of backward (or never). Gradients are written at the same moments and with the
    same values as without a callback. Scopes do not nest: the inner one replaces
    the outer one until it ends.

    Args:
        callback: ``callback(leaf)`` with the leaf NDArray (the array that called
            ``attach_grad``); it runs on the thread running backward.

    Example:
        >>> from core import nd, autograd
        >>> w1, w2 = nd.array([2.0]), nd.array([3.0])
        >>> w1.attach_grad(); w2.attach_grad()
        >>> with autograd.record():
        ...     y = (w1 * 5.0) * w2
        >>> ready = []
        >>> with autograd.on_grad_ready(lambda leaf: ready.append(leaf.grad.item())):
        ...     y.backward()
        >>> ready   # w2's gradient (2 * 5) is final first
        [10.0, 15.0]
    """
    prev, _state.grad_ready = _state.grad_ready, callback
    try:
        yield
    finally:
        _state.grad_ready = prev


# --------------------------------------------------------------------------- the tape

class VarNode:
    """A leaf of the graph: an array whose gradient is wanted."""

    __slots__ = ("__weakref__", "fresh", "grad_req", "ref")

    def __init__(self, array, grad_req):
        self.ref = weakref.ref(array)
        self.grad_req = grad_req
        self.fresh = False  # a backward wrote the gradient since (MXNet's _fresh_grad)


class Node:
    """One recorded operator call."""

    __slots__ = (
        "__weakref__",
        "attrs",
        "checks",
        "ctx",
        "freed",
        "in_data",
        "in_meta",
        "op",
        "out_data",
        "out_meta",
        "out_refs",
        "parents",
    )


def record_op(op, inputs, raw, attrs, outs):
    """Add a node for ``op`` applied to ``inputs`` giving ``outs`` (called by invoke)."""
    node = Node()
    node.op = op
    node.attrs = attrs
    parents = []
    in_meta = []
    checks = []
    literal = False
    for x, r in zip(inputs, raw):
        n = getattr(x, "_node", _MISSING)
        if n is _MISSING:  # a scalar, None or a converted array-like
            parents.append(None)
            if hasattr(r, "shape"):
                in_meta.append((r.shape, r.dtype))
            else:
                in_meta.append(None)
                literal = True
        else:
            parents.append(n)
            in_meta.append((r.shape, r.dtype))
            checks.append((x, x._version))
    node.parents = tuple(parents)
    node.in_meta = tuple(in_meta)
    out_list = outs if type(outs) is tuple else (outs,)
    node.out_meta = tuple([(o._data.shape, o._data.dtype) for o in out_list])
    save = op.save
    if save:
        node.in_data = tuple(raw)
        node.checks = tuple(checks)
        if save == "inputs":  # the VJP reads inputs only: do not keep outputs alive
            node.out_data = None
            node.out_refs = ()
        else:
            node.out_data = tuple([o._data for o in out_list])
            node.out_refs = tuple([(weakref.ref(o), 0) for o in out_list])
    else:
        # the literal inputs (scalars) only, for autograd.get_symbol; arrays are not kept
        node.in_data = tuple([r if m is None else None for r, m in zip(raw, in_meta)]) \
            if literal else None
        node.out_data = None
        node.checks = node.out_refs = ()
    node.freed = False
    node.ctx = out_list[0]._ctx
    for i, o in enumerate(out_list):
        o._node = (node, i)


_MISSING = object()
