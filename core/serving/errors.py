"""The error a request gets: an HTTP status and a message (``{"error": message}``)."""
from __future__ import annotations

__all__ = ["InferenceError"]


class InferenceError(Exception):
    """A request the server answers with ``status`` and ``{"error": message}``.

    Args:
        status: the HTTP status (400 bad request, 404 unknown model, 500 model failure).
        message: what went wrong, naming the model, input, shapes and dtypes involved.

    Example:
        >>> e = InferenceError(404, "unknown model 'x'")
        >>> e.status, str(e)
        (404, "unknown model 'x'")
    """

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = int(status)
        self.message = message
