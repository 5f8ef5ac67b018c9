"""Rows for the shape operators (core/ops/shape.py)."""
import numpy as np
import pytest

from core import autograd, nd
from core import np as knp
from core.ndarray import NDArray
from core.ops import F
from core.test_utils import check_numeric_gradient

from .op_db import OpSpec, Sample, rand

_DT = ("float32", "float64", "bfloat16", "int32", "bool")


def _s(name, call, ref, cases, dtypes=_DT, **kw):
    """A row whose samples are (shape, kwargs) pairs of one random input."""
    def samples(rng, d):
        return [Sample(np.asarray(rand(rng, s, d)), **k) for s, k in cases]

    return OpSpec(name, call, ref, samples, dtypes=dtypes, **kw)


def _multi(name, call, ref, cases, dtypes=_DT, **kw):
    """A row whose samples are (shapes, kwargs): several random inputs."""
    def samples(rng, d):
        return [Sample(*[np.asarray(rand(rng, s, d)) for s in shapes], **k)
                for shapes, k in cases]

    return OpSpec(name, call, ref, samples, dtypes=dtypes, **kw)


def second_order(name, fn, cases, suffix="grad2"):
    """A row that checks the gradient of the gradient of ``sum(w * fn(x) ** 2)``.

    ``cases(rng)`` gives argument lists; the first is the float array differentiated.
    The check's ``arr`` makes the NDArrays of the NumPy arguments (views in
    ``test_noncontiguous``; float64 kept).
    """
    def first(*xs):
        x, rest = xs[0], xs[1:]
        outer = autograd.is_recording()
        if not outer:
            x = x.copy()
            x.attach_grad()
        with autograd.record():
            outs = fn(x, *rest)
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            terms = [F.sum_to(o * o * NDArray(np.random.default_rng(7).standard_normal(
                o.shape)), shape=()) for o in outs]
            s = terms[0]
            for t in terms[1:]:
                s = s + t
        return autograd.grad(s, x, create_graph=outer, retain_graph=outer)

    def check(spec, rng, arr):
        for args in cases(rng):
            check_numeric_gradient(first, args, diff=[0],
                                   as_nd=lambda v: arr(v, dtype=v.dtype))

    return OpSpec(name, None, None, None, check=check, extra={"id": f"{name}:{suffix}"})


def _raises(exc, *parts):
    """A context manager asserting ``exc`` whose message contains every part."""
    class _Ctx:
        def __enter__(self):
            self.cm = pytest.raises(exc)
            self.info = self.cm.__enter__()

        def __exit__(self, *a):
            self.cm.__exit__(*a)
            msg = str(self.info.value)
            for p in parts:
                assert p in msg, f"{p!r} not in the error message {msg!r}"
            return True

    return _Ctx()


# ------------------------------------------------------------------ reshape
def _reshape_call(x, expect=None, **k):
    return nd.reshape(x, **k)


def _reshape_ref(x, expect=None, **k):
    return x.reshape(expect)


_MX_RESHAPE = [  # (input shape, kwargs, expected shape): MXNet's special codes
    ((2, 3, 4), {"shape": (0, -1)}, (2, 12)),
    ((2, 3, 4), {"shape": (-3, 0)}, (6, 4)),
    ((2, 3, 4), {"shape": (-4, 1, 2, -2)}, (1, 2, 3, 4)),
    ((4, 3, 2), {"shape": (-4, -1, 2, 0, 0)}, (2, 2, 3, 2)),
    ((2, 3, 4), {"shape": (-2, 1)}, (2, 3, 4, 1)),
    ((2, 3, 4), {"shape": (6, -1)}, (6, 4)),
    ((2, 3, 4), {"shape": (-1, 0), "reverse": True}, (6, 4)),
    ((2, 3, 4), {"shape": (-1, -4, 2, 2), "reverse": True}, (6, 2, 2)),
    ((2, 3, 4, 5), {"shape": (0, 0, -3)}, (2, 3, 20)),
    ((1, 1), {"shape": ()}, ()),
    ((), {"shape": (1, 1)}, (1, 1)),
]


