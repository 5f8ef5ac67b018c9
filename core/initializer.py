"""Weight initializers (MXNet's ``mx.init`` / ``mx.initializer``).

An initializer is called as ``init(desc, arr)``: ``desc`` is the parameter's name (an
:class:`InitDesc`, or a plain string) and ``arr`` the NDArray to fill in place. The
base class dispatches on the name's suffix, as MXNet 1.x does: names ending in
``weight`` go to ``_init_weight`` (the part a subclass defines), ``bias`` and ``beta``
are set to 0, ``gamma`` to 1, running statistics (``moving_mean``, ``running_mean``,
...) to 0 and variances (``moving_var``, ``running_var``) to 1. A parameter's own
initializer (``desc.attrs['__init__']``, set by Gluon from ``Parameter.init``) takes
precedence and fills the array whatever its name.

Random initializers draw from ``core.random``'s per-context generators (through
``core.nd.random``), so ``core.random.seed`` makes initialization reproducible.

Example:
    >>> import core
    >>> from core import initializer, nd
    >>> w = nd.zeros((4, 3))
    >>> core.random.seed(0)
    >>> initializer.Xavier()(initializer.InitDesc("fc_weight"), w)
    >>> bool((abs(w.asnumpy()) <= (6 / 7) ** 0.5).all())
    True
    >>> b = nd.ones((4,))
    >>> initializer.Xavier()("fc_bias", b)
    >>> b.asnumpy().tolist()
    [0.0, 0.0, 0.0, 0.0]
"""
from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Sequence

import numpy

from . import autograd
from .dtypes import FLOATS
from .ndarray import NDArray

__all__ = [
    "Bilinear",
    "Constant",
    "InitDesc",
    "Initializer",
    "LSTMBias",
    "Load",
    "MSRAPrelu",
    "Mixed",
    "Normal",
    "One",
    "Orthogonal",
    "Uniform",
    "Xavier",
    "Zero",
    "alias",
    "create",
    "register",
]

_REGISTRY: dict[str, type] = {}
_log = logging.getLogger(__name__)


class InitDesc(str):
    """The name of the array to initialize, with attributes (MXNet's ``mx.init.InitDesc``).

    A ``str`` subclass, so an initializer can match on the name directly.

    Args:
        name: the parameter's name (e.g. ``'dense0_weight'``).
        attrs: attributes; ``'__init__'`` names the parameter's own initializer (an
            Initializer, a registered name or a JSON string from ``dumps``).
        global_init: the initializer to fall back to (set by the first initializer
            that sees this descriptor).

    Example:
        >>> from core.initializer import InitDesc
        >>> d = InitDesc("conv0_weight", {"__init__": "zeros"})
        >>> d.endswith("weight"), d.attrs["__init__"]
        (True, 'zeros')
    """

    def __new__(cls, name: str, attrs: dict | None = None, global_init=None):
        ret = super().__new__(cls, name)
        ret.attrs = dict(attrs or {})
        ret.global_init = global_init
        return ret


def _fill(arr: NDArray, value) -> None:
    """Write ``value`` (scalar, NumPy array or NDArray) into all of ``arr``."""
    if not isinstance(arr, NDArray):
        raise TypeError(f"initializer: the array to fill must be an NDArray, got "
                        f"{type(arr).__name__}")
    if isinstance(value, NDArray):
        value = value.as_in_context(arr.context)
    elif not isinstance(value, (int, float, bool, numpy.number)):
        value = NDArray(numpy.asarray(value), ctx=arr.context, dtype=arr.dtype)
    with autograd.pause():
        arr[...] = value


