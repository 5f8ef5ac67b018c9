"""autograd.grad (not backward) through a hybridized block's CachedOp."""
import numpy as np
import pytest

from core import autograd, nd


@pytest.mark.xfail(strict=True, raises=TypeError, reason=(
    "core/autograd.py: the default VjpContext.deliver, _no_delivery(i, g), takes two "
    "arguments but core/symbol/cached_op.py's sink calls c.deliver(i, grad, owned) with "
    "three, so autograd.grad through a CachedOp raises TypeError (kbackend's train step "
    "and tests/kbackend/test_distribution_multiprocess.py fail on it)"))
def test_grad_of_hybridized_block_parameters():
    from gluon import nn

    net = nn.Dense(3, in_units=4)
    net.initialize()
    net.hybridize()
    x = nd.array(np.ones((2, 4)))
    net(x)
    params = [p.data() for p in net.collect_params().values()]
    with autograd.record():
        y = net(x).sum()
    grads = autograd.grad(y, params)
    np.testing.assert_allclose(grads[0].asnumpy(), np.full((3, 4), 2.0))
    np.testing.assert_allclose(grads[1].asnumpy(), np.full((3,), 2.0))
