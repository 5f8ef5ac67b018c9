"""Keras backend ``trainer``: the backend mixin of ``keras.Model`` (fit/evaluate/predict).

Mirrors Keras' torch trainer. A training step runs the forward pass and the loss
inside ``core.autograd.record()``; the trainable Variables' core arrays are marked
for gradients (``attach_grad``, once per array), and ``core.autograd.grad`` returns
the gradient of the loss for each of them. The optimizer then updates the Variables
outside recording, in place (:mod:`kbackend.optimizer`).

Data comes from Keras' own ``EpochIterator`` (NumPy batches); callbacks, the
History and Keras' progress bar are Keras' own.

``jit_compile=True`` (Keras' ``"auto"`` resolves to it) runs the forward pass and the
loss of the built-in steps as a compiled graph (:mod:`kbackend.jit`); a model that
cannot be traced runs eagerly after one warning. With ``steps_per_execution=N`` the
step functions run the N batches Keras' ``EpochIterator`` hands them one after the
other (callbacks see the logs of the last one, as on Keras' other backends).

A custom ``train_step`` does what :meth:`KBackendTrainer.train_step` does (import
``kbackend.trainer`` after ``keras``)::

    from core import autograd
    from kbackend.trainer import mark_trainable

    def train_step(self, data):
        x, y = data
        weights = self.trainable_weights
        arrays = mark_trainable(weights)
        with autograd.record():
            y_pred = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        grads = autograd.grad(loss, arrays)
        self.optimizer.apply(grads, weights)
        ...  # update and return the metrics

Keras' built-in SGD, Adam, AdamW, RMSprop and Adagrad run core's fused in-place
update rules on the Variables' core arrays (:mod:`kbackend.optimizer`); any other
optimizer is Keras' generic code, whose ``assign``/``assign_add``/``assign_sub`` calls
also write into the arrays in place (``Variable._direct_assign``). Either way the
arrays marked for gradients stay the same objects from step to step.

Under ``keras.distribution.DataParallel`` the built-in steps split each batch over
the distribution's devices (:mod:`kbackend.data_parallel`): one replica per device,
gradients summed, one optimizer update; a custom ``train_step`` runs on one device.

The loss tracker (a ``keras.metrics.Mean``) is updated in place with the batch's
loss times its size, which is what ``Mean.update_state(loss, sample_weight=n)``
computes, without the dozen generic ops that call takes.
"""
from __future__ import annotations

import warnings

import numpy as np
from keras.src import backend, tree
from keras.src import callbacks as callbacks_module
from keras.src import metrics as metrics_module
from keras.src import optimizers as optimizers_module
from keras.src.backend import config
from keras.src.backend.common.stateless_scope import in_stateless_scope
from keras.src.trainers import trainer as base_trainer
from keras.src.trainers.data_adapters import array_slicing, data_adapter_utils
from keras.src.trainers.epoch_iterator import EpochIterator
from keras.src.utils import traceback_utils
from keras.src.utils.python_utils import pythonify_logs

from core import autograd as _autograd
from core import np as _cnp
from core.ndarray import NDArray as _NDArray

from .data_parallel import replicated_steps
from .jit import step_outputs


def _batch_size(x) -> int:
    return next(i for i in tree.flatten(x) if i is not None).shape[0]


def _marked(array):
    """``array`` (a Variable's core array), marked for gradients if it is not yet."""
    if array._node is None or array.grad is None:
        array.attach_grad()
    return array


def _gradients(loss, arrays):
    """Gradients of ``loss`` for the marked ``arrays`` (from :func:`mark_trainable`).

    An array the loss does not depend on gets zeros, and so does every array when the
    loss is not on the tape at all (a constant loss), as on Keras' other backends.
    """
    if not isinstance(loss, _NDArray) or loss._node is None:
        return [_cnp.zeros_like(a) for a in arrays]
    return _autograd.grad(loss, arrays)


def mark_trainable(variables) -> list:
    """Mark the core arrays of ``variables`` for gradients before a recorded forward.

    Returns:
        The marked arrays, in order: take the gradients for these (a Variable assigned
        inside the recorded step, as SpectralNormalization does, holds a new array
        afterwards).
    """
    return [_marked(v.value) for v in variables]


