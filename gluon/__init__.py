"""gluon: MXNet Gluon 1.x compatible Block API on top of ``core``.

This package will hold ``Block``/``HybridBlock``/``SymbolBlock``, ``Parameter`` and
deferred initialization, the layers in ``nn`` and ``rnn``, losses, ``Trainer``,
``data`` (Dataset, DataLoader), ``model_zoo``, metrics and ``utils``
(``split_and_load``, ``clip_global_norm``); see DESIGN.md. They arrive in later
work: for now the package is an empty skeleton that imports without error.
"""

__all__: list = []