def _draw(kind: str, shape, ctx, dtype, a: float, b: float) -> NDArray:
    """Random samples of ``shape`` from the generator of context ``ctx``.

    Floating-point parameters get samples of their own dtype; others float32 ones.
    """
    from . import nd

    dtype = numpy.dtype(dtype)
    dtype = dtype if dtype in FLOATS else numpy.dtype("float32")
    size = int(numpy.prod(shape))
    n = max(size, 1)  # the sampling operators take positive shapes only
    with autograd.pause():
        if kind == "uniform":
            out = nd.random.uniform(low=a, high=b, shape=(n,), dtype=dtype, ctx=ctx)
        else:
            out = nd.random.normal(loc=a, scale=b, shape=(n,), dtype=dtype, ctx=ctx)
        return out[:size].reshape(tuple(shape))


def _draw_like(kind: str, arr: NDArray, a: float, b: float) -> NDArray:
    return _draw(kind, arr.shape, arr.context, arr.dtype, a, b)


# Name suffixes the base class knows, checked in this order, and the method they use.
_SUFFIXES = (
    ("weight_quantize", "_init_quantized_weight"),
    ("bias_quantize", "_init_quantized_bias"),
    ("weight", "_init_weight"),
    ("bias", "_init_bias"),
    ("gamma", "_init_gamma"),
    ("beta", "_init_beta"),
    ("moving_mean", "_init_zero"),
    ("running_mean", "_init_zero"),
    ("moving_var", "_init_one"),
    ("running_var", "_init_one"),
    ("moving_inv_var", "_init_zero"),
    ("moving_avg", "_init_zero"),
    ("min", "_init_zero"),
    ("max", "_init_one"),
)


