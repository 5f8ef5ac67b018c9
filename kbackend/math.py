"""Keras backend ``math``: not implemented yet (each function raises NotImplementedError)."""
from kbackend._missing import add_stubs

_NOT_YET = [
    "segment_sum", "segment_max", "segment_min", "segment_prod", "top_k", "in_top_k",
    "logsumexp", "cdist", "extract_sequences", "fft", "fft2", "ifft2", "rfft", "irfft",
    "stft", "istft", "rsqrt", "erf", "erfc", "erfinv", "logdet",
]
add_stubs(globals(), "math", _NOT_YET)
