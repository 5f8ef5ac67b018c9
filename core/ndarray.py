"""``NDArray``: an array on a context, with autograd and MXNet's methods.

An NDArray wraps an array of the context's array module (numpy on CPU, cupy on
GPU). Operators never reach into another array's buffer: they go through the
dispatcher in ``core.ops.dispatch``; code outside the dispatcher asks for data with
``asnumpy()`` or ``wait_to_read()``.
"""
from __future__ import annotations

import sys

import numpy

from . import tape as _tape
from . import engine as _engine
from .context import Context, as_context
from .dtypes import ML_FLOATS, as_dtype, is_float
from .ndarray_np import NumpyMethods

# Filled in by core.ops once the registry is loaded (the registry imports this module).
_R: dict = {}
_invoke = None
_EMPTY: dict = {}


class AbstractValueError(RuntimeError):
    """A value was needed during abstract evaluation (``core.ops.abstract.abstract_eval``)."""


class Placeholder(numpy.ndarray):
    """The data of an abstract array: one zero broadcast to a shape; its values never read."""

    def __array_ufunc__(self, *args, **kwargs):
        raise AbstractValueError("abstract evaluation: an array's values were needed")

    def __array_function__(self, *args, **kwargs):
        raise AbstractValueError("abstract evaluation: an array's values were needed")

    def __setitem__(self, key, value):
        raise AbstractValueError("abstract evaluation: an abstract array was written to")


def _traced(a, b) -> bool:
    """Whether an in-place write involves a traced (placeholder) array: it is then
    recorded as a new value (``core.symbol.trace``) instead of written."""
    if type(a._data) is not Placeholder and not (isinstance(b, NDArray)
                                                 and type(b._data) is Placeholder):
        return False
    from .ops.abstract import is_tracing, note_traced_write

    if not is_tracing():
        return False
    note_traced_write(a)
    return True



def _adoptable(g, g_refs: int | None, old) -> bool:
    """Whether ``.grad`` may take ``g``'s buffer in place of ``old`` (see
    ``NDArray._receive_grad``): exact reference counts, so any other holder of either
    buffer, or of ``g``, keeps the copy. ``g_refs`` None: the caller vouches for ``g``'s
    buffer being its own (handed over), so only ``old`` is counted."""
    new = g._data
    return (type(new) is type(old) and new.shape == old.shape and new.dtype == old.dtype
            and new.base is None and old.base is None and new.flags.c_contiguous
            and new.flags.writeable and old.flags.c_contiguous
            and (g_refs is None or (
                sys.getrefcount(g) == g_refs + 1  # + this function's argument
                and sys.getrefcount(new) == 3))  # g's slot, the local, getrefcount's own
            and sys.getrefcount(old) == 4)  # .grad's slot, two locals, the argument

