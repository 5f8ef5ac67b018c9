"""``Parameter``, a Block's learnable value on one or more contexts with its gradient
buffers and deferred initialization, and ``Constant``, a fixed one (MXNet Gluon 1.9;
re-exported by ``gluon.parameter``, whose docstring describes them)."""
from __future__ import annotations

import warnings

import numpy

from core import autograd, initializer, nd
from core.context import Context, as_context, cpu, ctx_or_device, current_context
from core.dtypes import as_dtype
from core.nd import sparse as nd_sparse
from core.ndarray import NDArray
from core.ops.dispatch import MXNetError

from ..utils import shape_is_known

__all__ = ["Constant", "DeferredInitializationError", "InvalidStypeError", "Parameter",
           "tensor_types"]

tensor_types = (NDArray,)
_DEFAULT_INIT = initializer.Uniform()
_STYPES = ("default", "row_sparse", "csr")
_GRAD_REQS = ("write", "add", "null")


class DeferredInitializationError(MXNetError):
    """A parameter's initialization waits for its shape, known at the first forward."""


class InvalidStypeError(ValueError, AssertionError):
    """A storage type that is not ``'default'``, ``'row_sparse'`` or ``'csr'``.

    A ``ValueError`` and an ``AssertionError`` (what MXNet 1.9.1 raises, so code
    catching either keeps working).
    """


def _shape_str(shape) -> str:
    return "None" if shape is None else str(tuple(shape))


def _norm_shape(shape):
    if shape is None:
        return None
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(f"Parameter shape must be an int or a sequence of ints, got "
                        f"{shape!r}") from None


def _ctx_list(ctx) -> list:
    if ctx is None:
        return [current_context()]
    if isinstance(ctx, (Context, str)):
        return [as_context(ctx)]
    out = [as_context(c) for c in ctx]
    if not out:
        raise ValueError("the list of contexts is empty; give at least one context")
    return out


