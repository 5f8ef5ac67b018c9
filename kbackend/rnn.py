"""Keras backend ``rnn``: the generic step loop and fused LSTM/GRU on core's ``RNN``.

* :func:`rnn` runs Keras' step function over time in a Python loop (eager, so
  ``unroll`` changes nothing numerically), with masks, ``go_backwards``,
  ``constants``, ``zero_output_for_mask`` and ``return_all_outputs``. At a masked
  step the states are carried over and the output is the previous step's output
  (zeros before the first step), or zeros with ``zero_output_for_mask``, as on
  Keras' TensorFlow and torch backends.
* :func:`lstm`, :func:`gru`, :func:`bidirectional_lstm` and :func:`bidirectional_gru`
  run the whole sequence through core's fused ``RNN`` operator (one forward pass,
  one backward pass through time) when it computes exactly what the generic loop
  would; otherwise they raise ``NotImplementedError`` and Keras' layers fall back to
  :func:`rnn` (see ``keras/src/layers/rnn/lstm.py``, ``gru.py``, ``bidirectional.py``).
  :func:`cudnn_ok` tells which layer arguments the fused path serves.
"""
from __future__ import annotations

import numpy
from keras.src import tree
from keras.src.backend.common import standardize_dtype

from core import nd
from core import np as cnp
from kbackend.core import cast, convert_to_numpy, convert_to_tensor

# Compute dtypes of core's fused RNN operator.
_FUSED_DTYPES = ("float16", "float32", "float64")


# --------------------------------------------------------------------------- generic loop
def _bool_mask(mask, batch: int, steps: int):
    """``mask`` as a boolean ``(batch, steps)`` tensor (trailing axes: any is valid)."""
    mask = convert_to_tensor(mask)
    if standardize_dtype(mask.dtype) != "bool":
        mask = cast(mask, "bool")
    if mask.ndim > 2:
        mask = cnp.any(mask, axis=tuple(range(2, mask.ndim)))
    if tuple(mask.shape) != (batch, steps):
        raise ValueError(
            f"rnn: the mask must have shape (batch, timesteps) = {(batch, steps)} "
            f"(batch-major), got {tuple(mask.shape)}")
    return mask


def _select(keep, new, old):
    """``where(keep, new, old)`` with ``keep`` ``(batch,)`` broadcast over ``new``'s axes."""
    k = cnp.reshape(keep, (keep.shape[0],) + (1,) * (new.ndim - 1))
    return cnp.where(k, new, old)


