"""The exceptions: one class per C API error code, all subclasses of TesseraError.

Each carries `code` (the C API's name, e.g. "INVALID_ARGUMENT"), `code_value` (its number)
and `message` (the library's located message). Where a built-in exception means the same,
the class derives from it too, so `except ValueError` catches an InvalidArgumentError.
"""
from typing import Dict, Type


class TesseraError(Exception):
    """A failed C API call."""

    code = "UNKNOWN"
    code_value = 2

    def __init__(self, message: str) -> None:
        super().__init__(f"{self.code}: {message}")
        self.message = message


def _error_class(name: str, value: int, *bases: type) -> Type[TesseraError]:
    words = "".join(word.capitalize() for word in name.split("_"))
    cls = type(f"{words}Error", (TesseraError,) + bases,
               {"code": name, "code_value": value,
                "__doc__": f"The C API's TESSERA_JIT_{name} ({value})."})
    cls.__module__ = __name__
    return cls


CancelledError = _error_class("CANCELLED", 1)
UnknownError = _error_class("UNKNOWN", 2)
InvalidArgumentError = _error_class("INVALID_ARGUMENT", 3, ValueError)
DeadlineExceededError = _error_class("DEADLINE_EXCEEDED", 4, TimeoutError)
NotFoundError = _error_class("NOT_FOUND", 5, LookupError)
AlreadyExistsError = _error_class("ALREADY_EXISTS", 6)
PermissionDeniedError = _error_class("PERMISSION_DENIED", 7, PermissionError)
ResourceExhaustedError = _error_class("RESOURCE_EXHAUSTED", 8)
FailedPreconditionError = _error_class("FAILED_PRECONDITION", 9)
AbortedError = _error_class("ABORTED", 10)
OutOfRangeError = _error_class("OUT_OF_RANGE", 11)
UnimplementedError = _error_class("UNIMPLEMENTED", 12, NotImplementedError)
InternalError = _error_class("INTERNAL", 13)
UnavailableError = _error_class("UNAVAILABLE", 14)
DataLossError = _error_class("DATA_LOSS", 15)
UnauthenticatedError = _error_class("UNAUTHENTICATED", 16)

_CLASSES = (CancelledError, UnknownError, InvalidArgumentError, DeadlineExceededError,
            NotFoundError, AlreadyExistsError, PermissionDeniedError, ResourceExhaustedError,
            FailedPreconditionError, AbortedError, OutOfRangeError, UnimplementedError,
            InternalError, UnavailableError, DataLossError, UnauthenticatedError)
_BY_VALUE: Dict[int, Type[TesseraError]] = {cls.code_value: cls for cls in _CLASSES}
_BY_NAME: Dict[str, Type[TesseraError]] = {cls.code: cls for cls in _CLASSES}


def make_error(code_value: int, message: str) -> TesseraError:
    """The exception for a C API error code (an unknown code: UnknownError)."""
    cls = _BY_VALUE.get(code_value, UnknownError)
    return cls(message)


def error_class(code: str) -> Type[TesseraError]:
    """The class of a code's name, e.g. error_class("NOT_FOUND") is NotFoundError."""
    return _BY_NAME[code]


__all__ = ["TesseraError", "make_error", "error_class"] + [cls.__name__ for cls in _CLASSES]
