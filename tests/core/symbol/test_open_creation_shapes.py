"""MXNet 1.x's creation operators with 0 ("unknown") dims in ``shape`` on Symbols: shape
inference fills them, and bind/eval run them at the inferred shape
(core.symbol.shape_infer.open_creation_shape / close_creation_shapes)."""
import numpy
import pytest

from core import nd, sym
from core.symbol.shape_infer import close_creation_shapes, open_creation_shape


def _rnn_step():
    """One RNN step whose state starts as sym.zeros(shape=(0, 4))."""
    h = sym.zeros(shape=(0, 4), name="h0")
    i2h = sym.FullyConnected(sym.var("x"), num_hidden=4, name="i2h")
    h2h = sym.FullyConnected(h, num_hidden=4, name="h2h")
    return sym.Activation(i2h + h2h, act_type="tanh", name="out")


@pytest.mark.parametrize("batch", [1, 3])
def test_zero_dims_are_inferred_from_the_graph(batch):
    out = _rnn_step()
    args, outs, _ = out.infer_shape(x=(batch, 5))
    assert outs == [(batch, 4)]
    assert dict(zip(out.list_arguments(), args))["h2h_weight"] == (4, 4)


def test_eval_and_bind_run_the_zeros_at_the_inferred_shape():
    out = _rnn_step()
    rng = numpy.random.default_rng(0)
    vals = {n: nd.array(rng.standard_normal(s).astype("float32"))
            for n, s in zip(out.list_arguments(), out.infer_shape(x=(3, 5))[0])}
    got = out.eval(**vals)[0].asnumpy()
    x, w, b = (vals[k].asnumpy() for k in ("x", "i2h_weight", "i2h_bias"))
    want = numpy.tanh(x @ w.T + b + vals["h2h_bias"].asnumpy())  # h0 is zeros
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    ex = out.bind(None, vals)
    numpy.testing.assert_allclose(ex.forward()[0].asnumpy(), want, rtol=1e-5, atol=1e-6)
    ex2 = out.simple_bind(None, x=(3, 5))
    assert ex2.forward()[0].shape == (3, 4)


def test_undetermined_zero_dims_give_a_clear_error():
    z = sym.zeros(shape=(0, 3), name="lonely")
    y = sym.var("x") * 2 + sym.sum(z)
    assert y.infer_shape(x=(2,))[1] == [(2,)]  # the sum's shape does not need z's
    with pytest.raises(ValueError, match=r"eval: node 'lonely' \(zeros\) has shape \(0, 3\)"):
        y.eval(x=nd.ones((2,)))


def test_only_composed_creation_nodes_are_open():
    composed = sym.zeros(shape=(0, 3)).outputs[0].node
    full = sym.ones(shape=(2, 3)).outputs[0].node
    assert open_creation_shape(composed) == (None, 3)
    assert open_creation_shape(full) is None
    g = (sym.var("x") + sym.ones(shape=(2, 3))).graph
    assert close_creation_shapes(g, {"x": (2, 3)}) is g  # nothing to fill: unchanged


def test_broadcast_operands_without_open_nodes_stay_unknown():
    # the fill of a size-1 dimension is for operands fed by open creation nodes only:
    # a real broadcast tells nothing about the unknown batch
    y = sym.broadcast_add(sym.var("data"), sym.var("b"))
    args, _, _ = y.infer_shape_partial(data=(0, 4), b=(1, 4))
    assert args[0] == (0, 4)
