"""core.random: per-context generators and seeding (MXNet's ``mx.random.seed``)."""
import threading

import numpy as np
import pytest

import core
from core import cpu, gpu, nd
from core import np as knp

CTXS = [pytest.param(cpu(0), id="cpu"), pytest.param(gpu(0), id="gpu", marks=pytest.mark.gpu)]


def _draw(ctx, n=5):
    return nd.random.uniform(shape=(n,), ctx=ctx).asnumpy()


@pytest.mark.parametrize("ctx", CTXS)
def test_seed_reproduces_a_stream(ctx):
    core.random.seed(11)
    a = [_draw(ctx), nd.random.normal(shape=(3,), ctx=ctx).asnumpy(),
         nd.random.randint(0, 100, shape=(4,), ctx=ctx).asnumpy()]
    core.random.seed(11)
    b = [_draw(ctx), nd.random.normal(shape=(3,), ctx=ctx).asnumpy(),
         nd.random.randint(0, 100, shape=(4,), ctx=ctx).asnumpy()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    core.random.seed(12)
    assert not np.array_equal(_draw(ctx), a[0])


@pytest.mark.multi_device
def test_seed_all_gives_every_context_the_same_stream():
    core.random.seed(3)
    a = _draw(cpu(0))
    np.testing.assert_array_equal(_draw(cpu(1)), a)
    # A context used for the first time after seeding gets the seed too.
    np.testing.assert_array_equal(_draw(cpu(5)), a)
    # Each context's stream advances on its own.
    a2 = _draw(cpu(0))
    np.testing.assert_array_equal(_draw(cpu(1)), a2)


@pytest.mark.multi_device
def test_seed_one_context_leaves_the_others_alone():
    core.random.seed(3)
    a1, a2 = _draw(cpu(0)), _draw(cpu(0))
    core.random.seed(3)
    b1 = _draw(cpu(0))
    core.random.seed(4, ctx=cpu(1))
    np.testing.assert_array_equal(_draw(cpu(0)), a2)
    c = _draw(cpu(1))
    assert not np.array_equal(c, a1)
    core.random.seed(4, ctx="cpu(1)")  # strings name contexts as well
    np.testing.assert_array_equal(_draw(cpu(1)), c)
    np.testing.assert_array_equal(b1, a1)
    # Seeding one context with the 'all' seed lines it up with the others again.
    core.random.seed(3)
    core.random.seed(3, ctx=cpu(1))
    np.testing.assert_array_equal(_draw(cpu(1)), a1)
    # seed(..., 'all') overrides earlier per-context seeds.
    core.random.seed(4, ctx=cpu(1))
    core.random.seed(3)
    np.testing.assert_array_equal(_draw(cpu(1)), a1)


@pytest.mark.multi_device
def test_current_context_and_array_inputs_choose_the_generator():
    core.random.seed(21)
    with cpu(2):
        a = nd.random.uniform(shape=(4,))
    assert a.context == cpu(2)
    core.random.seed(21, ctx=cpu(2))
    lo = nd.zeros((4,), ctx=cpu(2))
    b = nd.random.uniform(lo, 1.0)  # runs on the inputs' context
    assert b.context == cpu(2)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_unseeded_generators_start_from_entropy():
    # A generator made without any seed differs from run to run (here: two fresh ones).
    saved = dict(core.random._generators), dict(core.random._seeds), core.random._seed_all
    try:
        core.random._seed_all = None
        core.random._seeds.clear()
        core.random._generators.clear()
        a = _draw(cpu(0), 8)
        core.random._generators.clear()
        b = _draw(cpu(0), 8)
        assert not np.array_equal(a, b)
    finally:
        core.random._generators.clear()
        core.random._generators.update(saved[0])
        core.random._seeds.clear()
        core.random._seeds.update(saved[1])
        core.random._seed_all = saved[2]


@pytest.mark.parametrize("bad", [1.5, "7", None, True, np.array([1, 2])])
def test_seed_rejects_non_integers(bad):
    with pytest.raises(TypeError, match="random.seed"):
        core.random.seed(bad)


def test_negative_seed_is_its_32_bit_twos_complement():
    # MXNet passes the seed as a C int (mx.random.seed(-5) is valid, as in its test_random_seed)
    core.random.seed(-5)
    a = nd.random.uniform(shape=(4,)).asnumpy()
    core.random.seed(2 ** 32 - 5)
    assert np.array_equal(nd.random.uniform(shape=(4,)).asnumpy(), a)
    core.random.seed(-5)
    assert np.array_equal(nd.random.uniform(shape=(4,)).asnumpy(), a)


def test_seed_rejects_bad_values_and_contexts():
    with pytest.raises(ValueError, match="random.seed"):
        core.random.seed(1, ctx="tpu(0)")
    core.random.seed(np.int64(5))  # NumPy integers are ints
    core.random.seed(2 ** 70)  # large seeds are fine


def test_get_generator():
    g = core.random.get_generator(cpu(0))
    assert isinstance(g, np.random.Generator)
    assert core.random.get_generator("cpu(0)") is g
    assert core.random.get_generator() is core.random.get_generator(core.current_context())
    core.random.seed(0)
    assert core.random.get_generator(cpu(0)) is not g  # reseeding makes new generators


def test_mx_random_names_are_nd_random():
    assert core.random.uniform is nd.random.uniform
    assert "normal" in dir(core.random) and "seed" in dir(core.random)
    core.random.seed(9)
    a = core.random.normal(0, 1, shape=(3,)).asnumpy()
    core.random.seed(9)
    np.testing.assert_array_equal(nd.random.normal(0, 1, shape=(3,)).asnumpy(), a)
    with pytest.raises(AttributeError, match="no_such_thing"):
        _ = core.random.no_such_thing


def test_mxnet_call_styles():
    core.random.seed(0)
    assert nd.random.uniform(-1, 1, (2, 3)).shape == (2, 3)
    assert nd.random.uniform(low=-1, high=1, shape=(2, 3), dtype="float64").dtype == np.float64
    assert nd.random.normal(0, 0.01, shape=(4,)).shape == (4,)
    assert nd.random.normal(scale=0.01, shape=(4,)).shape == (4,)
    assert nd.random.uniform(high=2, shape=3).asnumpy().max() < 2
    assert nd.random_uniform(shape=(2,)).shape == (2,)
    assert nd.random_normal(shape=(2,)).shape == (2,)
    assert nd.random_randint(0, 3, shape=(2,)).shape == (2,)
    assert nd.random.randint(low=0, high=3, shape=(2,)).dtype == np.int32
    assert knp.random.uniform(0, 1, size=(2, 2)).shape == (2, 2)
    assert knp.random.randint(0, 3, (2,)).dtype == np.int64


def test_random_ops_do_not_record_gradients():
    lo = nd.zeros((3,))
    lo.attach_grad()
    with core.autograd.record():
        y = nd.random.uniform(lo, 1.0, shape=(2,))
    assert y._node is None


def test_threads_draw_from_their_context_generators():
    core.random.seed(5)
    out = {}

    def work(i):
        out[i] = _draw(cpu(10 + i))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(1, 4):
        np.testing.assert_array_equal(out[i], out[0])


@pytest.mark.gpu
def test_gpu_streams_are_reproducible_and_per_device():
    core.random.seed(17)
    a = nd.random.normal(shape=(6,), ctx=gpu(0)).asnumpy()
    x = nd.random.multinomial(nd.array([[0.2, 0.8]], ctx=gpu(0)), shape=1000).asnumpy()
    s = nd.random.shuffle(nd.arange(10, ctx=gpu(0))).asnumpy()
    core.random.seed(17)
    np.testing.assert_array_equal(nd.random.normal(shape=(6,), ctx=gpu(0)).asnumpy(), a)
    np.testing.assert_array_equal(
        nd.random.multinomial(nd.array([[0.2, 0.8]], ctx=gpu(0)), shape=1000).asnumpy(), x)
    assert sorted(s.tolist()) == list(range(10))
    for f in (lambda: knp.random.choice(5, 3, ctx=gpu(0)),
              lambda: knp.random.multinomial(5, [0.5, 0.5], ctx=gpu(0)),
              lambda: nd.random.gamma(2.0, shape=(3,), ctx=gpu(0)),
              lambda: nd.random.poisson(2.0, shape=(3,), ctx=gpu(0)),
              lambda: knp.random.randint(0, 5, size=3, ctx=gpu(0))):
        assert f().context == gpu(0)