class Initializer:
    """Base class of the initializers.

    Subclasses define ``_init_weight(self, desc, arr)``; the other parameter kinds get
    MXNet's defaults (see the module docstring). Call an initializer as
    ``init(desc, arr)``.

    Args:
        **kwargs: the constructor arguments, kept for :meth:`dumps` and ``==``.
    """

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose: bool = False, print_func: Callable | None = None):
        """Log each initialized array (with ``logging.info``).

        Args:
            verbose: switch logging on or off.
            print_func: ``f(arr) -> str`` giving the statistic to log; by default the
                root mean square of the array.

        Returns:
            This initializer.
        """
        self._verbose = verbose
        if print_func is None:
            def print_func(x):
                a = x.asnumpy().astype(numpy.float64)
                return str(float(numpy.sqrt((a * a).mean()))) if a.size else "0.0"
        self._print_func = print_func
        return self

    def _verbose_print(self, desc, init, arr) -> None:
        if self._verbose and self._print_func:
            _log.info("Initialized %s as %s: %s", desc, init, self._print_func(arr))

    def dumps(self) -> str:
        """A JSON description (``'["normal", {"sigma": 0.5}]'``) that :func:`create` reads.

        Example:
            >>> from core import initializer
            >>> initializer.Normal(0.5).dumps()
            '["normal", {"sigma": 0.5}]'

        Array arguments (NDArrays, NumPy arrays and scalars) are written as (nested)
        lists and numbers, as MXNet writes them.
        """
        return json.dumps([type(self).__name__.lower(), self._kwargs], default=_json_default)

    def __call__(self, desc, arr: NDArray) -> None:
        """Fill ``arr`` in place according to the name ``desc``.

        Args:
            desc: an :class:`InitDesc` or a plain string name.
            arr: the NDArray to fill.
        """
        if not isinstance(desc, InitDesc):
            if not isinstance(desc, str):
                raise TypeError(f"{type(self).__name__}: desc must be an InitDesc or a str "
                                f"name, got {type(desc).__name__}")
            desc = InitDesc(desc)
        if not isinstance(arr, NDArray):
            raise TypeError(f"{type(self).__name__}: the array to fill must be an NDArray, "
                            f"got {type(arr).__name__}")
        if desc.global_init is None:
            desc.global_init = self
        init = desc.attrs.get("__init__", "")
        if init:
            # The parameter's own initializer: it fills the array whatever the name.
            create(init)._init_weight(desc, arr)
            self._verbose_print(desc, init, arr)
            return
        if desc.startswith("upsampling"):
            self._init_bilinear(desc, arr)
            self._verbose_print(desc, "bilinear", arr)
            return
        if desc.startswith("stn_loc") and desc.endswith("weight"):
            self._init_zero(desc, arr)
            return
        if desc.startswith("stn_loc") and desc.endswith("bias"):
            self._init_loc_bias(desc, arr)
            return
        for suffix, method in _SUFFIXES:
            if desc.endswith(suffix):
                getattr(self, method)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    # ------------------------------------------------------------------ the defaults
    def _init_bilinear(self, _, arr):
        _fill(arr, _bilinear(arr.shape))

    def _init_loc_bias(self, desc, arr):
        if tuple(arr.shape) != (6,):
            raise ValueError(f"{type(self).__name__}: {desc} is a spatial-transformer "
                             f"localisation bias and must have shape (6,), got {arr.shape}")
        _fill(arr, numpy.array([1.0, 0, 0, 0, 1.0, 0]))

    def _init_zero(self, _, arr):
        _fill(arr, 0.0)

    def _init_one(self, _, arr):
        _fill(arr, 1.0)

    def _init_bias(self, _, arr):
        _fill(arr, 0.0)

    def _init_gamma(self, _, arr):
        _fill(arr, 1.0)

    def _init_beta(self, _, arr):
        _fill(arr, 0.0)

    def _init_quantized_bias(self, _, arr):
        _fill(arr, 0)

    def _init_quantized_weight(self, _, arr):
        from . import nd

        with autograd.pause():
            vals = nd.random.randint(-127, 127, shape=(max(int(arr.size), 1),), dtype="int32",
                                     ctx=arr.context)
            _fill(arr, vals[:arr.size].reshape(arr.shape))

    def _init_weight(self, desc, arr):
        raise NotImplementedError(f"{type(self).__name__} does not define _init_weight, "
                                  f"so it cannot initialize {desc!r}")

    def _init_default(self, desc, _):
        raise ValueError(
            f"{type(self).__name__}: unknown initialization pattern for {desc!r}; by name, "
            "only arrays ending in weight, bias, gamma, beta, moving_mean/running_mean, "
            "moving_var/running_var, min or max are initialized. Give the parameter its "
            "own initializer (Parameter(..., init=core.initializer.Zero()))")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def register(klass: type) -> type:
    """Register an Initializer subclass under its lower-cased class name.

    Used as a class decorator; :func:`create` then finds the class by name.

    Args:
        klass: a subclass of :class:`Initializer`.

    Returns:
        ``klass``.

    Example:
        >>> from core import initializer, nd
        >>> @initializer.register
        ... class Halves(initializer.Initializer):
        ...     def _init_weight(self, _, arr):
        ...         arr[:] = 0.5
        >>> w = nd.zeros((2,)); initializer.create("halves")("w_weight", w)
        >>> w.asnumpy().tolist()
        [0.5, 0.5]
    """
    if not (isinstance(klass, type) and issubclass(klass, Initializer)):
        raise TypeError(f"register: expected a subclass of Initializer, got {klass!r}")
    _REGISTRY[klass.__name__.lower()] = klass
    return klass


def alias(*aliases: str) -> Callable[[type], type]:
    """A class decorator registering an Initializer under extra names.

    Example:
        >>> from core import initializer
        >>> type(initializer.create("zeros")).__name__
        'Zero'
    """
    def reg(klass):
        for name in aliases:
            _REGISTRY[name.lower()] = klass
        return klass

    return reg


def _registered(name: str, shown) -> type:
    klass = _REGISTRY.get(name.strip().lower())
    if klass is None:
        raise ValueError(f"create: unknown initializer {shown!r}; registered: "
                         f"{', '.join(sorted(_REGISTRY))}")
    return klass


