"""core.initializer: statistics, name dispatch, registry, reproducibility."""
import logging

import numpy
import pytest

import core
from core import cpu, initializer, nd, serialization
from core.initializer import InitDesc


def _init(init, shape, name="x_weight", dtype="float32", ctx=None):
    arr = nd.zeros(shape, dtype=dtype, ctx=ctx)
    init(InitDesc(name), arr)
    return arr.asnumpy().astype(numpy.float64)


@pytest.mark.parametrize("shape", [(200, 300), (64, 32, 3, 3)])
@pytest.mark.parametrize("factor_type", ["avg", "in", "out"])
def test_xavier_uniform_bounds_and_variance(shape, factor_type):
    core.random.seed(0)
    w = _init(initializer.Xavier(factor_type=factor_type, magnitude=3), shape)
    hw = numpy.prod(shape[2:]) if len(shape) > 2 else 1
    fan_in, fan_out = shape[1] * hw, shape[0] * hw
    factor = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    scale = numpy.sqrt(3 / factor)
    assert numpy.abs(w).max() <= scale
    assert abs(w.var() / (scale ** 2 / 3) - 1) < 0.05  # var of U(-s, s) is s^2 / 3
    assert abs(w.mean()) < 0.05 * scale


def test_xavier_gaussian_and_msra_variance():
    core.random.seed(1)
    w = _init(initializer.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2),
              (300, 400))
    assert abs(w.var() / (2 / 400) - 1) < 0.05
    w = _init(initializer.MSRAPrelu(factor_type="in", slope=0.0), (128, 64, 3, 3))
    assert abs(w.var() / (2 / (64 * 9)) - 1) < 0.05
    w = _init(initializer.MSRAPrelu(), (300, 100))
    assert abs(w.var() / (2 / 1.0625 / 200) - 1) < 0.05


def test_xavier_errors():
    with pytest.raises(ValueError, match=r"'fc_weight'.*\(5,\).*at least 2 dimensions"):
        _init(initializer.Xavier(), (5,), name="fc_weight")
    with pytest.raises(ValueError, match="factor_type"):
        initializer.Xavier(factor_type="sum")
    with pytest.raises(ValueError, match="rnd_type"):
        initializer.Xavier(rnd_type="normal")


def test_uniform_and_normal_statistics():
    core.random.seed(2)
    w = _init(initializer.Uniform(0.5), (100, 100))
    assert numpy.abs(w).max() <= 0.5 and abs(w.var() / (0.25 / 3) - 1) < 0.05
    w = _init(initializer.Normal(0.2), (100, 100))
    assert abs(w.std() / 0.2 - 1) < 0.03 and abs(w.mean()) < 0.01
    w = _init(initializer.Uniform(), (10000,))
    assert numpy.abs(w).max() <= 0.07