class NDArray(NumpyMethods):
    """An n-dimensional array on a context (device), with autograd support.

    Create arrays with ``core.nd.array``, ``core.nd.zeros``, ``core.np.array`` and the
    other creation functions; ``NDArray(data, ctx, dtype)`` also works.

    Example:
        >>> from core import nd, cpu
        >>> x = nd.array([[1, 2, 3], [4, 5, 6]], ctx=cpu(0))
        >>> x.shape, x.context
        ((2, 3), cpu(0))
        >>> (x * 2).sum().item()
        42.0
    """

    __slots__ = ("__weakref__", "_ctx", "_data", "_grad", "_node", "_var", "_version")
    _is_sparse = False  # True for core.sparse's arrays (a class attribute: no cost per array)
    __array_priority__ = 1000.0
    __array_ufunc__ = None  # numpy defers to our reflected operators

    def __init__(self, data, ctx=None, dtype=None):
        ctx = as_context(ctx)
        xp = ctx.xp
        if isinstance(data, NDArray):
            data = data.asnumpy() if data._ctx is not ctx else data._data
        with ctx.device_guard():
            arr = xp.array(data, dtype=None if dtype is None else as_dtype(dtype))
        self._data = arr
        self._ctx = ctx
        self._node = None
        self._grad = None
        self._version = 0
        self._var = None

    @classmethod
    def _make(cls, data, ctx, node):
        a = cls.__new__(cls)
        a._data = data
        a._ctx = ctx
        a._node = node
        a._grad = None
        a._version = 0
        a._var = None
        return a

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple:
        return self._data.shape

    @property
    def dtype(self) -> numpy.dtype:
        return self._data.dtype

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context
    device = context

    @property
    def stype(self) -> str:
        return "default"

    @property
    def T(self) -> NDArray:
        return _invoke(_R["transpose"], (self,), {"axes": None})

    @property
    def grad(self):
        """The gradient buffer written by ``backward`` (None until ``attach_grad``)."""
        return self._grad

    @property
    def handle(self):
        return self._data

    # ------------------------------------------------------------------ data access
    def asnumpy(self) -> numpy.ndarray:
        """A NumPy copy of the data (synchronizes with the device and the engine)."""
        if self._var is not None:
            _engine._wait_read(self, "asnumpy")
        d = self._data
        if type(d) is Placeholder:
            raise AbstractValueError("abstract evaluation: the values of an array of shape "
                                     f"{d.shape} {d.dtype} were read")
        if self._ctx.device_type == "cpu":
            return numpy.array(d, copy=True)
        return d.get()

    def asscalar(self):
        """The value of a one-element array as a NumPy scalar."""
        if self.size != 1:
            raise ValueError(f"asscalar: the array has shape {self.shape}; "
                             "only arrays of one element convert to a scalar")
        return self.asnumpy().reshape(-1)[0]

    def item(self, *args):
        """The value of a one-element array (or of the element at ``args``) as a Python scalar."""
        if args:
            return self.asnumpy().item(*args)
        if self.size != 1:
            raise ValueError(f"item: the array has shape {self.shape}; only arrays of one "
                             "element convert to a Python scalar")
        return self.asnumpy().item()

    def tolist(self):
        return self.asnumpy().tolist()

    def wait_to_read(self) -> None:
        """Block until the data is computed: pending engine work that writes this array
        is done (``core.engine``), and on GPU the device has finished.

        Raises:
            core.engine.EngineError: pushed work that wrote this array failed.
        """
        if self._var is not None:
            _engine._wait_read(self, "wait_to_read")
        self._sync_device()

    def wait_to_write(self) -> None:
        """Block until all pending engine work on this array (reads and writes) is done.

        Raises:
            core.engine.EngineError: pushed work that wrote this array failed.
        """
        if self._var is not None:
            _engine._wait_write(self, "wait_to_write")
        self._sync_device()

    def _sync_device(self) -> None:
        if self._ctx.device_type != "cpu":
            with self._ctx.device_guard():
                self._ctx.xp.cuda.get_current_stream().synchronize()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def __dlpack__(self, stream=None, **kwargs):
        if self._var is not None:
            _engine._wait_read(self, "__dlpack__")
        if stream is None:
            return self._data.__dlpack__()
        return self._data.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    # ------------------------------------------------------------------ copies, casts, contexts
    def astype(self, dtype, copy: bool = True) -> NDArray:
        """Cast to ``dtype``; the gradient flows back through the cast."""
        dtype = as_dtype(dtype, "astype")
        if not copy and dtype == self.dtype:
            return self
        return _invoke(_R["cast"], (self,), {"dtype": dtype})

    def copy(self) -> NDArray:
        """A copy on the same context (differentiable)."""
        return _invoke(_R["copy"], (self,), _EMPTY)

    def copyto(self, other):
        """Copy to a context (returns the new array) or into an NDArray (returns it)."""
        if isinstance(other, NDArray):
            if other is self:
                return self
            src = self if other._ctx is self._ctx else self.copyto(other._ctx)
            if tuple(other.shape) != tuple(self.shape):
                raise ValueError(f"copyto: shapes differ: source {self.shape}, "
                                 f"target {other.shape}")
            other[...] = src
            return other
        ctx = as_context(other)
        return _invoke(_R["_copyto"], (self,), {"to": ctx})

    def as_in_context(self, ctx) -> NDArray:
        """This array if it is on ``ctx`` already, else a copy there (differentiable)."""
        ctx = as_context(ctx)
        return self if ctx is self._ctx else self.copyto(ctx)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def detach(self) -> NDArray:
        """The same data, cut from the graph."""
        if type(self._data) is Placeholder and _traced(self, None):
            return _invoke(_R["BlockGrad"], (self,), _EMPTY)  # a graph records the cut
        d = NDArray._make(self._data, self._ctx, None)
        d._var = self._var  # the same memory: the same engine variable
        return d

    # ------------------------------------------------------------------ autograd
    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Allocate a gradient buffer and mark this array as a variable for autograd.

        Args:
            grad_req: ``'write'`` (overwrite on each backward), ``'add'`` (accumulate)
                or ``'null'`` (no gradient).
            stype: the gradient's storage type: ``'default'`` (dense; the default),
                ``'row_sparse'`` or ``'csr'`` (``core.sparse``; ``x.grad.stype``).
        """
        if stype is not None and stype != "default":
            from .sparse import zeros as _sparse_zeros

            g = _sparse_zeros(stype, self.shape, ctx=self._ctx, dtype=self.dtype)
        else:
            g = NDArray._make(self._ctx.xp.zeros(self.shape, self.dtype), self._ctx, None)
        self._attach(g, grad_req)

    def _attach(self, g, grad_req):
        if grad_req not in ("write", "add", "null"):
            raise ValueError(f"attach_grad: grad_req must be 'write', 'add' or 'null', "
                             f"got {grad_req!r}")
        if grad_req == "null":
            self._grad = None
            self._node = None
            return
        self._grad = g
        self._node = (_tape.VarNode(self, grad_req), 0)

    def _receive_grad(self, g, grad_req, create_graph, adopt=False):
        """Write (or add) the gradient ``g`` into ``.grad``.

        ``adopt``: True when the caller holds the only reference to ``g`` besides the
        argument (the backward walker, once it has popped it); ``"owned"`` when it hands
        over the only reference to ``g``'s buffer (a hybridized graph's executor). With
        ``grad_req='write'``, ``.grad`` then takes ``g``'s buffer instead of copying it,
        when nothing else can see either buffer: ``g``'s is fresh (owns its memory,
        C-contiguous, referenced by ``g`` alone) and ``.grad``'s old one is referenced by
        ``.grad`` alone (not a view into a packed buffer, not held by an optimizer or the
        user). ``.grad`` stays the same NDArray, so holders of it see the new values.
        """
        if self._node is not None and type(self._node[0]) is _tape.VarNode:
            self._node[0].fresh = True
        if self._grad is not None and self._grad._var is not None:
            _engine._wait_write(self._grad, "backward")
        if g._is_sparse or (self._grad is not None and self._grad._is_sparse):
            self._receive_sparse_grad(g, grad_req, create_graph)
            return
        refs = 3  # the caller's local, this argument, getrefcount's own
        if g.dtype != self.dtype:
            g = g.astype(self.dtype)
            refs = 2
        if create_graph or self._grad is None:
            self._grad = g if grad_req == "write" or self._grad is None else self._grad + g
            return
        buf = self._grad._data
        if grad_req == "write":
            if adopt and self._grad._var is None and _adoptable(
                    g, refs if adopt is True else None, buf):
                self._grad._data = g._data
            else:
                buf[...] = g._data
        else:
            buf += g._data
        self._grad._version += 1

    @property
    def _fresh_grad(self) -> bool:
        """Whether a backward wrote this variable's gradient since the flag was last set
        False (MXNet's ``_fresh_grad``, which its Trainer reads for stale gradients);
        False for arrays that are not autograd variables."""
        node = self._node
        return bool(node is not None and type(node[0]) is _tape.VarNode and node[0].fresh)

    @_fresh_grad.setter
    def _fresh_grad(self, value: bool) -> None:
        node = self._node
        if node is not None and type(node[0]) is _tape.VarNode:
            node[0].fresh = bool(value)

    def _receive_sparse_grad(self, g, grad_req, create_graph):
        """``_receive_grad`` where ``g`` or ``.grad`` is sparse (``core.sparse``): a sparse
        ``.grad`` keeps its storage type; a dense one takes ``g``'s dense values."""
        if self._grad is None or create_graph:
            self._grad = g if grad_req == "write" or self._grad is None else self._grad + g
        elif self._grad._is_sparse:
            self._grad._take_grad(g, grad_req)
        elif grad_req == "write":
            self._grad._data[...] = g._data
            self._grad._version += 1
        else:
            self._grad._data += g._data
            self._grad._version += 1

    def backward(self, out_grad=None, retain_graph: bool = False, train_mode: bool = True,
                 create_graph: bool = False) -> None:
        """Compute gradients of this array into the marked variables' ``grad``.

        Args:
            out_grad: the gradient of this array (needed when it is not a scalar).
            retain_graph: keep the graph for another backward.
            create_graph: record the backward pass (higher-order gradients).
        """
        from .autograd import backward  # the walker imports this module

        backward(self, out_grad, retain_graph=retain_graph, train_mode=train_mode,
                 create_graph=create_graph)

    # ------------------------------------------------------------------ shape
    def reshape(self, *shape, **kwargs) -> NDArray:
        """Reshape; accepts NumPy style and MXNet's special codes 0, -1, -2, -3, -4.

        Example:
            >>> from core import nd
            >>> nd.zeros((2, 3, 4)).reshape(0, -1).shape
            (2, 12)
        """
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not shape:
            shape = kwargs.pop("shape", None) or kwargs.pop("newshape", ())
        reverse = kwargs.pop("reverse", False)
        kwargs.pop("order", None)
        if kwargs:
            raise TypeError(f"reshape: unexpected arguments {sorted(kwargs)}")
        return _invoke(_R["reshape"], (self,),
                       dict(_R["reshape"].attrs, newshape=tuple(shape), reverse=reverse))

    # MXNet 1.x's shape methods with ``inplace=``: True gives a view sharing this array's
    # memory (MXNet's ``inplace=True``); False (the default) a new array, as MXNet's
    # operators return (our operators may return views; those are copied here).
    def _shape_method(self, opname, inplace, attrs) -> NDArray:
        from .ops.namespace import _call_generic

        res = _call_generic(_R[opname], (self,), attrs)
        if inplace or type(self._data) is Placeholder or type(res._data) is Placeholder:
            return res
        xp = self._ctx.xp
        if getattr(xp, "may_share_memory", None) and xp.may_share_memory(res._data, self._data):
            return _invoke(_R["copy"], (res,), _EMPTY)
        return res

    def flatten(self, inplace: bool = False) -> NDArray:
        """Collapse every axis after the first (MXNet's ``flatten``).

        Args:
            inplace: return a view sharing this array's memory instead of a new array.

        Example:
            >>> from core import nd
            >>> x = nd.zeros((2, 3, 4)); v = x.flatten(inplace=True); c = x.flatten()
            >>> x[0] = 1; v.shape, v[0, 0].item(), c[0, 0].item()
            ((2, 12), 1.0, 0.0)
        """
        return self._shape_method("flatten", inplace, {})

    def squeeze(self, axis=None, inplace: bool = False) -> NDArray:
        """Remove axes of length 1 (all, or ``axis``); ``inplace=True`` gives a view."""
        return self._shape_method("squeeze", inplace, {"axis": axis})

    def expand_dims(self, axis, inplace: bool = False) -> NDArray:
        """Insert an axis of length 1 at ``axis``; ``inplace=True`` gives a view."""
        return self._shape_method("expand_dims", inplace, {"axis": axis})

    def slice(self, begin, end, step=()) -> NDArray:
        """MXNet's ``NDArray.slice``: ``self[begin[0]:end[0]:step[0], ...]`` (``None``
        entries take the whole axis; axes after ``begin`` are kept whole).

        Example:
            >>> from core import nd
            >>> nd.arange(12).reshape(3, 4).slice(begin=(1, 0), end=(3, 4), step=(1, 2)).shape
            (2, 2)
        """
        from .ops.namespace import _call_generic

        return _call_generic(_R["slice"], (self,), {"begin": begin, "end": end, "step": step})

    def to_dlpack_for_read(self):
        """MXNet's ``to_dlpack_for_read``: a DLPack handle of this array's data (shared
        memory), for ``nd.from_dlpack``, ``numpy.from_dlpack``, ``torch.from_dlpack``."""
        if self._var is not None:
            _engine._wait_read(self, "to_dlpack_for_read")
        return _DLPackHandle(self._data)

    def to_dlpack_for_write(self):
        """MXNet's ``to_dlpack_for_write``: as :meth:`to_dlpack_for_read`, after pending
        work on the array is done (the consumer may write the shared memory)."""
        if self._var is not None:
            _engine._wait_write(self, "to_dlpack_for_write")
        return _DLPackHandle(self._data)

    def tostype(self, stype: str) -> NDArray:
        """MXNet's ``tostype``: a copy in storage ``stype`` (``'default'``, or the sparse
        ``'row_sparse'`` and ``'csr'`` of ``core.sparse``; see ``cast_storage``).

        Example:
            >>> from core import nd
            >>> nd.array([[0, 1], [0, 0]]).tostype('row_sparse').indices.asnumpy().tolist()
            [0]
        """
        if stype == "default":
            return self.copy()
        from .sparse import cast_storage

        return cast_storage(self, stype)

    def transpose(self, *axes, **kwargs) -> NDArray:
        if "axes" in kwargs:  # MXNet's fluent transpose(axes=...)
            if axes:
                raise TypeError("transpose: give the axes positionally or as axes=, not both")
            axes = (kwargs.pop("axes"),)
        if kwargs:
            raise TypeError(f"transpose: unexpected arguments {sorted(kwargs)}")
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _invoke(_R["transpose"], (self,), {"axes": tuple(axes) if axes else None})

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d NDArray")
        return self.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d NDArray")
        for i in range(self.shape[0]):
            yield self[i]

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, key):
        return _invoke(_R["_getitem"], (self,), {"key": _norm_key(self, key)})

    def __setitem__(self, key, value):
        if self._var is not None:
            _engine._wait_write(self, "__setitem__")
        if isinstance(value, NDArray) and value._var is not None:
            _engine._wait_read(value, "__setitem__")
        key = _norm_key(self, key)
        if isinstance(value, NDArray) and value._ctx is not self._ctx:
            raise ValueError(f"__setitem__: the value is on {value._ctx} but the array is on "
                             f"{self._ctx}; move it with value.as_in_context({self._ctx})")
        if _tape._state.recording and (self._node is not None or (
                isinstance(value, NDArray) and value._node is not None)) or _traced(self, value):
            if _tape._state.recording:
                self._check_not_leaf("__setitem__")
            elif (key is Ellipsis and isinstance(value, NDArray) and value.shape == self.shape
                  and value.dtype == self.dtype):  # tracing ``x[...] = y``: x becomes y
                self._data = value._data
                return
            res = _invoke(_R["_index_update"], (self, value), {"key": key})
            self._data, self._node = res._data, res._node
            return
        v = value._data if isinstance(value, NDArray) else value
        if type(v) is Placeholder:
            raise AbstractValueError("abstract evaluation: an abstract array was written into "
                                     "a concrete one")
        try:
            try:
                self._data[key] = v
            except ValueError:
                if getattr(v, "size", 0) != 1 or not getattr(v, "ndim", 0):
                    raise
                self._data[key] = v.reshape(())  # MXNet: a 1-element array fills one element
        except (ValueError, TypeError, IndexError) as e:
            raise type(e)(f"__setitem__: cannot assign a value of shape "
                          f"{getattr(v, 'shape', ())} to index {key!r} of an array of shape "
                          f"{self.shape} ({e})") from None
        self._bump()

    def _bump(self):
        self._version += 1
        if self._node is not None and not isinstance(self._node[0], _tape.VarNode):
            self._node = None

    def _check_not_leaf(self, what):
        if self._node is not None and isinstance(self._node[0], _tape.VarNode):
            raise RuntimeError(
                f"{what}: an array that called attach_grad() (shape {self.shape}) cannot be "
                "modified in place while recording; compute a new array instead, or modify "
                "it outside autograd.record()")

    def _inplace(self, name, other):
        if self._var is not None:
            _engine._wait_write(self, f"in-place {name}")
        if isinstance(other, NDArray) and other._var is not None:
            _engine._wait_read(other, f"in-place {name}")
        if _tape._state.recording and (self._node is not None or (
                isinstance(other, NDArray) and other._node is not None)) or _traced(self, other):
            if _tape._state.recording:
                self._check_not_leaf(f"in-place {name}")
            res = _invoke(_R[name], (self, other), _EMPTY)
            if res.shape != self.shape:
                raise ValueError(f"in-place {name}: the result has shape {res.shape}, which "
                                 f"does not fit the array's shape {self.shape}")
            if res.dtype != self.dtype:
                res = res.astype(self.dtype)
            self._data, self._node = res._data, res._node
            return self
        if isinstance(other, NDArray):
            if other._ctx is not self._ctx:
                raise ValueError(f"in-place {name}: the operands are on {self._ctx} and "
                                 f"{other._ctx}; move one with as_in_context")
            o = other._data
        else:
            o = other
        ufunc = getattr(self._ctx.xp, _INPLACE_UFUNCS[name])
        try:
            ufunc(self._data, o, out=self._data, casting="same_kind")
        except TypeError as e:
            raise TypeError(f"in-place {name}: cannot store the result in an array of dtype "
                            f"{self.dtype.name} (operand: {_describe(other)}; {e})") from None
        except ValueError as e:
            raise ValueError(f"in-place {name}: the result does not fit the array's shape "
                             f"{self.shape} (operand: {_describe(other)}; {e})") from None
        self._bump()
        return self

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, o): return _invoke(_R["add"], (self, o), _EMPTY)
    def __radd__(self, o): return _invoke(_R["add"], (o, self), _EMPTY)
    def __sub__(self, o): return _invoke(_R["subtract"], (self, o), _EMPTY)
    def __rsub__(self, o): return _invoke(_R["subtract"], (o, self), _EMPTY)
    def __mul__(self, o): return _invoke(_R["multiply"], (self, o), _EMPTY)
    def __rmul__(self, o): return _invoke(_R["multiply"], (o, self), _EMPTY)
    def __truediv__(self, o): return _invoke(_R["divide"], (self, o), _EMPTY)
    def __rtruediv__(self, o): return _invoke(_R["divide"], (o, self), _EMPTY)
    def __floordiv__(self, o): return _invoke(_R["floor_divide"], (self, o), _EMPTY)
    def __rfloordiv__(self, o): return _invoke(_R["floor_divide"], (o, self), _EMPTY)
    def __mod__(self, o): return _invoke(_R["mod"], (self, o), _EMPTY)
    def __rmod__(self, o): return _invoke(_R["mod"], (o, self), _EMPTY)
    def __pow__(self, o): return _invoke(_R["power"], (self, o), _EMPTY)
    def __rpow__(self, o): return _invoke(_R["power"], (o, self), _EMPTY)
    def __matmul__(self, o): return _invoke(_R["matmul"], (self, o), _R["matmul"].attrs)
    def __rmatmul__(self, o): return _invoke(_R["matmul"], (o, self), _R["matmul"].attrs)
    def __neg__(self): return _invoke(_R["negative"], (self,), _EMPTY)
    def __pos__(self): return self
    def __abs__(self): return _invoke(_R["abs"], (self,), _EMPTY)
    def __invert__(self): return _invoke(_R["bitwise_not"], (self,), _EMPTY)
    def __and__(self, o): return _invoke(_R["bitwise_and"], (self, o), _EMPTY)
    def __rand__(self, o): return _invoke(_R["bitwise_and"], (o, self), _EMPTY)
    def __or__(self, o): return _invoke(_R["bitwise_or"], (self, o), _EMPTY)
    def __ror__(self, o): return _invoke(_R["bitwise_or"], (o, self), _EMPTY)
    def __xor__(self, o): return _invoke(_R["bitwise_xor"], (self, o), _EMPTY)
    def __rxor__(self, o): return _invoke(_R["bitwise_xor"], (o, self), _EMPTY)
    def __eq__(self, o): return _invoke(_R["equal"], (self, o), _EMPTY)
    def __ne__(self, o): return _invoke(_R["not_equal"], (self, o), _EMPTY)
    def __lt__(self, o): return _invoke(_R["less"], (self, o), _EMPTY)
    def __le__(self, o): return _invoke(_R["less_equal"], (self, o), _EMPTY)
    def __gt__(self, o): return _invoke(_R["greater"], (self, o), _EMPTY)
    def __ge__(self, o): return _invoke(_R["greater_equal"], (self, o), _EMPTY)
    def __iadd__(self, o): return self._inplace("add", o)
    def __isub__(self, o): return self._inplace("subtract", o)
    def __imul__(self, o): return self._inplace("multiply", o)
    def __itruediv__(self, o): return self._inplace("divide", o)
    def __ifloordiv__(self, o): return self._inplace("floor_divide", o)
    def __imod__(self, o): return self._inplace("mod", o)
    def __ipow__(self, o): return self._inplace("power", o)
    def __iand__(self, o): return self._inplace("bitwise_and", o)
    def __ior__(self, o): return self._inplace("bitwise_or", o)
    def __ixor__(self, o): return self._inplace("bitwise_xor", o)

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        # MXNet 1.x: an empty array is False; one element is its value; more are ambiguous.
        if self.size == 0:
            return False
        if self.size != 1:
            raise ValueError(f"the truth value of an NDArray of shape {self.shape} is "
                             "ambiguous; use .any() or .all()")
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.asscalar())

    def __int__(self) -> int:
        return int(self.asscalar())

    def __index__(self) -> int:
        if self.ndim != 0 or self.dtype.kind not in "iub":
            raise TypeError("only 0-d integer NDArrays can be used as an index")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.asscalar())

    def __repr__(self) -> str:
        from .np._mode import _flags

        if _flags.array:  # NumPy mode (npx.set_np()): MXNet 2.0 prints as NumPy does
            r = repr(self.asnumpy())
            if self.dtype == numpy.float32:  # the default dtype goes unsaid, as in MXNet
                r = r.replace(", dtype=float32", "")
            return r if self._ctx.device_type == "cpu" else f"{r[:-1]}, device={self._ctx})"
        shape = "x".join(str(s) for s in self.shape)
        head = f"{type(self).__name__} {shape}" if shape else type(self).__name__
        return f"\n{self.asnumpy()}\n<{head} @{self._ctx}>"

    def __str__(self) -> str:
        return self.__repr__()

    def __getstate__(self) -> dict:
        """MXNet's pickled state: ``{'handle': bytearray}``, the array as one record of
        MXNet's binary format (``MXNDArraySaveRawBytes``; ``core.mxnet_format``).

        Example:
            >>> from core import nd
            >>> st = nd.array([1, 2]).__getstate__()
            >>> b = nd.zeros((1,))
            >>> b.__setstate__(st)
            >>> b.asnumpy().tolist()
            [1.0, 2.0]
        """
        from . import mxnet_format
        from .np._mode import is_np_shape

        return {"handle": bytearray(mxnet_format.dumps_array(self.asnumpy(),
                                                             np_shape=is_np_shape()))}

    def __setstate__(self, state: dict) -> None:
        """Take the values of an MXNet pickled state ``{'handle': bytes}`` (see
        :meth:`__getstate__`); an array saved on a GPU loads on ``cpu(0)`` here."""
        from . import mxnet_format

        if not isinstance(state, dict) or "handle" not in state:
            raise TypeError(f"NDArray.__setstate__: expects MXNet's state {{'handle': bytes}}, "
                            f"got {type(state).__name__}")
        arr = mxnet_format.loads_array(bytes(state["handle"]))
        ctx = Context("cpu", 0)
        self._data = ctx.xp.asarray(arr)
        self._ctx = ctx
        self._node = None
        self._grad = None
        self._version = getattr(self, "_version", 0) + 1
        self._var = None

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape) -> bool:
        """Whether ``x[slc_key]`` (one ``slice`` per axis of ``shape``) is one contiguous
        block of ``x``'s row-major memory (MXNet's helper of the same name).

        Example:
            >>> from core.ndarray import NDArray
            >>> NDArray._basic_indexing_slice_is_contiguous((slice(1, 2), slice(None)), (3, 4))
            True
            >>> NDArray._basic_indexing_slice_is_contiguous((slice(None), slice(1, 3)), (3, 4))
            False
        """
        if len(slc_key) != len(shape):
            raise ValueError(f"_basic_indexing_slice_is_contiguous: {len(slc_key)} slices for "
                             f"shape {tuple(shape)}")
        lens = [len(range(*s.indices(n))) for s, n in zip(slc_key, shape)]
        total = 1
        for m in lens:
            total *= m
        if total in (0, 1):
            return True
        subset = False
        for s, n, m in zip(reversed(slc_key), reversed(shape), reversed(lens)):
            step = s.indices(n)[2]
            if m > 1 and step != 1:
                return False
            if subset and m > 1:
                return False
            if m < n:
                subset = True
        return True

    def __reduce__(self):
        # For passing arrays between processes (multiprocessing, as torch tensors and
        # MXNet's NDArray allow): the values and the context, never the autograd graph.
        # Files are written by core.serialization, which loads without pickle.
        return _unpickle, (self.asnumpy(), self._ctx.device_type, self._ctx.device_id)


