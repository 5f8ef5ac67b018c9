"""Parameter, Constant and ParameterDict."""
import numpy
import pytest

import core
from core import autograd, cpu, initializer, nd
from gluon import Constant, DeferredInitializationError, Parameter, ParameterDict


def test_initialize_and_access():
    p = Parameter("fc_weight", shape=(4, 3), init=initializer.One())
    assert p.shape == (4, 3) and p.dtype == numpy.float32 and p.grad_req == "write"
    p.initialize()
    assert p.data().shape == (4, 3)
    assert float(p.data().sum().item()) == 12.0
    assert p.grad().shape == (4, 3) and float(abs(p.grad()).sum().item()) == 0.0
    assert p.list_ctx() == [cpu(0)]
    assert repr(p) == "Parameter fc_weight (shape=(4, 3), dtype=float32)"


def test_uninitialized_error_names_parameter():
    p = Parameter("lonely_weight", shape=(2,))
    with pytest.raises(RuntimeError, match="lonely_weight.*initialize"):
        p.data()


def test_int_shape_and_bad_arguments():
    assert Parameter("b", shape=5).shape == (5,)
    with pytest.raises(ValueError, match="grad_req"):
        Parameter("b", grad_req="sometimes")
    with pytest.raises(ValueError, match="stype"):
        Parameter("b", stype="dense-ish")
    with pytest.raises(ValueError, match="invalid shape"):
        Parameter("b", shape=(2, 0)).initialize()


def test_already_initialized_warns_and_force_reinit():
    p = Parameter("w", shape=(2,), init="zeros")
    p.initialize()
    with pytest.warns(UserWarning, match="already initialized"):
        p.initialize(init="ones")
    assert p.data().asnumpy().tolist() == [0.0, 0.0]
    p.initialize(init="ones", force_reinit=True)
    assert p.data().asnumpy().tolist() == [1.0, 1.0]


def test_global_init_fills_any_name_as_mxnet():
    # MXNet Gluon: a parameter without its own init gets the global initializer's
    # weight rule whatever its name.
    p = Parameter("dense0_bias", shape=(3,))
    p.initialize(default_init=initializer.One())
    assert p.data().asnumpy().tolist() == [1.0, 1.0, 1.0]
    q = Parameter("dense0_bias", shape=(3,), init="zeros")
    q.initialize(default_init=initializer.One())  # its own init wins over the default
    assert q.data().asnumpy().tolist() == [0.0, 0.0, 0.0]
    q.initialize(init=initializer.One(), force_reinit=True)  # an explicit init wins
    assert q.data().asnumpy().tolist() == [1.0, 1.0, 1.0]


@pytest.mark.multi_device
def test_multi_context_replicas_identical():
    p = Parameter("w", shape=(5, 7))
    p.initialize(init=initializer.Xavier(), ctx=[cpu(0), cpu(1), cpu(2)])
    assert p.list_ctx() == [cpu(0), cpu(1), cpu(2)]
    vals = [d.asnumpy() for d in p.list_data()]
    assert all(numpy.array_equal(vals[0], v) for v in vals[1:])
    assert [d.context for d in p.list_data()] == [cpu(0), cpu(1), cpu(2)]
    assert [g.context for g in p.list_grad()] == [cpu(0), cpu(1), cpu(2)]
    assert p.data(cpu(2)).context == cpu(2)
    with cpu(1):
        assert p.data().context == cpu(1)  # several replicas: the current context's
    with pytest.raises(RuntimeError, match=r"'w' was not initialized on context cpu\(3\).*"
                                           r"cpu\(0\), cpu\(1\), cpu\(2\)"):
        p.data(cpu(3))


@pytest.mark.multi_device
def test_set_data_reaches_all_replicas_and_reset_ctx():
    p = Parameter("w", shape=(2, 2))
    p.initialize(ctx=[cpu(0), cpu(1)])
    p.set_data(nd.ones((2, 2)) * 3)
    for d in p.list_data():
        assert d.asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    p.reset_ctx([cpu(2)])
    assert p.list_ctx() == [cpu(2)]
    assert p.data().asnumpy().tolist() == [[3.0, 3.0], [3.0, 3.0]]
    assert p.grad().context == cpu(2)