@pytest.mark.parametrize("shape", [(4, 9), (9, 4), (6, 2, 2, 2), (5, 5)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal(shape, rand_type):
    core.random.seed(3)
    w = _init(initializer.Orthogonal(scale=1.5, rand_type=rand_type), shape)
    m = w.reshape(shape[0], -1)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    numpy.testing.assert_allclose(gram, 2.25 * numpy.eye(gram.shape[0]), atol=1e-5)


def test_constants_bilinear_lstm_bias():
    assert _init(initializer.Zero(), (2, 2)).sum() == 0
    assert _init(initializer.One(), (2, 2)).sum() == 4
    assert _init(initializer.Constant(0.5), (3,)).tolist() == [0.5] * 3
    arr = _init(initializer.Constant(numpy.array([1.0, 2.0])), (2, 2))
    assert arr.tolist() == [[1.0, 2.0], [1.0, 2.0]]
    k = _init(initializer.Bilinear(), (2, 1, 4, 4))
    row = numpy.array([0.25, 0.75, 0.75, 0.25])
    numpy.testing.assert_allclose(k[0, 0], numpy.outer(row, row))
    numpy.testing.assert_allclose(k[1, 0], k[0, 0])
    with pytest.raises(ValueError, match="4 dimensions"):
        _init(initializer.Bilinear(), (4, 4))
    b = nd.ones((12,))
    initializer.Zero()(InitDesc("lstm0_i2h_bias", {"__init__": initializer.LSTMBias(2.0)}), b)
    assert b.asnumpy().tolist() == [0.0] * 3 + [2.0] * 3 + [0.0] * 6
    with pytest.raises(ValueError, match="4 \\* num_hidden"):
        initializer.LSTMBias()._init_weight("b", nd.ones((6,)))


@pytest.mark.parametrize("name, expected", [
    ("fc_bias", 0.0), ("bn_gamma", 1.0), ("bn_beta", 0.0), ("bn_moving_mean", 0.0),
    ("bn_moving_var", 1.0), ("bn_running_mean", 0.0), ("bn_running_var", 1.0),
    ("bn_moving_inv_var", 0.0), ("bn_moving_avg", 0.0), ("q_min", 0.0), ("q_max", 1.0)])
def test_name_dispatch(name, expected):
    arr = nd.full((3,), 7.0)
    initializer.Xavier()(InitDesc(name), arr)
    assert arr.asnumpy().tolist() == [expected] * 3
    arr = nd.full((3,), 7.0)
    initializer.Uniform()(name, arr)  # a plain str name works too
    assert arr.asnumpy().tolist() == [expected] * 3


def test_name_dispatch_special_cases():
    arr = nd.zeros((1, 1, 4, 4))
    initializer.Normal()("upsampling0_weight", arr)
    assert arr.asnumpy()[0, 0, 0].tolist() == [0.0625, 0.1875, 0.1875, 0.0625]
    loc = nd.zeros((6,))
    initializer.Normal()("stn_loc_bias", loc)
    assert loc.asnumpy().tolist() == [1.0, 0, 0, 0, 1.0, 0]
    with pytest.raises(ValueError, match="unknown initialization pattern for 'mystery'"):
        initializer.Xavier()("mystery", nd.zeros((2, 2)))
    with pytest.raises(TypeError, match="NDArray"):
        initializer.Zero()("w_weight", numpy.zeros(3))


def test_own_initializer_wins_over_name():
    arr = nd.zeros((2, 2))
    initializer.Zero()(InitDesc("fc_bias", {"__init__": "ones"}), arr)
    assert arr.asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    initializer.Zero()(InitDesc("fc_bias", {"__init__": '["constant", {"value": 3}]'}), arr)
    assert arr.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]


def test_create_aliases_dumps_and_registry():
    for name, cls in [("zeros", initializer.Zero), ("zero", initializer.Zero),
                      ("ones", initializer.One), ("one", initializer.One),
                      ("uniform", initializer.Uniform), ("normal", initializer.Normal),
                      ("xavier", initializer.Xavier), ("msraprelu", initializer.MSRAPrelu),
                      ("orthogonal", initializer.Orthogonal), ("bilinear", initializer.Bilinear),
                      ("lstmbias", initializer.LSTMBias), ("constant", initializer.Constant),
                      ("Xavier", initializer.Xavier)]:
        assert type(initializer.create(name)) is cls
    x = initializer.Xavier(factor_type="in", magnitude=2.34)
    assert initializer.create(x) is x
    assert initializer.create(x.dumps()) == x
    assert initializer.create(initializer.Normal, sigma=0.3) == initializer.Normal(0.3)
    assert initializer.Constant(numpy.array([1.0, 2.0])).dumps() == \
        '["constant", {"value": [1.0, 2.0]}]'
    assert initializer.create('["constant", {"value": [1.0, 2.0]}]').value == [1.0, 2.0]
    with pytest.raises(ValueError, match="unknown initializer 'nope'.*xavier"):
        initializer.create("nope")
    with pytest.raises(ValueError, match="not a valid initializer description"):
        initializer.create("[__import__('os')]")
    with pytest.raises(TypeError, match="Initializer"):
        initializer.create(3)
    with pytest.raises(TypeError, match="subclass of Initializer"):
        initializer.register(int)

    @initializer.register
    @initializer.alias("seven", "sevens")
    class Seven(initializer.Initializer):
        def _init_weight(self, _, arr):
            arr[:] = 7

    arr = nd.zeros((2,))
    initializer.create("sevens")("w_weight", arr)
    assert arr.asnumpy().tolist() == [7.0, 7.0]
    assert type(initializer.create("seven")) is Seven


def test_mixed():
    init = initializer.Mixed([".*_special_weight", ".*"],
                             [initializer.Constant(2.0), initializer.Zero()])
    a, b, c = nd.ones((2,)), nd.ones((2,)), nd.ones((2,))
    init("l0_special_weight", a)
    init("l0_weight", b)
    init("l0_gamma", c)
    assert a.asnumpy().tolist() == [2.0, 2.0] and b.asnumpy().tolist() == [0.0, 0.0]
    assert c.asnumpy().tolist() == [1.0, 1.0]  # the name rules of the chosen initializer
    with pytest.raises(ValueError, match="matches none of the patterns"):
        initializer.Mixed(["a.*"], ["zeros"])("b_weight", a)
    with pytest.raises(ValueError, match="one initializer per pattern"):
        initializer.Mixed(["a", "b"], ["zeros"])


def test_load(tmp_path):
    f = str(tmp_path / "init.params")
    serialization.save(f, {"arg:fc_weight": nd.full((2, 2), 5.0)})
    init = initializer.Load(f, default_init=initializer.One())
    w, b = nd.zeros((2, 2)), nd.zeros((2, 2))
    init("fc_weight", w)
    init("other_weight", b)
    assert w.asnumpy().tolist() == [[5.0, 5.0], [5.0, 5.0]]
    assert b.asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match=r"shape mismatch, target \(3,\) vs loaded \(2, 2\)"):
        init("fc_weight", nd.zeros((3,)))
    with pytest.raises(ValueError, match="not found"):
        initializer.Load({"a": nd.ones(1)})("b", nd.zeros(1))