def _reshape_samples(rng, d):
    return [Sample(rand(rng, s, d), expect=e, **k) for s, k, e in _MX_RESHAPE]


def _np_reshape_samples(rng, d):
    return [Sample(rand(rng, (2, 3, 4), d), (4, -1)), Sample(rand(rng, (6,), d), -1),
            Sample(rand(rng, (0, 3), d), (3, 0)), Sample(rand(rng, (2, 0), d), (5, -1, 2)),
            Sample(rand(rng, (2, 6), d), (3, 2, 2))]


def _method_reshape_samples(rng, d):
    return [Sample(rand(rng, (2, 3, 4), d), args=(0, -1), expect=(2, 12)),
            Sample(rand(rng, (6,), d), args=((2, 3),), expect=(2, 3)),
            Sample(rand(rng, (2, 3, 4), d), args=(-1, 0), reverse=True, expect=(6, 4)),
            Sample(rand(rng, (2, 3), d), shape=(3, 2), expect=(3, 2))]


def _reshape_errors(spec, rng, arr):
    x = arr(np.zeros((2, 3)))
    with _raises(ValueError, "reshape", "(2, 3)", "(4, 2)"):
        nd.reshape(x, shape=(4, 2))
    with _raises(ValueError, "reshape", "(2, 3)", "(4, -1)"):
        x.reshape(4, -1)
    with _raises(ValueError, "reshape", "one", "-1"):
        nd.reshape(x, shape=(-1, -1))
    with _raises(ValueError, "reshape", "(2, 3)", "-4"):
        nd.reshape(x, shape=(-4, 3, -1, 0))
    with _raises(ValueError, "reshape", "(2, 3)", "read more dimensions"):
        nd.reshape(x, shape=(0, 0, 0))
    with _raises(ValueError, "reshape", "(2, 3)", "(0, -1)"):
        knp.reshape(x, (0, -1))
    with _raises(ValueError, "reshape", "(2, 3)", "(0, 6)"):
        knp.reshape(x, (0, 6))  # NumPy semantics: 0 is a size, not "copy"
    with _raises(TypeError, "reshape", "newshape"):
        knp.reshape(x, (2.5, 3))


def _axis_errors(spec, rng, arr):
    x = arr(np.zeros((2, 3)))
    cases = [(lambda: nd.transpose(x, axes=(0, 0)), "transpose", "(2, 3)"),
             (lambda: nd.transpose(x, axes=(0, 2)), "transpose", "axes=2"),
             (lambda: nd.swapaxes(x, 0, 2), "swapaxes", "axis2=2"),
             (lambda: knp.moveaxis(x, 3, 0), "moveaxis", "source=3"),
             (lambda: nd.expand_dims(x, axis=4), "expand_dims", "axis=4"),
             (lambda: nd.squeeze(x, axis=1), "squeeze", "size 3"),
             (lambda: nd.squeeze(x, axis=-3), "squeeze", "axis=-3"),
             (lambda: nd.repeat(x, 2, axis=2), "repeat", "axis=2"),
             (lambda: knp.concatenate([x, x], axis=2), "concatenate", "axis=2"),
             (lambda: knp.concatenate([x, arr(np.zeros((3, 3)))], axis=1), "concatenate",
              "(3, 3)"),
             (lambda: knp.stack([x, x], axis=3), "stack", "axis=3"),
             (lambda: knp.stack([x, arr(np.zeros((3, 2)))]), "stack", "(3, 2)"),
             (lambda: nd.split(x, 2, axis=1), "split", "size 3"),
             (lambda: nd.split(x, 2, axis=-3), "split", "axis=-3"),
             (lambda: nd.flip(x, axis=2), "flip", "axis=2"),
             (lambda: knp.roll(x, 1, axis=-3), "roll", "axis=-3"),
             (lambda: nd.diag(x, axis1=0, axis2=2), "diag", "axis2=2"),
             (lambda: knp.pad(x, ((1, 1), (1, 1), (1, 1))), "pad", "(2, 3)"),
             (lambda: knp.pad(x, 1, mode="maximum"), "pad", "mode"),
             (lambda: knp.tile(x, (-1,)), "tile", "non-negative")]
    for fn, *parts in cases:
        with _raises(ValueError, *parts, "(2, 3)" if parts[0] != "pad" else "pad"):
            fn()
    with _raises(ValueError, "diag", "()"):
        nd.diag(nd.zeros(()))
    with _raises(ValueError, "tril", "()"):
        knp.tril(nd.zeros(()))


