"""Activation layers (MXNet Gluon 1.9's ``gluon.nn.activations``).

``Activation`` wraps ``F.Activation`` (relu, sigmoid, tanh, softrelu, softsign, ...);
the others are the parametrized activations: ``LeakyReLU(alpha)``, ``PReLU`` (a learned
slope per channel), ``ELU``, ``SELU``, ``GELU`` (exact or tanh approximation),
``Swish`` and ``SiLU``. All are HybridBlocks written in MXNet 1.x's
``hybrid_forward(self, F, x, ...)`` style.

Example:
    >>> from core import nd
    >>> from gluon import nn
    >>> nn.Activation("relu")(nd.array([-1.0, 2.0])).asnumpy().tolist()
    [0.0, 2.0]
    >>> nn.LeakyReLU(0.1)(nd.array([-1.0, 2.0])).asnumpy().tolist()
    [-0.1, 2.0]
"""
from __future__ import annotations

from core import initializer

from ..block import HybridBlock

__all__ = ["ELU", "GELU", "SELU", "Activation", "LeakyReLU", "PReLU", "SiLU", "Swish"]

_PRELU_INIT = initializer.Constant(0.25)


class Activation(HybridBlock):
    """Applies an activation function (``F.Activation``) to the input.

    The block's name comes from the activation (``relu0``, ``tanh1``, ...), as in MXNet.

    Args:
        activation: the name of the activation: ``'relu'``, ``'sigmoid'``, ``'tanh'``,
            ``'softrelu'``, ``'softsign'`` (also ``'log_sigmoid'``, ``'mish'``).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Inputs:
        data: an array of any shape.

    Outputs:
        out: an array of the same shape.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> act = nn.Activation("tanh")
        >>> act
        Activation(tanh)
        >>> act(nd.zeros((2, 3))).shape
        (2, 3)
    """

    def __init__(self, activation: str, **kwargs):
        if not isinstance(activation, str):
            raise TypeError(f"Activation: activation must be the name of an activation "
                            f"function (a str such as 'relu'), got {activation!r}")
        self._act_type = activation
        super().__init__(**kwargs)

    def _alias(self) -> str:
        return self._act_type

    def hybrid_forward(self, F, x):
        # name="fwd": on Symbols the node is '<prefix>fwd', MXNet 1.9's name
        return F.Activation(x, act_type=self._act_type, name="fwd")

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._act_type})"


class LeakyReLU(HybridBlock):
    """Leaky rectified linear unit: ``x`` for ``x >= 0``, ``alpha * x`` otherwise.

    Args:
        alpha: the slope for negative inputs (>= 0).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.LeakyReLU(0.5)(nd.array([-2.0, 3.0])).asnumpy().tolist()
        [-1.0, 3.0]
    """

    def __init__(self, alpha: float, **kwargs):
        if alpha < 0:
            raise ValueError(f"LeakyReLU: the slope coefficient alpha must be no less than 0, "
                             f"got {alpha}")
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="leaky", slope=self._alpha)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._alpha})"


class PReLU(HybridBlock):
    """Parametric leaky ReLU: ``x`` for ``x >= 0``, ``alpha * x`` otherwise, with ``alpha``
    learned (He et al., 2015).

    Args:
        alpha_initializer: the initializer of ``alpha`` (default ``Constant(0.25)``).
        in_channels: the number of slopes: 1 (shared) or the number of channels (axis 1
            of the input).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Parameters:
        alpha: shape ``(in_channels,)``.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> act = nn.PReLU()
        >>> act.initialize()
        >>> act(nd.array([-2.0, 3.0])).asnumpy().tolist()
        [-0.5, 3.0]
    """

    def __init__(self, alpha_initializer=_PRELU_INIT, in_channels: int = 1,
                 **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.alpha = self.params.get("alpha", shape=(in_channels,), init=alpha_initializer)

    def hybrid_forward(self, F, x, alpha):
        return F.LeakyReLU(x, gamma=alpha, act_type="prelu")

    def __repr__(self) -> str:
        return type(self).__name__


class ELU(HybridBlock):
    """Exponential linear unit (Clevert et al., 2016): ``x`` for ``x > 0``, ``alpha *
    (exp(x) - 1)`` otherwise.

    Args:
        alpha: the scale of the negative part.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.ELU()(nd.array([0.0, 2.0])).asnumpy().tolist()
        [0.0, 2.0]
    """

    def __init__(self, alpha: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self._alpha = alpha

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="elu", slope=self._alpha)


class SELU(HybridBlock):
    """Scaled exponential linear unit (Klambauer et al., 2017).

    Args:
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type="selu")


class GELU(HybridBlock):
    """Gaussian error linear unit (Hendrycks and Gimpel, 2016): ``x * Phi(x)``.

    Args:
        approximation: ``'erf'`` (exact) or ``'tanh'`` (the tanh approximation).
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.GELU()(nd.array([0.0])).asnumpy().tolist()
        [0.0]
    """

    def __init__(self, approximation: str = "erf", **kwargs):
        if approximation not in ("erf", "tanh"):
            raise ValueError(f"GELU: unsupported approximation {approximation!r}; the "
                             "supported values are 'erf' and 'tanh'")
        super().__init__(**kwargs)
        self._act_algorithm = "gelu" if approximation == "erf" else "gelu_tanh"

    def hybrid_forward(self, F, x):
        return F.LeakyReLU(x, act_type=self._act_algorithm)


class Swish(HybridBlock):
    """Swish (Ramachandran et al., 2017): ``x * sigmoid(beta * x)``.

    Args:
        beta: the scale inside the sigmoid.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> nn.Swish()(nd.array([0.0, 1.0])).asnumpy().round(4).tolist()
        [0.0, 0.7311]
    """

    def __init__(self, beta: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self._beta = beta

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(self._beta * x)


class SiLU(HybridBlock):
    """Sigmoid linear unit: ``x * sigmoid(x)`` (Swish with ``beta=1``).

    Args:
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)

    def hybrid_forward(self, F, x):
        return x * F.sigmoid(x)
