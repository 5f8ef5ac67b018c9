"""``jit_compile``: Keras training, test and predict steps run as compiled graphs.

With ``model.compile(jit_compile=True)`` (Keras' ``"auto"`` resolves to True for
kbackend), the first step for a given input signature runs eagerly (building what
Keras creates lazily), and the second traces the model's forward pass and loss through core's registry (:class:`core.symbol.trace.Tracer`): the model's
Variables stand in as graph inputs, a Variable assigned during the call (BatchNormalization's
moving statistics) becomes a graph update, and the graph is optimized and compiled
into a :class:`core.symbol.cached_op.CachedOp`. Later steps run the compiled program:
no Keras layer code, no ``convert_to_tensor``, no per-operator dispatch. The program is
one node on the autograd tape, so the trainer takes gradients and applies the
optimizer exactly as in an eager step; metrics are computed eagerly on the outputs.

A model whose call cannot be captured in a graph (Python control flow on tensor
values, values read with ``convert_to_numpy``, random draws seeded from a Variable's
value) is detected while tracing: a warning names the reason once and the model's
steps run eagerly from then on, with the same results.
"""
from __future__ import annotations

import warnings

from keras.src import tree

from core import autograd as _autograd
from core.ndarray import NDArray
from core.symbol.cached_op import CachedOp
from core.symbol.trace import Tracer

from .core import convert_to_tensor

_FAILED = object()
_WARMED = object()


class CompiledSteps:
    """The compiled forward passes of one Keras model, by input signature and kind."""

    def __init__(self, model):
        self.model = model
        self.cache: dict = {}
        self.failed: str | None = None

    def _key(self, kind: str, x, y, sample_weight) -> tuple:
        """The cache key of a step's signature, and its inputs as tensors."""
        leaves = tree.flatten((x, y, sample_weight))
        arrays = [None if v is None else convert_to_tensor(v) for v in leaves]
        key = (kind, _structure_key((x, y, sample_weight)),
               tuple(None if a is None else (a.shape, a.dtype) for a in arrays),
               tuple(id(v) for v in self.model.variables),
               len(self.model.metrics_variables))
        return key, arrays

    def ready(self, kind: str, x, y=None, sample_weight=None) -> bool:
        """Whether :meth:`run` on this signature would run an already compiled graph
        (not warm up eagerly, not trace, not fall back)."""
        if self.failed is not None:
            return False
        return isinstance(self.cache.get(self._key(kind, x, y, sample_weight)[0]), tuple)

    def run(self, kind: str, x, y=None, sample_weight=None):
        """``(y_pred, loss)`` for ``kind`` ``'train'``/``'test'`` (``loss`` None for
        ``'predict'``), from the compiled graph; None when the step must run eagerly."""
        if self.failed is not None:
            return None
        key, arrays = self._key(kind, x, y, sample_weight)
        entry = self.cache.get(key)
        if entry is None:
            # The first step of a signature runs eagerly: it builds whatever Keras
            # creates lazily (metrics' and losses' Variables), so the trace only reads
            # and updates state that exists.
            self.cache[key] = _WARMED
            return None
        if entry is _WARMED:
            entry = self._trace(kind, (x, y, sample_weight), arrays)
            self.cache[key] = entry
        if entry is _FAILED:
            return None
        op, n_pred, pred_struct, variables = entry
        values = {f"input{i}": a for i, a in enumerate(arrays) if a is not None}
        for name, v in variables:
            values[name] = v.value
        outs = op(values)
        y_pred = tree.pack_sequence_as(pred_struct, outs[:n_pred])
        loss = outs[n_pred] if kind != "predict" else None
        return y_pred, loss

    def _trace(self, kind, structure, arrays):
        model = self.model
        # The metrics' Variables too: Keras' compiled loss updates per-output loss
        # metrics inside the call.
        seen, variables = set(), []
        for v in list(model.variables) + list(model.metrics_variables):
            if id(v) not in seen:
                seen.add(id(v))
                variables.append((f"v{len(variables)}:{v.path}", v))
        originals = {name: v._value for name, v in variables}
        training = kind == "train"
        try:
            with _autograd.pause(train_mode=training), Tracer() as t:
                for name, v in variables:
                    t.bind(v._value, name)
                stand = [None if a is None else t.variable(f"input{i}", a.shape, a.dtype,
                                                           a.context)
                         for i, a in enumerate(arrays)]
                y_pred, loss = forward_and_loss(model, kind,
                                                *tree.pack_sequence_as(structure, stand))
                outs = list(tree.flatten(y_pred))
                if loss is not None:
                    outs.append(loss)
                if not all(isinstance(o, NDArray) for o in outs):
                    raise TypeError("the step's outputs are not all tensors")
                replaced = {originals[name]: v._value for name, v in variables
                            if v._value is not originals[name]}
                now = list(model.variables) + list(model.metrics_variables)
                if len(now) != len({id(v) for _, v in variables} | {id(v) for v in now}):
                    raise RuntimeError("the step created new Variables while traced")
                graph = t.graph(outs, replaced)
        except Exception as e:  # noqa: BLE001 - any failure: the eager step still works
            self.failed = f"{type(e).__name__}: {e}"
            warnings.warn(
                f"kbackend: jit_compile: the {kind} step of model '{model.name}' could not "
                f"be traced into a graph ({self.failed}); its steps run eagerly (same "
                "results). Pass jit_compile=False to compile() to silence this.",
                stacklevel=3)
            return _FAILED
        finally:
            for name, v in variables:
                v._value = originals[name]
        ctx = next((a.context for a in arrays if a is not None), None)
        n_pred = len(outs) - (0 if kind == "predict" else 1)
        pred_struct = tree.map_structure(lambda _: 0, y_pred)
        return CachedOp(graph, ctx), n_pred, pred_struct, variables


def _structure_key(obj):
    if isinstance(obj, dict):
        return ("d", tuple((k, _structure_key(obj[k])) for k in sorted(obj)))
    if isinstance(obj, (list, tuple)):
        return ("l", tuple(_structure_key(o) for o in obj))
    return None if obj is None else "a"


def compiled_steps(model) -> CompiledSteps | None:
    """The model's compiled steps when ``jit_compile`` is on (and not run eagerly)."""
    if not getattr(model, "jit_compile", False) or getattr(model, "run_eagerly", False):
        return None
    steps = getattr(model, "_kbackend_compiled", None)
    if steps is None:
        steps = CompiledSteps(model)
        model._kbackend_compiled = steps
    return steps


def forward_and_loss(model, kind: str, x, y=None, sample_weight=None):
    """``(y_pred, loss)`` of a ``'train'``/``'test'`` step (``loss`` None for
    ``'predict'``), computed eagerly: what a compiled step computes."""
    training = kind == "train"
    y_pred = model(x, training=training) if model._call_has_training_arg else model(x)
    if kind == "predict":
        return y_pred, None
    return y_pred, model._compute_loss(x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
                                       training=training)


def step_outputs(model, kind: str, x, y=None, sample_weight=None):
    """``(y_pred, loss)`` of a step: through the compiled graph under ``jit_compile``,
    else (or when the step must run eagerly) with :func:`forward_and_loss`."""
    compiled = compiled_steps(model)
    res = compiled.run(kind, x, y, sample_weight) if compiled else None
    return res if res is not None else forward_and_loss(model, kind, x, y, sample_weight)
