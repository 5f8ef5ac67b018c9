"""MXNet 1.x's optimizer update operators (``nd.sgd_update``, ...; core/ops/optimizer_ops.py).

Each operator runs on the same arrays and hyper-parameters here and in real MXNet 1.9.1;
the returned weight and every state array (updated in place) must agree.
"""
import json

import numpy as np
import pytest

from core import nd
from tests.mxnet_ref import requires_mxnet, run_mxnet

F64, F32, F16 = "float64", "float32", "float16"


def _arrays(seed, shape, spec):
    """Arrays named by ``spec`` = [(name, dtype, kind)]: kind 'w' any, 'pos' positive."""
    rng = np.random.default_rng(seed)
    out = []
    for name, dt, kind in spec:
        if kind == "pos":
            a = rng.uniform(0.1, 1.0, size=shape)
        elif kind == "one":
            a = np.array([rng.uniform(0.5, 2.0)])
        else:
            a = rng.uniform(-1.0, 1.0, size=shape)
        out.append((name, a.astype(dt)))
    return out


def _w(dt=F64):
    return [("weight", dt, "w"), ("grad", dt, "w")]


CLIP = {"rescale_grad": 0.5, "clip_gradient": 0.3}
# (case id, MXNet function path, arrays spec, hyper-parameters, out: "weight" or None)
CASES = [
    ("sgd", "sgd_update", _w(), {"lr": 0.1, "wd": 0.01}, "weight"),
    ("sgd_clip", "sgd_update", _w(), {"lr": 0.1, "wd": 0.01, **CLIP}, "weight"),
    ("sgd_no_out", "sgd_update", _w(), {"lr": 0.1}, None),
    ("sgd_f32", "sgd_update", _w(F32), {"lr": 0.1, "wd": 0.01, **CLIP}, "weight"),
    ("sgd_mom", "sgd_mom_update", _w() + [("mom", F64, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01, **CLIP}, "weight"),
    ("mp_sgd", "mp_sgd_update", _w(F16) + [("weight32", F32, "w")],
     {"lr": 0.1, "wd": 0.01, **CLIP}, "weight"),
    ("mp_sgd_mom", "mp_sgd_mom_update", _w(F16) + [("mom", F32, "w"), ("weight32", F32, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01}, "weight"),
    ("nag", "nag_mom_update", _w() + [("mom", F64, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01, **CLIP}, "weight"),
    ("nag_no_out", "nag_mom_update", _w() + [("mom", F64, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01}, None),
    ("mp_nag", "mp_nag_mom_update", _w(F16) + [("mom", F32, "w"), ("weight32", F32, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01}, "weight"),
    ("signsgd", "signsgd_update", _w(), {"lr": 0.1, "wd": 0.01}, "weight"),
    ("signum", "signum_update", _w() + [("mom", F64, "w")],
     {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.02, **CLIP}, "weight"),
    ("adam", "adam_update", _w() + [("mean", F64, "w"), ("var", F64, "pos")],
     {"lr": 0.01, "beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6, "wd": 0.01, **CLIP}, "weight"),
    ("adamw", "contrib.adamw_update",
     _w() + [("mean", F64, "w"), ("var", F64, "pos"), ("rescale_grad", F32, "one")],
     {"lr": 0.01, "eta": 0.5, "wd": 0.01, "clip_gradient": 0.3}, "weight"),
    ("mp_adamw", "contrib.mp_adamw_update",
     _w(F16) + [("mean", F32, "w"), ("var", F32, "pos"), ("weight32", F32, "w"),
                ("rescale_grad", F32, "one")],
     {"lr": 0.01, "eta": 0.5, "wd": 0.01}, "weight"),
    ("rmsprop", "rmsprop_update", _w() + [("n", F64, "pos")],
     {"lr": 0.01, "gamma1": 0.9, "wd": 0.01, "clip_weights": 0.9, **CLIP}, "weight"),
    ("rmspropalex", "rmspropalex_update",
     _w() + [("n", F64, "pos"), ("g", F64, "w"), ("delta", F64, "w")],
     {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8, "wd": 0.01, **CLIP}, "weight"),
    ("ftrl", "ftrl_update", _w() + [("z", F64, "w"), ("n", F64, "pos")],
     {"lr": 0.1, "lamda1": 0.2, "beta": 1.5, "wd": 0.01, **CLIP}, "weight"),
    ("ftml", "ftml_update",
     _w() + [("d", F64, "pos"), ("v", F64, "pos"), ("z", F64, "w")],
     {"lr": 0.1, "beta1": 0.6, "beta2": 0.99, "epsilon": 1e-6, "t": 3, "wd": 0.01,
      "rescale_grad": 0.5, "clip_grad": 0.3}, "weight"),
    ("lamb1", "lamb_update_phase1", _w() + [("mean", F64, "w"), ("var", F64, "pos")],
     {"t": 2, "wd": 0.01, "beta1": 0.8, "beta2": 0.9, **CLIP}, None),
    ("lamb1_nobias", "lamb_update_phase1", _w() + [("mean", F64, "w"), ("var", F64, "pos")],
     {"t": 2, "wd": 0.01, "bias_correction": False}, None),
    ("mp_lamb1", "mp_lamb_update_phase1",
     _w(F16) + [("mean", F32, "w"), ("var", F32, "pos"), ("weight32", F32, "w")],
     {"t": 2, "wd": 0.01}, None),
    ("lamb2", "lamb_update_phase2",
     [("weight", F64, "w"), ("g", F64, "w"), ("r1", F64, "one"), ("r2", F64, "one")],
     {"lr": 0.1, "lower_bound": 0.1, "upper_bound": 1.2}, "weight"),
    ("mp_lamb2", "mp_lamb_update_phase2",
     [("weight", F16, "w"), ("g", F32, "w"), ("r1", F32, "one"), ("r2", F32, "one"),
      ("weight32", F32, "w")], {"lr": 0.1}, "weight"),
]

_MX_SCRIPT = """
import json, numpy as np, mxnet as mx
cases = json.loads(open({path!r}).read())
res = {{}}
for cid, fn, names, arrays, dtypes, kw, out in cases:
    nds = [mx.nd.array(np.array(a, dtype=d), dtype=d) for a, d in zip(arrays, dtypes)]
    f = mx.nd
    for part in fn.split('.'):
        f = getattr(f, part)
    try:
        if fn.startswith('contrib.'):  # their Python signature: positional lr, eta
            kw = dict(kw)
            r = f(*nds, kw.pop('lr'), kw.pop('eta'), out=nds[0] if out else None, **kw)
        else:
            r = f(*nds, out=nds[0] if out else None, **kw)
    except Exception as e:
        raise RuntimeError(cid) from e
    res[cid] = [r.asnumpy().astype('float64').tolist()] + [
        a.asnumpy().astype('float64').tolist() for a in nds]
print(json.dumps(res))
"""


def _ours(fn, arrays, kw, out):
    nds = [nd.array(a, dtype=a.dtype) for a in arrays]
    f = nd
    for part in fn.split("."):
        f = getattr(f, part)
    r = f(*nds, out=nds[0] if out else None, **kw)
    if out:
        assert r is nds[0]
    return [r.asnumpy().astype(np.float64)] + [a.asnumpy().astype(np.float64) for a in nds]


def _case_arrays(i, spec):
    return [a for _, a in _arrays(100 + i, (3, 4), spec)]


@pytest.fixture(scope="module")
def mxnet_results(tmp_path_factory):
    rows = []
    for i, (cid, fn, spec, kw, out) in enumerate(CASES):
        arrays = _case_arrays(i, spec)
        rows.append([cid, fn, [n for n, _, _ in spec], [a.tolist() for a in arrays],
                     [str(a.dtype) for a in arrays], kw, out])
    path = tmp_path_factory.mktemp("optops") / "cases.json"
    path.write_text(json.dumps(rows))
    return json.loads(run_mxnet(_MX_SCRIPT.format(path=str(path))))


@requires_mxnet
@pytest.mark.parametrize("i", range(len(CASES)), ids=[c[0] for c in CASES])
def test_update_matches_real_mxnet(i, mxnet_results):
    cid, fn, spec, kw, out = CASES[i]
    got = _ours(fn, _case_arrays(i, spec), kw, out)
    want = mxnet_results[cid]
    low = any(dt == F16 for _, dt, _ in spec)
    single = any(dt == F32 for _, dt, _ in spec)
    rtol = 2e-3 if low else 2e-5 if single else 1e-5  # MXNet's hyper-parameters are float32
    names = ["result"] + [n for n, _, _ in spec]
    for name, g, w in zip(names, got, want):
        np.testing.assert_allclose(g, np.array(w), rtol=rtol, atol=rtol * 1e-2,
                                   err_msg=f"{cid}: {name}")


def test_states_update_in_place_and_out_is_returned():
    w = nd.array([1.0, 2.0])
    mom = nd.zeros(2)
    r = nd.sgd_mom_update(w, nd.array([0.5, -0.5]), mom, out=w, lr=0.1, momentum=0.9)
    assert r is w
    np.testing.assert_allclose(mom.asnumpy(), [-0.05, 0.05], rtol=1e-6)
    np.testing.assert_allclose(w.asnumpy(), [0.95, 2.05], rtol=1e-6)
    new = nd.sgd_update(w, nd.array([1.0, 1.0]), lr=0.5)  # no out=: the weight is unchanged
    np.testing.assert_allclose(w.asnumpy(), [0.95, 2.05], rtol=1e-6)
    np.testing.assert_allclose(new.asnumpy(), [0.45, 1.55], rtol=1e-6)


def test_lazy_update_accepted_and_errors_name_the_operator():
    w = nd.ones(3)
    nd.sgd_update(w, nd.ones(3), out=w, lr=0.1, lazy_update=False)
    np.testing.assert_allclose(w.asnumpy(), [0.9] * 3, rtol=1e-6)
    with pytest.raises(TypeError, match="sgd_update: the hyper-parameter 'lr' is required"):
        nd.sgd_update(w, nd.ones(3))
    with pytest.raises(ValueError, match=r"adam_update: var must have the weight's shape"):
        nd.adam_update(w, nd.ones(3), nd.zeros(3), nd.zeros(2), lr=0.1)
    with pytest.raises(TypeError, match=r"sgd_mom_update: unexpected argument\(s\) \['lrs'\]"):
        nd.sgd_mom_update(w, nd.ones(3), nd.zeros(3), lrs=0.1)
    with pytest.raises(TypeError, match="mom must be an NDArray"):
        nd.sgd_mom_update(w, nd.ones(3), np.zeros(3), lr=0.1)


def test_adamw_skips_the_update_for_a_zero_or_nonfinite_scale():
    w = nd.array([1.0, 2.0])
    for scale in (0.0, float("inf"), float("nan")):
        nd.contrib.adamw_update(w, nd.ones(2), nd.zeros(2), nd.zeros(2), nd.array([scale]),
                                out=w, lr=0.1, eta=1.0)
        assert w.asnumpy().tolist() == [1.0, 2.0]


def _flat(groups):
    return [a for g in groups for a in g]


@pytest.mark.parametrize("multi,single,per", [
    ("multi_sgd_update", "sgd_update", 2), ("multi_sgd_mom_update", "sgd_mom_update", 3),
    ("multi_mp_sgd_update", "mp_sgd_update", 3),
    ("multi_mp_sgd_mom_update", "mp_sgd_mom_update", 4)])
@pytest.mark.parametrize("preloaded", [False, True])
def test_multi_tensor_forms_equal_the_one_tensor_operator(multi, single, per, preloaded):
    rng = np.random.default_rng(5)
    shapes = [(3,), (2, 2)]
    dts = [F16, F16, F32, F32] if multi.startswith("multi_mp") else [F32] * 4

    def make():
        return [[nd.array(rng.uniform(-1, 1, size=s).astype(dts[k]), dtype=dts[k])
                 for k in range(per)] for s in shapes]

    a = make()
    b = [[x.copy() for x in g] for g in a]
    lrs, wds = [0.1, 0.2], [0.0, 0.01]
    kw = {"momentum": 0.9} if "mom" in multi else {}
    name = ("preloaded_" + multi) if preloaded else multi
    data = _flat(a) + ([nd.array(lrs), nd.array(wds)] if preloaded else [])
    extra = {} if preloaded else {"lrs": lrs, "wds": wds}
    res = getattr(nd, name)(*data, out=[g[0] for g in a], num_weights=2, **extra, **kw)
    for g, lr, wd in zip(b, lrs, wds):
        getattr(nd, single)(*g, out=g[0], lr=lr, wd=wd, **kw)
    for ga, gb, r in zip(a, b, res):
        assert r is ga[0]
        for x, y in zip(ga, gb):
            np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    with pytest.raises(ValueError, match=f"{name}: expects {per} arrays per weight"):
        getattr(nd, name)(*data[:-1], num_weights=2, **extra, **kw)


def test_update_operators_on_symbols_keep_states_as_auxiliary_states():
    from core import sym

    s = sym.sgd_mom_update(sym.var("w"), sym.var("g"), sym.var("m"), lr=0.1, momentum=0.9)
    assert s.list_arguments() == ["w", "g"] and s.list_auxiliary_states() == ["m"]
    mom = nd.zeros(2)
    ex = s.bind(nd.cpu(), {"w": nd.ones(2), "g": nd.ones(2)}, aux_states={"m": mom})
    ex.forward()
    ex.forward()  # the momentum carries over: -0.1, then 0.9 * -0.1 - 0.1
    np.testing.assert_allclose(ex.outputs[0].asnumpy(), [0.81, 0.81], rtol=1e-6)
    np.testing.assert_allclose(mom.asnumpy(), [-0.19, -0.19], rtol=1e-6)