class _DLPackHandle:
    """What ``to_dlpack_for_read``/``_write`` return: an object with the DLPack protocol
    (MXNet returns a raw capsule; consumers today take objects with ``__dlpack__``)."""

    __slots__ = ("_data",)

    def __init__(self, data):
        self._data = data

    def __dlpack__(self, *args, **kwargs):
        return self._data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()


def _unpickle(data, device_type: str, device_id: int) -> NDArray:
    return array(data, ctx=Context(device_type, device_id), dtype=data.dtype)


_INPLACE_UFUNCS = {"add": "add", "subtract": "subtract", "multiply": "multiply",
                   "divide": "true_divide", "floor_divide": "floor_divide", "mod": "remainder",
                   "power": "power", "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
                   "bitwise_xor": "bitwise_xor"}


def _describe(x) -> str:
    if isinstance(x, NDArray):
        return f"{x.shape} {x.dtype.name}"
    return repr(x)


def _norm_key(arr, key):
    """Replace NDArrays and lists inside an index by raw arrays of ``arr``'s module."""
    if isinstance(key, NDArray):
        return _raw_index(arr, key)
    if isinstance(key, list):
        return _list_index(arr, key)
    if isinstance(key, tuple) and any(isinstance(k, (NDArray, list)) for k in key):
        return tuple(_raw_index(arr, k) if isinstance(k, NDArray)
                     else _list_index(arr, k) if isinstance(k, list) else k
                     for k in key)
    return key


