"""kbackend nn: activations, losses, normalization, convolutions and pooling through
keras.ops, against NumPy/SciPy references (one subprocess per test)."""
from __future__ import annotations

from .conftest import check, run_python

ACTIVATIONS_LOSSES = r'''
import numpy as np, keras
from keras import ops
import scipy.special as sp
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
a = rng.standard_normal((2, 5)).astype("float32")*3
def close(g, w, tol=1e-5):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)
close(ops.relu6(a), np.clip(a, 0, 6))
close(ops.tanh(a), np.tanh(a))
close(ops.softplus(a), np.logaddexp(a, 0).astype("float32"))
close(ops.softsign(a), a / (1 + np.abs(a)))
close(ops.silu(a), a * sp.expit(a))
close(ops.log_sigmoid(a), -np.logaddexp(-a, 0).astype("float32"))
close(ops.leaky_relu(a), np.maximum(a, 0.2 * a))
close(ops.hard_sigmoid(a), np.clip(a / 6 + 0.5, 0, 1))
close(ops.hard_silu(a), a*np.clip(a / 6 + 0.5, 0, 1))
close(ops.elu(a, 0.5), np.where(a >= 0, a, 0.5 * np.expm1(a)))
close(ops.selu(a), (1.0507009873554805 * np.where(a >= 0, a, 1.6732632423543772 * np.expm1(a))).astype("float32"))
close(ops.gelu(a, approximate=False), (a * (1 + sp.erf(a / np.sqrt(2))) / 2).astype("float32"))
c = np.sqrt(2/np.pi)
close(ops.gelu(a), (0.5*a*(1+np.tanh(c*(a+0.044715*a**3)))).astype("float32"))
close(ops.celu(a), (np.maximum(a,0)+np.expm1(np.minimum(a,0))).astype("float32"))
close(ops.hard_tanh(a), np.clip(a,-1,1))
close(ops.glu(np.concatenate([a,a],1)), a*sp.expit(a))
close(ops.log_softmax(a), (a - sp.logsumexp(a, axis=-1, keepdims=True)).astype("float32"))
i = np.array([[0, 2], [1, -1]])
oh = np.zeros((2, 2, 3), "float32"); oh[0,0,0]=oh[0,1,2]=oh[1,0,1]=1
close(ops.one_hot(i, 3), oh)
close(ops.one_hot(i, 3, axis=0), np.moveaxis(oh, -1, 0))
close(ops.multi_hot(np.array([[0,2],[1,1]]), 3), np.array([[1,0,1],[0,1,0]],"float32"))
# losses
eps = 1e-7
t = np.eye(5, dtype="float32")[[1, 3]]
p = sp.softmax(a, axis=-1).astype("float32")
close(ops.categorical_crossentropy(t, a, from_logits=True), -(t * sp.log_softmax(a, -1)).sum(-1).astype("float32"))
pp = p / p.sum(-1, keepdims=True)
close(ops.categorical_crossentropy(t, p), -(t*np.log(np.clip(pp, eps, 1-eps))).sum(-1))
close(ops.sparse_categorical_crossentropy(np.array([1, 3]), a, from_logits=True), -(t * sp.log_softmax(a, -1)).sum(-1).astype("float32"))
close(ops.sparse_categorical_crossentropy(np.array([[1], [3]]), p), -(t*np.log(np.clip(pp, eps, 1-eps))).sum(-1))
tb = (rng.random((2, 5)) > 0.5).astype("float32")
def bce(t, o):
    o = np.clip(o, eps, 1-eps); return -(t*np.log(o)+(1-t)*np.log(1-o))
close(ops.binary_crossentropy(tb, sp.expit(a).astype("float32")), bce(tb, sp.expit(a)).astype("float32"), 1e-4)
close(ops.binary_crossentropy(tb, a, from_logits=True), bce(tb, sp.expit(a)).astype("float32"), 1e-4)
# moments / bn
x = rng.standard_normal((4, 3, 2)).astype("float32")
m, v = ops.moments(x, axes=[0, 1])
close(m, x.mean((0, 1))); close(v, x.var((0, 1)), 1e-4)
m, v = ops.moments(x, axes=[0], keepdims=True)
close(m, x.mean(0, keepdims=True))
mu = x.mean((0,1)); var = x.var((0,1)); g = np.array([1.5, .5], "float32"); b = np.array([.1, .2], "float32")
close(ops.batch_normalization(x, mu, var, axis=-1, offset=b, scale=g), ((x-mu)/np.sqrt(var+1e-3)*g+b).astype("float32"), 1e-4)
print("act/loss ok")
'''

