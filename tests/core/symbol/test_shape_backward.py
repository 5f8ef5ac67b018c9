"""Shape inference backwards, as MXNet's operators do it: an input's unknown dimensions
are solved from a known output (FullyConnected's and Convolution's batch and spatial
sizes, Concat's and SliceChannel's inputs, Reshape, the fused RNN's parameter concat),
and an elementwise operand takes the other's known dimensions."""
from core import sym


def _args(s, **shapes):
    arg, _, _ = s.infer_shape(**shapes)
    assert arg is not None, s.infer_shape_partial(**shapes)
    return dict(zip(s.list_arguments(), arg))


def test_elementwise_operands_fill_each_other():
    a = sym.var("a", shape=(0, 10))
    b = sym.var("b", shape=(12, 0))
    got = _args(a + b)
    assert got["a"] == got["b"] == (12, 10)


def test_fully_connected_batch_from_its_output():
    a = sym.var("a", shape=(0, 10))
    d = sym.FullyConnected(data=a, num_hidden=21) + sym.var("c", shape=(5, 0))
    got = _args(d)
    assert got["a"] == (5, 10) and got["c"] == (5, 21)


def test_slice_channel_input_from_one_output():
    a = sym.var("a", shape=(0, 15, 0))
    b = sym.SliceChannel(data=a, num_outputs=3, squeeze_axis=False)
    assert _args(b[1] + sym.var("c", shape=(3, 5, 2)))["a"] == (3, 15, 2)


def test_convolution_batch_and_spatial_sizes():
    a = sym.var("a", shape=(0, 10, 0, 0))
    b = sym.Convolution(data=a, num_filter=21, kernel=(3, 3), pad=(1, 1))
    assert _args(b + sym.var("c", shape=(5, 21, 32, 32)))["a"] == (5, 10, 32, 32)


def test_concat_inputs_share_their_batch():
    a, b = sym.var("a", shape=(0, 10)), sym.var("b", shape=(0, 5))
    d = sym.var("d", shape=(2, 0)) + sym.Concat(a, b, num_args=2, dim=1)
    got = _args(d)
    assert got["a"] == (2, 10) and got["b"] == (2, 5) and got["d"] == (2, 15)


def test_reshape_input_from_its_output():
    w = sym.var("w", shape=(4, 0))
    flat = sym.reshape(w, shape=(-1,))
    assert _args(flat + sym.var("v", shape=(12,)))["w"] == (4, 3)


def test_ambiguous_pieces_stay_unknown():
    a, b = sym.var("a", shape=(0,)), sym.var("b", shape=(0, 2))
    c = sym.Concat(a, sym.reshape(b, shape=(-1,)), dim=0) + sym.var("c", shape=(10,))
    arg, _, _ = c.infer_shape_partial()
    shapes = dict(zip(c.list_arguments(), arg))
    assert shapes["a"] == (0,) and shapes["b"] == (0, 2)  # 10 = a + 2b: no single answer