def test_backward_fills_grad_and_grad_req_add():
    p = Parameter("w", shape=(3,), init="ones")
    p.initialize()
    for _ in range(2):
        with autograd.record():
            y = (p.data() * nd.array([1.0, 2.0, 3.0])).sum()
        y.backward()
    assert p.grad().asnumpy().tolist() == [1.0, 2.0, 3.0]
    p.grad_req = "add"
    for _ in range(2):
        with autograd.record():
            y = (p.data() * nd.array([1.0, 2.0, 3.0])).sum()
        y.backward()
    assert p.grad().asnumpy().tolist() == [2.0, 4.0, 6.0]
    p.zero_grad()
    assert p.grad().asnumpy().tolist() == [0.0, 0.0, 0.0]


def test_grad_req_null_drops_grads():
    p = Parameter("w", shape=(3,))
    p.initialize()
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    p.zero_grad()  # no effect, no error
    assert p._check_fresh() == []
    p.grad_req = "write"
    assert p.grad().shape == (3,)
    q = Parameter("q", shape=(2,), differentiable=False)
    assert q.grad_req == "null"


def test_shape_setter_fills_unknown_and_rejects_conflicts():
    p = Parameter("conv0_weight", shape=(8, 0, 3, 3))
    p.shape = (8, 4, 3, 3)
    assert p.shape == (8, 4, 3, 3)
    with pytest.raises(ValueError, match=r"conv0_weight.*\(8, 5, 3, 3\).*\(8, 4, 3, 3\)"):
        p.shape = (8, 5, 3, 3)
    q = Parameter("q", shape=(-1, 2))
    q.shape = (7, 2)
    assert q.shape == (7, 2)
    with pytest.raises(ValueError, match="q"):
        q.shape = (7, 2, 1)


def test_deferred_init_waits_for_shape():
    p = Parameter("dense0_weight", shape=(4, 0), allow_deferred_init=True)
    p.initialize(init=initializer.One(), ctx=[cpu(0)])
    with pytest.raises(DeferredInitializationError, match=r"dense0_weight.*\(4, 0\).*in_units"):
        p.data()
    assert p.list_ctx() == [cpu(0)]
    with pytest.raises(ValueError, match=r"dense0_weight.*invalid shape.*\(4, 0\)"):
        p._finish_deferred_init()
    p.shape = (4, 6)
    p._finish_deferred_init()
    assert p.data().shape == (4, 6) and float(p.data().sum().item()) == 24.0


def test_set_data_during_deferred_init():
    p = Parameter("w", shape=(0, 2), allow_deferred_init=True)
    p.initialize()
    p.set_data(nd.array([[1, 2], [3, 4], [5, 6]]))
    assert p.shape == (3, 2)
    p._finish_deferred_init()
    assert p.data().asnumpy().tolist() == [[1, 2], [3, 4], [5, 6]]


def test_cast():
    p = Parameter("w", shape=(2,), init="ones")
    p.initialize()
    p.cast("float16")
    assert p.dtype == numpy.float16 and p.data().dtype == numpy.float16
    assert p.grad().dtype == numpy.float16
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    assert p.grad().asnumpy().tolist() == [2.0, 2.0]
    p.dtype = "bfloat16"
    assert p.data().dtype.name == "bfloat16"


def test_fresh_grad_tracking():
    p = Parameter("w", shape=(3,), init="ones")
    p.initialize()
    assert p._check_fresh() == [False] and not p._fresh_grad
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    assert p._check_fresh() == [True] and p._fresh_grad
    p._mark_stale()
    assert p._check_fresh() == [False]
    p.zero_grad()  # zeroing does not make a stale gradient fresh
    assert p._check_fresh() == [False]
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    p.zero_grad()  # nor a fresh one stale
    assert p._check_fresh() == [True]
    p._fresh_grad = False
    assert p._check_fresh() == [False]
    p._fresh_grad = True
    assert p._check_fresh() == [True]


@pytest.mark.multi_device
def test_fresh_grad_per_replica():
    p = Parameter("w", shape=(3,), init="ones")
    p.initialize(ctx=[cpu(0), cpu(1)])
    with autograd.record():
        y = (p.data(cpu(1)) * 2).sum()
    y.backward()
    assert p._check_fresh() == [False, True]
    p._mark_stale(1)
    assert p._check_fresh() == [False, False]