def create(init=None, **kwargs) -> Initializer:
    """An Initializer from an instance, a class, a registered name or a ``dumps`` string.

    Args:
        init: an :class:`Initializer` (returned as is), a subclass (instantiated with
            ``kwargs``), a registered name such as ``'xavier'``, ``'zeros'``, ``'ones'``,
            ``'uniform'``, ``'normal'`` (instantiated with ``kwargs``), or the JSON string
            of :meth:`Initializer.dumps`.
        **kwargs: constructor arguments when ``init`` is a name or a class.

    Returns:
        An Initializer.

    Raises:
        ValueError: for an unknown name, listing the registered ones.

    Example:
        >>> from core import initializer
        >>> initializer.create("xavier", magnitude=2)
        Xavier(rnd_type='uniform', factor_type='avg', magnitude=2)
        >>> initializer.create('["normal", {"sigma": 0.5}]')
        Normal(sigma=0.5)
    """
    if isinstance(init, Initializer):
        return init
    if isinstance(init, type) and issubclass(init, Initializer):
        return init(**kwargs)
    if isinstance(init, str):
        text = init.strip()
        if text.startswith("["):
            try:
                name, args = json.loads(text)
            except (ValueError, TypeError):
                raise ValueError(f"create: {init!r} is not a valid initializer description; "
                                 "expected the JSON of Initializer.dumps(), e.g. "
                                 "'[\"normal\", {\"sigma\": 0.5}]'") from None
            if not isinstance(name, str) or not isinstance(args, dict):
                raise ValueError(f"create: {init!r} is not a valid initializer description")
            # the class itself, not create(name, **args): the arguments may hold an
            # ``init`` of their own (MXNet's FusedRNN)
            return _registered(name, init)(**args, **kwargs)
        return _registered(text, init)(**kwargs)
    raise TypeError(f"create: expected an Initializer, a registered name or a JSON "
                    f"description, got {type(init).__name__} {init!r}")


# --------------------------------------------------------------------------- initializers

@register
@alias("zeros")
class Zero(Initializer):
    """Fills with 0 (aliases ``'zero'``, ``'zeros'``).

    Example:
        >>> from core import initializer, nd
        >>> w = nd.ones((2,)); initializer.Zero()("w_weight", w); w.asnumpy().tolist()
        [0.0, 0.0]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill(arr, 0)


@register
@alias("ones")
class One(Initializer):
    """Fills with 1 (aliases ``'one'``, ``'ones'``).

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((2,)); initializer.One()("w_weight", w); w.asnumpy().tolist()
        [1.0, 1.0]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill(arr, 1)