def _list_index(arr, k):
    a = numpy.asarray(k)
    if a.size == 0:
        a = a.astype(numpy.intp)
    return arr._ctx.xp.asarray(a)


def _raw_index(arr, k):
    if k._ctx is arr._ctx:
        d = k._data
    else:
        d = arr._ctx.xp.asarray(k.asnumpy())
    if is_float(d.dtype):
        # MXNet's arrays default to float32, so float index arrays are common there.
        as_int = d.astype(numpy.int64)
        if not bool((as_int == d).all()):
            raise IndexError(f"indexing: a float index array must hold whole numbers "
                             f"(shape {d.shape}); cast it with .astype('int64')")
        d = as_int
    return d


# Methods that forward to registry operators: (method name, operator name).
_METHODS = (
    ("sum", "sum"), ("mean", "mean"), ("prod", "prod"), ("max", "max"), ("min", "min"),
    ("argmax", "argmax"), ("argmin", "argmin"), ("std", "std"), ("var", "var"),
    ("norm", "norm"), ("cumsum", "cumsum"), ("cumprod", "cumprod"), ("all", "all"),
    ("any", "any"), ("nansum", "nansum"), ("nanmean", "nanmean"), ("logsumexp", "logsumexp"),
    ("exp", "exp"), ("expm1", "expm1"), ("log", "log"), ("log1p", "log1p"),
    ("log2", "log2"), ("log10", "log10"), ("sqrt", "sqrt"), ("rsqrt", "rsqrt"),
    ("cbrt", "cbrt"), ("square", "square"), ("reciprocal", "reciprocal"),
    ("abs", "abs"), ("sign", "sign"), ("round", "round"), ("rint", "rint"),
    ("floor", "floor"), ("ceil", "ceil"), ("trunc", "trunc"), ("fix", "fix"),
    ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "arcsin"),
    ("arccos", "arccos"), ("arctan", "arctan"), ("sinh", "sinh"), ("cosh", "cosh"),
    ("tanh", "tanh"), ("arcsinh", "arcsinh"), ("arccosh", "arccosh"),
    ("arctanh", "arctanh"), ("sigmoid", "sigmoid"), ("relu", "relu"),
    ("softsign", "softsign"), ("clip", "clip"), ("swapaxes", "swapaxes"),
    ("moveaxis", "moveaxis"), ("expand_dims", "expand_dims"), ("squeeze", "squeeze"),
    ("flatten", "flatten"), ("ravel", "ravel"), ("broadcast_to", "broadcast_to"),
    ("broadcast_like", "broadcast_like"), ("tile", "tile"), ("repeat", "repeat"),
    ("flip", "flip"), ("sort", "sort"), ("argsort", "argsort"), ("topk", "topk"),
    ("take", "take"), ("pick", "pick"), ("one_hot", "one_hot"), ("dot", "dot"),
    ("slice_axis", "slice_axis"), ("split", "split"), ("diag", "diag"),
    ("zeros_like", "zeros_like"), ("ones_like", "ones_like"), ("softmax", "softmax"),
    ("log_softmax", "log_softmax"),
)


