"""kbackend: a Keras 3 backend on top of ``core``.

This package will hold the Keras backend modules, laid out like Keras' own
backends (``core``, ``numpy``, ``nn``, ``math``, ``linalg``, ``random``, ``image``,
``rnn``, ``trainer``, ``optimizer``, ``layer``, ``export``, ``distribution_lib``),
and the hook that registers the backend with Keras when ``KERAS_BACKEND=kbackend``
is set; see DESIGN.md. They arrive in later work: for now the package is an empty
skeleton that imports without error and registers nothing with Keras.
"""

__all__: list = []