class Parameter:
    """A container holding a parameter (weight) of a Block, on one or several contexts.

    Args:
        name: the parameter's name (``'dense0_weight'``).
        grad_req: ``'write'`` (backward overwrites the gradient), ``'add'`` (backward
            adds to it; call ``zero_grad()`` yourself) or ``'null'`` (no gradient).
        shape: an int or tuple; unknown dimensions are 0 (or -1) and are filled in
            later (deferred initialization).
        dtype: the data type (default float32).
        lr_mult: learning-rate multiplier for this parameter.
        wd_mult: weight-decay multiplier for this parameter.
        init: the parameter's own initializer (an Initializer or a registered name);
            None uses the initializer given to ``initialize``, whose weight rule then
            fills the array whatever the parameter's name, as in MXNet Gluon (so give
            biases ``init='zeros'``).
        allow_deferred_init: allow ``initialize`` before the shape is complete.
        differentiable: False forces ``grad_req='null'``.
        stype: the storage type of the data: ``'default'`` (dense), ``'row_sparse'``
            (read it with :meth:`row_sparse_data`, through a Trainer) or ``'csr'``.
        grad_stype: the gradient's storage type (``'row_sparse'`` for a gradient that
            holds only the rows the forward pass used).

    Example:
        >>> from core import nd, autograd
        >>> from gluon import Parameter
        >>> b = Parameter("b", shape=(2,), init="ones"); b.initialize()
        >>> with autograd.record():
        ...     y = (b.data() * 3).sum()
        >>> y.backward(); b.grad().asnumpy().tolist()
        [3.0, 3.0]
    """

    def __init__(self, name: str, grad_req: str = "write", shape=None, dtype="float32",
                 lr_mult: float = 1.0, wd_mult: float = 1.0, init=None,
                 allow_deferred_init: bool = False, differentiable: bool = True,
                 stype: str = "default", grad_stype: str = "default"):
        if not isinstance(name, str):
            raise TypeError(f"Parameter: name must be a str, got {type(name).__name__}")
        for what, st in (("stype", stype), ("grad_stype", grad_stype)):
            if st not in _STYPES:
                raise InvalidStypeError(f"{what} for Parameter '{name}' must be one of "
                                        f"'default', 'row_sparse', or 'csr', but got '{st}'")
        self._var = None
        self._data = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._grad_marks = []
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        self._shape = _norm_shape(shape)
        self.name = name
        self._dtype = as_dtype(dtype, f"Parameter '{name}'")
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self) -> str:
        return f"Parameter {self.name} (shape={_shape_str(self.shape)}, dtype={self.dtype.name})"

    # ------------------------------------------------------------------ attributes
    @property
    def grad_req(self) -> str:
        """``'write'``, ``'add'`` or ``'null'``; setting ``'null'`` drops the gradients."""
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req not in _GRAD_REQS:
            raise ValueError(f"grad_req of Parameter '{self.name}' must be one of 'write', "
                             f"'add', or 'null', but got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if self._data is not None:
            self._init_grad()

    @property
    def allow_deferred_init(self) -> bool:
        return self._allow_deferred_init

    @allow_deferred_init.setter
    def allow_deferred_init(self, value: bool) -> None:
        self._allow_deferred_init = bool(value)

    @property
    def differentiable(self) -> bool:
        return self._differentiable

    @property
    def stype(self) -> str:
        return self._stype

    @property
    def grad_stype(self) -> str:
        return self._grad_stype

    @property
    def dtype(self) -> numpy.dtype:
        """The data type; setting it casts the data (as :meth:`cast`)."""
        return self._dtype

    @dtype.setter
    def dtype(self, dtype) -> None:
        self.cast(dtype)

    @property
    def shape(self):
        """The shape (a tuple, None if unknown); 0 or -1 marks an unknown dimension.

        Setting it fills in unknown dimensions; a known dimension cannot change.
        """
        return self._shape

    @shape.setter
    def shape(self, new_shape) -> None:
        new_shape = _norm_shape(new_shape)
        if self._shape is None or new_shape is None:
            if new_shape is None and self._data is not None:
                raise ValueError(f"Parameter '{self.name}': cannot unset the shape of an "
                                 "initialized parameter")
            self._shape = new_shape if new_shape is not None else self._shape
            return
        merged = _merge_shapes(self._shape, new_shape)
        if merged is None:
            raise ValueError(f"Parameter '{self.name}': the new shape {new_shape} is "
                             f"incompatible with its shape {self._shape} (only unknown "
                             "dimensions, 0 or -1, can change)")
        self._shape = merged

    # ------------------------------------------------------------------ access
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            ctx = as_context(ctx)
            idx = self._ctx_map.get(ctx)
            if idx is not None:
                return arr_list[idx]
            raise RuntimeError(
                f"Parameter '{self.name}' was not initialized on context {ctx}. It was only "
                f"initialized on {self._ctx_list}. Move the input there with "
                f"x.as_in_context(...), or initialize (or reset_ctx) the parameters on "
                f"{ctx} too.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter '{self.name}' has not been initialized yet because "
                "initialization was deferred (its shape is "
                f"{_shape_str(self.shape)}, where 0 or -1 marks an unknown dimension). "
                "Actual initialization happens during the first forward pass. Please pass "
                "one batch of data through the network before accessing Parameters. You "
                "can also avoid deferred initialization by specifying in_units, "
                "in_channels, num_features, etc., for network layers.")
        raise RuntimeError(
            f"Parameter '{self.name}' has not been initialized. Call initialize() first "
            "(block.initialize() or block.collect_params().initialize()). Note that "
            "parameters should be initialized, and the Trainer created, with "
            "Block.collect_params() rather than Block.params, which does not include the "
            "Parameters of nested child Blocks.")

    def data(self, ctx=None, device=None) -> NDArray:
        """The value on context ``ctx``.

        Args:
            ctx: a Context; None means the only context if there is one, else the
                current context.
            device: MXNet 2.0's name for ``ctx``.

        Returns:
            The NDArray on ``ctx`` (the parameter's own array, not a copy).

        Raises:
            RuntimeError: not initialized, or not on ``ctx`` (naming both contexts), or
                the parameter is not dense (use :meth:`row_sparse_data`).
            DeferredInitializationError: initialization still waits for the shape.
        """
        ctx = ctx_or_device(ctx, device, "Parameter.data")
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter '{self.name}' on ctx {ctx} "
                               f"via data() because its storage type is {self._stype}. "
                               "Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, ctx)

    def list_data(self) -> list:
        """The values on all contexts, in the order of :meth:`list_ctx`.

        Raises:
            RuntimeError: as :meth:`data` (a sparse parameter: use
                :meth:`list_row_sparse_data`).
        """
        if self._stype != "default":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all "
                               f"contexts via list_data() because its storage type is "
                               f"{self._stype}. Please use row_sparse_data() instead.")
        return self._check_and_get(self._data, list)

    def _list_data(self) -> list:
        """The arrays on all contexts whatever the storage type (for the Trainer)."""
        return self._check_and_get(self._data, list)

    def row_sparse_data(self, row_id: NDArray) -> NDArray:
        """A copy of a ``'row_sparse'`` parameter on ``row_id``'s context, holding only
        the rows in ``row_id`` (pulled from the Trainer's kvstore, which holds the
        current weights).

        Args:
            row_id: an NDArray of row indices; its context picks the replica.

        Returns:
            A row-sparse NDArray of the parameter's shape on ``row_id.context``.

        Raises:
            RuntimeError: the parameter is not ``'row_sparse'`` (use :meth:`data`), no
                Trainer was created with it, or it is not on that context.
            TypeError: ``row_id`` is not an NDArray.
        """
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name} via "
                               f"row_sparse_data() because its storage type is "
                               f"{self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, getattr(row_id, "context", None), row_id)

    def list_row_sparse_data(self, row_id: NDArray) -> list:
        """Copies of a ``'row_sparse'`` parameter on all contexts (in :meth:`list_ctx`
        order), each holding only the rows in ``row_id`` (see :meth:`row_sparse_data`).

        Args:
            row_id: an NDArray of row indices.

        Returns:
            A list of row-sparse NDArrays.

        Raises:
            RuntimeError: as :meth:`row_sparse_data`.
            TypeError: ``row_id`` is not an NDArray.
        """
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter '{self.name}' on all "
                               f"contexts via list_row_sparse_data() because its storage type "
                               f"is {self._stype}. Please use data() instead.")
        return self._get_row_sparse(self._data, list, row_id)

    def _get_row_sparse(self, arr_list, ctx, row_id):
        """The replica(s) for ``ctx``, refreshed with ``row_id``'s rows from the Trainer."""
        if not isinstance(row_id, NDArray):
            raise TypeError(f"Parameter '{self.name}': row_id must be an NDArray, but "
                            f"{type(row_id).__name__} is given")
        if self._trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter '{self.name}' when "
                               "no Trainer is created with it.")
        results = self._check_and_get(arr_list, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def _grads(self):
        if self._data is None or self._grad_req == "null":
            return None
        return [d.grad for d in self._data]

    @property
    def _grad(self):
        """The gradient buffers (one per context), None without gradients."""
        return self._grads()

    def grad(self, ctx=None, device=None) -> NDArray:
        """The gradient buffer on context ``ctx`` (see :meth:`data` for ``ctx``)."""
        ctx = ctx_or_device(ctx, device, "Parameter.grad")
        if self._data is not None and self._grad_req == "null":
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return self._check_and_get(self._grads(), ctx)

    def list_grad(self) -> list:
        """The gradient buffers on all contexts, in the order of :meth:`list_ctx`."""
        if self._data is not None and self._grad_req == "null":
            raise RuntimeError(f"Cannot get gradient array for Parameter '{self.name}' "
                               "because grad_req='null'")
        return self._check_and_get(self._grads(), list)

    def list_ctx(self) -> list:
        """The contexts the parameter is (or, once deferred, will be) initialized on."""
        if self._data is None:
            if self._deferred_init:
                return list(self._deferred_init[1])
            raise RuntimeError(f"Parameter '{self.name}' has not been initialized; call "
                               "initialize() first")
        return list(self._ctx_list)

    list_device = list_ctx

    def var(self):
        """This parameter as a symbolic variable (``core.sym.var`` with its name, shape,
        dtype, initializer and multipliers; unknown dimensions are 0)."""
        from core import sym

        shape = None if self._shape is None else tuple(d if d and d > 0 else 0
                                                       for d in self._shape)
        kwargs = {"stype": self._stype} if self._stype != "default" else {}
        return sym.var(self.name, shape=shape, dtype=self.dtype, lr_mult=self.lr_mult,
                       wd_mult=self.wd_mult, init=self.init, **kwargs)

    # ------------------------------------------------------------------ initialization
    def initialize(self, init=None, ctx=None, default_init=_DEFAULT_INIT,
                   force_reinit: bool = False, device=None) -> None:
        """Create the data (and gradient) arrays on ``ctx``, filled by an initializer.

        Args:
            init: the initializer; overrides :attr:`init` and ``default_init``.
            ctx: a Context or a list of them (default: the current context); every
                context gets an identical copy.
            default_init: used when both ``init`` and :attr:`init` are None.
            force_reinit: re-initialize a parameter that is initialized already
                (otherwise a warning is given and nothing changes).
            device: MXNet 2.0's name for ``ctx``.

        The values are drawn on cpu(0), from its ``core.random`` generator, and copied
        to every context, so they do not depend on the devices.

        Raises:
            ValueError: the shape is incomplete and deferred initialization is not
                allowed.
        """
        ctx = ctx_or_device(ctx, device, f"Parameter '{self.name}'.initialize")
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          "force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = None
        self._grad_marks = []
        ctx = _ctx_list(ctx)
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {_shape_str(self.shape)}. Give the complete "
                             "shape (no 0 or -1 dimensions), or allow_deferred_init=True.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def _finish_deferred_init(self) -> None:
        """Complete a deferred initialization now that the shape is known."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        if not shape_is_known(self.shape):
            raise ValueError(f"Cannot initialize Parameter '{self.name}' because it has "
                             f"invalid shape: {_shape_str(self.shape)}. Please specify "
                             "in_units, in_channels, etc for `Block`s.")
        self._deferred_init = ()
        with autograd.pause():
            if data is None:
                data = nd.zeros(self.shape, dtype=self.dtype, ctx=cpu(0))
                # As in MXNet Gluon, the chosen initializer's _init_weight fills the
                # array whatever the parameter's name: layers give biases init='zeros'.
                glob = initializer.create(default_init if default_init is not None
                                          else init if init else initializer.Uniform())
                glob(initializer.InitDesc(self.name, {"__init__": init or ""}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list) -> None:
        """Set the data on every context (copies of ``data``) and the gradients."""
        ctx_list = [as_context(c) for c in ctx_list]
        if len(set(ctx_list)) != len(ctx_list):
            raise ValueError(f"Parameter '{self.name}': the context list {ctx_list} has "
                             "duplicates")
        if not isinstance(data, NDArray):
            data = nd.array(numpy.asarray(data), dtype=self.dtype, ctx=cpu(0))
        with autograd.pause():
            if data.dtype != self.dtype:
                data = data.astype(self.dtype)
            if data.stype != self._stype:
                data = data.tostype(self._stype)
            self._data = [data.copyto(c).detach() for c in ctx_list]
        self._ctx_list = ctx_list
        self._ctx_map = {c: i for i, c in enumerate(ctx_list)}
        self._init_grad()

    def _init_grad(self) -> None:
        """(Re)create the gradient buffers, or drop them for grad_req 'null'."""
        if self._grad_req == "null":
            for d in self._data:
                d.attach_grad("null")
        else:
            grads = [_zeros(d.shape, d.dtype, d.context, self._grad_stype)
                     for d in self._data]
            autograd.mark_variables(self._data, grads, self._grad_req)
        self._mark_stale()

    def _load_init(self, data, ctx, cast_dtype: bool = False, dtype_source: str = "current",
                   *, name: str | None = None) -> None:
        """(Re)initialize from loaded data, checking its shape and dtype."""
        shown = self.name if name is None or name == self.name else f"{name}' ('{self.name}"
        if dtype_source not in ("current", "saved"):
            raise ValueError(f"dtype_source must be 'current' or 'saved', got "
                             f"{dtype_source!r}")
        if not isinstance(data, NDArray):
            data = nd.array(numpy.asarray(data), dtype=numpy.asarray(data).dtype, ctx=cpu(0))
        if self.shape is None:
            self._shape = tuple(data.shape)
        else:
            if _merge_shapes(self.shape, data.shape, loading=True) is None:
                raise ValueError(f"Failed loading Parameter '{shown}' from saved params: "
                                 f"shape incompatible expected {_shape_str(self.shape)} vs "
                                 f"saved {_shape_str(data.shape)}")
            self._shape = tuple(data.shape)
        if data.dtype != self.dtype:
            if not cast_dtype:
                raise ValueError(f"Failed loading Parameter '{shown}' from saved params: "
                                 f"dtype incompatible expected {self.dtype.name} vs saved "
                                 f"{data.dtype.name}. Set cast_dtype=True to cast the dtype "
                                 "of saved params.")
            if dtype_source == "current":
                with autograd.pause():
                    data = data.astype(self.dtype)
            else:
                self._dtype = data.dtype
        if data.stype != self._stype:  # a sparse entry loads into a dense one and back
            with autograd.pause():
                data = data.tostype(self._stype)
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(_ctx_list(ctx)) != set(self._deferred_init[1]):
                    raise ValueError(f"Failed to load Parameter '{shown}' on "
                                     f"{_ctx_list(ctx)} because it was previously "
                                     f"initialized on {self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu(0)]
            self._init_impl(data, _ctx_list(ctx))
        else:
            if ctx is not None and set(_ctx_list(ctx)) != set(self.list_ctx()):
                raise ValueError(f"Failed to load Parameter '{shown}' on {_ctx_list(ctx)} "
                                 f"because it was previously initialized on "
                                 f"{self.list_ctx()}.")
            if data.dtype != self._data[0].dtype:  # dtype_source='saved' changed it
                self._init_impl(data, self._ctx_list)
            else:
                self.set_data(data)
        self._deferred_init = ()

    def reset_device(self, device) -> None:
        """MXNet 2.0's name for :meth:`reset_ctx`."""
        self.reset_ctx(device)

    def reset_ctx(self, ctx) -> None:
        """Move the parameter to other contexts (a Context or a list).

        Args:
            ctx: the new context(s); None means the current context.
        """
        ctx = _ctx_list(ctx)
        if self._data is not None:
            data = self._reduce()
            self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter '{self.name}' because it "
                             "has not been initialized.")

    def _reduce(self) -> NDArray:
        """The value as one array on cpu(0) (replicas are kept identical; a row_sparse
        parameter's current value is in its Trainer's kvstore, pulled in full)."""
        with autograd.pause():
            if self._stype == "row_sparse" and self._trainer is not None:
                out = self._list_data()[0].copyto(cpu(0))
                rows = nd.arange(0, self.shape[0], dtype="int64", ctx=cpu(0))
                self._trainer._row_sparse_pull(self, out, rows, full_idx=True)
                return out
            return self._list_data()[0].copyto(cpu(0))

    def set_data(self, data) -> None:
        """Set the value on all contexts.

        Args:
            data: an NDArray or array-like of the parameter's shape (its unknown
                dimensions are filled from ``data``).
        """
        if not isinstance(data, NDArray):
            data = nd.array(numpy.asarray(data), dtype=self.dtype, ctx=cpu(0))
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise RuntimeError(f"Parameter '{self.name}' has not been initialized; call "
                                   "initialize() before set_data()")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer
        if trainer is not None and getattr(trainer, "_kv_initialized", False) and \
                getattr(trainer, "_update_on_kvstore", False) and \
                self not in getattr(trainer, "_params_to_init", ()):
            trainer._reset_kvstore()
        with autograd.pause():
            for arr in self._data:
                arr[...] = data.as_in_context(arr.context)

    def zero_grad(self) -> None:
        """Set the gradient buffers to 0 (no effect without gradients).

        Whether a gradient counts as fresh for the Trainer is not changed.
        """
        grads = self._grads()
        if not grads:
            return
        fresh = self._check_fresh()
        with autograd.pause():
            for g in grads:
                if g is not None:
                    g[...] = 0
        for i, f in enumerate(fresh):
            if not f:
                self._mark_stale(i)

    def cast(self, dtype) -> None:
        """Cast the data and gradients to ``dtype``.

        Args:
            dtype: a dtype name or NumPy dtype.
        """
        self._dtype = as_dtype(dtype, f"Parameter '{self.name}'.cast")
        if self._data is None:
            if self._deferred_init and self._deferred_init[3] is not None:
                init, ctx, default_init, data = self._deferred_init
                with autograd.pause():
                    self._deferred_init = (init, ctx, default_init, data.astype(self._dtype))
            return
        with autograd.pause():
            self._data = [d.astype(self._dtype).detach() for d in self._data]
        self._init_grad()

    # ------------------------------------------------------------------ the Trainer's view
    def _set_trainer(self, trainer) -> None:
        """Associate the Trainer that updates this parameter."""
        if self._stype != "default" and self._trainer is not None and trainer is not None \
                and self._trainer is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter '{self.name}' "
                               "because it was already set. More than one trainer for a "
                               f"{self._stype} Parameter is not supported.")
        self._trainer = trainer

    def _mark_stale(self, index: int | None = None) -> None:
        """Record the gradients as consumed (call after an update).

        Args:
            index: one replica (in :meth:`list_ctx` order), or None for all.
        """
        grads = self._grads()
        if grads is None:
            self._grad_marks = []
            return
        marks = [(g, g._version if g is not None else 0) for g in grads]
        if index is None:
            self._grad_marks = marks
        else:
            if len(self._grad_marks) != len(marks):
                self._grad_marks = [(None, -1)] * len(marks)
            self._grad_marks[index] = marks[index]

    def _check_fresh(self) -> list:
        """Per replica (in :meth:`list_ctx` order): has backward written its gradient
        since the last :meth:`_mark_stale`?

        Backward writing a gradient in place bumps the gradient array's version; any
        other in-place write to it does too, so check before modifying gradients
        (before all-reducing them, say).
        """
        grads = self._grads()
        if grads is None:
            return []
        marks = self._grad_marks
        if len(marks) != len(grads):
            return [True] * len(grads)
        return [g is not m or (g is not None and g._version != v)
                for g, (m, v) in zip(grads, marks)]

    @property
    def _fresh_grad(self) -> bool:
        """Whether every replica's gradient is fresh (see :meth:`_check_fresh`).

        Setting False marks the gradients stale; setting True marks them fresh.
        """
        fresh = self._check_fresh()
        return bool(fresh) and all(fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, value: bool) -> None:
        if value:
            grads = self._grads() or []
            self._grad_marks = [(None, -1)] * len(grads)
        else:
            self._mark_stale()