def rnn(step_function, inputs, initial_states, go_backwards=False, mask=None,
        constants=None, unroll=False, input_length=None, time_major=False,
        zero_output_for_mask=False, return_all_outputs=True):
    """Iterate ``step_function`` over the time axis of ``inputs``.

    Args:
        step_function: ``(inputs_t, states + constants) -> (output_t, new_states)``;
            ``inputs_t`` has the structure of ``inputs`` without the time axis.
        inputs: a tensor (or nested structure of tensors) of shape
            ``(batch, time, ...)``, or ``(time, batch, ...)`` with ``time_major``.
        initial_states: the list of initial states (tensors of shape ``(batch, ...)``,
            possibly nested).
        go_backwards: process the time steps in reverse order; the outputs are then
            in processing order (the last input's output first).
        mask: ``(batch, time)`` (or ``(time, batch)`` with ``time_major``) booleans;
            at a False step the states are carried over unchanged.
        constants: tensors passed to every step after the states.
        unroll: accepted for Keras' API; the loop always runs step by step eagerly.
        input_length: accepted for Keras' API (the time axis gives the length).
        time_major: ``inputs`` (and ``mask``) have time first.
        zero_output_for_mask: the output at a masked step is zeros instead of the
            previous output.
        return_all_outputs: stack every step's output; if False, ``outputs`` holds
            only the last output (a time axis of length 1).

    Returns:
        ``(last_output, outputs, new_states)``: ``outputs`` is ``(batch, time, ...)``
        (time first with ``time_major``).
    """
    del unroll, input_length
    time_axis = 0 if time_major else 1
    flat_inputs = [convert_to_tensor(x) for x in tree.flatten(inputs)]
    if not flat_inputs:
        raise ValueError("rnn: `inputs` holds no tensor")
    for x in flat_inputs:
        if x.ndim < 3:
            raise ValueError(
                f"rnn: every input must have at least 3 dimensions (batch, time, "
                f"features), got shape {tuple(x.shape)}")
    steps = int(flat_inputs[0].shape[time_axis])
    batch = int(flat_inputs[0].shape[1 - time_axis])
    if steps == 0:
        raise ValueError(f"rnn: the inputs have no time steps (shape "
                         f"{tuple(flat_inputs[0].shape)})")
    constants = tuple(constants) if constants is not None else ()
    masks = None
    if mask is not None:
        mask = convert_to_tensor(mask)
        if time_major:
            mask = cnp.swapaxes(mask, 0, 1)
        mask = _bool_mask(mask, batch, steps)
        masks = [mask[:, t] for t in range(steps)]

    order = range(steps - 1, -1, -1) if go_backwards else range(steps)
    states = initial_states
    prev_flat = None
    outputs = []
    for t in order:
        x_t = [x[t] if time_major else x[:, t] for x in flat_inputs]
        x_t = tree.pack_sequence_as(inputs, x_t)
        output, new_states = step_function(x_t, tuple(states) + constants)
        flat_out = [convert_to_tensor(o) for o in tree.flatten(output)]
        if masks is not None:
            keep = masks[t]
            if prev_flat is None:
                prev_flat = [cnp.zeros_like(o) for o in flat_out]
            fill = ([cnp.zeros_like(o) for o in flat_out] if zero_output_for_mask
                    else prev_flat)
            flat_out = [_select(keep, o, f) for o, f in zip(flat_out, fill)]
            flat_new = [_select(keep, convert_to_tensor(n), convert_to_tensor(s))
                        for n, s in zip(tree.flatten(new_states), tree.flatten(states))]
            new_states = tree.pack_sequence_as(new_states, flat_new)
            output = tree.pack_sequence_as(output, flat_out)
            prev_flat = flat_out
        states = new_states
        if return_all_outputs or not outputs:
            outputs.append(flat_out)
        else:
            outputs[0] = flat_out

    last_output = tree.pack_sequence_as(output, outputs[-1])
    stacked = [cnp.stack(list(seq), axis=time_axis) for seq in zip(*outputs)]
    return last_output, tree.pack_sequence_as(output, stacked), states


# --------------------------------------------------------------------------- fused path
def _is_activation(fn, name: str) -> bool:
    from keras.src import activations, ops

    from kbackend import nn

    return fn in (getattr(activations, name), getattr(ops, name), getattr(nn, name))


def cudnn_ok(activation, recurrent_activation, unroll, use_bias=True, reset_after=None):
    """Whether the fused LSTM/GRU path serves a layer with these arguments.

    The fused operator computes ``tanh`` activations with ``sigmoid`` gates and,
    for GRU, the ``reset_after=True`` formula. ``unroll=True`` asks for the step
    loop, so it is left to :func:`rnn`. A missing bias is fused as zeros, so
    ``use_bias`` does not matter. Masks are checked by :func:`lstm`/:func:`gru`
    themselves (right-padded masks only).

    Args:
        activation: the cell's activation.
        recurrent_activation: the cell's recurrent (gate) activation.
        unroll: the layer's ``unroll``.
        use_bias: the cell's ``use_bias``.
        reset_after: GRU's ``reset_after`` (None for LSTM).

    Returns:
        True if :func:`lstm`/:func:`gru` run these arguments fused.
    """
    del use_bias
    return (_is_activation(activation, "tanh")
            and _is_activation(recurrent_activation, "sigmoid")
            and not unroll and reset_after in (None, True))