def _jsonable(value):
    """``value`` in JSON's types: NDArrays and NumPy arrays as nested lists, NumPy
    scalars as numbers; other values unchanged (``json.dumps`` then judges them)."""
    if isinstance(value, NDArray):
        value = value.asnumpy()
    if isinstance(value, (numpy.ndarray, numpy.generic)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _json_default(value):
    out = _jsonable(value)
    if out is value:
        raise TypeError(f"Initializer.dumps: an argument of type {type(value).__name__} "
                        "cannot be written as JSON")
    return out


@register
class Constant(Initializer):
    """Fills with a value: a scalar, or an array broadcastable to the parameter's shape.

    Args:
        value: a number, NumPy array, list or NDArray.

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((2, 2)); initializer.Constant(3)("w_weight", w)
        >>> w.asnumpy().tolist()
        [[3.0, 3.0], [3.0, 3.0]]
    """

    def __init__(self, value=0.0):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        _fill(arr, self.value)

    def dumps(self) -> str:
        """``'["constant", {"value": ...}]'``; an array value is written as nested lists.

        As in MXNet, the array value in ``_kwargs`` is replaced by that list (so
        ``json.dumps([name, init._kwargs])`` gives the same string); the value the
        initializer fills with stays the array.

        Example:
            >>> from core import initializer, nd
            >>> initializer.Constant(nd.ones((2,))).dumps()
            '["constant", {"value": [1.0, 1.0]}]'
        """
        self._kwargs["value"] = _jsonable(self._kwargs["value"])
        return json.dumps([type(self).__name__.lower(), self._kwargs])


@register
class Uniform(Initializer):
    """Uniform samples in ``[-scale, scale]``.

    Args:
        scale: the bound of the range (default 0.07).

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((100,)); initializer.Uniform(0.1)("w_weight", w)
        >>> bool((abs(w.asnumpy()) <= 0.1).all())
        True
    """

    def __init__(self, scale: float = 0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _fill(arr, _draw_like("uniform", arr, -self.scale, self.scale))


@register
class Normal(Initializer):
    """Normal samples with mean 0 and standard deviation ``sigma``.

    Args:
        sigma: the standard deviation (default 0.01).

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((10000,)); initializer.Normal(0.5)("w_weight", w)
        >>> 0.45 < float(w.asnumpy().std()) < 0.55
        True
    """

    def __init__(self, sigma: float = 0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _fill(arr, _draw_like("normal", arr, 0.0, self.sigma))


@register
class Orthogonal(Initializer):
    """An orthogonal matrix times ``scale`` (Saxe et al., 2013).

    The weight is viewed as a ``(shape[0], prod(shape[1:]))`` matrix whose rows (or
    columns, whichever are fewer) are orthonormal before scaling.

    Args:
        scale: the scaling factor (default 1.414).
        rand_type: ``'uniform'`` or ``'normal'``: the random matrix that is
            orthogonalized.

    Example:
        >>> import numpy
        >>> from core import initializer, nd
        >>> w = nd.zeros((3, 5)); initializer.Orthogonal(scale=1.0)("w_weight", w)
        >>> bool(numpy.allclose(w.asnumpy() @ w.asnumpy().T, numpy.eye(3), atol=1e-5))
        True
    """

    def __init__(self, scale: float = 1.414, rand_type: str = "uniform"):
        if rand_type not in ("uniform", "normal"):
            raise ValueError(f"Orthogonal: rand_type must be 'uniform' or 'normal', got "
                             f"{rand_type!r}")
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, desc, arr):
        if arr.ndim < 1 or arr.size == 0:
            raise ValueError(f"Orthogonal: cannot initialize {desc!r} of shape {arr.shape}")
        nout = arr.shape[0]
        nin = int(numpy.prod(arr.shape[1:])) if arr.ndim > 1 else 1
        if self.rand_type == "uniform":
            t = _draw("uniform", (nout, nin), arr.context, "float32", -1.0, 1.0)
        else:
            t = _draw("normal", (nout, nin), arr.context, "float32", 0.0, 1.0)
        m = t.asnumpy().astype(numpy.float64)
        u, _, v = numpy.linalg.svd(m, full_matrices=False)
        res = u if u.shape == m.shape else v
        _fill(arr, (self.scale * res).reshape(arr.shape))


@register
class Xavier(Initializer):
    """Xavier/Glorot initialization.

    With ``fan_in = shape[1] * prod(shape[2:])`` and ``fan_out = shape[0] *
    prod(shape[2:])``, ``factor`` is their mean (``'avg'``), ``fan_in`` (``'in'``) or
    ``fan_out`` (``'out'``), and ``scale = sqrt(magnitude / factor)``. Samples are
    uniform in ``[-scale, scale]`` (``rnd_type='uniform'``) or normal with standard
    deviation ``scale`` (``'gaussian'``).

    Args:
        rnd_type: ``'uniform'`` or ``'gaussian'``.
        factor_type: ``'avg'``, ``'in'`` or ``'out'``.
        magnitude: the scale of the random numbers (default 3).

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((64, 32)); initializer.Xavier()("fc_weight", w)
        >>> bool((abs(w.asnumpy()) <= (3 / 48) ** 0.5).all())
        True
    """

    def __init__(self, rnd_type: str = "uniform", factor_type: str = "avg",
                 magnitude: float = 3):
        if rnd_type not in ("uniform", "gaussian"):
            raise ValueError(f"Xavier: rnd_type must be 'uniform' or 'gaussian', got "
                             f"{rnd_type!r}")
        if factor_type not in ("avg", "in", "out"):
            raise ValueError(f"Xavier: factor_type must be 'avg', 'in' or 'out', got "
                             f"{factor_type!r}")
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, desc, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ValueError(f"{type(self).__name__}: cannot initialize {desc!r} of shape "
                             f"{tuple(shape)}: it needs at least 2 dimensions "
                             "(out, in, ...) to compute fan-in and fan-out")
        hw_scale = float(numpy.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * hw_scale, shape[0] * hw_scale
        factor = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}[
            self.factor_type]
        if factor <= 0:
            raise ValueError(f"{type(self).__name__}: cannot initialize {desc!r} of shape "
                             f"{tuple(shape)}: its fan is zero")
        scale = math.sqrt(self.magnitude / factor)
        if self.rnd_type == "uniform":
            _fill(arr, _draw_like("uniform", arr, -scale, scale))
        else:
            _fill(arr, _draw_like("normal", arr, 0.0, scale))


@register
class MSRAPrelu(Xavier):
    """He/MSRA initialization for (P)ReLU networks: Gaussian Xavier with magnitude
    ``2 / (1 + slope**2)``.

    Args:
        factor_type: ``'avg'``, ``'in'`` or ``'out'``.
        slope: the initial negative slope of the PReLU (0 for ReLU).

    Example:
        >>> from core import initializer
        >>> initializer.MSRAPrelu(factor_type="in", slope=0.0).magnitude
        2.0
    """

    def __init__(self, factor_type: str = "avg", slope: float = 0.25):
        magnitude = 2.0 / (1 + slope ** 2)
        super().__init__("gaussian", factor_type, magnitude)
        self._kwargs = {"factor_type": factor_type, "slope": slope}


def _bilinear(shape) -> numpy.ndarray:
    """The bilinear-interpolation kernel of MXNet's Bilinear initializer."""
    if len(shape) < 4:
        raise ValueError(f"Bilinear: the weight must have 4 dimensions (out, in, h, w), got "
                         f"shape {tuple(shape)}")
    f = numpy.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    idx = numpy.arange(int(numpy.prod(shape)))
    x = idx % shape[3]
    y = (idx // shape[3]) % shape[2]
    w = (1 - numpy.abs(x / f - c)) * (1 - numpy.abs(y / f - c))
    return w.astype(numpy.float32).reshape(shape)


@register
class Bilinear(Initializer):
    """Bilinear-upsampling kernels, for deconvolution weights ``(out, in, h, w)``.

    Example:
        >>> from core import initializer, nd
        >>> w = nd.zeros((1, 1, 4, 4)); initializer.Bilinear()("up_weight", w)
        >>> w.asnumpy()[0, 0, 0].tolist()
        [0.0625, 0.1875, 0.1875, 0.0625]
    """

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        _fill(arr, _bilinear(arr.shape))


@register
class LSTMBias(Initializer):
    """LSTM biases: 0 except the forget gate (the second of the four gates).

    Args:
        forget_bias: the forget gate's bias (default 1.0).

    It is meant as a parameter's own initializer (Gluon's ``i2h_bias_initializer``):
    by name alone, a bias is set to 0.

    Example:
        >>> from core import initializer, nd
        >>> from core.initializer import InitDesc
        >>> b = nd.ones((8,))
        >>> desc = InitDesc("lstm_i2h_bias", {"__init__": initializer.LSTMBias(1.0)})
        >>> initializer.Uniform()(desc, b)
        >>> b.asnumpy().tolist()
        [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    """

    def __init__(self, forget_bias: float = 1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        if arr.ndim != 1 or arr.shape[0] % 4:
            raise ValueError(f"LSTMBias: {desc!r} must be a vector of 4 * num_hidden "
                             f"entries, got shape {tuple(arr.shape)}")
        n = arr.shape[0] // 4
        v = numpy.zeros(arr.shape, dtype=numpy.float32)
        v[n:2 * n] = self.forget_bias
        _fill(arr, v)


class Mixed(Initializer):
    """Different initializers for parameters whose names match different patterns.

    Args:
        patterns: regular expressions, tried in order with ``re.match`` on the name
            (so ``'.*bias'`` matches ``'dense0_bias'``; end with ``'.*'`` as a default).
        initializers: one Initializer (or registered name) per pattern. The chosen one
            is called with the name, so its name-based defaults apply (a bias is set
            to 0 by any of them).

    Example:
        >>> from core import initializer, nd
        >>> init = initializer.Mixed(["dense0_.*", ".*"], ["ones", initializer.Zero()])
        >>> w = nd.zeros((2,)); init("dense0_weight", w); w.asnumpy().tolist()
        [1.0, 1.0]
        >>> w = nd.ones((2,)); init("dense1_weight", w); w.asnumpy().tolist()
        [0.0, 0.0]
    """

    def __init__(self, patterns: Sequence[str], initializers: Sequence):
        if len(patterns) != len(initializers):
            raise ValueError(f"Mixed: got {len(patterns)} patterns but {len(initializers)} "
                             "initializers; give one initializer per pattern")
        super().__init__()
        self.map = [(re.compile(p), create(i)) for p, i in zip(patterns, initializers)]

    def __call__(self, desc, arr):
        name = str(desc)
        for prog, init in self.map:
            if prog.match(name):
                init(desc if isinstance(desc, InitDesc) else InitDesc(name), arr)
                return
        raise ValueError(f"Mixed: parameter name {name!r} matches none of the patterns "
                         f"{[p.pattern for p, _ in self.map]}; add a '.*' pattern at the end "
                         "with a default initializer")

    def _init_weight(self, desc, arr):
        # Used as a parameter's own initializer: dispatch on the name all the same.
        name = str(desc)
        for prog, init in self.map:
            if prog.match(name):
                init._init_weight(desc, arr)
                return
        self.__call__(desc, arr)

    def dumps(self) -> str:
        raise TypeError("Mixed: a mixed initializer has no JSON description")


class Load(Initializer):
    """Fill parameters from saved arrays (a file of ``core.serialization`` or a dict).

    Names prefixed ``arg:`` or ``aux:`` are matched without the prefix.

    Args:
        param: a filename or a dict of name to NDArray.
        default_init: the initializer for names not found (None: error).
        verbose: log where each array came from.
    """

    def __init__(self, param, default_init=None, verbose: bool = False):
        super().__init__()
        if isinstance(param, str):
            from .serialization import load

            param = load(param)
        if not isinstance(param, dict):
            raise TypeError(f"Load: expected a filename or a dict of arrays, got "
                            f"{type(param).__name__}")
        self.param = {}
        for name, arr in param.items():
            key = name[4:] if name.startswith(("arg:", "aux:")) else name
            self.param[key] = arr
        self.default_init = None if default_init is None else create(default_init)
        self.verbose = verbose

    def __call__(self, desc, arr):
        name = str(desc)
        if name in self.param:
            src = self.param[name]
            if tuple(src.shape) != tuple(arr.shape):
                raise ValueError(f"Load: parameter {name!r} cannot be initialized from the "
                                 f"loaded arrays: shape mismatch, target {tuple(arr.shape)} "
                                 f"vs loaded {tuple(src.shape)}")
            _fill(arr, src)
            if self.verbose:
                _log.info("Initialized %s by loading", name)
            return
        if self.default_init is None:
            raise ValueError(f"Load: cannot initialize {name!r}: not found in the loaded "
                             "arrays and no default initializer was given")
        self.default_init(desc, arr)
        if self.verbose:
            _log.info("Initialized %s by default", name)

    _init_weight = __call__