def test_reproducible_after_seed():
    def draw(ctx=None):
        return _init(initializer.Xavier(rnd_type="gaussian"), (8, 8), ctx=ctx)

    core.random.seed(42)
    a = draw()
    core.random.seed(42)
    b = draw()
    numpy.testing.assert_array_equal(a, b)
    core.random.seed(43)
    assert not numpy.array_equal(a, draw())


@pytest.mark.multi_device
def test_draws_use_the_array_context_generator():
    core.random.seed(7)
    a = _init(initializer.Normal(1.0), (5, 5), ctx=cpu(0))
    b = _init(initializer.Normal(1.0), (5, 5), ctx=cpu(1))
    numpy.testing.assert_array_equal(a, b)  # 'all' seeding: identical streams per context


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64", "int32"])
def test_low_precision_and_integer_arrays(dtype):
    arr = nd.zeros((50, 40), dtype=dtype)
    initializer.Uniform(3.0)("w_weight", arr)
    assert arr.dtype.name == dtype
    vals = arr.asnumpy().astype(numpy.float64)
    assert numpy.abs(vals).max() <= 3.0 and vals.std() > 0.5


def test_verbose_logging(caplog):
    init = initializer.One().set_verbosity(True)
    with caplog.at_level(logging.INFO, logger="core.initializer"):
        init("w_weight", nd.zeros((2,)))
    assert "Initialized w_weight as weight: 1.0" in caplog.text


def test_equality_and_repr():
    assert initializer.Normal(0.1) == initializer.Normal(0.1)
    assert initializer.Normal(0.1) != initializer.Normal(0.2)
    assert initializer.Normal(0.1) != initializer.Uniform(0.1)
    assert repr(initializer.Orthogonal()) == "Orthogonal(scale=1.414, rand_type='uniform')"


def test_dumps_with_array_arguments_as_mxnet():
    # MXNet's test_init.py::test_const_init_dumps: the array is written as nested lists
    import json

    import numpy

    from core import initializer, nd

    for value in (nd.ones((2, 3)), numpy.ones((2, 3), numpy.float32)):
        init = initializer.Constant(value)
        text = init.dumps()
        assert text == json.dumps([init.__class__.__name__.lower(), init._kwargs])
        assert json.loads(text) == ["constant", {"value": [[1.0] * 3] * 2}]
        back = initializer.create(text)
        w = nd.zeros((2, 3))
        back("w_weight", w)
        assert w.asnumpy().tolist() == [[1.0] * 3] * 2
        w2 = nd.zeros((2, 3))
        init("w_weight", w2)  # the initializer still fills with its value after dumps()
        assert w2.asnumpy().tolist() == [[1.0] * 3] * 2
    assert initializer.Constant(1).dumps() == '["constant", {"value": 1}]'
    assert initializer.Constant(numpy.float32(2.5)).dumps() == '["constant", {"value": 2.5}]'


def test_dumps_names_an_unwritable_argument():
    import pytest

    from core import initializer

    init = initializer.Normal(0.5)
    init._kwargs["sigma"] = object()
    with pytest.raises(TypeError, match="Initializer.dumps: an argument of type object"):
        init.dumps()
