"""The neural-network operators, one module per family."""
from . import (  # noqa: F401 - each import registers a family
    activation,
    bias_act,
    batchnorm,
    conv,
    ctc,
    dropout,
    embedding,
    fc,
    loss,
    loss_heads,
    norm,
    pool,
    rnn,
    sampling,
    sequence,
    softmax,
)