def _lengths(mask, inputs, return_sequences: bool):
    """Per-sequence lengths of a right-padded ``mask`` (None when nothing is masked).

    Raises NotImplementedError where the fused operator would not give the generic
    loop's numbers: padding that is not on the right, an empty sequence, or padded
    steps in a returned sequence (their outputs depend on the layer's
    ``zero_output_for_mask``, which the backend is not told).
    """
    if mask is None:
        return None
    m = convert_to_numpy(mask).astype(bool)
    if m.ndim > 2:
        m = m.reshape(m.shape[0], m.shape[1], -1).any(axis=-1)
    if m.shape != tuple(inputs.shape[:2]):
        raise ValueError(
            f"lstm/gru: the mask must have shape (batch, timesteps) = "
            f"{tuple(inputs.shape[:2])}, got {m.shape}")
    if m.all():
        return None
    lengths = m.sum(axis=1)
    right_padded = (numpy.arange(m.shape[1])[None, :] < lengths[:, None]) == m
    if return_sequences or not right_padded.all() or (lengths == 0).any():
        raise NotImplementedError
    return lengths.astype("int32")


def _fused_dtype(kernel) -> str:
    dtype = standardize_dtype(kernel.dtype)
    if dtype not in _FUSED_DTYPES:
        raise NotImplementedError  # e.g. bfloat16: the generic loop handles it
    return dtype


def _flat(w):
    return cnp.reshape(w, (-1,))


def _lstm_weights(kernel, recurrent_kernel):
    """Core's (i, f, g, o) = Keras' (i, f, c, o): transposed, flattened matrices."""
    return [_flat(cnp.transpose(kernel)), _flat(cnp.transpose(recurrent_kernel))]


def _lstm_biases(bias, units: int, dtype: str):
    zeros = cnp.zeros((4 * units,), dtype=dtype)
    return [zeros if bias is None else cast(bias, dtype), zeros]


def _gru_swap(w, units: int):
    """Keras' gate columns (z, r, h) in core's order (r, z, n)."""
    return cnp.concatenate([w[..., units:2 * units], w[..., :units], w[..., 2 * units:]],
                           axis=-1)


def _gru_weights(kernel, recurrent_kernel, units: int):
    return [_flat(cnp.transpose(_gru_swap(kernel, units))),
            _flat(cnp.transpose(_gru_swap(recurrent_kernel, units)))]


def _gru_biases(bias, units: int, dtype: str):
    if bias is None:
        zeros = cnp.zeros((3 * units,), dtype=dtype)
        return [zeros, zeros]
    bias = cast(bias, dtype)
    if tuple(bias.shape) != (2, 3 * units):
        raise NotImplementedError  # not reset_after's (input, recurrent) bias pair
    swapped = _gru_swap(bias, units)
    return [swapped[0], swapped[1]]


def _run(mode, inputs, parameters, h0, c0, units, lengths, bidirectional=False):
    """Core's fused RNN on batch-major ``inputs``; returns ``(out, h_n[, c_n])``."""
    seq = None
    if lengths is not None:
        seq = convert_to_tensor(lengths, dtype="int32")
    return nd.RNN(inputs, parameters, h0, c0, seq, state_size=units, mode=mode,
                  bidirectional=bidirectional, state_outputs=True, layout="NTC",
                  use_sequence_length=lengths is not None)


def _reverse(inputs, lengths):
    """Each sequence reversed within its length (the whole time axis without one)."""
    if lengths is None:
        return cnp.flip(inputs, axis=1)
    tnc = cnp.swapaxes(inputs, 0, 1)
    rev = nd.SequenceReverse(tnc, convert_to_tensor(lengths, dtype="int32"),
                             use_sequence_length=True, axis=0)
    return cnp.swapaxes(rev, 0, 1)


def _single(mode, inputs, states, mask, weights, units, dtype, return_sequences,
            go_backwards):
    inputs = cast(inputs, dtype)
    if inputs.ndim != 3:
        raise ValueError(f"{mode}: inputs must be (batch, timesteps, features), got "
                         f"shape {tuple(inputs.shape)}")
    lengths = _lengths(mask, inputs, return_sequences)
    if go_backwards:
        inputs = _reverse(inputs, lengths)
    parameters = cnp.concatenate(weights)
    states = [cnp.expand_dims(cast(s, dtype), 0) for s in states]
    if mode == "lstm":
        out, h, c = _run(mode, inputs, parameters, states[0], states[1], units, lengths)
        new_states = [h[0], c[0]]
    else:
        out, h = _run(mode, inputs, parameters, states[0], None, units, lengths)
        new_states = [h[0]]
    last = new_states[0]
    outputs = out if return_sequences else cnp.expand_dims(last, 1)
    return last, outputs, new_states


