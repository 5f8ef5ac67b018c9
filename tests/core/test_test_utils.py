"""core.test_utils: MXNet's testing helpers (names, signatures, default tolerances)."""
from __future__ import annotations

import os

import numpy as np
import pytest

from core import cpu, nd
from core import sym as S
from core import test_utils as tu


def test_default_tolerances_are_mxnets():
    assert tu.get_rtol(dtype=np.dtype(np.float16)) == 1e-2
    assert tu.get_rtol(dtype=np.dtype(np.float32)) == 1e-4
    assert tu.get_rtol() == 1e-5  # float64 by default
    assert tu.get_atol(dtype=np.dtype(np.float32)) == 1e-3
    assert tu.get_atol() == 1e-20
    assert tu.get_atol(0.5) == 0.5
    assert tu.get_rtol(dtype=np.dtype(np.int32)) == 0
    assert tu.get_etol() == 0 and tu.get_etol(0.1) == 0.1
    f32, f16 = np.zeros(2, np.float32), np.zeros(2, np.float16)
    assert tu.get_tols(f32, f16, None, None) == (1e-2, 1e-1)  # the larger of the two
    assert tu.get_tols(f32, f32, 0.5, None) == (0.5, 1e-3)
    assert tu.get_tolerance(f32, {np.float32: 7.0}, tu.default_rtols()) == 7.0
    assert tu.default_dtype() is np.float32


def test_assert_almost_equal_defaults_and_message():
    tu.assert_almost_equal(nd.array([1.0, 2.0]), np.array([1.0, 2.0005]))  # float32 atol
    with pytest.raises(AssertionError) as e:
        tu.assert_almost_equal(np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.5, 3.0]),
                               names=("got", "want"))
    msg = str(e.value)
    assert "rtol=1.000000e-05" in msg and "1 of 3 elements mismatch" in msg
    assert "Location of maximum error: (1,), got=2.0, want=2.5" in msg


def test_assert_almost_equal_nan_broadcast_bool():
    nan = np.array([np.nan, 1.0])
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(nan, nan)  # equal_nan=False by default, as in MXNet
    tu.assert_almost_equal(nan, nan, equal_nan=True)
    tu.assert_almost_equal(np.ones((2, 3)), np.ones(3))  # broadcasts by default
    with pytest.raises(AssertionError, match="are not equal"):
        tu.assert_almost_equal(np.ones((2, 3)), np.ones(3), use_broadcast=False)
    with pytest.raises(AssertionError, match="do not broadcast"):
        tu.assert_almost_equal(np.ones((2, 3)), np.ones(4))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal(np.array([True, False]), np.array([True, True]))


def test_almost_equal_same_allclose():
    assert tu.almost_equal(np.array([1.0]), np.array([1.0 + 1e-7]))
    assert not tu.almost_equal(np.array([1.0]), np.array([1.001]))
    assert tu.almost_equal(np.array([1.0]), np.array([1.001]), rtol=1e-2)
    assert tu.same(nd.arange(3), np.arange(3.0))
    assert not tu.same(np.arange(3), np.arange(4))
    tu.assert_allclose(np.array([1.0]), np.array([1.0]))
    with pytest.raises(AssertionError):
        tu.assert_allclose(np.array([1.0]), np.array([1.0 + 1e-6]))
    tu.assert_almost_equal_ignore_nan(np.array([np.nan, 1.0]), np.array([5.0, 1.0]))


def test_assert_almost_equal_with_err():
    a, b = np.array([1.0, 2.0, 3.0, 9.0]), np.array([1.0, 2.0, 3.0, 4.0])
    tu.assert_almost_equal_with_err(a, b, etol=0.3)
    with pytest.raises(AssertionError, match="etol=0.2"):
        tu.assert_almost_equal_with_err(a, b, etol=0.2)


def test_find_max_violation():
    idx, v = tu.find_max_violation(np.array([[1.0, 2.0], [3.0, 10.0]]),
                                   np.array([[1.0, 2.0], [3.0, 4.0]]), 0.0, 1.0)
    assert idx == (1, 1) and v == pytest.approx(6.0)


def test_assert_exception_and_retry():
    tu.assert_exception(lambda: 1 / 0, ZeroDivisionError)
    with pytest.raises(AssertionError, match="did not raise"):
        tu.assert_exception(lambda: 1, ZeroDivisionError)
    calls = []

    @tu.retry(3)
    def flaky():
        calls.append(1)
        assert len(calls) >= 2

    flaky()
    assert len(calls) == 2

    @tu.retry(2)
    def always():
        raise AssertionError("no")

    with pytest.raises(AssertionError, match="no"):
        always()


