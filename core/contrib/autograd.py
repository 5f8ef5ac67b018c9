"""MXNet 1.x's ``mx.contrib.autograd``: the autograd API from before ``mx.autograd``.

``train_section()`` turns recording *and* training on (``test_section()`` both off);
``mark_variables`` attaches gradient buffers; ``compute_gradient``/``backward`` run
the backward pass; ``grad_and_loss(func)``/``grad(func)`` wrap a function so that
calling it returns the gradients of its arguments. Everything runs on
:mod:`core.autograd`'s tape.

Example:
    >>> from core import nd
    >>> from core.contrib import autograd
    >>> df = autograd.grad(lambda x: x * x)
    >>> df(nd.array([1.0, 3.0]))[0].asnumpy().tolist()
    [2.0, 6.0]
"""
from __future__ import annotations

import functools

from .. import autograd as _ag
from .. import tape as _tape
from ..ndarray import NDArray

__all__ = ["TrainingStateScope", "backward", "compute_gradient", "grad", "grad_and_loss",
           "mark_variables", "set_is_training", "test_section", "train_section"]


def set_is_training(is_train: bool) -> bool:
    """Turn training mode and recording on or off together (MXNet 1.x semantics).

    Args:
        is_train: True to record and train, False for neither.

    Returns:
        The previous state (the previous recording flag, as MXNet returns).

    Example:
        >>> prev = set_is_training(True)
        >>> from core import autograd as ag
        >>> ag.is_recording(), ag.is_training()
        (True, True)
        >>> _ = set_is_training(prev)
    """
    _tape.set_training(bool(is_train))
    return bool(_tape.set_recording(bool(is_train)))


class TrainingStateScope:
    """A ``with`` scope that sets the training/recording state and restores it on exit.

    Args:
        enter_state: the state inside the scope (True: record and train).

    Example:
        >>> from core import autograd as ag
        >>> with TrainingStateScope(True):
        ...     ag.is_recording()
        True
    """

    def __init__(self, enter_state: bool):
        self._enter_state = bool(enter_state)
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, ptype, value, trace):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section() -> TrainingStateScope:
    """A scope that records operations for gradients, in training mode.

    Returns:
        A :class:`TrainingStateScope` entering state True.

    Example:
        >>> from core import nd
        >>> x = nd.array([2.0]); g = nd.zeros((1,))
        >>> mark_variables([x], [g])
        >>> with train_section():
        ...     y = x * x
        >>> compute_gradient([y]); g.asnumpy().tolist()
        [4.0]
    """
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """A scope (usually inside ``train_section``) that neither records nor trains.

    Returns:
        A :class:`TrainingStateScope` entering state False.

    Example:
        >>> from core import autograd as ag
        >>> with train_section():
        ...     with test_section():
        ...         ag.is_recording()
        False
    """
    return TrainingStateScope(False)


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Attach gradient buffers to arrays so that backward writes their gradients there.

    Args:
        variables: a list of NDArrays.
        gradients: a list of NDArrays of the same shapes (the buffers).
        grad_reqs: ``'write'``, ``'add'`` or ``'null'``, one for all or one per variable.

    Example:
        >>> from core import nd
        >>> x = nd.ones((2,)); g = nd.zeros((2,))
        >>> mark_variables([x], [g], "add")
    """
    _ag.mark_variables(variables, gradients, grad_reqs)


def backward(outputs, out_grads=None, retain_graph: bool = False) -> None:
    """Compute the gradients of ``outputs`` into the marked variables' buffers.

    Args:
        outputs: a list or tuple of NDArrays.
        out_grads: their head gradients (a list, entries may be None), or None for ones.
        retain_graph: keep the recorded graph for another backward.

    Example:
        >>> from core import nd
        >>> x = nd.array([3.0]); g = nd.zeros((1,))
        >>> mark_variables([x], [g])
        >>> with train_section():
        ...     y = 2 * x
        >>> backward([y], [nd.array([5.0])]); g.asnumpy().tolist()
        [10.0]
    """
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(f"contrib.autograd.backward: outputs must be a list or tuple of "
                        f"NDArrays, got {type(outputs).__name__}")
    if out_grads is not None:
        if len(out_grads) != len(outputs):
            raise ValueError(f"contrib.autograd.backward: {len(outputs)} outputs but "
                             f"{len(out_grads)} out_grads; give one per output")
        out_grads = list(out_grads)
    _ag.backward(list(outputs), out_grads, retain_graph=retain_graph)


def compute_gradient(outputs) -> None:
    """Deprecated name of :func:`backward` with default head gradients.

    Args:
        outputs: a list of NDArrays.

    Example:
        >>> from core import nd
        >>> x = nd.array([1.0]); g = nd.zeros((1,))
        >>> mark_variables([x], [g])
        >>> with train_section():
        ...     y = x + x
        >>> compute_gradient([y]); g.asnumpy().tolist()
        [2.0]
    """
    backward(outputs)


def _argnums(argnum, nargs: int) -> list:
    nums = argnum if isinstance(argnum, list) else [argnum]
    for i in nums:
        if not isinstance(i, int) or not -nargs <= i < nargs:
            raise IndexError(f"contrib.autograd.grad_and_loss: argnum {i!r} is not an "
                             f"argument index of a call with {nargs} arguments")
    return nums


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so that a call returns ``(gradients of its arguments, its output)``.

    Args:
        func: the forward (loss) function of NDArrays.
        argnum: the index (int) or indices (list) of the arguments to differentiate;
            None for all.

    Returns:
        A function returning ``(grads, outputs)``, ``grads`` a list of NDArrays.

    Example:
        >>> from core import nd
        >>> f = grad_and_loss(lambda x, y: x * y, argnum=1)
        >>> grads, out = f(nd.array([2.0]), nd.array([5.0]))
        >>> grads[0].asnumpy().tolist(), out.asnumpy().tolist()
        ([2.0], [10.0])
    """
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in _argnums(argnum, len(args))]
        for i, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise TypeError(f"contrib.autograd.grad_and_loss({getattr(func, '__name__', func)}"
                                f"): differentiated argument {i} must be an NDArray, got "
                                f"{type(x).__name__}")
        grads = [_zeros_like(x) for x in variables]
        mark_variables(list(variables), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else list(outputs))
        return grads, outputs
    return wrapped


def _zeros_like(x: NDArray) -> NDArray:
    from .. import nd

    return nd.zeros(x.shape, ctx=x.context, dtype=x.dtype)


def grad(func, argnum=None):
    """Wrap ``func`` so that a call returns the gradients of its arguments.

    Args:
        func: the forward (loss) function of NDArrays.
        argnum: the index (int) or indices (list) of the arguments to differentiate;
            None for all.

    Returns:
        A function returning a list of NDArrays (one gradient per chosen argument).

    Example:
        >>> from core import nd
        >>> g = grad(lambda x: (x * x).sum())
        >>> g(nd.array([1.0, 2.0]))[0].asnumpy().tolist()
        [2.0, 4.0]
    """
    grad_with_loss_func = grad_and_loss(func, argnum)

    @functools.wraps(grad_with_loss_func)
    def wrapped(*args):
        return grad_with_loss_func(*args)[0]
    return wrapped