def lstm(inputs, initial_state_h, initial_state_c, mask, kernel, recurrent_kernel, bias,
         activation, recurrent_activation, return_sequences=False, go_backwards=False,
         unroll=False, time_major=False):
    """An LSTM layer's loop through core's fused ``RNN`` operator.

    Args:
        inputs: ``(batch, timesteps, features)``.
        initial_state_h: ``(batch, units)``; initial_state_c: ``(batch, units)``.
        mask: None or a ``(batch, timesteps)`` boolean mask.
        kernel: ``(features, 4 * units)``, gates (i, f, c, o).
        recurrent_kernel: ``(units, 4 * units)``.
        bias: ``(4 * units,)`` or None.
        activation, recurrent_activation: the cell's activations.
        return_sequences: return every step's output (else only the last).
        go_backwards: process the sequence in reverse.
        unroll: the layer's ``unroll``.
        time_major: must be False (Keras' layers never pass it).

    Returns:
        ``(last_output, outputs, [h, c])`` as :func:`rnn` returns them for the LSTM cell.

    Raises:
        NotImplementedError: for arguments the fused operator does not compute as
            the generic loop would (other activations, ``unroll``, ``time_major``,
            bfloat16, masks that are not right padding, or padded steps in a returned
            sequence); Keras then runs :func:`rnn`.
    """
    if time_major or not cudnn_ok(activation, recurrent_activation, unroll):
        raise NotImplementedError
    kernel = convert_to_tensor(kernel)
    dtype = _fused_dtype(kernel)
    recurrent_kernel = cast(recurrent_kernel, dtype)
    units = int(recurrent_kernel.shape[0])
    weights = _lstm_weights(kernel, recurrent_kernel) + _lstm_biases(bias, units, dtype)
    return _single("lstm", inputs, [initial_state_h, initial_state_c], mask, weights, units,
                   dtype, return_sequences, go_backwards)


def gru(inputs, initial_state, mask, kernel, recurrent_kernel, bias, activation,
        recurrent_activation, return_sequences=False, go_backwards=False, unroll=False,
        time_major=False, reset_after=True):
    """A GRU layer's loop (``reset_after=True``) through core's fused ``RNN`` operator.

    Args:
        inputs: ``(batch, timesteps, features)``.
        initial_state: ``(batch, units)``.
        mask: None or a ``(batch, timesteps)`` boolean mask.
        kernel: ``(features, 3 * units)``, gates (z, r, h).
        recurrent_kernel: ``(units, 3 * units)``.
        bias: ``(2, 3 * units)`` (input and recurrent biases) or None.
        activation, recurrent_activation: the cell's activations.
        return_sequences: return every step's output (else only the last).
        go_backwards: process the sequence in reverse.
        unroll: the layer's ``unroll``.
        time_major: must be False (Keras' layers never pass it).
        reset_after: must be True (the fused operator's formula).

    Returns:
        ``(last_output, outputs, [h])`` as :func:`rnn` returns them for the GRU cell.

    Raises:
        NotImplementedError: as :func:`lstm`, and for ``reset_after=False``.
    """
    if time_major or not cudnn_ok(activation, recurrent_activation, unroll,
                                  reset_after=bool(reset_after)):
        raise NotImplementedError
    kernel = convert_to_tensor(kernel)
    dtype = _fused_dtype(kernel)
    recurrent_kernel = cast(recurrent_kernel, dtype)
    units = int(recurrent_kernel.shape[0])
    weights = (_gru_weights(kernel, recurrent_kernel, units)
               + _gru_biases(bias, units, dtype))
    if tree.is_nested(initial_state):
        initial_state = initial_state[0]
    return _single("gru", inputs, [initial_state], mask, weights, units, dtype,
                   return_sequences, go_backwards)