def update_loss_tracker(tracker, loss, batch_size: int) -> None:
    """``tracker.update_state(loss, sample_weight=batch_size)``, in place for a ``Mean``.

    Keras' ``Mean`` adds ``sum(loss * weight)`` to ``total`` and ``sum(weight)`` to
    ``count``; for a scalar loss and weight that is ``loss * batch_size`` and
    ``batch_size``, added here straight into the two Variables' core arrays. Any other
    tracker, a non-scalar loss or a stateless scope take Keras' generic update.
    """
    total, count = getattr(tracker, "total", None), getattr(tracker, "count", None)
    if (type(tracker) is not metrics_module.Mean or in_stateless_scope()
            or not isinstance(loss, _NDArray) or loss.ndim != 0
            or not isinstance(getattr(total, "_value", None), _NDArray)
            or not isinstance(getattr(count, "_value", None), _NDArray)):
        tracker.update_state(loss, sample_weight=batch_size)
        return
    t, c = total._value, count._value
    with t.context.device_guard():
        t._data += loss._data.astype(t.dtype) * t.dtype.type(batch_size)
        c._data += c.dtype.type(batch_size)
    t._bump()
    c._bump()


class KBackendTrainer(base_trainer.Trainer):
    def __init__(self):
        super().__init__()
        self.train_function = None
        self.test_function = None
        self.predict_function = None

    # ------------------------------------------------------------------ steps
    def train_step(self, data):
        x, y, sample_weight = data_adapter_utils.unpack_x_y_sample_weight(data)
        replicated = replicated_steps(self)
        if replicated is not None:  # keras.distribution.DataParallel
            y_pred, loss = replicated.run("train", data)
            update_loss_tracker(self._loss_tracker, loss, _batch_size(x))
            return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)
        trainable_weights = self.trainable_weights[:]
        marked = mark_trainable(trainable_weights)
        with _autograd.record():
            y_pred, loss = step_outputs(self, "train", x, y, sample_weight)
            if self.optimizer is not None:
                scaled_loss = self.optimizer.scale_loss(loss)
            else:
                scaled_loss = loss
        update_loss_tracker(self._loss_tracker, loss.detach(), _batch_size(x))

        if trainable_weights:
            gradients = _gradients(scaled_loss, marked)
            self.optimizer.apply(gradients, trainable_weights)
        else:
            warnings.warn("The model does not have any trainable weights.")

        return self.compute_metrics(x, y, _detach_all(y_pred),
                                    sample_weight=sample_weight)

    def test_step(self, data):
        x, y, sample_weight = data_adapter_utils.unpack_x_y_sample_weight(data)
        replicated = replicated_steps(self)
        if replicated is not None:
            y_pred, loss = replicated.run("test", data)
        else:
            y_pred, loss = step_outputs(self, "test", x, y, sample_weight)
        update_loss_tracker(self._loss_tracker, loss, _batch_size(x))
        return self.compute_metrics(x, y, y_pred, sample_weight=sample_weight)

    def predict_step(self, data):
        x, _, _ = data_adapter_utils.unpack_x_y_sample_weight(data)
        replicated = replicated_steps(self)
        if replicated is not None:
            return replicated.run("predict", (x,))[0]
        return step_outputs(self, "predict", x)[0]

    # ------------------------------------------------------------------ step functions
    # Each function takes what Keras' EpochIterator yields: a list of up to
    # ``steps_per_execution`` batches, run one after the other (each step's forward pass
    # through its compiled graph under jit_compile).
    def make_train_function(self, force=False):
        if self.train_function is not None and not force:
            return self.train_function
        self._kbackend_compiled = None  # (re)compiled: trace the steps anew
        self._kbackend_replicated = None

        def steps_on_data(data):
            logs = None
            for batch in data:
                logs = self.train_step(batch)
            return logs

        self.train_function = steps_on_data
        return self.train_function

    def make_test_function(self, force=False):
        if self.test_function is not None and not force:
            return self.test_function

        def steps_on_data(data):
            logs = None
            with _autograd.pause():
                for batch in data:
                    logs = self.test_step(batch)
            return logs

        self.test_function = steps_on_data
        return self.test_function

    def make_predict_function(self, force=False):
        if self.predict_function is not None and not force:
            return self.predict_function

        def concat(a, b):
            return backend.numpy.concatenate([a, b], axis=0)

        def steps_on_data(data):
            with _autograd.pause():
                outputs = self.predict_step(data[0])
                for batch in data[1:]:
                    outputs = tree.map_structure(concat, outputs, self.predict_step(batch))
            return outputs

        self.predict_function = steps_on_data
        return self.predict_function

    # ------------------------------------------------------------------ loops
    @traceback_utils.filter_traceback
    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto",
            callbacks=None, validation_split=0.0, validation_data=None, shuffle=True,
            class_weight=None, sample_weight=None, initial_epoch=0,
            steps_per_epoch=None, validation_steps=None, validation_batch_size=None,
            validation_freq=1):
        self._assert_compile_called("fit")
        max_epochs = config.max_epochs()
        if max_epochs and max_epochs < epochs:
            warnings.warn(f"Limiting epochs to {max_epochs}")
            epochs = max_epochs

        self._eval_epoch_iterator = None
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = \
                array_slicing.train_validation_split(
                    (x, y, sample_weight), validation_split=validation_split)
        if validation_data is not None:
            val_x, val_y, val_sample_weight = \
                data_adapter_utils.unpack_x_y_sample_weight(validation_data)

        epoch_iterator = EpochIterator(
            x=x, y=y, sample_weight=sample_weight, batch_size=batch_size,
            steps_per_epoch=steps_per_epoch, shuffle=shuffle, class_weight=class_weight,
            steps_per_execution=self.steps_per_execution)

        self._symbolic_build(iterator=epoch_iterator)
        epoch_iterator.reset()

        if not isinstance(callbacks, callbacks_module.CallbackList):
            callbacks = callbacks_module.CallbackList(
                callbacks, add_history=True, add_progbar=verbose != 0, verbose=verbose,
                epochs=epochs, steps=epoch_iterator.num_batches, model=self)

        self.stop_training = False
        training_logs = {}
        logs = {}
        self.make_train_function()
        callbacks.on_train_begin()
        initial_epoch = self._initial_epoch or initial_epoch
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callbacks.on_epoch_begin(epoch)
            logs = {}
            for begin_step, end_step, data in epoch_iterator:
                callbacks.on_train_batch_begin(begin_step)
                logs = self.train_function(data)
                callbacks.on_train_batch_end(end_step, logs)
                if self.stop_training:
                    break

            epoch_logs = dict(self._get_metrics_result_or_logs(logs))

            if validation_data is not None and self._should_eval(epoch, validation_freq):
                if getattr(self, "_eval_epoch_iterator", None) is None:
                    self._eval_epoch_iterator = EpochIterator(
                        x=val_x, y=val_y, sample_weight=val_sample_weight,
                        batch_size=validation_batch_size or batch_size,
                        steps_per_execution=self.steps_per_execution,
                        steps_per_epoch=validation_steps, shuffle=False)
                val_logs = self.evaluate(
                    x=val_x, y=val_y, sample_weight=val_sample_weight,
                    batch_size=validation_batch_size or batch_size,
                    steps=validation_steps, callbacks=callbacks, return_dict=True,
                    _use_cached_eval_dataset=True)
                epoch_logs.update({f"val_{name}": val for name, val in val_logs.items()})

            callbacks.on_epoch_end(epoch, epoch_logs)
            training_logs = epoch_logs
            if self.stop_training:
                break

        if isinstance(self.optimizer, optimizers_module.Optimizer) and epochs > 0:
            self.optimizer.finalize_variable_values(self.trainable_weights)

        if getattr(self, "_eval_epoch_iterator", None) is not None:
            del self._eval_epoch_iterator
        callbacks.on_train_end(logs=training_logs)
        return self.history

    @traceback_utils.filter_traceback
    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto",
                 sample_weight=None, steps=None, callbacks=None, return_dict=False,
                 **kwargs):
        use_cached_eval_dataset = kwargs.pop("_use_cached_eval_dataset", False)
        if kwargs:
            raise ValueError(f"Arguments not recognized: {kwargs}")

        if use_cached_eval_dataset:
            epoch_iterator = self._eval_epoch_iterator
        else:
            epoch_iterator = EpochIterator(
                x=x, y=y, sample_weight=sample_weight, batch_size=batch_size,
                steps_per_epoch=steps, shuffle=False,
                steps_per_execution=self.steps_per_execution)

        self._symbolic_build(iterator=epoch_iterator)
        epoch_iterator.reset()

        if not isinstance(callbacks, callbacks_module.CallbackList):
            callbacks = callbacks_module.CallbackList(
                callbacks, add_progbar=verbose != 0, verbose=verbose, epochs=1,
                steps=epoch_iterator.num_batches, model=self)

        self.make_test_function()
        self.stop_evaluating = False
        callbacks.on_test_begin()
        logs = {}
        self.reset_metrics()
        for begin_step, end_step, data in epoch_iterator:
            callbacks.on_test_batch_begin(begin_step)
            logs = self.test_function(data)
            callbacks.on_test_batch_end(end_step, logs)
            if self.stop_evaluating:
                break
        logs = pythonify_logs(self._get_metrics_result_or_logs(logs))
        callbacks.on_test_end(logs)

        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    @traceback_utils.filter_traceback
    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None):
        epoch_iterator = EpochIterator(
            x=x, batch_size=batch_size, steps_per_epoch=steps, shuffle=False,
            steps_per_execution=self.steps_per_execution)

        if not isinstance(callbacks, callbacks_module.CallbackList):
            callbacks = callbacks_module.CallbackList(
                callbacks, add_progbar=verbose != 0, verbose=verbose, epochs=1,
                steps=epoch_iterator.num_batches, model=self)

        def append_to_outputs(batch_outputs, outputs):
            if outputs is None:
                return tree.map_structure(lambda batch_output: [batch_output],
                                          batch_outputs)
            tree.map_structure_up_to(
                batch_outputs, lambda output, batch_output: output.append(batch_output),
                outputs, batch_outputs)
            return outputs

        self.make_predict_function()
        self.stop_predicting = False
        callbacks.on_predict_begin()
        outputs = None
        batch_outputs = None
        for begin_step, end_step, data in epoch_iterator:
            callbacks.on_predict_batch_begin(begin_step)
            batch_outputs = self.predict_function(data)
            outputs = append_to_outputs(batch_outputs, outputs)
            callbacks.on_predict_batch_end(end_step, {"outputs": batch_outputs})
            if self.stop_predicting:
                break
        callbacks.on_predict_end()
        outputs = tree.map_structure(backend.convert_to_numpy, outputs)
        return tree.map_structure_up_to(batch_outputs, np.concatenate, outputs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       return_dict=False):
        self._assert_compile_called("train_on_batch")
        if class_weight is not None:
            if sample_weight is not None:
                raise ValueError(
                    "Arguments `sample_weight` and `class_weight` cannot be specified "
                    f"at the same time. Received: sample_weight={sample_weight}, "
                    f"class_weight={class_weight}")
            sample_weight = data_adapter_utils.class_weight_to_sample_weights(
                y, class_weight)
        data = (x, y, sample_weight)
        self._symbolic_build(data_batch=data)
        self.make_train_function()
        self.reset_metrics()
        logs = pythonify_logs(self.train_function([data]))
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def test_on_batch(self, x, y=None, sample_weight=None, return_dict=False):
        self._assert_compile_called("test_on_batch")
        data = (x, y, sample_weight)
        self._symbolic_build(data_batch=data)
        self.make_test_function()
        self.reset_metrics()
        logs = pythonify_logs(self.test_function([data]))
        if return_dict:
            return logs
        return self._flatten_metrics_in_order(logs)

    def predict_on_batch(self, x):
        self.make_predict_function()
        batch_outputs = self.predict_function([(x,)])
        return tree.map_structure(backend.convert_to_numpy, batch_outputs)


def _detach_all(structure):
    return tree.map_structure(
        lambda t: t.detach() if hasattr(t, "detach") and backend.is_tensor(t) else t,
        structure)
