"""Compiled modules and their entry functions."""
import ctypes
import json
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _dlpack
from . import _library as L
from ._native import CallPlan
from . import _structs as S
from ._check import check
from ._handle import Closable, Handle, live


class ArgSpec:
    """What an entry expects for one argument or result."""

    __slots__ = ("kind", "type", "name", "written", "shape", "dtype")

    def __init__(self, kind: str, type: str, name: str, written: bool,
                 shape: Tuple[int, ...], dtype: Optional[np.dtype]) -> None:
        self.kind = kind          # "tensor", "int" or "float"
        self.type = type          # the MLIR type, e.g. "memref<?x4xf32>"
        self.name = name          # the SSA name in the source ("" if unknown)
        self.written = written    # tensors the entry may write (outputs)
        self.shape = shape        # -1 for a dynamic size
        self.dtype = dtype

    def __getitem__(self, key: str) -> Any:  # the 0.x binding's dict access
        return getattr(self, key)

    def __repr__(self) -> str:
        name = f"%{self.name}: " if self.name else ""
        return f"{name}{self.type}{' (written)' if self.written else ''}"


class Function(CallPlan):
    """An entry function of a module. Call it with arrays (any object with __dlpack__: NumPy,
    PyTorch, CuPy, JAX, DeviceArray…; host memory for host modules, device memory of the
    context's GPU for nvptx modules) and Python numbers; `stream=` (a Stream, a CUstream int,
    a framework's stream) orders an nvptx call. Returns the scalar result, or None.

    The call plan is built once: each call converts only its arguments (zero-copy) and calls
    the C API with the GIL released."""

    def __init__(self, module: "Module", handle: int, name: str) -> None:
        self.name = name
        self.args: List[ArgSpec] = [self._info(handle, 0, i)
                                    for i in range(L.function_arg_count(handle))]
        self.results: List[ArgSpec] = [self._info(handle, 1, i)
                                       for i in range(L.function_result_count(handle))]
        result_kind = -1
        if self.results:
            result_kind = S.ARG_FLOAT if self.results[0].kind == "float" else S.ARG_INT
        kinds = bytes({"tensor": S.ARG_TENSOR, "int": S.ARG_INT, "float": S.ARG_FLOAT}[a.kind]
                      for a in self.args)
        super().__init__(handle, len(self.args), result_kind, kinds, module)

    @staticmethod
    def _info(handle: int, result: int, index: int) -> ArgSpec:
        info = S.ArgInfo()
        info.struct_size = ctypes.sizeof(S.ArgInfo)
        check(L.function_arg_info(handle, result, index, ctypes.byref(info)))
        kind = ("tensor", "int", "float")[info.kind]
        shape = tuple(info.shape[d] for d in range(info.ndim)) if kind == "tensor" else ()
        return ArgSpec(kind, info.type.decode(), info.name.decode(), bool(info.written), shape,
                       _dlpack.numpy_dtype(info.dtype.code, info.dtype.bits))

    @property
    def signature(self) -> str:
        results = ", ".join(r.type for r in self.results)
        return f"@{self.name}({', '.join(map(repr, self.args))}) -> ({results})"

    def __repr__(self) -> str:
        return f"<tessera_jit.Function {self.signature}>"