def _bidirectional(mode, inputs, states, fwd, bwd, units, dtype, return_sequences):
    """Both directions in one fused call; ``fwd``/``bwd`` are (matrices, biases)."""
    inputs = cast(inputs, dtype)
    if inputs.ndim != 3:
        raise ValueError(f"bidirectional_{mode}: inputs must be (batch, timesteps, "
                         f"features), got shape {tuple(inputs.shape)}")
    parameters = cnp.concatenate(fwd[0] + bwd[0] + fwd[1] + bwd[1])
    stacked = [cnp.stack([cast(f, dtype), cast(b, dtype)]) for f, b in states]
    res = _run(mode, inputs, parameters, stacked[0],
               stacked[1] if mode == "lstm" else None, units, None, bidirectional=True)
    out, hn = res[0], res[1:]
    fwd_states = [s[0] for s in hn]
    bwd_states = [s[1] for s in hn]
    if return_sequences:
        fwd_out, bwd_out = out[:, :, :units], out[:, :, units:]
    else:
        fwd_out = cnp.expand_dims(fwd_states[0], 1)
        bwd_out = cnp.expand_dims(bwd_states[0], 1)
    return ((fwd_states[0], fwd_out, fwd_states), (bwd_states[0], bwd_out, bwd_states))


def bidirectional_lstm(inputs, fwd_initial_state_h, fwd_initial_state_c,
                       bwd_initial_state_h, bwd_initial_state_c, mask, fwd_kernel,
                       fwd_recurrent_kernel, fwd_bias, bwd_kernel, bwd_recurrent_kernel,
                       bwd_bias, activation, recurrent_activation, return_sequences=False,
                       unroll=False):
    """A bidirectional LSTM (forward and reverse directions) in one fused call.

    Arguments as :func:`lstm`, one set per direction. The reverse direction's
    outputs are returned in the original time order (its "last" output is the one
    at the first time step), as Keras' ``Bidirectional`` expects.

    Returns:
        ``((fwd_last, fwd_outputs, [fwd_h, fwd_c]), (bwd_last, bwd_outputs,
        [bwd_h, bwd_c]))``.

    Raises:
        NotImplementedError: with a mask, or for arguments :func:`lstm` refuses.
    """
    if mask is not None or not cudnn_ok(activation, recurrent_activation, unroll):
        raise NotImplementedError
    fwd_kernel = convert_to_tensor(fwd_kernel)
    dtype = _fused_dtype(fwd_kernel)
    units = int(fwd_recurrent_kernel.shape[0])
    sides = []
    for k, rk, b in ((fwd_kernel, fwd_recurrent_kernel, fwd_bias),
                     (bwd_kernel, bwd_recurrent_kernel, bwd_bias)):
        sides.append((_lstm_weights(cast(k, dtype), cast(rk, dtype)),
                      _lstm_biases(b, units, dtype)))
    states = [(fwd_initial_state_h, bwd_initial_state_h),
              (fwd_initial_state_c, bwd_initial_state_c)]
    return _bidirectional("lstm", inputs, states, sides[0], sides[1], units, dtype,
                          return_sequences)


def bidirectional_gru(inputs, fwd_initial_state, bwd_initial_state, mask, fwd_kernel,
                      fwd_recurrent_kernel, fwd_bias, bwd_kernel, bwd_recurrent_kernel,
                      bwd_bias, activation, recurrent_activation, return_sequences=False,
                      unroll=False, reset_after=True):
    """A bidirectional GRU (``reset_after=True``) in one fused call.

    Arguments as :func:`gru`, one set per direction; returns and raises as
    :func:`bidirectional_lstm` (states ``[h]`` per direction).
    """
    if mask is not None or not cudnn_ok(activation, recurrent_activation, unroll,
                                        reset_after=bool(reset_after)):
        raise NotImplementedError
    fwd_kernel = convert_to_tensor(fwd_kernel)
    dtype = _fused_dtype(fwd_kernel)
    units = int(fwd_recurrent_kernel.shape[0])
    sides = []
    for k, rk, b in ((fwd_kernel, fwd_recurrent_kernel, fwd_bias),
                     (bwd_kernel, bwd_recurrent_kernel, bwd_bias)):
        sides.append((_gru_weights(cast(k, dtype), cast(rk, dtype), units),
                      _gru_biases(b, units, dtype)))
    states = [(fwd_initial_state, bwd_initial_state)]
    return _bidirectional("gru", inputs, states, sides[0], sides[1], units, dtype,
                          return_sequences)
