"""Keras backend ``trainer``: the backend mixin of ``keras.Model``.

Not implemented yet: ``fit``, ``evaluate`` and ``predict`` are Keras' base
trainer's, which raise NotImplementedError.
"""


class KBackendTrainer:
    pass
