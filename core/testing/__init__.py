"""The parts of ``core.test_utils``, one job a module: ``tolerance`` (contexts, dtypes,
default tolerances), ``inputs`` (random arrays and shapes), ``compare`` (assertions),
``symbolic`` (Symbol checks), ``gradient`` (kbackend's finite-difference checks and
views), ``generators`` (statistical checks), ``env`` (environment), ``data`` (local data
files). Import the helpers from ``core.test_utils``.
"""