def _mixed_dtypes(spec, rng, arr):
    a = arr(rand(rng, (2, 3), "float32"), dtype="float32")
    b = arr(rand(rng, (2, 2), "int32"), dtype="int32")
    out = knp.concatenate([a, b], axis=1)
    ref = np.concatenate([a.asnumpy(), b.asnumpy()], axis=1)
    assert out.dtype == ref.dtype and np.array_equal(out.asnumpy(), ref)
    a.attach_grad()
    with autograd.record():
        y = knp.concatenate([a, b], axis=1) * 2
    y.backward(nd.ones(y.shape, dtype=y.dtype))
    assert a.grad.dtype == np.float32 and np.array_equal(a.grad.asnumpy(), np.full((2, 3), 2))
    # np.concatenate((a, b), axis) and nd.concat(a, b, dim=) agree
    c = nd.concat(a, a, dim=0)
    assert c.shape == (4, 3)
    assert nd.Concat(a, a).shape == (2, 6)


def _method_check(spec, rng, arr):
    x = arr(rand(rng, (2, 3, 4), "float32"))
    v = x.asnumpy()
    for got, want in ((x.T, v.T), (x.transpose(1, 0, 2), v.transpose(1, 0, 2)),
                      (x.flatten(), v.reshape(2, 12)), (x.ravel(), v.ravel()),
                      (x.swapaxes(0, 2), v.swapaxes(0, 2)), (x.expand_dims(1), v[:, None]),
                      (x.split(2, axis=2)[1], v[:, :, 2:]), (x.reshape((4, 6)), v.reshape(4, 6)),
                      (x.reshape(shape=(0, -1)), v.reshape(2, 12))):
        assert got.shape == want.shape and np.array_equal(got.asnumpy(), want), (got.shape,
                                                                                 want.shape)
    assert len(x.split(2, axis=2)) == 2


def _grad2_cases(shape, **k):
    return lambda rng: [[rand(rng, shape, "float64")] + list(k.values())]


