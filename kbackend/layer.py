"""Keras backend ``layer``: the backend mixin of ``keras.Layer`` (nothing to add yet)."""


class KBackendLayer:
    pass
