"""MXNet 1.9's rules for calling a HybridBlock (gluon/hybrid.py, gluon/block.py): no
mixing of Symbols and NDArrays; once hybridized, inputs are arrays, None or (nested)
lists only, on one context, in the argument structure of the first call (trailing None
arguments may come and go); summary refuses a hybridized block; LayerNorm's error."""
import numpy as np
import pytest

from core import context, nd, sym
from core.ops.dispatch import MXNetError
from gluon import HybridBlock, nn


class _Add(HybridBlock):
    def hybrid_forward(self, F, a, b=None):
        if isinstance(a, (list, tuple)):
            a = a[0] + a[1]
        return a if b is None else a + b


def test_mixing_symbols_and_ndarrays_is_a_value_error():
    for args in ((nd.ones((2,)), sym.var("a")), (sym.var("a"), nd.ones((2,)))):
        with pytest.raises(ValueError, match="all Symbols or all NDArrays"):
            _Add()(*args)


def test_hybridized_inputs_must_be_arrays_none_or_lists():
    net = _Add()
    net(nd.ones((2,)), 1)  # imperatively a scalar is fine
    net.hybridize()
    with pytest.raises(ValueError, match="must be .nested. list of Symbol or NDArray"):
        net(nd.ones((2,)), 1)
    out = net([nd.ones((2,)), nd.ones((2,))], nd.ones((2,)))
    np.testing.assert_array_equal(out.asnumpy(), [3.0, 3.0])


def test_hybridized_argument_structure_is_fixed_until_hybridize_again():
    net = _Add()
    net.hybridize()
    net(nd.ones((2,)))
    np.testing.assert_array_equal(net(nd.ones((2,)), None).asnumpy(), [1.0, 1.0])  # trailing
    with pytest.raises(ValueError, match=r"Stored format = \(0,\), input format = \(0, 0\)"):
        net(nd.ones((2,)), nd.ones((2,)))
    net.hybridize()  # clears the cache: a new structure is accepted
    np.testing.assert_array_equal(net(nd.ones((2,)), nd.ones((2,))).asnumpy(), [2.0, 2.0])


def test_hybridized_inputs_on_several_contexts_raise():
    net = _Add()
    net.hybridize()
    with pytest.raises(ValueError, match="multiple contexts"):
        net(nd.ones((2,), ctx=context.cpu(1)), nd.ones((2,), ctx=context.cpu(2)))


def test_summary_of_a_hybridized_block_raises_assertion_error(capsys):
    net = nn.HybridSequential()
    net.add(nn.Dense(3))
    net.initialize()
    net.summary(nd.ones((2, 4)))
    assert "Total params: 15" in capsys.readouterr().out
    net.hybridize()
    with pytest.raises(AssertionError, match="must not be hybridized"):
        net.summary(nd.ones((2, 4)))
    assert not net[0]._forward_hooks


@pytest.mark.parametrize("hybridize", [False, True])
def test_layernorm_of_the_wrong_size_raises_mxnet_error(hybridize):
    layer = nn.LayerNorm(in_channels=10)
    layer.initialize()
    if hybridize:
        layer.hybridize()
    with pytest.raises(MXNetError, match=r"gamma has shape \(10,\) but must have shape \(11,\)"):
        layer(nd.ones((2, 11)))
    with pytest.raises(ValueError):  # and a ValueError, as every bad input here
        layer(nd.ones((2, 11)))
