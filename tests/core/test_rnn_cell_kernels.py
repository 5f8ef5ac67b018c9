"""The fused LSTM/GRU's numba step kernels (core/ops/nn/rnn_cell_kernels.py) against their
NumPy twins (core/ops/nn/rnn_cells.py): outputs, final states and every gradient, over
layers, directions, initial states, sequence lengths, layouts, non-contiguous inputs and
float16/float32/float64."""
import numpy as np
import pytest

from core import autograd, cpu_kernels, nd
from core.ops.nn import rnn_cell_kernels as kernels
from core.ops.nn import rnn_cells
from core.test_utils import view_of

from .ops.specs_rnn import public_rnn, rnn_inputs

CONFIGS = {
    "one_layer": {},
    "larger": {"T": 7, "N": 5, "I": 9, "H": 16},
    "two_layers_bidirectional": {"T": 5, "N": 3, "I": 4, "H": 3, "num_layers": 2,
                                 "bidirectional": True},
    "lengths_bidirectional": {"T": 4, "N": 3, "I": 2, "H": 2, "bidirectional": True,
                              "lens": [4, 2, 1]},
    "lengths_two_layers_ntc": {"T": 5, "N": 4, "I": 3, "H": 4, "num_layers": 2,
                               "layout": "NTC", "lens": [3, 5, 0, 1]},
    "three_layers_bidirectional_lengths": {"T": 6, "N": 3, "I": 5, "H": 8, "num_layers": 3,
                                           "bidirectional": True, "lens": [6, 1, 4]},
}
KERNELS = {"lstm": ("lstm_fwd_cell", "lstm_fwd_out", "lstm_bwd_cell"),
           "gru": ("gru_fwd_pre", "gru_fwd_gates", "gru_fwd_out", "gru_bwd_cell")}


@pytest.fixture
def numba_on():
    before = cpu_kernels.enabled()
    cpu_kernels.set_enabled(True)
    yield
    cpu_kernels.set_enabled(before)


def _outputs_and_grads(args, kw, noncontig=False, without_states=False):
    """(out, h_n[, c_n]) and the gradients of a loss mixing them wrt every input."""
    arrays = []
    for i, a in enumerate(args):
        if a is None or (without_states and i in (2, 3)):
            arrays.append(None)
        elif noncontig and i == 0:
            arrays.append(view_of(a))
        else:
            arrays.append(nd.array(a, dtype=a.dtype))
    leaves = [a for a in arrays[:4] if a is not None]
    for a in leaves:
        a.attach_grad()
    with autograd.record():
        outs = public_rnn()(*arrays, **kw)
        loss = sum(((k + 1.0) * o * o).sum() + (o * (k - 0.5)).sum()
                   for k, o in enumerate(outs))
    loss.backward()
    return [o.asnumpy() for o in outs] + [a.grad.asnumpy() for a in leaves]


def _kernel_vs_twin(mode, dtype, cfg, **how):
    args, kw = rnn_inputs(np.random.default_rng(3), dtype, mode, **cfg)
    fast = _outputs_and_grads(args, kw, **how)
    with cpu_kernels.disabled():
        twin = _outputs_and_grads(args, kw, **how)
    assert len(fast) == len(twin)
    tol = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-13}[dtype]
    for a, b in zip(fast, twin):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("cfg", list(CONFIGS), ids=list(CONFIGS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_kernels_match_the_numpy_twin(numba_on, mode, dtype, cfg):
    _kernel_vs_twin(mode, dtype, CONFIGS[cfg])


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_non_contiguous_data_and_zero_initial_states(numba_on, mode):
    _kernel_vs_twin(mode, "float32", CONFIGS["two_layers_bidirectional"], noncontig=True)
    _kernel_vs_twin(mode, "float64", CONFIGS["lengths_bidirectional"], without_states=True)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_float16_computes_in_float32_through_the_kernels(numba_on, mode):
    _kernel_vs_twin(mode, "float16", CONFIGS["two_layers_bidirectional"])


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_the_kernels_run_when_enabled_and_not_when_disabled(numba_on, monkeypatch, mode):
    calls = {}
    for name in KERNELS[mode]:
        real = getattr(kernels, name)

        def counted(*a, _real=real, _name=name):
            calls[_name] = calls.get(_name, 0) + 1
            return _real(*a)

        monkeypatch.setattr(kernels, name, counted)
    args, kw = rnn_inputs(np.random.default_rng(0), "float32", mode, T=4)
    _outputs_and_grads(args, kw)
    assert calls == {name: 4 for name in KERNELS[mode]}
    calls.clear()
    with cpu_kernels.disabled():
        _outputs_and_grads(args, kw)
    assert calls == {}


def test_kernels_are_chosen_for_numpy_float32_float64_only(numba_on):
    assert kernels.on(np, np.float32) and kernels.on(np, "float64")
    assert not kernels.on(np, np.float16)
    assert not kernels.on(object(), np.float32)  # another array module (CuPy) runs the twin
    with cpu_kernels.disabled():
        assert not kernels.on(np, np.float32)


@pytest.mark.parametrize("rev", [False, True])
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_cell_functions_write_strided_outputs_like_the_twin(numba_on, mode, rev):
    """One layer/direction called directly, output into every other column of a wider
    array (as a bidirectional layer's directions are written)."""
    rng = np.random.default_rng(5)
    T, N, C, H = 5, 4, 3, 6
    G = rnn_cells.GATES[mode]
    x = rng.standard_normal((T, N, C))
    w = [rng.uniform(-0.5, 0.5, s) for s in ((G * H, C), (G * H, H), (G * H,), (G * H,))]
    h0, c0 = rng.standard_normal((N, H)), rng.standard_normal((N, H))
    mask = (np.arange(T)[:, None] < np.array([5, 3, 1, 0])[None, :]).astype(float)[:, :, None]
    dy = rng.standard_normal((T, N, H))
    results = []
    for on in (True, False):
        cpu_kernels.set_enabled(on)
        for m in (None, mask):
            store = {"gates": np.empty((T, N, 4 * H)), "c": np.empty((T, N, H)),
                     "tc": np.empty((T, N, H))}
            wide = np.zeros((T, N, 2 * H))
            y = wide[:, :, H:]
            hc = rnn_cells.FORWARD[mode](np, x, h0, c0, w, rev, m, store, y)
            back = rnn_cells.BACKWARD[mode](np, x, h0, c0, w, rev, m, store, y, dy,
                                            h0.copy(), c0.copy())
            results.append([wide, *[a for a in hc if a is not None],
                            *[a for a in back if isinstance(a, np.ndarray)]])
    cpu_kernels.set_enabled(True)
    for fast, twin in zip(results[:2], results[2:]):
        for a, b in zip(fast, twin):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