def test_random_helpers_follow_numpy_seed():
    np.random.seed(3)
    a = tu.rand_ndarray((2, 3))
    s = tu.rand_shape_nd(3)
    np.random.seed(3)
    b = tu.rand_ndarray((2, 3))
    assert tu.same(a.asnumpy(), b.asnumpy()) and s == tu.rand_shape_nd(3)
    assert a.dtype == np.float32 and a.context == tu.default_context()
    assert tu.rand_ndarray((2,), "default", dtype=np.float64).dtype == np.float64
    assert tu.rand_ndarray((2, 2), "row_sparse").stype == "row_sparse"
    with pytest.raises(ValueError, match="unknown storage type 'coo'"):
        tu.rand_ndarray((2, 2), "coo")
    assert all(1 <= d <= 4 for d in tu.rand_shape_3d(4, 4, 4))
    assert 0 in {tu.rand_shape_2d(1, 1, allow_zero_size=True)[0] for _ in range(50)}
    one = tu.random_arrays((2,))
    assert one.shape == (2,) and one.dtype == np.float32
    assert tu.random_arrays(()).shape == ()
    assert sorted(tu.random_sample(list(range(5)), 5)) == list(range(5))
    x, y = tu.rand_coord_2d(0, 3, 5, 6)
    assert 0 <= x < 3 and y == 5


def test_reductions_and_tensors():
    d = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(tu.np_reduce(d, (0, 2), False, np.sum), d.sum(axis=(0, 2)))
    assert tu.np_reduce(d, None, True, np.max).shape == (1, 1, 1)
    assert tu.np_reduce(d, -1, False, np.sum).shape == (2, 3)
    np.testing.assert_array_equal(tu.collapse_sum_like(d, (3, 1)), d.sum(axis=(0, 2))[:, None])
    assert tu.collapse_sum_like(np.zeros((0, 3)), (3,)).shape == (3,)
    assert tu.create_vector(4).asnumpy().tolist() == [0, 1, 2, 3]
    assert tu.create_2d_tensor(2, 3).asnumpy().tolist() == [[0, 0, 0], [1, 1, 1]]
    assert tu.get_identity_mat_batch(2).shape == (2, 2, 2)


def test_symbolic_forward_backward():
    a, b = S.var("a"), S.var("b")
    s = a * b + a
    av, bv = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    tu.check_symbolic_forward(s, [av, bv], [av * bv + av])
    tu.check_symbolic_forward(s, {"a": av, "b": bv}, {s.list_outputs()[0]: av * bv + av})
    with pytest.raises(AssertionError, match="EXPECTED_"):
        tu.check_symbolic_forward(s, [av, bv], [av])
    og = np.array([1.0, 10.0])
    tu.check_symbolic_backward(s, [av, bv], [og], [og * (bv + 1), og * av])
    tu.check_symbolic_backward(s, [av, bv], [og], {"a": og * (bv + 1)},
                               grad_req={"a": "add", "b": "null"})
    with pytest.raises(AssertionError, match="BACKWARD_b"):
        tu.check_symbolic_backward(s, [av, bv], [og], [og * (bv + 1), og])
    with pytest.raises(ValueError, match="2 arguments"):
        tu.check_symbolic_forward(s, [av], [av])
    assert tu.simple_forward(s, a=av, b=bv).tolist() == (av * bv + av).tolist()


def test_check_numeric_gradient_symbol_and_function():
    x = S.var("x")
    tu.check_numeric_gradient(S.tanh(x) * x, [np.array([0.5, -1.0, 2.0])], dtype=np.float64)
    tu.check_numeric_gradient(x * x, {"x": np.array([[1.0, 2.0]])}, numeric_eps=1e-3,
                              rtol=1e-2, atol=1e-2)
    tu.check_numeric_gradient(lambda v: v * v, [np.array([1.0, 2.0])])  # kbackend's form
    with pytest.raises(TypeError, match="by keyword"):
        tu.check_numeric_gradient(lambda v: v, [np.ones(2)], [0])


