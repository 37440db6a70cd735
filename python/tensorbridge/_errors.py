"""Exceptions: one class per TensorBridge status code, each carrying the status and the library's sentence."""
from __future__ import annotations

__all__ = [
    "TensorBridgeError", "InvalidArgumentError", "NotFoundError", "UnavailableError", "DriverError",
    "OutOfMemoryError", "ModelError", "UnsupportedError", "InputOutputError", "PermissionDeniedError",
    "InternalError",
]

_STATUS_NAMES = (
    "TB_OK", "TB_ERR_INVALID_ARGUMENT", "TB_ERR_NOT_FOUND", "TB_ERR_UNAVAILABLE", "TB_ERR_DRIVER",
    "TB_ERR_OUT_OF_MEMORY", "TB_ERR_MODEL", "TB_ERR_UNSUPPORTED", "TB_ERR_IO", "TB_ERR_PERMISSION",
    "TB_ERR_INTERNAL",
)


class TensorBridgeError(Exception):
    """A TensorBridge call failed.

    Attributes:
        status: the tb_status code (an int, 1-10).
        status_name: its name, e.g. ``"TB_ERR_NOT_FOUND"``.
        message: the library's sentence: the thing, the value and the fix.
    """

    status: int = 0

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    @property
    def status_name(self) -> str:
        return _STATUS_NAMES[self.status] if 0 <= self.status < len(_STATUS_NAMES) else "TB_ERR_UNKNOWN"

    def __str__(self) -> str:
        return f"{self.message} [{self.status_name}]"


class InvalidArgumentError(TensorBridgeError, ValueError):
    """TB_ERR_INVALID_ARGUMENT: a value out of range, a bad name, a wrong shape or dtype."""
    status = 1


class NotFoundError(TensorBridgeError, LookupError):
    """TB_ERR_NOT_FOUND: a named backend, device, file or key does not exist."""
    status = 2


class UnavailableError(TensorBridgeError):
    """TB_ERR_UNAVAILABLE: it exists but cannot be used here (no driver, no device, no permission)."""
    status = 3


class DriverError(TensorBridgeError):
    """TB_ERR_DRIVER: a vendor runtime returned an error; the message has its code and name."""
    status = 4


class OutOfMemoryError(TensorBridgeError):
    """TB_ERR_OUT_OF_MEMORY: host or device memory exhausted; the message has the sizes."""
    status = 5


class ModelError(TensorBridgeError):
    """TB_ERR_MODEL: a model or safetensors file is malformed or uses something not supported."""
    status = 6


class UnsupportedError(TensorBridgeError):
    """TB_ERR_UNSUPPORTED: a valid request this build or device cannot do."""
    status = 7


class InputOutputError(TensorBridgeError, OSError):
    """TB_ERR_IO: a file could not be read or written."""
    status = 8

    def __init__(self, status: int, message: str) -> None:
        TensorBridgeError.__init__(self, status, message)


class PermissionDeniedError(TensorBridgeError):
    """TB_ERR_PERMISSION: the OS refused access (a /dev node, a file)."""
    status = 9


class InternalError(TensorBridgeError):
    """TB_ERR_INTERNAL: a bug in TensorBridge; please report it with the message."""
    status = 10


# Indexed by status code; the C extension raises _BY_STATUS[status](status, sentence).
_BY_STATUS = (
    TensorBridgeError, InvalidArgumentError, NotFoundError, UnavailableError, DriverError, OutOfMemoryError,
    ModelError, UnsupportedError, InputOutputError, PermissionDeniedError, InternalError,
)

for _cls in _BY_STATUS:  # shown as tensorbridge.NotFoundError in tracebacks
    _cls.__module__ = "tensorbridge"