def _zeros(shape, dtype, ctx, stype: str) -> NDArray:
    """Zeros of storage type ``stype`` (a gradient buffer)."""
    if stype == "default":
        return nd.zeros(shape, dtype=dtype, ctx=ctx)
    return nd_sparse.zeros(stype, shape, ctx=ctx, dtype=dtype)


def _merge_shapes(known, new, loading: bool = False):
    """``known`` with unknown dimensions (0, -1) filled from ``new``; None on conflict."""
    known, new = tuple(known), tuple(new)
    if len(known) != len(new):
        return None
    out = []
    for a, b in zip(known, new):
        if a == b or b in (0, -1) and not loading:
            out.append(a)
        elif a in (0, -1):
            out.append(b)
        else:
            return None
    return tuple(out)


class _ConstantInit(initializer.Initializer):
    """Fills a Constant with its value."""

    def __init__(self, value):
        super().__init__()
        self.value = value

    def _init_weight(self, _, arr):
        with autograd.pause():
            arr[...] = self.value.as_in_context(arr.context).astype(arr.dtype, copy=False)

    def dumps(self) -> str:
        return initializer.Constant(self.value.asnumpy()).dumps()


class Constant(Parameter):
    """A parameter that holds a fixed value: no gradient, not updated by the Trainer
    (``set_data`` still changes it).

    Args:
        name: the parameter's name.
        value: an NDArray or array-like (numbers become float32, as ``nd.array``).

    Example:
        >>> from gluon import Constant
        >>> c = Constant("c", [[1, 2], [3, 4]]); c.initialize()
        >>> c.data().asnumpy().tolist(), c.grad_req
        ([[1.0, 2.0], [3.0, 4.0]], 'null')
    """

    def __init__(self, name: str, value):
        if not isinstance(value, NDArray):
            value = nd.array(value, ctx=cpu(0))
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ConstantInit(value))

    def __repr__(self) -> str:
        return f"Constant {self.name} (shape={_shape_str(self.shape)}, dtype={self.dtype.name})"

    @property
    def grad_req(self) -> str:
        return "null"

    @grad_req.setter
    def grad_req(self, req: str) -> None:
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.', stacklevel=2)
        self._grad_req = "null"