CONV_POOL = r'''
import numpy as np, keras, itertools
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-4):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)

def same_pads(sizes, k, s, d):
    out = []
    for N, K, S, D in zip(sizes, k, s, d):
        ke = (K-1)*D+1; tot = max((-(-N//S)-1)*S+ke-N, 0); out.append((tot//2, tot-tot//2))
    return out

def ref_conv(x, w, s, padding, d, groups=None):
    # x (N, *sp, C) ; w (*k, C/g, O)
    nsp = x.ndim - 2; k = w.shape[:nsp]
    pads = same_pads(x.shape[1:-1], k, s, d) if padding == "same" else [(0, 0)]*nsp
    x = np.pad(x, [(0,0)] + pads + [(0,0)])
    C = x.shape[-1]; cg = w.shape[-2]; g = C // cg; O = w.shape[-1]; og = O // g
    outsp = [(x.shape[1+i] - ((k[i]-1)*d[i]+1))//s[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], *outsp, O), np.float64)
    for pos in itertools.product(*[range(o) for o in outsp]):
        for off in itertools.product(*[range(kk) for kk in k]):
            idx = tuple(p*s[i] + off[i]*d[i] for i, p in enumerate(pos))
            patch = x[(slice(None),) + idx]  # (N, C)
            for gi in range(g):
                out[(slice(None),) + pos + (slice(gi*og, (gi+1)*og),)] += patch[:, gi*cg:(gi+1)*cg] @ w[off][:, gi*og:(gi+1)*og]
    return out.astype("float32")

def cf(x): return np.moveaxis(x, -1, 1)
for shape, k, s, d, pad, cin_g in [((2, 7, 6, 3), (3, 2), (1, 1), (1, 1), "valid", 3),
                                   ((2, 7, 6, 4), (3, 3), (2, 2), (1, 1), "same", 2),
                                   ((1, 8, 8, 2), (3, 3), (1, 1), (2, 2), "same", 2),
                                   ((2, 9, 4), (3,), (2,), (1,), "same", 4),
                                   ((1, 5, 4, 4, 2), (2, 2, 2), (1, 1, 1), (1, 1, 1), "valid", 2)]:
    x = rng.standard_normal(shape).astype("float32")
    w = rng.standard_normal(k + (cin_g, 4)).astype("float32")
    want = ref_conv(x, w, s, pad, d)
    close(ops.conv(x, w, strides=s, padding=pad, dilation_rate=d), want)
    close(ops.conv(cf(x), w, strides=s, padding=pad, dilation_rate=d, data_format="channels_first"), cf(want))
# depthwise: kernel (*k, C, mult)
x = rng.standard_normal((2, 6, 6, 3)).astype("float32")
w = rng.standard_normal((3, 3, 3, 2)).astype("float32")
want = ref_conv(x, w.reshape(3, 3, 1, 6), (1, 1), "same", (1, 1))
close(ops.depthwise_conv(x, w, padding="same"), want)
close(ops.depthwise_conv(cf(x), w, padding="same", data_format="channels_first"), cf(want))
# pooling
def ref_pool(x, k, s, padding, kind):
    nsp = x.ndim - 2
    pads = same_pads(x.shape[1:-1], k, s, (1,)*nsp) if padding == "same" else [(0, 0)]*nsp
    xp = np.pad(x.astype("float64"), [(0,0)] + pads + [(0,0)], constant_values=np.nan)
    outsp = [(xp.shape[1+i] - k[i])//s[i] + 1 for i in range(nsp)]
    out = np.zeros((x.shape[0], *outsp, x.shape[-1]))
    for pos in itertools.product(*[range(o) for o in outsp]):
        win = xp[(slice(None),) + tuple(slice(p*s[i], p*s[i]+k[i]) for i, p in enumerate(pos))]
        win = win.reshape(x.shape[0], -1, x.shape[-1])
        out[(slice(None),)+pos] = np.nanmax(win, 1) if kind == "max" else np.nanmean(win, 1)
    return out.astype("float32")
for shape, k, s, pad in [((2, 6, 6, 3), (2, 2), None, "valid"), ((2, 7, 5, 3), (3, 3), (2, 2), "same"),
                         ((2, 7, 3), (2,), (1,), "same")]:
    x = rng.standard_normal(shape).astype("float32")
    ss = s or k
    for kind, f in [("max", ops.max_pool), ("avg", ops.average_pool)]:
        want = ref_pool(x, k, ss, pad, kind)
        close(f(x, k, s, pad), want)
        close(f(cf(x), k, s, pad, data_format="channels_first"), cf(want))
# Keras model forward + fit one step
model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3, padding="same", activation="relu"),
    keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(3, activation="softmax")])
xb = rng.standard_normal((5, 8, 8, 1)).astype("float32")
y = model.predict(xb, verbose=0)
assert y.shape == (5, 3) and np.allclose(y.sum(-1), 1, atol=1e-5)
W, B = model.layers[0].get_weights(); D, DB = model.layers[-1].get_weights()
h = np.maximum(ref_conv(xb, W, (1, 1), "same", (1, 1)) + B, 0)
h = ref_pool(h, (2, 2), (2, 2), "valid", "max").reshape(5, -1) @ D + DB
e = np.exp(h - h.max(-1, keepdims=True)); np.testing.assert_allclose(y, e / e.sum(-1, keepdims=True), atol=1e-5)
print("conv/pool ok")
'''