def test_fresh_grad_with_create_graph():
    # create_graph replaces the gradient array: still seen as fresh.
    p = Parameter("w", shape=(1,), init="ones")
    p.initialize()
    with autograd.record():
        y = (p.data() ** 3).sum()
    y.backward(create_graph=True)
    assert p._check_fresh() == [True]
    assert p.grad().asnumpy().tolist() == [3.0]


def test_constant():
    c = Constant("const", [[1, 2], [3, 4]])
    assert c.grad_req == "null" and c.shape == (2, 2)
    with pytest.warns(UserWarning, match="does not support grad_req"):
        c.grad_req = "write"
    assert c.grad_req == "null"
    c.initialize(default_init=initializer.Zero())  # its own value wins
    assert c.data().asnumpy().tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert repr(c) == "Constant const (shape=(2, 2), dtype=float32)"


def test_parameter_dict_get_and_sharing():
    pd = ParameterDict("net_")
    w = pd.get("weight", shape=(3, 0), init="xavier")
    assert w.name == "net_weight" and pd.get("weight") is w
    assert pd.get("weight", shape=(3, 5)) is w and w.shape == (3, 5)
    with pytest.raises(ValueError, match=r"net_weight.*'shape'"):
        pd.get("weight", shape=(4, 5))
    with pytest.raises(ValueError, match=r"net_weight.*'dtype'"):
        pd.get("weight", dtype="float16")
    assert pd.get("weight", dtype="float32") is w
    shared = ParameterDict("net_", shared=pd)
    assert shared.get("weight") is w
    assert "net_weight" in shared and len(shared) == 1
    c = pd.get_constant("c", [1.0, 2.0])
    assert pd.get_constant("c") is c
    with pytest.raises(KeyError, match="net_nothing"):
        pd.get_constant("nothing")
    text = repr(pd)
    assert text.startswith("net_ (") and "Parameter net_weight (shape=(3, 5)" in text


def test_parameter_dict_update_conflict():
    a, b = ParameterDict(), ParameterDict()
    a.get("w", shape=(1,))
    b.get("w", shape=(1,))
    with pytest.raises(ValueError, match="'w'"):
        a.update(b)


@pytest.mark.multi_device
def test_parameter_dict_initialize_setattr_zero_grad_reset():
    pd = ParameterDict("m_")
    pd.get("weight", shape=(2, 2))
    pd.get("bias", shape=(2,), init="zeros")
    pd.initialize(init="ones", ctx=[cpu(0), cpu(1)])
    assert pd["m_weight"].data(cpu(1)).asnumpy().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert sorted(map(str, pd.list_ctx())) == ["cpu(0)", "cpu(1)"]
    pd.setattr("grad_req", "add")
    assert all(p.grad_req == "add" for p in pd.values())
    pd.setattr("lr_mult", 0.5)
    assert pd["m_bias"].lr_mult == 0.5
    for p in pd.values():
        with autograd.record():
            y = p.data(cpu(0)).sum() * 2
        y.backward()
    pd.zero_grad()
    assert all(float(abs(g).sum().item()) == 0 for p in pd.values() for g in p.list_grad())
    pd.reset_ctx(cpu(1))
    assert pd.list_ctx() == [cpu(1)]


def test_parameter_dict_save_load(tmp_path):
    pd = ParameterDict("net_")
    pd.get("weight", shape=(2, 3))
    pd.get("bias", shape=(3,), init="zeros")
    pd.initialize()
    f = str(tmp_path / "pd.params")
    pd.save(f, strip_prefix="net_")
    other = ParameterDict("copy_")
    other.get("weight", shape=(2, 3))
    other.get("bias", shape=(3,))
    other.load(f, restore_prefix="copy_")
    assert numpy.array_equal(other["copy_weight"].data().asnumpy(),
                             pd["net_weight"].data().asnumpy())
    with pytest.raises(ValueError, match="does not start with"):
        pd.save(f, strip_prefix="zzz_")
    extra = ParameterDict("copy_")
    extra.get("weight", shape=(2, 3))
    with pytest.raises(ValueError, match="'bias'.*not present.*ignore_extra"):
        extra.load(f, restore_prefix="copy_")
    extra.load(f, restore_prefix="copy_", ignore_extra=True)
    missing = ParameterDict("copy_")
    missing.get("weight", shape=(2, 3))
    missing.get("gamma", shape=(3,))
    with pytest.raises(ValueError, match="'gamma' is missing.*allow_missing"):
        missing.load(f, restore_prefix="copy_", ignore_extra=True)


