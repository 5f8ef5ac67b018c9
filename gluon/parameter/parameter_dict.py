"""``ParameterDict``: the Parameters of a Block by full name (MXNet Gluon 1.9;
re-exported by ``gluon.parameter``)."""
from __future__ import annotations

import copy
from collections import OrderedDict

import numpy

from core import initializer, serialization
from core.context import ctx_or_device
from core.dtypes import as_dtype
from core.ndarray import NDArray

from ..utils import _brief_print_list, _indent
from .parameter import _DEFAULT_INIT, Constant, Parameter, _merge_shapes, _norm_shape

__all__ = ["ParameterDict"]


class ParameterDict:
    """An ordered dictionary of Parameters, by full name.

    Args:
        prefix: prepended to the names of parameters created by :meth:`get`.
        shared: a ParameterDict to take parameters from before creating new ones
            (weight sharing between Blocks).

    Example:
        >>> from gluon import ParameterDict
        >>> pd = ParameterDict("net_")
        >>> w = pd.get("weight", shape=(2, 3))
        >>> w.name, pd.get("weight") is w, list(pd.keys())
        ('net_weight', True, ['net_weight'])
    """

    def __init__(self, prefix: str = "", shared: ParameterDict | None = None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self) -> str:
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key: str) -> Parameter:
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self) -> int:
        return len(self._params)

    def __contains__(self, key) -> bool:
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self) -> str:
        """Prepended to the names of parameters created with :meth:`get`."""
        return self._prefix

    def _get_impl(self, name: str):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name: str, **kwargs) -> Parameter:
        """The parameter ``prefix + name``: found here, in ``shared``, or created.

        Args:
            name: the name without the prefix.
            **kwargs: :class:`Parameter` arguments for a new parameter; for an existing
                one they must agree with its attributes (unknown shape dimensions are
                filled in; unset attributes are set).

        Returns:
            The Parameter.

        Raises:
            ValueError: an argument disagrees with the existing parameter's attribute.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            param = Parameter(name, **kwargs)
            self._params[name] = param
            return param
        for k, v in kwargs.items():
            if v is None:
                continue
            if k == "allow_deferred_init":
                param._allow_deferred_init = param._allow_deferred_init or bool(v)
                continue
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape":
                merged = _merge_shapes(existing, _norm_shape(v))
                if merged is not None:
                    param._shape = merged
                    continue
            elif k == "dtype":
                if as_dtype(v) == existing:
                    continue
            elif _same(v, existing):
                continue
            raise ValueError(f"Cannot retrieve Parameter '{name}' because desired attribute "
                             f"does not match with stored for attribute '{k}': desired "
                             f"'{v}' vs stored '{existing}'.")
        return param

    def get_constant(self, name: str, value=None) -> Constant:
        """The Constant ``prefix + name``: found here, in ``shared``, or created from
        ``value``.

        Raises:
            KeyError: not found and no ``value`` given.
            ValueError: it exists but is not a Constant or has another value.
        """
        name = self._prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you "
                               "want to create a new constant.")
            param = Constant(name, value)
            self._params[name] = param
        elif value is not None:
            if not isinstance(param, Constant):
                raise ValueError(f"Parameter '{name}' already exists but it is not a "
                                 "constant.")
            v = value.asnumpy() if isinstance(value, NDArray) else numpy.asarray(value)
            if tuple(param.shape) != v.shape or not (param.value.asnumpy() == v).all():
                raise ValueError(f"Constant '{name}' already exists but its value doesn't "
                                 "match the new value")
        return param

    def update(self, other) -> None:
        """Add the parameters of ``other`` (a ParameterDict or dict) to this one.

        Raises:
            ValueError: a name is taken by another Parameter.
        """
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ValueError("Cannot update self with other because they have different "
                                 f"Parameters with the same name '{k}'")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=_DEFAULT_INIT, ctx=None, verbose: bool = False,
                   force_reinit: bool = False, device=None) -> None:
        """Initialize every parameter (see :meth:`Parameter.initialize`).

        Args:
            init: the default initializer (an Initializer or a registered name);
                parameters with their own ``init`` use that instead.
            ctx: a Context or a list of them.
            verbose: log each initialized parameter.
            force_reinit: re-initialize parameters that are initialized already.
            device: MXNet 2.0's name for ``ctx``.
        """
        ctx = ctx_or_device(ctx, device, "ParameterDict.initialize")
        init = initializer.create(init)
        if verbose:  # on a copy: the default initializer is shared
            init = copy.copy(init).set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self) -> None:
        """Set all gradient buffers to 0."""
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx) -> None:
        """Move all parameters to ``ctx`` (a Context or a list)."""
        for p in self.values():
            p.reset_ctx(ctx)

    def reset_device(self, device) -> None:
        """MXNet 2.0's name for :meth:`reset_ctx`."""
        self.reset_ctx(device)

    def list_ctx(self) -> list:
        """All contexts any parameter is initialized on."""
        out = []
        for p in self.values():
            for c in p.list_ctx():
                if c not in out:
                    out.append(c)
        return out

    def setattr(self, name: str, value) -> None:
        """Set attribute ``name`` of every parameter, e.g. ``setattr('grad_req', 'null')``."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename: str, strip_prefix: str = "") -> None:
        """Save the parameters' values, named by their full names minus ``strip_prefix``.

        Raises:
            ValueError: a name does not start with ``strip_prefix``.
        """
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(
                    f"Prefix '{strip_prefix}' is to be striped before saving, but "
                    f"Parameter's name '{param.name}' does not start with '{strip_prefix}'. "
                    "This may be due to your Block shares parameters from other Blocks or "
                    "you forgot to use 'with name_scope()' when creating child blocks.")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        serialization.save(filename, arg_dict)

    def load(self, filename: str, ctx=None, allow_missing: bool = False,
             ignore_extra: bool = False, restore_prefix: str = "", cast_dtype: bool = False,
             dtype_source: str = "current") -> None:
        """Load values saved by :meth:`save` (or ``Block.save_parameters``).

        Args:
            filename: the file.
            ctx: context(s) for parameters that are not initialized yet.
            allow_missing: skip parameters missing from the file.
            ignore_extra: skip names in the file that are not parameters here.
            restore_prefix: prepended to the names in the file.
            cast_dtype: cast loaded values to the parameters' dtypes (or, with
                ``dtype_source='saved'``, the parameters to the saved dtypes).
            dtype_source: ``'current'`` or ``'saved'``.
        """
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ValueError(f"restore_prefix is '{restore_prefix}' but Parameters "
                                     f"name '{name}' does not start with '{restore_prefix}'.")
        loaded = serialization.load(filename)
        self.load_dict(loaded, ctx, allow_missing, ignore_extra, restore_prefix, filename,
                       cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing: bool = False,
                  ignore_extra: bool = False, restore_prefix: str = "", filename=None,
                  cast_dtype: bool = False, dtype_source: str = "current") -> None:
        """Load values from a dict of name to NDArray (``arg:``/``aux:`` prefixes are
        dropped); arguments as :meth:`load`."""
        if isinstance(param_dict, dict):
            loaded = [(k[4:] if k.startswith(("arg:", "aux:")) else k, v)
                      for k, v in param_dict.items()]
        else:
            loaded = list(param_dict)
        arg_dict = {restore_prefix + k: v for k, v in loaded}
        where = f"file '{filename}'" if filename else "param_dict"
        lprefix = len(restore_prefix)
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ValueError(
                        f"Parameter '{name[lprefix:]}' is missing in {where}, which contains "
                        f"parameters: {_brief_print_list(k[lprefix:] for k in arg_dict)}. "
                        "Set allow_missing=True to ignore missing parameters, or make sure "
                        "source and target networks have the same prefix.")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise ValueError(
                        f"Parameter '{name[lprefix:]}' loaded from {where} is not present in "
                        f"ParameterDict, choices are: {_brief_print_list(self._params)}. Set "
                        "ignore_extra=True to ignore, or make sure source and target "
                        "networks have the same prefix.")
                continue
            self._params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                          dtype_source=dtype_source)


def _same(a, b) -> bool:
    try:
        eq = a == b
        return bool(eq) if not isinstance(eq, NDArray) else False
    except Exception:  # noqa: BLE001 - incomparable values are different
        return False