CONV_TRANSPOSE_CTC = r'''
import numpy as np, keras, itertools
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-4):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)
def cf(x): return np.moveaxis(x, -1, 1)
def ref_convT(x, w, s, padding, op, d):
    # x (N, *sp, C); w (*k, F, C); reference: scatter into the full output, then Keras crop
    from keras.src.backend.common.backend_utils import compute_conv_transpose_padding_args_for_jax
    nsp = x.ndim - 2; k = w.shape[:nsp]
    pads = compute_conv_transpose_padding_args_for_jax(x.shape, w.shape, s, padding, op, d)
    ke = [(k[i]-1)*d[i]+1 for i in range(nsp)]
    full_sp = [(x.shape[1+i]-1)*s[i] + ke[i] for i in range(nsp)]
    full = np.zeros((x.shape[0], *full_sp, w.shape[-2]))
    for pos in itertools.product(*[range(m) for m in x.shape[1:-1]]):
        for off in itertools.product(*[range(kk) for kk in k]):
            idx = tuple(p*s[i] + off[i]*d[i] for i, p in enumerate(pos))
            full[(slice(None),) + idx] += x[(slice(None),) + pos] @ w[off].T
    for i, (l, r) in enumerate(pads):
        full = np.pad(full, [(0, 0)]*(1+i) + [(0, max(r-(ke[i]-1), 0))] + [(0, 0)]*(nsp-i))
        full = np.take(full, range(ke[i]-1-l, ke[i]-1-l + (x.shape[1+i]-1)*s[i]+1+l+r-ke[i]+1), axis=1+i)
    return full.astype("float32")
for shape, k, s, d, pad, op in [((2, 4, 5, 3), (3, 3), (2, 2), (1, 1), "same", None),
                                ((2, 4, 5, 3), (3, 2), (2, 1), (1, 1), "valid", None),
                                ((1, 5, 3), (4,), (3,), (1,), "valid", None),
                                ((1, 5, 3), (3,), (2,), (1,), "same", 1),
                                ((1, 4, 4, 2), (3, 3), (1, 1), (2, 2), "same", None)]:
    x = rng.standard_normal(shape).astype("float32")
    w = rng.standard_normal(k + (4, shape[-1])).astype("float32")
    want = ref_convT(x, w, s, pad, op, d)
    got = ops.conv_transpose(x, w, strides=s, padding=pad, output_padding=op, dilation_rate=d)
    close(got, want)
    close(ops.conv_transpose(cf(x), w, strides=s, padding=pad, output_padding=op, dilation_rate=d, data_format="channels_first"), cf(want))
m = keras.Sequential([keras.Input((4, 4, 2)), keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same")])
assert m.predict(np.ones((1, 4, 4, 2), "float32"), verbose=0).shape == (1, 8, 8, 3)
print("convT ok")
import numpy as np, keras, itertools
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def ref_ctc(logits, label, blank):
    lp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    T, C = lp.shape; total = 0.0
    for path in itertools.product(range(C), repeat=T):
        col = [p for i, p in enumerate(path) if i == 0 or p != path[i-1]]
        if [p for p in col if p != blank] == list(label):
            total += np.exp(sum(lp[t, p] for t, p in enumerate(path)))
    return -np.log(total)
logits = rng.standard_normal((2, 5, 4)).astype("float64")
target = np.array([[1, 2, 0], [3, 3, 1]])
tl = np.array([2, 2]); ol = np.array([5, 4])
for mask in (0, 3, 2):
    tgt = target.copy()
    if mask == 3: tgt = np.array([[1, 2, 0], [0, 0, 2]])
    if mask == 2: tgt = np.array([[1, 3, 0], [0, 3, 1]])
    want = [ref_ctc(logits[b, :ol[b]], tgt[b, :tl[b]], mask) for b in range(2)]
    got = ops.ctc_loss(tgt, logits.astype("float32"), tl, ol, mask_index=mask)
    np.testing.assert_allclose(n(got), want, rtol=1e-4)
    assert n(got).dtype == np.float32
print("ctc ok")
'''