class Module(Closable):
    """A compiled module: `entries` names its entry functions, `module.f` or
    `module.function("f")` gives one. Close it (or use `with`) to release it now; functions of
    a closed module raise."""

    _handle: Optional[Handle] = None

    def __init__(self, context: Any, handle: int) -> None:
        self._context = context
        # Guards the handle and the functions: a function is never made while the module
        # closes, so close() invalidates every one.
        self._lock = threading.Lock()
        self._handle = Handle(handle, L.module_destroy)
        self.entries: List[str] = [L.module_entry_name(handle, i, None).decode()
                                   for i in range(L.module_entry_count(handle))]
        self._functions: Dict[str, Function] = {}

    def function(self, name: str) -> Function:
        """The entry function `name` (NotFoundError names the entries that exist)."""
        with self._lock:
            module = live(self._handle, "module")
            function = self._functions.get(name)
            if function is not None:
                return function
            handle = ctypes.c_void_p()
            encoded = name.encode()
            check(L.module_get_function(module.value, encoded, len(encoded),
                                        ctypes.byref(handle)))
            function = Function(self, int(handle.value or 0), name)  # keeps the module alive
            self._functions[name] = function
            return function

    def __getattr__(self, name: str) -> Function:
        if name.startswith("_") or name not in self.__dict__.get("entries", ()):
            raise AttributeError(name)
        return self.function(name)

    def _text(self, kind: int) -> bytes:
        module = live(self._handle, "module")  # keeps the C module while the text is copied
        data, size = ctypes.c_void_p(), ctypes.c_size_t()
        check(L.module_get_text(module.value, kind, ctypes.byref(data), ctypes.byref(size)))
        return ctypes.string_at(data, size.value)

    @property
    def llvm_ir(self) -> str:
        return self._text(S.TEXT_LLVM).decode()

    @property
    def ptx(self) -> str:
        return self._text(S.TEXT_PTX).decode()

    @property
    def cubin(self) -> bytes:
        return self._text(S.TEXT_CUBIN)

    def serialize(self) -> bytes:
        """The module as an ahead-of-time package: Context.load (in any process of this build,
        on a machine with the CPU it was compiled for, or this arch for nvptx) runs it with no
        code generation. tessera_jit.write_package puts several modules in one package."""
        return self._text(S.TEXT_PACKAGE)

    def decisions(self) -> List[Dict[str, Any]]:
        """The arbiter's decision records, one dict per Tile op (docs/arbiter.md)."""
        return json.loads(self._text(S.TEXT_DECISIONS).decode())

    def plan(self) -> str:
        """The module's decisions as a plan file's text (Context(plan=…) replays it)."""
        return self._text(S.TEXT_PLAN).decode()

    def decision_states(self) -> List[Dict[str, str]]:
        """Where each Tile op's decision stands: state ("decided", "pending" — measured in the
        background while `serving` runs — or "failed"), op, location, function, serving,
        winner and detail."""
        module = live(self._handle, "module")
        states = []
        for index in range(L.module_decision_count(module.value)):
            info = S.DecisionInfo()
            info.struct_size = ctypes.sizeof(S.DecisionInfo)
            check(L.module_get_decision(module.value, index, ctypes.byref(info)))
            entry = {name: (getattr(info, name) or b"").decode()
                     for name in ("op", "location", "function", "serving", "winner", "detail")}
            entry["state"] = S.DECISION_STATES.get(info.state, str(info.state))
            states.append(entry)
        return states

    def wait_decisions(self, timeout: Optional[float] = None) -> int:
        """Waits until no decision is pending, at most `timeout` seconds (None: no limit);
        returns how many still are."""
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"timeout must be None or >= 0 seconds, found {timeout!r}")
        milliseconds = -1 if timeout is None else min(int(timeout * 1000), 2**62)
        module = live(self._handle, "module")
        pending = ctypes.c_size_t()
        check(L.module_wait_decisions(module.value, milliseconds, ctypes.byref(pending)))
        return pending.value

    def close(self) -> None:
        """Releases the module. Calls already inside it finish first; later calls raise."""
        lock = self.__dict__.get("_lock")
        if lock is None:  # the constructor did not get that far
            return
        with lock:
            handle, self._handle = self._handle, None
            if handle is None:
                return
            functions = list(self._functions.values())
            for function in functions:
                function._invalidate()
        while any(function._in_flight() for function in functions):
            time.sleep(0.0005)  # releases the GIL to the threads still calling
        del handle  # the C module goes now, or when a text being copied is done

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._handle is None else ", ".join(f"@{e}" for e in self.entries)
        return f"<tessera_jit.Module {state}>"


__all__ = ["ArgSpec", "Function", "Module"]
