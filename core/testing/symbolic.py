"""Checks of Symbols and Gluon blocks: forward, backward, numeric gradients, consistency.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np

from .. import autograd
from ..context import as_context
from ..ndarray import NDArray
from .compare import _waitall, asnumpy, assert_almost_equal
from .gradient import check_function_gradient
from .tolerance import default_context, default_numeric_eps, get_tolerance

__all__ = [
    "check_consistency",
    "check_gluon_hybridize_consistency",
    "check_numeric_gradient",
    "check_speed",
    "check_symbolic_backward",
    "check_symbolic_forward",
    "numeric_grad",
    "simple_forward",
]


def _is_symbol(x) -> bool:
    return hasattr(x, "list_arguments") and hasattr(x, "bind")


def _nd(values, ctx, dtype) -> NDArray:
    if getattr(values, "_is_sparse", False):  # MXNet passes NDArrays through: sparse
        return values.as_in_context(ctx)      # inputs stay sparse (core.sparse)
    arr = asnumpy(values)
    if dtype != "asnumpy" and dtype is not None:
        arr = arr.astype(dtype)
    return NDArray(np.ascontiguousarray(arr), ctx=ctx)


def _by_name(arg: str, kind: str, given: str, names, values, ctx, dtype) -> dict:
    """``{name: NDArray}`` from a dict keyed by ``names`` or a list in their order; the
    errors name the argument ``arg`` and what the symbol has (``kind``)."""
    if isinstance(values, dict):
        if set(values) != set(names):
            raise ValueError(f"{arg}: the symbol's {kind} are {sorted(names)}, {given} "
                             f"{sorted(values)}")
    else:
        if len(values) != len(names):
            raise ValueError(f"{arg}: the symbol has {len(names)} {kind} {names}, {given} "
                             f"{len(values)} arrays")
        values = dict(zip(names, values))
    return {k: _nd(v, ctx, dtype) for k, v in values.items()}


def _parse_location(sym, location, ctx, dtype=np.float32) -> dict:
    """``{argument name: NDArray}`` from a list (in ``list_arguments`` order) or a dict."""
    return _by_name("location", "arguments", "the location gives", sym.list_arguments(),
                    location, ctx, dtype)


def _parse_aux_states(sym, aux_states, ctx, dtype=np.float32):
    """``{aux name: NDArray}`` from a list or dict, or None."""
    if aux_states is None:
        return None
    return _by_name("aux_states", "auxiliary states", "got", sym.list_auxiliary_states(),
                    aux_states, ctx, dtype)


def simple_forward(sym, ctx=None, is_train: bool = False, **inputs):
    """Run ``sym`` once on NumPy inputs (by argument name); NumPy output(s).

    Example:
        >>> from core import sym as S
        >>> simple_forward(S.var("x") * 2, x=np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    exe = sym.bind(ctx, args={k: _nd(v, ctx, None) for k, v in inputs.items()})
    exe.forward(is_train=is_train)
    outputs = [x.asnumpy() for x in exe.outputs]
    return outputs[0] if len(outputs) == 1 else outputs


def _set(arr: NDArray, values) -> None:
    if arr.ndim == 0:
        arr[()] = np.asarray(values)
    else:
        arr[:] = np.asarray(values)


def numeric_grad(executor, location: dict, aux_states=None, eps: float = 1e-4,
                 use_forward_train: bool = True, dtype=np.float32) -> dict:
    """Central finite differences of ``sum(executor.outputs[0])`` in every float argument.

    Args:
        executor: a bound executor; its ``arg_dict`` arrays are changed and restored.
        location: ``{argument name: NumPy array}``, every argument.
        aux_states: ``{aux name: NumPy array}`` reset before each forward, or None.
        eps: the step (the difference is taken at ``x +- eps / 2``).
        use_forward_train: run the forwards with ``is_train=True``.
        dtype: the dtype the values are written in.

    Returns:
        ``{argument name: NumPy gradient}``.
    """
    grads = {k: np.zeros(np.shape(v), dtype=dtype) for k, v in location.items()}
    location = {k: np.array(v, order="C") for k, v in location.items()}
    for k, v in location.items():
        _set(executor.arg_dict[k], v.astype(dtype))

    def run():
        if aux_states is not None:
            for key, val in aux_states.items():
                _set(executor.aux_dict[key], val)
        executor.forward(is_train=use_forward_train)
        return executor.outputs[0].asnumpy().astype(np.float64).sum()

    for k, v in location.items():
        if v.dtype.kind != "f":
            continue
        flat, old = v.reshape(-1), v.copy()
        for i in range(flat.size):
            flat[i] = old.reshape(-1)[i] + eps / 2.0
            _set(executor.arg_dict[k], v.astype(dtype))
            f_plus = run()
            flat[i] = old.reshape(-1)[i] - eps / 2.0
            _set(executor.arg_dict[k], v.astype(dtype))
            f_minus = run()
            grads[k].reshape(-1)[i] = (f_plus - f_minus) / eps
            flat[i] = old.reshape(-1)[i]
        _set(executor.arg_dict[k], old.astype(dtype))
    return grads


def _grad_reqs(sym, grad_nodes) -> dict:
    if grad_nodes is None:
        return {k: "write" for k in sym.list_arguments()}
    if isinstance(grad_nodes, dict):
        return dict(grad_nodes)
    if isinstance(grad_nodes, (list, tuple)):
        return {k: "write" for k in grad_nodes}
    raise ValueError(f"grad_nodes: expected None, a list of names or a dict name -> "
                     f"grad_req, got {type(grad_nodes).__name__}")


def check_numeric_gradient(sym, location, aux_states=None, numeric_eps=None, rtol=None,
                           atol=None, grad_nodes=None, use_forward_train: bool = True,
                           ctx=None, grad_stype_dict=None, dtype=np.float32,
                           **kwargs) -> None:
    """Check a Symbol's backward pass (or a function's autograd) by finite differences.

    With a Symbol (MXNet's form): the gradient of ``sum(sym * proj)`` for a random
    projection ``proj`` is computed by the executor's backward and by central
    differences (:func:`numeric_grad`), and compared per argument of ``grad_nodes``
    (``'write'``: equal; ``'add'``: added to the initial gradient; ``'null'``: untouched).

    With a Python function of NDArrays (kbackend's form, for operator tests):
    ``check_numeric_gradient(fn, inputs, diff=None, eps=1e-6, rtol=1e-4, atol=1e-6,
    directions=2, seed=0, ctx=None, as_nd=None)`` compares random directional
    derivatives in float64 (see :func:`check_function_gradient`).

    Args:
        sym: a Symbol (or a function, see above).
        location: the argument values: a list in ``list_arguments()`` order or a dict.
        aux_states: auxiliary-state values (list or dict), or None.
        numeric_eps: the finite-difference step (default per dtype: float32 2**-9).
        rtol, atol: tolerances (default: MXNet's per dtype).
        grad_nodes: names to check (list), or a dict name -> grad_req; default all.
        use_forward_train: the finite differences run forward with ``is_train=True``.
        ctx: the context (default: :func:`default_context`).
        grad_stype_dict: storage types of the gradients (their values are checked,
            which are the dense ones).
        dtype: the dtype of the arrays (float16/32/64).

    Raises:
        AssertionError: a gradient differs, naming ``NUMERICAL_<arg>``/``BACKWARD_<arg>``.

    Example:
        >>> from core import sym as S
        >>> x = S.var("x")
        >>> check_numeric_gradient(x * x, [np.array([1.0, 2.0, 3.0])], dtype=np.float64)
    """
    if not _is_symbol(sym):
        extra = dict(kwargs)
        if aux_states is not None or grad_nodes is not None:
            raise TypeError("check_numeric_gradient(fn, inputs, ...): pass the function "
                            "form's options by keyword (diff=, eps=, rtol=, atol=, ...)")
        for k, v in (("eps", numeric_eps), ("rtol", rtol), ("atol", atol), ("ctx", ctx)):
            if v is not None:
                extra.setdefault(k, v)
        return check_function_gradient(sym, location, **extra)
    if kwargs:
        raise TypeError(f"check_numeric_gradient: unexpected arguments {sorted(kwargs)}")
    if grad_stype_dict:  # the values of sparse gradients are the dense ones: checked so
        from ..sparse import STYPES

        for v in grad_stype_dict.values():
            if v not in STYPES:
                raise ValueError(f"check_numeric_gradient: unknown grad stype {v!r}")
    if dtype not in (np.float16, np.float32, np.float64):
        raise ValueError(f"check_numeric_gradient: dtype must be float16/32/64, got {dtype}")
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    location_npy = {k: v.asnumpy() for k, v in location.items()}
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    aux_npy = None if aux is None else {k: v.asnumpy() for k, v in aux.items()}
    grad_req = _grad_reqs(sym, grad_nodes)
    _, out_shapes, _ = sym.infer_shape(**{k: v.shape for k, v in location.items()})
    if len(out_shapes) != 1:
        raise ValueError(f"check_numeric_gradient: the symbol must have one output, it has "
                         f"{len(out_shapes)} ({sym.list_outputs()})")
    proj_np = np.random.rand(*out_shapes[0]) + 0.1
    proj = _nd(proj_np, ctx, dtype)
    grads_np = {k: np.random.normal(0, 0.01, size=location[k].shape) for k in grad_req}
    args_grad = {k: _nd(v, ctx, dtype) for k, v in grads_np.items()}
    exe = sym.bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req,
                   aux_states=aux)
    exe.forward(is_train=True)
    eps = get_tolerance(exe.outputs[0], numeric_eps, default_numeric_eps())
    if dtype in (np.float32, np.float16) and eps < 1e-5:
        raise ValueError(f"check_numeric_gradient: numeric_eps={eps} is too small for {dtype}")
    if any(r != "null" for r in grad_req.values()):  # MXNet's backward is a no-op otherwise
        exe.backward([proj])
    symbolic = {k: (None if v is None else v.asnumpy()) for k, v in exe.grad_dict.items()}

    # The finite differences of sum(out * proj), on a second executor without gradients.
    weighted = _ProjectedExecutor(sym.bind(ctx, args={k: v.copy() for k, v in
                                                      location.items()},
                                           grad_req="null", aux_states=aux), proj_np)
    numeric = numeric_grad(weighted, location_npy, aux_npy, eps=eps,
                           use_forward_train=use_forward_train, dtype=dtype)
    for name, req in grad_req.items():
        fd, orig, got = numeric[name], grads_np[name], symbolic.get(name)
        labels = (f"NUMERICAL_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(fd, got, rtol, atol, labels)
        elif req == "add":
            assert_almost_equal(fd, got - orig.astype(got.dtype), rtol, atol, labels)
        elif req == "null":
            assert_almost_equal(orig, orig if got is None else got, rtol, atol, labels)
        else:
            raise ValueError(f"check_numeric_gradient: invalid grad_req {req!r} for {name!r}")


class _ProjectedExecutor:
    """An executor whose single output is ``outputs[0] * proj`` (for numeric_grad)."""

    def __init__(self, exe, proj):
        self._exe, self._proj = exe, proj
        self.arg_dict, self.aux_dict = exe.arg_dict, exe.aux_dict
        self.outputs: list = []

    def forward(self, is_train=False):
        out = self._exe.forward(is_train=is_train)[0]
        self.outputs = [_Values(out.asnumpy().astype(np.float64) * self._proj)]
        return self.outputs


class _Values:
    def __init__(self, values):
        self._values = values

    def asnumpy(self):
        return self._values


def check_symbolic_forward(sym, location, expected, rtol=None, atol=None, aux_states=None,
                           ctx=None, equal_nan: bool = False, dtype=np.float32):
    """Assert a Symbol's forward outputs (inference mode) equal ``expected``.

    Args:
        sym: the Symbol.
        location: argument values (list in ``list_arguments()`` order, or dict).
        expected: the outputs (list in output order, or dict by output name).
        rtol, atol: tolerances (default: MXNet's per dtype).
        aux_states: auxiliary-state values (list or dict).
        ctx: the context.
        equal_nan: NaN equals NaN.
        dtype: the arrays' dtype, or ``"asnumpy"`` to keep each input's own.

    Returns:
        The executor's outputs (NDArrays).

    Example:
        >>> from core import sym as S
        >>> a, b = S.var("lhs"), S.var("rhs")
        >>> _ = check_symbolic_forward(S.dot(a, b), [np.array([[1, 2], [3, 4]]),
        ...                            np.array([[5, 6], [7, 8]])], [np.array([[19, 22],
        ...                            [43, 50]])])
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    if isinstance(expected, dict):
        expected = [expected[k] for k in sym.list_outputs()]
    exe = sym.bind(ctx, args=location, aux_states=aux, grad_req="null")
    exe.forward(is_train=False)
    outputs = exe.outputs
    if len(expected) != len(outputs):
        raise AssertionError(f"check_symbolic_forward: {len(outputs)} outputs "
                             f"{sym.list_outputs()}, {len(expected)} expected")
    for name, want, got in zip(sym.list_outputs(), expected, outputs):
        assert_almost_equal(want, got, rtol, atol, (f"EXPECTED_{name}", f"FORWARD_{name}"),
                            equal_nan=equal_nan)
    return outputs


def check_symbolic_backward(sym, location, out_grads, expected, rtol=None, atol=None,
                            aux_states=None, grad_req="write", ctx=None, grad_stypes=None,
                            equal_nan: bool = False, dtype=np.float32):
    """Assert a Symbol's input gradients for the given output gradients equal ``expected``.

    Args:
        sym: the Symbol.
        location: argument values (list or dict).
        out_grads: the output gradients (list or dict by output name); None for ones.
        expected: the gradients (list in ``list_arguments()`` order, or dict by name).
        rtol, atol: tolerances.
        aux_states: auxiliary-state values.
        grad_req: ``'write'``, ``'add'``, ``'null'``, a list or dict per argument.
        ctx: the context.
        grad_stypes: gradient storage types: the gradient arrays are made in them
            (``core.sparse``) and keep them.
        equal_nan: NaN equals NaN.
        dtype: the arrays' dtype, or ``"asnumpy"``.

    Returns:
        ``{argument name: gradient NDArray}`` (MXNet's ``args_grad_data``), as the
        executor computed them.

    Example:
        >>> from core import sym as S
        >>> x = S.var("x")
        >>> g = check_symbolic_backward(x * 3, [np.ones(2)], [np.ones(2)], [np.full(2, 3.0)])
        >>> g["x"].asnumpy().tolist()
        [3.0, 3.0]
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    location = _parse_location(sym, location, ctx, dtype)
    aux = _parse_aux_states(sym, aux_states, ctx, dtype)
    names = sym.list_arguments()
    if isinstance(expected, (list, tuple)):
        expected = dict(zip(names, expected))
    grads_np = {k: np.random.normal(size=v.shape) for k, v in location.items()}
    args_grad = {k: _nd(v, ctx, dtype if dtype != "asnumpy" else location[k].dtype)
                 for k, v in grads_np.items()}
    for k, st in (grad_stypes or {}).items():  # sparse gradient arrays start at zero (MXNet)
        if st not in (None, "default") and k in args_grad:
            from ..sparse import zeros as _sparse_zeros

            args_grad[k] = _sparse_zeros(st, args_grad[k].shape, ctx=ctx,
                                         dtype=args_grad[k].dtype)
            grads_np[k] = np.zeros(args_grad[k].shape)
    if isinstance(grad_req, str):
        grad_req = {k: grad_req for k in names}
    elif isinstance(grad_req, (list, tuple)):
        grad_req = dict(zip(names, grad_req))
    exe = sym.bind(ctx, args=location, args_grad=args_grad, grad_req=grad_req, aux_states=aux)
    exe.forward(is_train=True)
    if isinstance(out_grads, dict):
        out_grads = [out_grads[k] for k in sym.list_outputs()]
    if out_grads is not None:
        out_grads = [_nd(g, ctx, None if dtype == "asnumpy" else dtype) for g in out_grads]
    if any(grad_req.get(k, "null") != "null" for k in names):  # else MXNet does nothing
        exe.backward(out_grads)
    got = {k: (None if v is None else v.asnumpy()) for k, v in exe.grad_dict.items()}
    for name, want in expected.items():
        req = grad_req.get(name, "null")
        labels = (f"EXPECTED_{name}", f"BACKWARD_{name}")
        if req == "write":
            assert_almost_equal(want, got[name], rtol, atol, labels, equal_nan=equal_nan)
        elif req == "add":
            assert_almost_equal(want, got[name] - grads_np[name], rtol, atol, labels,
                                equal_nan=equal_nan)
        elif req == "null":
            have = got.get(name)
            assert_almost_equal(grads_np[name], grads_np[name] if have is None else have,
                                rtol, atol, labels, equal_nan=equal_nan)
        else:
            raise ValueError(f"check_symbolic_backward: invalid grad_req {req!r} for {name!r}")
    return {k: v for k, v in exe.grad_dict.items()}


def check_speed(sym, location=None, ctx=None, N: int = 20, grad_req=None, typ: str = "whole",
                **kwargs) -> float:
    """Seconds per run of a Symbol: forward + backward (``typ='whole'``) or forward only.

    Args:
        sym: the Symbol.
        location: ``{name: NumPy array}`` inputs, or None for random ones of the shapes in
            ``kwargs``.
        ctx: the context.
        N: the number of timed runs (after one warm-up).
        grad_req: gradient requirement (default ``'write'``).
        typ: ``'whole'`` or ``'forward'``.

    Returns:
        The mean time of a run in seconds.
    """
    if typ not in ("whole", "forward"):
        raise ValueError(f"check_speed: typ can only be 'whole' or 'forward', got {typ!r}")
    ctx = as_context(ctx) if ctx is not None else default_context()
    grad_req = "write" if grad_req is None else grad_req
    if location is None:
        exe = sym.simple_bind(ctx, grad_req=grad_req, **kwargs)
        location = {k: np.random.normal(size=a.shape) for k, a in exe.arg_dict.items()}
    else:
        if not isinstance(location, dict):
            raise TypeError(f"check_speed: location must be a dict, got "
                            f"{type(location).__name__}")
        exe = sym.simple_bind(ctx, grad_req=grad_req,
                              **{k: v.shape for k, v in location.items()})
    for name, values in location.items():
        _set(exe.arg_dict[name], np.asarray(values).astype(exe.arg_dict[name].dtype))
    train = typ == "whole"

    def step():
        exe.forward(is_train=train)
        if train:
            exe.backward(out_grads=exe.outputs)

    step()
    for out in exe.outputs:
        out.wait_to_read()
    tic = time.time()
    for _ in range(N):
        step()
    _waitall()
    return (time.time() - tic) / N


def check_consistency(sym, ctx_list, scale: float = 1.0, grad_req="write", arg_params=None,
                      aux_params=None, rtol=None, atol=None, raise_on_err: bool = True,
                      ground_truth=None, equal_nan: bool = False, use_uniform: bool = False,
                      rand_type=np.float64):
    """Assert a Symbol (or one Symbol per entry) gives the same outputs and gradients on
    every context/dtype of ``ctx_list``.

    Args:
        sym: a Symbol, or a list with one Symbol per entry of ``ctx_list``.
        ctx_list: dicts of ``simple_bind`` arguments: ``{'ctx': cpu(0), 'data': (2, 3),
            'type_dict': {'data': np.float32}}``.
        scale: the scale of the random inputs.
        grad_req: gradient requirement.
        arg_params, aux_params: input values by name (random normal / 0 where missing).
        rtol, atol: tolerances (default: MXNet's, for the less precise dtype).
        raise_on_err: raise on a mismatch (False: print it).
        ground_truth: expected outputs/gradients by name (default: the most precise run).
        equal_nan: NaN equals NaN.
        use_uniform: uniform random inputs instead of normal.
        rand_type: the dtype the random inputs are drawn in.

    Returns:
        The ground truth: ``{output or argument name: NDArray}``.

    Example:
        >>> from core import sym as S, cpu
        >>> s = S.var("x") * 2
        >>> _ = check_consistency(s, [{"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float64}},
        ...                           {"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float32}}])
    """
    if len(ctx_list) < 2:
        raise ValueError("check_consistency: ctx_list needs at least two entries")
    syms = [sym] * len(ctx_list) if _is_symbol(sym) else list(sym)
    if len(syms) != len(ctx_list):
        raise ValueError(f"check_consistency: {len(syms)} symbols for {len(ctx_list)} contexts")
    output_names, arg_names = syms[0].list_outputs(), syms[0].list_arguments()
    exes = []
    for s, spec in zip(syms, ctx_list):
        if s.list_arguments() != arg_names or s.list_outputs() != output_names:
            raise ValueError("check_consistency: the symbols' arguments or outputs differ")
        spec = dict(spec)
        ctx = spec.pop("ctx", None) or default_context()
        exes.append(s.simple_bind(ctx, grad_req=grad_req, **spec))
    arg_params = {} if arg_params is None else dict(arg_params)
    aux_params = {} if aux_params is None else dict(aux_params)
    for n, arr in sorted(exes[0].arg_dict.items()):
        if n not in arg_params:
            arg_params[n] = (np.random.uniform(-0.92 * scale, 0.92 * scale, size=arr.shape)
                             if use_uniform else
                             np.random.normal(size=arr.shape, scale=scale)).astype(rand_type)
    for n in exes[0].aux_dict:
        aux_params.setdefault(n, 0)
    for exe in exes:
        for name, arr in exe.arg_dict.items():
            _set(arr, np.broadcast_to(np.asarray(arg_params[name]), arr.shape)
                 .astype(arr.dtype))
        for name, arr in exe.aux_dict.items():
            _set(arr, np.broadcast_to(np.asarray(aux_params[name]), arr.shape)
                 .astype(arr.dtype))
        if grad_req == "add":
            for arr in exe.grad_arrays:
                if arr is not None:
                    _set(arr, np.zeros(arr.shape, arr.dtype))
    for exe in exes:
        exe.forward(is_train=False)
    dtypes = [np.dtype(exe.outputs[0].dtype) for exe in exes]
    gt_idx = int(np.argmax([d.itemsize for d in dtypes]))

    def check(arr, want, what, i):
        try:
            assert_almost_equal(arr, want, rtol=rtol, atol=atol, equal_nan=equal_nan,
                                names=(f"ctx{i}_{what}", f"ctx{gt_idx}_{what}"))
        except AssertionError as e:
            print(f"check_consistency: {what}: entry {i} ({ctx_list[i]}) differs from entry "
                  f"{gt_idx}", file=sys.stderr)
            if raise_on_err:
                raise
            print(str(e), file=sys.stderr)

    gt = dict(ground_truth) if ground_truth is not None else \
        {k: v.copy() for k, v in exes[gt_idx].output_dict.items()}
    for i, exe in enumerate(exes):
        if i != gt_idx or ground_truth is not None:
            for name, arr in zip(output_names, exe.outputs):
                check(arr, gt[name], name, i)
    if grad_req != "null":
        for exe in exes:
            exe.forward(is_train=True)
        # every executor gets the same output gradient: the first one's outputs, in the
        # least precise dtype of all
        small = []
        for k, out in enumerate(exes[0].outputs):
            dts = [np.dtype(e.outputs[k].dtype) for e in exes]
            small.append(min(dts, key=lambda d: d.itemsize))
        golden = [out.asnumpy().astype(dt) for out, dt in zip(exes[0].outputs, small)]
        for exe in exes:
            exe.backward([NDArray(g.astype(out.dtype), ctx=exe.ctx)
                          for g, out in zip(golden, exe.outputs)])
        if ground_truth is None:
            gt.update({k: (None if v is None else v.copy())
                       for k, v in exes[gt_idx].grad_dict.items()})
            gt.update({k: v.copy() for k, v in exes[gt_idx].output_dict.items()})
        for i, exe in enumerate(exes):
            if i == gt_idx and ground_truth is None:
                continue
            for name, arr in zip(output_names + arg_names, exe.outputs + exe.grad_arrays):
                want = gt.get(name)
                if want is None or arr is None:
                    continue
                check(arr, want, name, i)
    return gt


def check_gluon_hybridize_consistency(net_builder: Callable, data_l, numpy_func=None,
                                      test_grad: bool = True, rtol: float = 1e-4,
                                      atol: float = 1e-4) -> None:
    """Assert a Gluon block gives the same outputs (and input gradients) imperatively and
    hybridized, and matches ``numpy_func`` when given.

    Args:
        net_builder: a function returning a new, initialized block.
        data_l: the input arrays.
        numpy_func: a NumPy reference of the forward, or None.
        test_grad: also compare the input gradients.
        rtol, atol: tolerances.
    """
    saved = None
    results = []
    for hybridize in (False, True):
        net = net_builder()
        if saved is None:
            saved = {k: v.data().copy() for k, v in net.collect_params().items()}
        else:
            for k, v in net.collect_params().items():
                v.set_data(saved[k])
        if hybridize:
            net.hybridize()
        inputs = [x.copy() for x in data_l]
        for x in inputs:
            x.attach_grad()
        with autograd.record():
            out = net(*inputs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if test_grad:
            autograd.backward(outs)
        results.append(([o.asnumpy() for o in outs],
                        [x.grad.asnumpy() for x in inputs] if test_grad else []))
    for a, b in zip(results[0][0], results[1][0]):
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=("imperative", "hybridized"))
    for a, b in zip(results[0][1], results[1][1]):
        assert_almost_equal(a, b, rtol=rtol, atol=atol,
                            names=("imperative_grad", "hybridized_grad"))
    if numpy_func is not None:
        want = numpy_func(*[x.asnumpy() for x in data_l])
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        for a, b in zip(results[0][0], want):
            assert_almost_equal(a, b, rtol=rtol, atol=atol, names=("output", "numpy"))