def _reshape_like_ref(x, like, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    if lhs_begin is None:
        return x.reshape(like.shape)
    return x.reshape(x.shape[:lhs_begin] + like.shape[rhs_begin:rhs_end] + x.shape[lhs_end:])


def _reshape_like_samples(rng, d):
    return [Sample(rand(rng, (6,), d), rand(rng, (2, 3), d), diff=[0]),
            Sample(rand(rng, (2, 3, 4), d), rand(rng, (6, 1), d), diff=[0], lhs_begin=0,
                   lhs_end=2, rhs_begin=0, rhs_end=1)]


SPECS = [
    OpSpec("reshape", _reshape_call, _reshape_ref, _reshape_samples, dtypes=_DT),
    OpSpec("reshape_like", nd.reshape_like, _reshape_like_ref, _reshape_like_samples,
           dtypes=_DT),
    OpSpec("reshape", knp.reshape, np.reshape, _np_reshape_samples, dtypes=_DT,
           extra={"id": "reshape:np"}),
    OpSpec("reshape", lambda x, expect, args=(), **k: x.reshape(*args, **k), _reshape_ref,
           _method_reshape_samples, dtypes=_DT, extra={"id": "reshape:method"}),
    OpSpec("reshape", None, None, None, check=_reshape_errors, extra={"id": "reshape:errors"}),
    OpSpec("transpose", None, None, None, check=_axis_errors, extra={"id": "shape:errors"}),
    OpSpec("concatenate", None, None, None, check=_mixed_dtypes,
           extra={"id": "concatenate:mixed"}),
    OpSpec("transpose", None, None, None, check=_method_check, extra={"id": "shape:methods"}),
    _s("transpose", lambda x, **k: nd.transpose(x, **k),
       lambda x, axes=None: np.transpose(x, axes or None),
       [((2, 3, 4), {}), ((2, 3, 4), {"axes": (1, 0, 2)}), ((2, 3, 4), {"axes": (-1, 0, 1)}),
        ((3, 4), {"axes": ()}), ((5,), {}), ((), {})]),
    _s("swapaxes", lambda x, **k: nd.swapaxes(x, **k),
       lambda x, dim1=0, dim2=0: np.swapaxes(x, dim1, dim2),
       [((2, 3, 4), {"dim1": 0, "dim2": 2}), ((2, 3, 4), {"dim1": -1, "dim2": 1}),
        ((3, 4), {})]),
    OpSpec("swapaxes", knp.swapaxes, np.swapaxes,
           lambda rng, d: [Sample(rand(rng, (2, 3, 4), d), 0, -1),
                           Sample(rand(rng, (3, 4), d), 1, 0)],
           dtypes=_DT, extra={"id": "swapaxes:np"}),
    _s("moveaxis", lambda x, **k: knp.moveaxis(x, **k), lambda x, **k: np.moveaxis(x, **k),
       [((2, 3, 4), {"source": 0, "destination": -1}),
        ((2, 3, 4, 5), {"source": (0, 1), "destination": (3, 0)}),
        ((2, 3), {"source": -1, "destination": 0})]),
    _s("expand_dims", lambda x, **k: nd.expand_dims(x, **k), lambda x, **k: np.expand_dims(x, **k),
       [((2, 3), {"axis": 0}), ((2, 3), {"axis": -1}), ((2, 3), {"axis": (0, 3)}),
        ((), {"axis": 0}), ((4,), {"axis": (-1, 1)})]),
    _s("squeeze", lambda x, **k: nd.squeeze(x, **k), lambda x, **k: np.squeeze(x, **k),
       [((2, 1, 3, 1), {}), ((2, 1, 3, 1), {"axis": 1}), ((1, 3, 1), {"axis": (-1, 0)}),
        ((1,), {}), ((3, 4), {})]),
    _s("flatten", nd.flatten, lambda x: x.reshape((x.shape[0] if x.ndim else 1, -1)),
       [((2, 3, 4), {}), ((5,), {}), ((3, 4), {}), ((), {}), ((2, 0, 3), {})]),
    _s("ravel", lambda x, **k: knp.ravel(x, **k), lambda x, **k: np.ravel(x, **k),
       [((2, 3, 4), {}), ((5,), {}), ((), {}), ((3, 4), {"order": "F"}),
        ((2, 3, 4), {"order": "F"})]),
    _s("tile", lambda x, **k: nd.tile(x, **k), lambda x, **k: np.tile(x, **k),
       [((2, 3), {"reps": 2}), ((2, 3), {"reps": (2, 1)}), ((3,), {"reps": (2, 1, 3)}),
        ((2, 3, 4), {"reps": (2,)}), ((2, 1), {"reps": (1, 3)}), ((), {"reps": 3})]),
    _s("repeat", lambda x, **k: nd.repeat(x, **k), lambda x, **k: np.repeat(x, **k),
       [((2, 3), {"repeats": 2}), ((2, 3), {"repeats": 3, "axis": 1}),
        ((3, 2), {"repeats": [1, 0, 2], "axis": 0}), ((2, 3, 4), {"repeats": 2, "axis": -1}),
        ((4,), {"repeats": [2]}), ((2, 2), {"repeats": [3, 1, 0, 2]})]),
    _multi("concatenate", lambda *xs, **k: knp.concatenate(list(xs), **k),
           lambda *xs, **k: np.concatenate(xs, **k),
           [([(2, 3), (4, 3)], {"axis": 0}), ([(2, 3), (2, 1), (2, 2)], {"axis": -1}),
            ([(2, 3), (3,)], {"axis": None}), ([(2, 3, 4), (2, 1, 4)], {"axis": 1}),
            ([(5,)], {})]),
    _multi("concatenate", lambda *xs, **k: nd.concat(*xs, **k),
           lambda *xs, dim=1: np.concatenate(xs, axis=dim),
           [([(2, 3), (2, 1)], {}), ([(2, 3), (1, 3)], {"dim": 0})],
           extra={"id": "concatenate:nd"}),
    _multi("stack", lambda *xs, **k: knp.stack(list(xs), **k),
           lambda *xs, **k: np.stack(xs, **k),
           [([(2, 3), (2, 3)], {}), ([(2, 3)] * 3, {"axis": -1}), ([(4,), (4,)], {"axis": 1}),
            ([(), ()], {})]),
    _multi("stack", lambda *xs, **k: nd.stack(*xs, **k), lambda *xs, **k: np.stack(xs, **k),
           [([(2, 3), (2, 3)], {"axis": 1})], extra={"id": "stack:nd"}),
    _s("split", lambda x, **k: nd.split(x, **k),
       lambda x, num_outputs, axis=1, squeeze_axis=False: [
           np.squeeze(p, axis) if squeeze_axis else p
           for p in np.split(x, num_outputs, axis)],
       [((2, 6), {"num_outputs": 3}), ((4, 2, 3), {"num_outputs": 2, "axis": 0}),
        ((2, 3, 4), {"num_outputs": 3, "axis": 1, "squeeze_axis": True}),
        ((2, 4), {"num_outputs": 1, "axis": -1})]),
    _s("split", lambda x, **k: knp.split(x, **k), lambda x, **k: np.split(x, **k),
       [((6, 2), {"indices_or_sections": 2}), ((2, 7), {"indices_or_sections": [1, 3],
                                                         "axis": -1}),
        ((5,), {"indices_or_sections": [2, 1, 9]})], extra={"id": "split:np"}),
    _s("array_split", lambda x, **k: knp.array_split(x, **k),
       lambda x, **k: np.array_split(x, **k),
       [((7,), {"indices_or_sections": 3}), ((2, 5), {"indices_or_sections": 4, "axis": 1}),
        ((5, 2), {"indices_or_sections": [3, 1, 7]}), ((2, 3), {"indices_or_sections": 2})]),
    _s("flip", lambda x, **k: nd.flip(x, **k), lambda x, **k: np.flip(x, **k),
       [((2, 3, 4), {"axis": 1}), ((3, 4), {}), ((2, 3, 4), {"axis": (0, -1)}),
        ((5,), {"axis": 0})]),
    _s("roll", lambda x, **k: knp.roll(x, **k), lambda x, **k: np.roll(x, **k),
       [((2, 3, 4), {"shift": 2}), ((3, 4), {"shift": -1, "axis": 1}),
        ((3, 4), {"shift": (1, -2), "axis": (0, 1)}), ((5,), {"shift": 7})]),
    _s("pad", lambda x, **k: knp.pad(x, **k), lambda x, **k: np.pad(x, **k),
       [((3, 4), {"pad_width": 1}), ((3, 4), {"pad_width": ((1, 2), (0, 3)),
                                             "constant_values": 1.5}),
        ((2, 3, 4), {"pad_width": ((0, 0), (1, 1), (2, 0)), "mode": "edge"}),
        ((3, 4), {"pad_width": ((2, 1), (3, 3)), "mode": "reflect"}),
        ((3, 4), {"pad_width": ((2, 1), (5, 3)), "mode": "symmetric"}),
        ((4,), {"pad_width": (2, 6), "mode": "wrap"}), ((1, 3), {"pad_width": 2,
                                                               "mode": "reflect"})],
       dtypes=("float32", "float64", "int32")),
    _s("pad", lambda x, **k: nd.pad(x, **k),
       lambda x, mode, pad_width, constant_value=0: np.pad(
           x, np.reshape(pad_width, (-1, 2)), mode=mode,
           **({"constant_values": constant_value} if mode == "constant" else {})),
       [((1, 2, 3, 4), {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 2, 1),
                        "constant_value": 2.0}),
        ((1, 2, 3, 4), {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 2, 1, 1)}),
        ((1, 2, 3, 3, 4), {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 1, 2, 2, 1, 1)})],
       dtypes=("float32", "float64"), extra={"id": "pad:nd"}),
    OpSpec("pad", lambda x: nd.pad(x, "edge", (0, 0, 1, 1)),
           lambda x: np.pad(x, ((0, 0), (1, 1)), mode="edge"),
           lambda rng, d: [Sample(rand(rng, (2, 3), d))], extra={"id": "pad:nd-positional"}),
    _s("diag", lambda x, **k: nd.diag(x, **k), lambda x, k=0: np.diag(x, k),
       [((4,), {}), ((3,), {"k": 1}), ((3,), {"k": -2}), ((3, 3), {}), ((3, 5), {"k": 1}),
        ((4, 3), {"k": -1}), ((2, 3), {"k": 5})]),
    _s("diag", lambda x, **k: nd.diag(x, **k),
       lambda x, k=0, axis1=0, axis2=1: np.diagonal(x, k, axis1, axis2),
       [((2, 3, 4), {"axis1": 1, "axis2": 2}), ((3, 2, 4), {"k": 1, "axis1": 2, "axis2": 0}),
        ((2, 3, 3), {"k": -1, "axis1": -2, "axis2": -1})], extra={"id": "diag:nd"}),
    _s("tril", lambda x, **k: knp.tril(x, **k), lambda x, **k: np.tril(x, **k),
       [((3, 4), {}), ((3, 4), {"k": -1}), ((2, 3, 3), {"k": 1}), ((4,), {})]),
    _s("triu", lambda x, **k: knp.triu(x, **k), lambda x, **k: np.triu(x, **k),
       [((3, 4), {}), ((4, 3), {"k": 1}), ((2, 3, 3), {"k": -1}), ((4,), {"k": 1})]),
    second_order("reshape", lambda x: nd.reshape(x, shape=(-1, 0)), _grad2_cases((2, 3, 4))),
    second_order("transpose", lambda x: nd.transpose(x, axes=(2, 0, 1)),
                 _grad2_cases((2, 3, 4))),
    second_order("split", lambda x: nd.split(x, num_outputs=2, axis=1),
                 _grad2_cases((3, 4))),
    second_order("stack", lambda x: knp.stack([x, x * 2], axis=1), _grad2_cases((3, 2))),
    second_order("concatenate", lambda x: knp.concatenate([x, x * x], axis=0),
                 _grad2_cases((2, 3))),
    second_order("tile", lambda x: nd.tile(x, reps=(2, 3)), _grad2_cases((2, 3))),
    second_order("repeat", lambda x: knp.repeat(x, [1, 3, 0], axis=1), _grad2_cases((2, 3))),
    second_order("pad", lambda x: knp.pad(x, ((1, 2), (2, 1)), mode="reflect"),
                 _grad2_cases((3, 4))),
    second_order("diag", lambda x: nd.diag(x, k=1, axis1=2, axis2=0), _grad2_cases((3, 2, 4))),
    second_order("roll", lambda x: knp.roll(x, 1, axis=0), _grad2_cases((3, 2))),
]