EXTRA_AND_FIT = r'''
import numpy as np, keras
from keras import ops
import scipy.special as sp
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def close(g, w, tol=1e-5):
    np.testing.assert_allclose(n(g), w, rtol=tol, atol=tol)
    assert n(g).dtype == np.asarray(w).dtype, (n(g).dtype, np.asarray(w).dtype)
z = rng.standard_normal((3, 5)).astype("float32")
def ref_sparsemax(z):
    # Keras' formula (the same in its jax/numpy/torch backends)
    s = -np.sort(-z, -1); cs = np.cumsum(s, -1); r = np.arange(1, z.shape[-1] + 1)
    sup = s - (cs - 1) / r > 0; k = sup.sum(-1, keepdims=True)
    tau = (np.where(sup, cs, 0).sum(-1, keepdims=True) - 1) / k
    return np.maximum(z - tau, 0).astype("float32")
close(ops.sparsemax(z), ref_sparsemax(z))
x = rng.standard_normal((2, 4, 6, 8)).astype("float32")
d2s = ops.depth_to_space(x, 2)
assert n(d2s).shape == (2, 8, 12, 2)
close(ops.space_to_depth(d2s, 2), x)
close(ops.depth_to_space(x[:, :, :4, :4].transpose(0, 3, 1, 2), 2, data_format="channels_first"), np.transpose(n(ops.depth_to_space(x[:, :, :4, :4], 2)), (0, 3, 1, 2)))
q = rng.standard_normal((2, 3, 2, 4)).astype("float32"); k = rng.standard_normal((2, 5, 2, 4)).astype("float32"); v = rng.standard_normal((2, 5, 2, 4)).astype("float32")
m = rng.random((2, 2, 3, 5)) > 0.3; m[..., 0] = True
def ref_att(q, k, v, mask=None, causal=False):
    lg = np.einsum("BTNH,BSNH->BNTS", q, k) / np.sqrt(q.shape[-1])
    keep = np.ones(lg.shape, bool)
    if mask is not None: keep &= mask
    if causal: keep &= np.tril(np.ones(lg.shape[-2:], bool))
    lg = np.where(keep, lg, -1e30)
    return np.einsum("BNTS,BSNH->BTNH", sp.softmax(lg, -1), v).astype("float32")
close(ops.dot_product_attention(q, k, v), ref_att(q, k, v))
close(ops.dot_product_attention(q, k, v, mask=m), ref_att(q, k, v, m))
close(ops.dot_product_attention(q, k[:, :3], v[:, :3], is_causal=True), ref_att(q, k[:, :3], v[:, :3], causal=True))
print("extra nn ok")
import numpy as np, keras
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 8, 8, 1)).astype("float32"); y = (x.mean((1, 2, 3)) > 0).astype("int32")
model = keras.Sequential([keras.Input((8, 8, 1)), keras.layers.Conv2D(4, 3, padding="same", activation="gelu"),
    keras.layers.BatchNormalization(), keras.layers.MaxPooling2D(), keras.layers.Conv2DTranspose(2, 3, strides=2, padding="same"),
    keras.layers.AveragePooling2D(2), keras.layers.Flatten(), keras.layers.Dense(2)])
model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
h = model.fit(x, y, epochs=5, batch_size=16, verbose=0)
l = h.history["loss"]; print(l); assert l[-1] < l[0], l
print("fit ok")
'''


