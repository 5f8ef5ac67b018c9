"""``Block`` and ``HybridBlock``: the base classes of all layers and models (MXNet Gluon 1.9).

Blocks form a tree: assigning a Block or a Parameter as an attribute registers it.
Names follow MXNet 1.x: a block's prefix is its class name in lower case plus a
counter (``dense0_``, ``dense1_``, ...), counted per enclosing ``name_scope()``, and
its parameters are named ``prefix + name`` (``model0_dense1_weight``); the counters
and scopes are in ``gluon.naming`` (``NameManager`` is re-exported here).
``save_parameters`` uses structural names instead (``features.0.weight``).

A HybridBlock defines either ``hybrid_forward(self, F, x, *args, **params)`` (MXNet
1.x: ``F`` is the operator namespace ``core.nd`` and the block's parameters arrive as
keyword arguments, on the input's context) or a plain ``forward(self, x, *args)``.
``hybridize()`` is accepted and recorded on the block tree; the block still runs
imperatively, so results are identical (graph tracing comes with symbolic mode).

Example:
    >>> from core import nd
    >>> from gluon import HybridBlock
    >>> class Scale(HybridBlock):
    ...     def __init__(self, **kwargs):
    ...         super().__init__(**kwargs)
    ...         with self.name_scope():
    ...             self.alpha = self.params.get("alpha", shape=(1,), init="ones")
    ...     def hybrid_forward(self, F, x, alpha):
    ...         return F.broadcast_mul(x, alpha)
    >>> net = Scale(prefix="scale_")
    >>> net.initialize()
    >>> net(nd.array([1.0, 2.0])).asnumpy().tolist()
    [1.0, 2.0]
    >>> list(net.collect_params().keys())
    ['scale_alpha']
"""
from __future__ import annotations

import re
import warnings
from collections import OrderedDict, defaultdict

from core import initializer, nd, serialization
from core.context import ctx_or_device
from core.dtypes import is_float
from core.ndarray import NDArray
from core.ops.abstract import is_tracing

from . import hybrid
from .model_file import load_model, save_model
from .naming import NameManager, _BlockScope
from .parameter import Parameter, ParameterDict
from .summary import print_summary
from .utils import HookHandle, _brief_print_list, _indent, shape_is_known

__all__ = ["Block", "HybridBlock", "NameManager"]

_DEFAULT_INIT = initializer.Uniform()


def _flatten_arrays(args):
    for a in args:
        if isinstance(a, NDArray):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from _flatten_arrays(a)


def _first_ctx(args):
    for a in _flatten_arrays(args):
        return a.context
    return None