def test_load_init_checks_shape_and_dtype():
    p = Parameter("w", shape=(2, 3))
    with pytest.raises(ValueError, match=r"'w'.*expected \(2, 3\) vs saved \(3, 2\)"):
        p._load_init(nd.zeros((3, 2)), None)
    with pytest.raises(ValueError, match="dtype incompatible.*cast_dtype"):
        p._load_init(nd.zeros((2, 3), dtype="float64"), None)
    p._load_init(nd.ones((2, 3), dtype="float64"), None, cast_dtype=True)
    assert p.data().dtype == numpy.float32 and p.list_ctx() == [cpu(0)]
    r = Parameter("r")
    r._load_init(nd.ones((2, 3)), None)
    assert r.shape == (2, 3) and r.data().shape == (2, 3)
    q = Parameter("q", shape=(0, 3))
    q._load_init(nd.ones((5, 3), dtype="float16"), cpu(1), cast_dtype=True,
                 dtype_source="saved")
    assert q.shape == (5, 3) and q.dtype == numpy.float16 and q.list_ctx() == [cpu(1)]


def test_initialize_is_reproducible_after_seed():
    def draw():
        p = Parameter("w", shape=(4, 4))
        p.initialize(init=initializer.Normal(1.0))
        return p.data().asnumpy()

    core.random.seed(3)
    a = draw()
    core.random.seed(3)
    b = draw()
    assert numpy.array_equal(a, b)


# ---------------------------------------------------------------- storage types (MXNet 1.9.1)
def test_invalid_stype_is_value_and_assertion_error():
    from gluon.parameter import InvalidStypeError
    for kw in ({"stype": "invalid"}, {"grad_stype": "invalid"}):
        with pytest.raises(AssertionError, match="must be one of 'default', 'row_sparse'"):
            Parameter("weight", shape=(10, 10), **kw)
        with pytest.raises(ValueError, match="for Parameter 'weight'"):
            Parameter("weight", shape=(10, 10), **kw)
        with pytest.raises(InvalidStypeError):
            Parameter("weight", shape=(10, 10), **kw)


def test_data_of_sparse_and_row_sparse_data_of_dense_raise():
    from core import cpu, nd
    p0 = Parameter("weight", shape=(10, 10), stype="row_sparse", grad_stype="row_sparse")
    p0.initialize(init="xavier", ctx=[cpu(0), cpu(1)])
    with pytest.raises(RuntimeError, match="via data\\(\\) because its storage type is "
                                           "row_sparse"):
        p0.data()
    with pytest.raises(RuntimeError, match="list_data\\(\\) because its storage type"):
        p0.list_data()
    with pytest.raises(RuntimeError, match="when no Trainer is created"):
        p0.list_row_sparse_data(nd.arange(0, 10))
    with pytest.raises(TypeError, match="row_id must be an NDArray"):
        p0.list_row_sparse_data([0, 1])
    p1 = Parameter("weight", shape=(10, 10))
    p1.initialize(init="xavier", ctx=[cpu(0), cpu(1)])
    with pytest.raises(RuntimeError, match="row_sparse_data\\(\\) because its storage type "
                                           "is default"):
        p1.row_sparse_data(nd.arange(0, 10))
    with pytest.raises(RuntimeError, match="list_row_sparse_data"):
        p1.list_row_sparse_data(nd.arange(0, 10))


def test_load_with_dtype_source_saved_takes_the_saved_dtype(tmp_path):
    params0 = ParameterDict("")
    params0.get("w0", shape=(2, 2), dtype="float32")
    params0.get("w1", shape=(2, 2), dtype="int8")
    params0.initialize(initializer.One(), ctx=cpu(0))
    path = str(tmp_path / "p.params")
    params0.save(path)
    params1 = ParameterDict("")
    params1.get("w0", shape=(2, 2), dtype="float16")
    params1.get("w1", shape=(2, 2), dtype="float64")
    params1.load(path, cast_dtype=True, dtype_source="current")
    assert params1["w0"].data().dtype == numpy.float16
    params1.load(path, cast_dtype=True, dtype_source="saved")
    assert params1["w0"].data().dtype == numpy.float32
    assert params1["w1"].data().dtype == numpy.int8 and params1["w1"].dtype == numpy.int8