ADAPTIVE = r'''
import numpy as np, keras, itertools
from keras import ops
n = ops.convert_to_numpy
rng = np.random.default_rng(0)
def ref_adaptive(x, out, fn):
    # channels_last, torch-style bins
    sp = x.shape[1:-1]
    res = np.zeros((x.shape[0], *out, x.shape[-1]), "float32")
    for pos in itertools.product(*[range(o) for o in out]):
        sl = tuple(slice((p * L) // o, -((-(p + 1) * L) // o)) for p, L, o in zip(pos, sp, out))
        win = x[(slice(None),) + sl].reshape(x.shape[0], -1, x.shape[-1])
        res[(slice(None),) + pos] = fn(win, axis=1)
    return res
for shape, out in [((2, 7, 3), (3,)), ((2, 7, 5, 3), (3, 2)), ((1, 5, 4, 6, 2), (2, 3, 4))]:
    x = rng.standard_normal(shape).astype("float32")
    for f, ref in [(ops.adaptive_average_pool, np.mean), (ops.adaptive_max_pool, np.max)]:
        want = ref_adaptive(x, out, ref)
        np.testing.assert_allclose(n(f(x, out)), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(n(f(np.moveaxis(x, -1, 1), out, data_format="channels_first")), np.moveaxis(want, -1, 1), rtol=1e-5, atol=1e-6)
print("adaptive ok")
'''


def test_activations_losses_normalization(hook_installed):
    assert "act/loss ok" in check(run_python(ACTIVATIONS_LOSSES, "kbackend", timeout=300))


def test_conv_pool_and_keras_cnn_forward(hook_installed):
    assert "conv/pool ok" in check(run_python(CONV_POOL, "kbackend", timeout=300))


def test_conv_transpose_and_ctc_loss(hook_installed):
    out = check(run_python(CONV_TRANSPOSE_CTC, "kbackend", timeout=300))
    assert "convT ok" in out and "ctc ok" in out


def test_sparsemax_space_depth_attention_and_cnn_fit(hook_installed):
    out = check(run_python(EXTRA_AND_FIT, "kbackend", timeout=300))
    assert "extra nn ok" in out and "fit ok" in out


def test_adaptive_pooling(hook_installed):
    assert "adaptive ok" in check(run_python(ADAPTIVE, "kbackend", timeout=300))