class Block:
    """Base class of all layers and models.

    Subclass it, create children and parameters in ``__init__`` (inside
    ``with self.name_scope():`` for MXNet 1.x names) and define ``forward``.

    Args:
        prefix: the prefix of this block's name and its parameters' names; by default
            the class name in lower case plus a counter (``'model0_'``).
        params: a ParameterDict to share parameters with (e.g. another block's
            ``collect_params()``).

    Example:
        >>> from core import nd
        >>> from gluon import Block, HybridLambda
        >>> class Model(Block):
        ...     def __init__(self, **kwargs):
        ...         super().__init__(**kwargs)
        ...         with self.name_scope():
        ...             self.act = HybridLambda("relu")
        ...     def forward(self, x):
        ...         return self.act(x) * 2
        >>> m = Model(prefix="model_")
        >>> m.act.name
        'model_hybridlambda0'
        >>> m(nd.array([-1.0, 3.0])).asnumpy().tolist()
        [0.0, 6.0]
    """

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix.removesuffix("_")
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self) -> str:
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self._children.items())
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __setattr__(self, name: str, value) -> None:
        """Register child blocks and parameters assigned as attributes."""
        if isinstance(value, (Block, Parameter)) and "_children" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}: call super().__init__() before "
                               f"assigning the {type(value).__name__} '{name}'")
        if name in self.__dict__:
            existing = self.__dict__[name]
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                                f"{type(value)} is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params and self._reg_params[name] is not value:
                raise ValueError(f"Overriding Parameter attribute {name} is not allowed. If "
                                 "you want to share parameters between blocks, please set "
                                 "'params' at Block construction instead.")
            self._reg_params[name] = value
            known = self._params._params.get(value.name)
            if known is None:
                self._params._params[value.name] = value
            elif known is not value:
                raise ValueError(f"{type(self).__name__} '{self.name}': another Parameter "
                                 f"named '{value.name}' is already in this block's params")
        super().__setattr__(name, value)

    def _check_container_with_block(self) -> None:
        children = {id(c) for c in self._children.values()}

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(e) for e in data)
            if isinstance(data, dict):
                return any(unregistered(v) for v in data.values())
            return isinstance(data, Block) and id(data) not in children

        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or
                                                          k == "_children") \
                    and unregistered(v):
                warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container with '
                              "Blocks. Note that Blocks inside the list, tuple or dict will "
                              "not be registered automatically. Make sure to register them "
                              "using register_child() or switching to "
                              "nn.Sequential/nn.HybridSequential instead.", stacklevel=3)

    def _alias(self) -> str:
        return type(self).__name__.lower()

    @property
    def prefix(self) -> str:
        """The prefix of this block's name and of its parameters' names."""
        return self._prefix

    @property
    def name(self) -> str:
        """The name of this block: the prefix without its trailing ``'_'``."""
        return self._name

    def name_scope(self) -> _BlockScope:
        """A ``with`` scope in which new blocks become named children of this one.

        Example:
            >>> from gluon import Block, HybridLambda
            >>> outer = Block(prefix="outer_")
            >>> with outer.name_scope():
            ...     inner = HybridLambda("relu")
            >>> inner.prefix
            'outer_hybridlambda0_'
        """
        return self._scope

    @property
    def params(self) -> ParameterDict:
        """This block's own ParameterDict (without its children's parameters)."""
        return self._params

    def _own_params(self) -> list:
        own = list(self._reg_params.values())
        ids = set(map(id, own))
        own += [p for p in self._params.values() if id(p) not in ids]
        return own

    def collect_params(self, select: str | None = None) -> ParameterDict:
        """The parameters of this block and all its descendants, by full name.

        Args:
            select: a regular expression; only names it matches (``re.match``) are
                kept, e.g. ``'.*weight|.*bias'``.

        Returns:
            A ParameterDict.

        Example:
            >>> from gluon import Block
            >>> b = Block(prefix="net_")
            >>> b.w = b.params.get("weight", shape=(2,))
            >>> b.c = b.params.get("bias", shape=(2,))
            >>> list(b.collect_params(".*weight").keys())
            ['net_weight']
        """
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self._params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self._params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _structural_name(self, name: str) -> str:
        """The structural name of this block's parameter attribute ``name``, relative to
        the block: the attribute name itself, unless a block names its parameters
        otherwise (the fused RNN layers use MXNet 1.9's names). It names the parameters
        in :meth:`_collect_params_with_prefix` (so in ``save_parameters`` and
        ``load_parameters``) and in :meth:`share_parameters`."""
        return name

    def _collect_params_with_prefix(self, prefix: str = "") -> dict:
        """Parameters by structural name (``'features.0.weight'``)."""
        if prefix:
            prefix += "."
        ret = {prefix + self._structural_name(k): v for k, v in self._reg_params.items()}
        registered = set(map(id, ret.values()))
        strip = self._params.prefix
        for full, p in self._params.items():
            # Parameters created with params.get but not kept as attributes.
            if id(p) not in registered:
                short = full[len(strip):] if strip and full.startswith(strip) else full
                ret.setdefault(prefix + short, p)
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename: str, deduplicate: bool = False) -> None:
        """Save the parameters' values under structural names (``'features.0.weight'``).

        Args:
            filename: the file (``.npz`` data whatever the extension, HDF5 for
                ``.h5``/``.hdf5``; see ``core.serialization``). The write is atomic.
            deduplicate: save a parameter shared by several blocks only once.
        """
        params = self._collect_params_with_prefix()
        if deduplicate:
            first = {}
            for k, v in params.items():
                first.setdefault(id(v), (k, v))
            params = dict(first.values())
        serialization.save(filename, {k: v._reduce() for k, v in params.items()})

    def load_parameters(self, filename: str, ctx=None, allow_missing: bool = False,
                        ignore_extra: bool = False, cast_dtype: bool = False,
                        dtype_source: str = "current", device=None) -> None:
        """Load values saved by :meth:`save_parameters`.

        Args:
            filename: the file.
            ctx: context(s) for parameters that are not initialized yet (default
                cpu(0)); initialized ones stay where they are.
            allow_missing: do not complain about parameters missing from the file.
            ignore_extra: do not complain about names in the file that are not
                parameters of this block.
            cast_dtype: cast the loaded values to the parameters' dtypes (or, with
                ``dtype_source='saved'``, the parameters to the saved dtypes).
            dtype_source: ``'current'`` or ``'saved'``.
            device: MXNet 2.0's name for ``ctx``.

        Raises:
            ValueError: naming the missing or extra parameter, or the parameter whose
                shape (both shapes given) or dtype does not match.
        """
        loaded = serialization.load(filename)
        if not isinstance(loaded, dict):
            raise TypeError(f"load_parameters: '{filename}' holds a list of arrays, not "
                             "named parameters")
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, cast_dtype, dtype_source,
                       device=device, _filename=filename)

    def load_dict(self, param_dict: dict, ctx=None, allow_missing: bool = False,
                  ignore_extra: bool = False, cast_dtype: bool = False,
                  dtype_source: str = "current", device=None, _filename=None) -> None:
        """Load parameter values from a dict of arrays keyed by structural names (as
        :meth:`save_parameters` writes them; MXNet 2.0's ``Block.load_dict``).

        Args:
            param_dict: ``{name: array}``; names without structure (MXNet's legacy
                ``ParameterDict.save`` names) are accepted too.
            ctx, allow_missing, ignore_extra, cast_dtype, dtype_source, device: as for
                :meth:`load_parameters`.

        Raises:
            ValueError: naming the missing or extra parameter, or the parameter whose
                shape (both shapes given) or dtype does not match.
        """
        ctx = ctx_or_device(ctx, device, "load_dict")
        loaded = param_dict
        source = f"file '{_filename}'" if _filename else "param_dict"
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded) and not set(loaded) <= set(params):
            # Names without structure: saved by ParameterDict.save (full names minus
            # this block's prefix), as MXNet's legacy format.
            self.collect_params().load_dict(loaded, ctx, allow_missing, ignore_extra,
                                            self.prefix, _filename, cast_dtype, dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)
            for k, v in params.items():
                names_of[id(v)].append(k)
            for name, param in params.items():
                if not any(n in loaded for n in names_of[id(param)]):
                    raise ValueError(
                        f"Parameter '{name}' is missing in {source}, which contains "
                        f"parameters: {_brief_print_list(loaded.keys())}. Set "
                        "allow_missing=True to ignore missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(
                        f"Parameter '{name}' loaded from {source} is not present in "
                        f"this {type(self).__name__}, which contains parameters "
                        f"{_brief_print_list(params.keys())}. Set ignore_extra=True to "
                        "ignore.")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                    dtype_source=dtype_source, name=name)

    def save(self, prefix: str) -> None:
        """Save the structure and parameters to ``prefix-model.json`` and
        ``prefix-model.params`` (MXNet 1.9's ``Block.save``; see :mod:`gluon.model_file`).

        Args:
            prefix: the files' prefix.
        """
        save_model(self, prefix)

    def load(self, prefix: str) -> None:
        """Load what :meth:`save` wrote into this block, created as the saved one was:
        names, children's keys and hybridization are restored, then the parameters
        (MXNet 1.9's ``Block.load``).

        Args:
            prefix: the files' prefix.
        """
        load_model(self, prefix)

    def setattr(self, name: str, value) -> None:
        """Set attribute ``name`` of every parameter (descendants' included) to ``value``,
        e.g. ``net.setattr('grad_req', 'null')`` to freeze a network (MXNet 2.0)."""
        self.collect_params().setattr(name, value)

    def save_params(self, filename: str) -> None:
        """Deprecated: use :meth:`save_parameters`."""
        warnings.warn("save_params is deprecated. Please use save_parameters.",
                      DeprecationWarning, stacklevel=2)
        self.collect_params().save(filename, strip_prefix=self.prefix)

    def load_params(self, filename: str, ctx=None, allow_missing: bool = False,
                    ignore_extra: bool = False) -> None:
        """Deprecated: use :meth:`load_parameters`."""
        warnings.warn("load_params is deprecated. Please use load_parameters.",
                      DeprecationWarning, stacklevel=2)
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block: Block, name: str | None = None) -> None:
        """Register ``block`` as a child (attributes are registered automatically).

        Args:
            block: the child.
            name: its key in the tree (default: its index among the children).
        """
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        """Install an op hook on the HybridBlocks among the descendants (see
        :meth:`HybridBlock.register_op_hook`)."""
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def register_forward_pre_hook(self, hook) -> HookHandle:
        """Call ``hook(block, inputs)`` before each forward.

        Returns:
            A handle whose ``detach()`` removes the hook.
        """
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook) -> HookHandle:
        """Call ``hook(block, inputs, outputs)`` after each forward.

        Returns:
            A handle whose ``detach()`` removes the hook.

        Example:
            >>> from core import nd
            >>> from gluon import HybridLambda
            >>> seen = []
            >>> act = HybridLambda("relu")
            >>> h = act.register_forward_hook(lambda b, i, o: seen.append(o.shape))
            >>> _ = act(nd.zeros((2, 3))); h.detach(); _ = act(nd.zeros((4,)))
            >>> seen
            [(2, 3)]
        """
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn) -> Block:
        """Call ``fn(block)`` on every descendant, then on this block.

        Returns:
            This block.
        """
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=_DEFAULT_INIT, ctx=None, verbose: bool = False,
                   force_reinit: bool = False, device=None) -> None:
        """Initialize the parameters of this block and its descendants
        (``collect_params().initialize(...)``).

        Args:
            init: the default initializer (an Initializer or a registered name such as
                ``'xavier'``); parameters with their own ``init`` use that.
            ctx: a Context or a list of them: every context gets a copy.
            verbose: log each initialized parameter.
            force_reinit: re-initialize parameters that are initialized already.
            device: MXNet 2.0's name for ``ctx`` (give one of the two).
        """
        self.collect_params().initialize(init, ctx, verbose, force_reinit, device=device)

    def zero_grad(self) -> None:
        """Set the gradients of all parameters (descendants' included) to 0."""
        self.collect_params().zero_grad()

    def reset_ctx(self, ctx) -> None:
        """Move all parameters (descendants' included) to ``ctx`` (a Context or a list)."""
        self.collect_params().reset_ctx(ctx)
        self.apply(lambda b: b._clear_cached_op() if isinstance(b, HybridBlock) else None)

    reset_device = reset_ctx

    def share_parameters(self, shared: dict) -> Block:
        """Use the Parameters of ``shared`` (structural name to Parameter, as given by
        another block's ``_collect_params_with_prefix()``) in place of this block's own.

        Returns:
            This block.
        """
        if shared is None:
            return self
        if not isinstance(shared, dict):
            raise TypeError(f"'shared' should be a dict of structural name to Parameter, "
                             f"got {type(shared).__name__}")
        left = set(shared)
        self._share(shared, left, "")
        for name in sorted(left):
            warnings.warn(f"Parameter name {name} is not in the current model!",
                          stacklevel=2)
        return self

    def _share(self, shared, left, prefix):
        """Replace the parameters named in ``shared`` in this block and its descendants,
        discarding the names used from ``left``. A parameter attribute is found by its
        structural name (:meth:`_structural_name`), else by its attribute name."""
        if prefix:
            prefix += "."
        for name, old in list(self._reg_params.items()):
            keys = (prefix + self._structural_name(name), prefix + name)
            key = next((k for k in keys if k in shared), None)
            new = shared[key] if key is not None else None
            if new is None:
                continue
            if not isinstance(new, Parameter):
                raise TypeError(f"share_parameters: '{key}' must be a Parameter, got "
                                f"{type(new).__name__}")
            self._reg_params[name] = new
            object.__setattr__(self, name, new)
            items = [(k, new if v is old else v) for k, v in self._params._params.items()]
            self._params._params = OrderedDict(items)
            left.discard(key)
        for name, child in self._children.items():
            child._share(shared, left, prefix + name)

    def hybridize(self, active: bool = True, **kwargs) -> None:
        """Hybridize the HybridBlocks among the descendants (see
        :meth:`HybridBlock.hybridize`); a plain Block itself runs imperatively."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype) -> None:
        """Cast the parameters of this block and its descendants to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for p in self._own_params():
            p.cast(dtype)

    def __call__(self, *args, **kwargs):
        """Run the forward pre-hooks, :meth:`forward` and the forward hooks."""
        for hook in list(self._forward_pre_hooks.values()):
            hook(self, args)
        out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation, on NDArrays; subclasses define it."""
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def summary(self, *inputs) -> None:
        """Print a table of the layers' output shapes and parameter counts, with totals.

        The block runs once on ``inputs`` (it must be initialized).

        Example:
            >>> from core import nd
            >>> from gluon import HybridLambda
            >>> HybridLambda("relu").summary(nd.zeros((2, 3)))  # doctest: +ELLIPSIS
            --------------------------------------------------------------------------------
                    Layer (type)                                Output Shape         Param #
            ...
               Total params: 0
               Trainable params: 0
               Non-trainable params: 0
            ...
        """
        print_summary(self, *inputs)


class HybridBlock(Block):
    """A Block that can be hybridized (its children must be HybridBlocks too).

    Define either ``hybrid_forward(self, F, x, *args, **params)`` (MXNet 1.x: ``F`` is
    ``core.nd``; the block's parameters are passed by attribute name, with their data
    on ``x``'s context) or a plain ``forward(self, x, *args)``.

    Parameters with unknown shape dimensions and ``allow_deferred_init=True`` are
    initialized on the first call: the block's :meth:`infer_shape` sets their shapes
    from the inputs, then their initialization completes.

    Example:
        >>> from core import nd, initializer
        >>> from gluon import HybridBlock
        >>> class Dense(HybridBlock):
        ...     def __init__(self, units, in_units=0, **kwargs):
        ...         super().__init__(**kwargs)
        ...         with self.name_scope():
        ...             self.weight = self.params.get("weight", shape=(units, in_units),
        ...                                           allow_deferred_init=True)
        ...     def infer_shape(self, x):
        ...         self.weight.shape = (self.weight.shape[0], x.shape[1])
        ...     def hybrid_forward(self, F, x, weight):
        ...         return F.FullyConnected(x, weight, num_hidden=weight.shape[0],
        ...                                 no_bias=True)
        >>> net = Dense(4, prefix="fc_")
        >>> net.initialize(initializer.One())
        >>> net(nd.ones((2, 3))).asnumpy().tolist()
        [[3.0, 3.0, 3.0, 3.0], [3.0, 3.0, 3.0, 3.0]]
        >>> net.weight.shape
        (4, 3)
    """

    def __init__(self, prefix: str | None = None, params: ParameterDict | None = None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._cached_graphs = {}
        self._last_cached = None
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False
        self._backend = None
        self._backend_opts = {}

    def __setattr__(self, name: str, value) -> None:
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def _clear_cached_op(self) -> None:
        """Drop the cached graph (children, dtypes or contexts changed)."""
        self._in_format = None
        self._monitor_graph = None
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._cached_graphs = {}

    def register_child(self, block: Block, name: str | None = None) -> None:
        if not isinstance(block, HybridBlock):
            raise ValueError(  # noqa: TRY004 - MXNet raises ValueError here
                f"Children of HybridBlock must also be HybridBlock, but {block} has type "
                f"{type(block)}. If you are using Sequential, please try HybridSequential "
                "instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def hybridize(self, active: bool = True, backend=None, clear: bool = True,
                  static_alloc: bool = False, static_shape: bool = False,
                  inline_limit: int = 2, forward_bulk_size=None, backward_bulk_size=None,
                  **kwargs) -> None:
        """Activate (or deactivate) hybridization of this block and its descendants.

        The settings are recorded on every HybridBlock of the tree; the computation
        still runs imperatively, with identical results (graph tracing comes with
        symbolic mode).

        Args:
            active: switch hybridization on or off.
            backend: a graph-partitioning backend name (recorded).
            clear: drop cached graphs.
            static_alloc: statically allocate memory (recorded).
            static_shape: optimize for fixed input shapes (recorded).
            inline_limit: the most operators a subgraph may have to be inlined.
            forward_bulk_size: forward bulk-execution segment size (recorded).
            backward_bulk_size: backward bulk-execution segment size (recorded).
            **kwargs: backend options (recorded).
        """
        if kwargs:
            self._backend_opts = kwargs
        self._backend = backend
        self._active = bool(active)
        self._flags = [("static_alloc", static_alloc), ("static_shape", static_shape),
                       ("inline_limit", inline_limit)]
        if forward_bulk_size is not None:
            self._flags.append(("forward_bulk_size", forward_bulk_size))
        if backward_bulk_size is not None:
            self._flags.append(("backward_bulk_size", backward_bulk_size))
        if clear:
            self._clear_cached_op()
        super().hybridize(active, backend=backend, clear=clear, static_alloc=static_alloc,
                          static_shape=static_shape, inline_limit=inline_limit,
                          forward_bulk_size=forward_bulk_size,
                          backward_bulk_size=backward_bulk_size, **kwargs)

    def register_op_hook(self, callback, monitor_all: bool = False) -> None:
        """Call ``callback(node_name, op_name, array)`` for each operator this block's
        hybridized graph runs (MXNet 1.9's op hook; see :func:`gluon.hybrid.monitored_call`
        for the names). Set on this block and its direct children, as in MXNet; it
        takes effect on hybridized calls, which then run node by node.

        Args:
            callback: called with the node's output name (``b'dense0_fwd_output'``),
                the operator name (``b'FullyConnected'``) and the NDArray.
            monitor_all: also report each node's inputs (``b'dense0_fwd_data'``).
        """
        self._callback = callback
        self._monitor_all = bool(monitor_all)
        for child in self._children.values():
            child._callback = callback
            child._monitor_all = bool(monitor_all)

    def cast(self, dtype) -> None:
        self._clear_cached_op()
        super().cast(dtype)

    # ------------------------------------------------------------------ deferred init
    def infer_shape(self, *args) -> None:
        """Set the shapes of this block's parameters that have unknown dimensions,
        from the inputs of the first call.

        Layers with deferred initialization override it (``self.weight.shape =
        (units, x.shape[1])``). The default raises an error naming the block and the
        parameters whose shapes are unknown.
        """
        unknown = [p for p in self._own_params() if not shape_is_known(p.shape)]
        if unknown and type(self).hybrid_forward is not HybridBlock.hybrid_forward:
            try:
                self._symbolic_infer(args, "shape")
            except Exception:  # noqa: BLE001, S110 - the error below names what is missing
                pass
            unknown = [p for p in self._own_params() if not shape_is_known(p.shape)]
        if unknown:
            raise RuntimeError(
                f"{type(self).__name__} block '{self.name}' has parameters with unknown "
                f"shape: {_describe_params(unknown)} (0 or -1 marks an unknown dimension), "
                f"and {type(self).__name__} does not implement infer_shape() to set them "
                "from its inputs. Specify the input size when constructing the block "
                f"(in_units, in_channels, num_features, ...), or implement "
                f"{type(self).__name__}.infer_shape(self, x, *args) to set each parameter's "
                "shape from the first input.")

    def infer_type(self, *args) -> None:
        """Set the dtypes of this block's parameters from the inputs' (MXNet's
        ``infer_type``): through symbolic type inference of ``hybrid_forward`` when the
        block defines it, else parameters not yet initialized take the first floating
        input's dtype."""
        if type(self).hybrid_forward is not HybridBlock.hybrid_forward:
            self._symbolic_infer(args, "dtype")
            return
        floats = [a.dtype for a in _flatten_arrays(args) if is_float(a.dtype)]
        if floats:
            for p in self._own_params():
                if p._data is None:
                    p.dtype = floats[0]

    def _symbolic_infer(self, args, what: str) -> None:
        """MXNet 1.x's deferred inference: run ``hybrid_forward`` with ``F = core.sym`` on
        variables and read the parameters' shapes (or dtypes) off the Symbol."""
        from core import sym

        arrays = list(_flatten_arrays(args))
        names = [f"data{i}" for i in range(len(arrays))]
        ins = [sym.var(n) for n in names]
        params = {k: sym.var(p.name) for k, p in self._reg_params.items()}
        out = self.hybrid_forward(sym, *ins, **params)
        if isinstance(out, (list, tuple)):
            out = sym.Group(list(out))
        if what == "shape":
            known = {n: tuple(a.shape) for n, a in zip(names, arrays)}
            known.update({p.name: tuple(p.shape) for p in self._reg_params.values()
                          if p.shape is not None and shape_is_known(p.shape)})
            arg, _, aux = out.infer_shape_partial(**known)
        else:
            known = {n: a.dtype for n, a in zip(names, arrays)}
            arg, _, aux = out.infer_type_partial(**known)
        found = dict(zip(out.list_arguments(), arg))
        found.update(zip(out.list_auxiliary_states(), aux))
        for p in self._reg_params.values():
            v = found.get(p.name)
            if v is None:
                continue
            if what == "shape" and v and all(d > 0 for d in v) and (
                    p.shape is None or len(p.shape) == len(v)):
                p.shape = tuple(v)
            elif what == "dtype" and p._data is None:
                p.dtype = v

    def _deferred_infer_shape(self, *args) -> None:
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from e

    def _finish_pending_init(self, args) -> None:
        """Complete the deferred initialization of this block's own parameters."""
        pending = [p for p in self._own_params() if p._data is None and p._deferred_init]
        if not pending:
            return
        if not all(shape_is_known(p.shape) for p in pending):
            self._deferred_infer_shape(*args)
            unknown = [p for p in pending if not shape_is_known(p.shape)]
            if unknown:
                raise ValueError(
                    f"Deferred initialization failed because shape cannot be inferred. "
                    f"{type(self).__name__} block '{self.name}': infer_shape() left "
                    f"{_describe_params(unknown)} with unknown dimensions (0 or -1). Specify "
                    "the input size when constructing the block (in_units, in_channels, "
                    "num_features, ...).")
        for p in pending:
            p._finish_deferred_init()

    # ------------------------------------------------------------------ forward
    def __call__(self, *args, **kwargs):
        if hybrid.has_symbol(args):
            if hybrid.composes_symbolically(self):
                return super().__call__(*args, **kwargs)  # hooks, then forward on Symbols
            return hybrid.symbolic_call(self, args)
        if self._active and not is_tracing():
            if self._callback is not None and not kwargs:
                return hybrid.monitored_call(self, args)
            out = hybrid.call_cached(self, args, kwargs)
            if out is not hybrid.NOT_CACHED:
                return out
        elif is_tracing():
            return hybrid.traced_call(self, args, kwargs)
        self._finish_pending_init(args)
        ctx = _first_ctx(args)
        if ctx is None:
            return super().__call__(*args, **kwargs)
        with ctx:
            out = super().__call__(*args, **kwargs)
        if self._active:
            hybrid.trace_after_init(self, args, kwargs)
        return out

    def forward(self, x, *args, **kwargs):
        """Call :meth:`hybrid_forward` with ``F = core.nd`` and the parameters' data on
        the input's context (subclasses may define ``forward`` instead); on Symbols, with
        ``F = core.sym`` and the parameters as variables (MXNet 1.x's symbolic mode: their
        unknown dimensions are inferred when the Symbol is bound)."""
        if hybrid.has_symbol((x, *args)):
            return hybrid.compose_symbol(self, (x, *args), kwargs)
        ctx = _first_ctx((x, *args))
        if ctx is None:
            raise ValueError(f"In HybridBlock {self.name}, there must be one NDArray in the "
                             f"input; got {type(x).__name__}. Please check the type of the "
                             "args.")
        params = {k: v.data(ctx) for k, v in self._reg_params.items()}
        return self.hybrid_forward(nd, x, *args, **params, **kwargs)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation with ``F`` the operator namespace; subclasses define it (or
        ``forward``)."""
        raise NotImplementedError(f"{type(self).__name__} must define hybrid_forward(self, "
                                  "F, x, ...) or forward(self, x, ...)")

    def export(self, path: str, epoch: int = 0, remove_amp_cast: bool = True, *,
               mxnet_compatible: bool = True):
        """Write ``path-symbol.json`` (the traced graph, MXNet's JSON layout) and
        ``path-%04d.params`` (the parameters, ``arg:``/``aux:`` names as in MXNet).

        The block must be hybridized and have run forward once (that call traces it).
        ``SymbolBlock.imports`` reads the files back, and so does real MXNet 1.9
        (``mx.gluon.SymbolBlock.imports``, ``mx.sym.load``): the graph holds only MXNet's
        operators and attributes, and training mode is left to the executor.

        Args:
            path: the files' prefix.
            epoch: the number in the parameter file's name.
            remove_amp_cast: accepted for MXNet's signature (there are no AMP casts).
            mxnet_compatible: refuse operators MXNet 1.9 lacks (the error names the node
                and the operator); False writes them in our own spelling, and the
                files load here only.

        Returns:
            ``(symbol_file, params_file)``.
        """
        from .symbol_block import export

        return export(self, path, epoch, mxnet_compatible=mxnet_compatible)

    def optimize_for(self, x, *args, backend=None, clear: bool = True, static_alloc=False,
                     static_shape=False, **kwargs):
        """MXNet's graph partitioning for a backend. There are no partitioning backends
        here: this hybridizes the block (the optimizer passes always run) and runs it once
        on ``x`` to trace and compile the graph, which is what ``optimize_for`` leaves
        behind in MXNet.
        """
        self.hybridize(True, backend=backend, clear=clear, static_alloc=static_alloc,
                       static_shape=static_shape, **kwargs)
        self(x, *args)


def _describe_params(params) -> str:
    return ", ".join(f"'{p.name}' (shape {tuple(p.shape) if p.shape is not None else None})"
                     for p in params)
