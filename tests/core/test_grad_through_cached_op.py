"""autograd.grad (not backward) through a hybridized block's CachedOp."""
import numpy as np

from core import autograd, nd


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