def _bind_methods(registry: dict, invoke) -> None:
    """Attach the registry and the operator-backed methods (called by core.ops)."""
    global _invoke
    _R.update(registry)
    _invoke = invoke
    from .ops.namespace import _call_generic

    for meth, opname in _METHODS:
        op = registry.get(opname)
        if op is None or hasattr(NDArray, meth):
            continue

        def method(self, *args, __op=op, **kwargs):
            return _call_generic(__op, (self,) + args, kwargs)

        method.__name__ = meth
        method.__doc__ = f"Same as the operator ``{opname}`` with this array as first input."
        setattr(NDArray, meth, method)


def array(source, ctx=None, dtype=None) -> NDArray:
    """An NDArray from any array-like (MXNet's ``nd.array``).

    Args:
        source: a list, scalar, NumPy array, NDArray, or anything ``numpy.asarray`` takes;
            a sparse array or a scipy sparse matrix gives a sparse copy (``core.sparse``).
        ctx: the context (default: the current one).
        dtype: the dtype; by default an NDArray keeps its dtype, so do bfloat16 and
            float8 data, and numeric data of any other kind becomes float32 (MXNet's
            default). ``core.np.array`` keeps NumPy arrays' dtypes instead.

    Example:
        >>> from core import nd
        >>> nd.array([1, 2, 3]).dtype
        dtype('float32')
    """
    if (getattr(source, "_is_sparse", False) or type(source).__module__.startswith(
            "scipy.sparse")):  # MXNet's nd.array: a sparse source gives a sparse array
        from .sparse import array as _sparse_array

        return _sparse_array(source, ctx=ctx, dtype=dtype)
    ctx = as_context(ctx)
    if isinstance(source, NDArray):
        src = source.asnumpy() if source._ctx.xp is not ctx.xp else source._data
    elif hasattr(source, "__dlpack__") and not isinstance(source, numpy.ndarray) \
            and ctx.xp is not numpy and type(source).__module__.startswith("cupy"):
        src = source
    else:
        src = numpy.asarray(source)
        # bfloat16/float8 data keeps its dtype (ml_dtypes gives float8_e5m2 kind "f")
        if dtype is None and src.dtype.kind in "iuf" and src.dtype not in ML_FLOATS:
            src = src.astype(numpy.float32)
    if src.dtype.kind in "OUSV" and not is_float(src.dtype):  # bfloat16/float8: kind "V"
        raise TypeError(f"array: cannot make an NDArray from data of dtype {src.dtype} "
                        f"({type(source).__name__}); only numbers and booleans are supported")
    dt = as_dtype(dtype, "array") if dtype is not None else as_dtype(src.dtype, "array")
    xp = ctx.xp
    with ctx.device_guard():
        data = xp.array(src, dtype=dt, copy=True)
    return NDArray._make(data, ctx, None)


def from_dlpack(x, ctx=None) -> NDArray:
    """An NDArray sharing memory with a DLPack-capable array (NumPy, CuPy, torch, ...)."""
    if ctx is None:
        dev = x.__dlpack_device__()[0] if hasattr(x, "__dlpack_device__") else 1
        ctx = Context("gpu", x.__dlpack_device__()[1]) if dev == 2 else Context("cpu", 0)
    ctx = as_context(ctx)
    with ctx.device_guard():
        data = ctx.xp.from_dlpack(x)
    return NDArray._make(data, ctx, None)


def to_dlpack_for_read(x: NDArray):
    return x.__dlpack__()