def test_numeric_grad_sums_the_first_output():
    x = S.var("x")
    exe = (x * x).bind(cpu(0), args={"x": nd.array([1.0, 3.0], dtype="float64")})
    g = tu.numeric_grad(exe, {"x": np.array([1.0, 3.0])}, eps=1e-4, dtype=np.float64)
    np.testing.assert_allclose(g["x"], [2.0, 6.0], rtol=1e-6)


def test_check_consistency_and_speed():
    s = S.exp(S.var("x")) * 2
    specs = [{"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float64}},
             {"ctx": cpu(0), "x": (2, 3), "type_dict": {"x": np.float32}}]
    gt = tu.check_consistency(s, specs)
    assert "x" in gt
    bad = tu.check_consistency(s, specs, ground_truth={**gt, s.list_outputs()[0]: gt["x"]},
                               raise_on_err=False)
    assert bad is not None
    with pytest.raises(AssertionError):
        tu.check_consistency(s, specs, ground_truth={**gt, s.list_outputs()[0]: gt["x"]})
    assert tu.check_speed(s, N=2, x=(2, 3)) > 0
    assert tu.check_speed(s, {"x": np.ones((2, 3))}, N=2, typ="forward") > 0
    with pytest.raises(ValueError, match="typ"):
        tu.check_speed(s, N=1, typ="backward", x=(2,))


def test_environment_and_set_env_var():
    key = "KBACKEND_TEST_UTILS_X"
    os.environ.pop(key, None)
    with tu.environment({key: "1"}):
        assert os.environ[key] == "1"
        with tu.environment(key, None):
            assert key not in os.environ
        assert os.environ[key] == "1"
    assert key not in os.environ
    assert tu.set_env_var(key, "2", "none") == "none"
    assert tu.set_env_var(key, "3") == "2"
    del os.environ[key]
    with pytest.raises(TypeError), tu.environment("a", "b", "c"):
        pass


def test_discard_stderr(capfd):
    with tu.discard_stderr():
        os.write(2, b"hidden\n")
    os.write(2, b"shown\n")
    err = capfd.readouterr().err
    assert "hidden" not in err and "shown" in err


def test_no_network_helpers_name_local_alternatives(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(tu.NoNetworkError, match="put the file at x.bin"):
        tu.download("http://example.com/x.bin")
    with pytest.raises(tu.NoNetworkError, match="train-labels-idx1-ubyte.gz.*MNIST"):
        tu.get_mnist()
    with pytest.raises(tu.NoNetworkError, match="data/cifar/train.rec"):
        tu.get_cifar10()
    with pytest.raises(tu.NoNetworkError, match="data/mnist.zip"):
        tu.get_mnist_ubyte()
    with pytest.raises(tu.NoNetworkError, match="load_checkpoint"):
        tu.download_model("resnet")
    with pytest.raises(tu.NoNetworkError, match="archive"):
        tu.get_zip_data("d", "http://example.com/a.zip", "a.zip")
    assert tu.has_tvm_ops() is False and tu.is_op_runnable() is True


def test_download_helpers_use_local_files(tmp_path, monkeypatch):
    import bz2
    import gzip
    import struct
    import zipfile

    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.bin").write_bytes(b"1")
    assert tu.download("http://example.com/x.bin") == "x.bin"
    with pytest.raises(tu.NoNetworkError):
        tu.download("http://example.com/x.bin", overwrite=True)
    # MNIST's gzip'd idx files in the current folder, under the names MXNet uses
    for prefix, n in (("train", 3), ("t10k", 2)):
        with gzip.open(tmp_path / f"{prefix}-labels-idx1-ubyte.gz", "wb") as f:
            f.write(struct.pack(">II", 2049, n) + bytes(range(n)))
        with gzip.open(tmp_path / f"{prefix}-images-idx3-ubyte.gz", "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + bytes([255]) * (n * 784))
    data = tu.get_mnist()
    assert data["train_data"].shape == (3, 1, 28, 28) and data["test_label"].tolist() == [0, 1]
    assert data["train_data"].dtype == np.float32 and data["train_data"].max() == 1.0
    # an archive in data/ is extracted, as MXNet does after downloading it
    (tmp_path / "data").mkdir()
    with zipfile.ZipFile(tmp_path / "data" / "mnist.zip", "w") as z:
        for name in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                     "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
            z.writestr(name, b"")
    tu.get_mnist_ubyte()
    assert (tmp_path / "data" / "t10k-labels-idx1-ubyte").exists()
    with bz2.open(tmp_path / "data" / "k.t.bz2", "wb") as f:
        f.write(b"hello")
    tu.get_bz2_data("data", "k.t", "http://example.com/k.t.bz2", "k.t.bz2")
    assert (tmp_path / "data" / "k.t").read_bytes() == b"hello"


def test_generator_checks():
    pytest.importorskip("scipy")
    from scipy import stats

    np.random.seed(0)
    buckets, probs = tu.gen_buckets_probs_with_ppf(lambda p: stats.norm.ppf(p), 5)
    assert len(buckets) == 5 and probs == [0.2] * 5
    tu.verify_generator(lambda n: np.random.normal(size=n), buckets, probs, nsamples=20000)
    with pytest.raises(AssertionError, match="chi-square"):
        tu.verify_generator(lambda n: np.random.normal(1.0, size=n), buckets, probs,
                            nsamples=20000)
    p, obs, _ = tu.chi_square_check(lambda n: np.random.randint(0, 3, size=n), [0, 1, 2],
                                    [1 / 3] * 3, nsamples=3000)
    assert obs.sum() == 3000 and p > 1e-4
    assert tu.mean_check(lambda n: np.random.normal(size=n), 0, 1.0, nsamples=10000)
    assert tu.var_check(lambda n: np.random.normal(size=n), 1.0, nsamples=10000)


def test_compare_optimizer_and_tuples():
    from core import optimizer

    tu.compare_optimizer(optimizer.SGD(learning_rate=0.1), optimizer.SGD(learning_rate=0.1),
                         (3, 4), np.float32)
    with pytest.raises(AssertionError):
        tu.compare_optimizer(optimizer.SGD(learning_rate=0.1),
                             optimizer.SGD(learning_rate=0.5), (3, 4), np.float32)
    tu.compare_ndarray_tuple((nd.ones(2), None), (np.ones(2), nd.zeros(3)))


def test_same_symbol_structure_and_same_array():
    a = S.var("a")
    assert tu.same_symbol_structure(S.exp(a), S.exp(S.var("b")))
    assert not tu.same_symbol_structure(S.exp(a), S.log(a))
    x = nd.zeros((3,))
    assert tu.same_array(x, x) and not tu.same_array(x, x.copy())


def test_star_import_names():
    names = set(tu.__all__)
    for n in ("default_context", "set_default_context", "assert_almost_equal", "same",
              "rand_ndarray", "environment", "check_consistency", "use_np", "DummyIter"):
        assert n in names
    for n in ("np", "os", "sys", "rnd", "npt", "json", "time"):  # star-exported, as in MXNet
        assert n in names
    assert "numpy" not in names and "annotations" not in names
    ns = {}
    exec("from core.test_utils import *", ns)  # noqa: S102 - the star import under test
    assert ns["sys"] is __import__("sys") and ns["Symbol"].__name__ == "Symbol"


def test_star_import_gives_mx_under_the_alias():
    import sys

    from gluon.compat import mxnet as alias

    was = alias.is_installed()
    if not was and "mxnet" in sys.modules:
        pytest.skip("a real mxnet module is imported")
    try:
        alias.install()
        ns = {}
        exec("from mxnet.test_utils import *", ns)  # noqa: S102 - the star import under test
        assert ns["mx"] is sys.modules["mxnet"] and "mx" in tu.__all__
    finally:
        if not was:
            alias.uninstall()
    assert "mx" not in tu.__all__
    with pytest.raises(AttributeError, match="no 'mxnet' module"):
        _ = tu.mx


def test_all_null_grad_reqs_and_0d_ignore_nan():
    # MXNet's test_operator.py: grad_nodes={'X': 'null'} checks the gradient is untouched
    x = S.var("X")
    tu.check_numeric_gradient(x * 2, [np.ones(3)], grad_nodes={"X": "null"}, dtype=np.float64)
    tu.check_symbolic_backward(x * 2, [np.ones(3)], [np.ones(3)], {"X": np.zeros(3)},
                               grad_req="null")
    tu.assert_almost_equal_ignore_nan(np.float32(np.nan), np.array(1.0))  # 0-d arrays
    tu.assert_almost_equal_ignore_nan(np.array(2.0), np.array(2.0))
    with pytest.raises(AssertionError):
        tu.assert_almost_equal_ignore_nan(np.array(2.0), np.array(3.0))
