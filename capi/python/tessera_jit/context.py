"""Contexts: the compile service, its caches and delegates, and one device."""
import ctypes
import os
import weakref
from typing import Any, Dict, List, Optional

import numpy as np

from . import _library as L
from . import _structs as S
from ._check import check
from ._dlpack import stream_handle
from ._handle import Closable, Handle, live
from .arrays import DeviceArray
from .module import Module
from .streams import Event, Stream


def _encode(value: Optional[str]) -> Optional[bytes]:
    return value.encode() if value is not None else None


def _source_bytes(value: Any, what: str) -> bytes:
    """A str (UTF-8) or a bytes-like object's bytes; anything else is TypeError."""
    if isinstance(value, str):
        return value.encode()
    try:
        return memoryview(value).tobytes()
    except TypeError:
        raise TypeError(f"{what} must be str or bytes-like, found {type(value).__name__}") \
            from None


class Context(Closable):
    """A Tessera JIT context.

    default_target: "host", "nvptx" or None (the GPU when present, else the host);
    device: the CUDA device its nvptx modules, arrays, streams and events use;
    cache_dir: the compile cache directory (None: $TESSERA_JIT_CACHE_DIR, else
    ~/.cache/tessera-jit; "": memory only); num_threads: threads for host code's parallel loops
    (0: $TESSERA_JIT_NUM_THREADS, else the cores the process may use); remote_cache: the fleet's
    Redis tier, "redis://[user:password@]host:port[/db]" (None: $TESSERA_JIT_REMOTE_CACHE;
    "": none); plan: a plan file to replay (every Tile op takes its pinned candidate, nothing
    measured), plan_strict: a Tile op the plan lacks is an error; arbitration_budget_ms: how
    long one decision's candidates may run (0: 300). close() (or leaving a `with` block) releases it and closes the modules it
    compiled; a context merely dropped lives on while any of its modules does."""

    _handle: Optional[Handle] = None

    def __init__(self, default_target: Optional[str] = None, device: int = 0,
                 cache_dir: Optional[str] = None, num_threads: int = 0,
                 remote_cache: Optional[str] = None, plan: Optional[str] = None,
                 plan_strict: bool = False, arbitration_budget_ms: int = 0) -> None:
        for name, value, low, high in (("device", device, 0, 2**31 - 1),
                                       ("num_threads", num_threads, 0, 2**31 - 1),
                                       ("arbitration_budget_ms", arbitration_budget_ms, 0,
                                        2**31 - 1)):
            if not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"{name} must be an int from {low} to {high}, found {value!r}")
        options = S.ContextOptions()
        options.struct_size = ctypes.sizeof(S.ContextOptions)
        options.log_level = S.LOG_WARNING
        options.default_target = _encode(default_target)
        options.device_ordinal = device
        options.cache_dir = _encode(cache_dir)
        options.num_threads = num_threads
        options.remote_cache = _encode(remote_cache)
        options.plan_path = _encode(plan)
        options.plan_strict = 1 if plan_strict else 0
        options.arbitration_budget_ms = arbitration_budget_ms
        handle = ctypes.c_void_p()
        check(L.context_create(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = Handle(int(handle.value or 0), L.context_destroy)
        self.device = device
        self.default_target = default_target
        self._modules: "weakref.WeakSet[Module]" = weakref.WeakSet()

    def _live(self) -> Handle:
        """The context's handle (what device memory, streams and events keep), or RuntimeError
        once closed. Hold the returned reference for the duration of a C call."""
        return live(self._handle, "context")

    # Delegates -------------------------------------------------------------------------------

    def register_library(self, name: str, path: str) -> None:
        """Registers a vendor library as delegate `name` (kernel_call callees resolve in it)."""
        h = self._live()
        check(L.register_library(h.value, name.encode(), path.encode()))

    def register_kernel_image(self, name: str, data: bytes, format: str = "ptx",
                              arch: Optional[str] = None) -> None:
        """Registers hand-written kernels: `format` "ptx", "cubin" or "cuda" (CUDA C++)."""
        formats = {"ptx": 0, "cubin": 1, "cuda": 2}
        if format not in formats:
            raise ValueError(f"format must be one of {sorted(formats)}, found {format!r}")
        data = _source_bytes(data, "data")
        h = self._live()
        check(L.register_kernel_image(h.value, name.encode(), data, len(data), formats[format],
                                      _encode(arch)))

    def declare_matmul_provider(self, name: str, library: str, callee: str,
                                target: str = "host", arch: Optional[str] = None,
                                provenance: str = "handwritten_kernel",
                                covers: str = "root_only", determinism: str = "deterministic",
                                accuracy: str = "reference_exact", tolerance: float = 0.0,
                                tolerance_rel: float = 0.0) -> None:
        """Declares that registered `library` serves tile.matmul through `callee` (cblas_sgemm's
        ABI on the host, cublasSgemm_v2's on nvptx): a new arbiter candidate. `arch` is its
        envelope; None: "host" for the host target, "sm_75+" (any GPU) for nvptx."""
        if arch is None:
            arch = "host" if target == "host" else "sm_75+"
        provider = S.MatmulProvider()
        provider.struct_size = ctypes.sizeof(S.MatmulProvider)
        for field, value in (("name", name), ("library", library), ("callee", callee),
                             ("target", target), ("arch", arch), ("provenance", provenance),
                             ("covers", covers), ("determinism", determinism),
                             ("accuracy", accuracy)):
            setattr(provider, field, value.encode())
        provider.tolerance = tolerance
        provider.tolerance_rel = tolerance_rel
        h = self._live()
        check(L.declare_provider(h.value, ctypes.byref(provider)))

    def register_default_libraries(self, target: Optional[str] = None) -> None:
        h = self._live()
        check(L.register_defaults(h.value, _encode(target)))

    def delegates(self) -> List[str]:
        """The registered delegates' identities, one string each."""
        h = self._live()
        return [L.delegate_identity(h.value, i, None).decode()
                for i in range(L.delegate_count(h.value))]

    # Compile ---------------------------------------------------------------------------------

    def compile(self, source: Any, target: Optional[str] = None, arch: Optional[str] = None,
                deterministic: bool = False, opt_level: int = 2,
                matmul_delegate: Optional[str] = None, batch_invariant: bool = False,
                arbitration_budget_ms: int = 0, background: bool = False,
                background_deterministic: bool = False, ptx_only: bool = False,
                host_cpu: Optional[str] = None) -> Module:
        """Compiles Tessera IR (str or bytes) into a Module; errors carry every diagnostic with
        its location (InvalidArgumentError for bad IR or a broken contract). batch_invariant:
        every function deterministic at the batch_invariant level (docs/arbiter.md);
        arbitration_budget_ms: 0 for the context's. background: undecided Tile ops run their
        incumbent while a worker measures them; the module switches at a later call
        (Module.decision_states, Module.wait_decisions); background_deterministic allows that
        in deterministic functions too. ptx_only (nvptx): no cubin; the driver compiles the
        PTX when the module first loads (docs/capi.md). host_cpu (host): the CPU machine code
        is for — None or "native" for this machine's, else an x86-64 CPU LLVM knows
        ("x86-64-v3", "skylake-avx512"); code this machine cannot run is for
        tessera_jit.write_package, and calling its functions raises FailedPreconditionError."""
        if not isinstance(arbitration_budget_ms, int) or not 0 <= arbitration_budget_ms < 2**31:
            raise ValueError("arbitration_budget_ms must be an int from 0 to 2**31 - 1, found "
                             f"{arbitration_budget_ms!r}")
        options = S.CompileOptions()
        options.struct_size = ctypes.sizeof(S.CompileOptions)
        options.matmul_delegate = _encode(matmul_delegate)
        options.target = _encode(target)
        options.arch = _encode(arch)
        options.host_cpu = _encode(host_cpu)
        options.flags = ((S.DETERMINISTIC if deterministic else 0) |
                         (S.BATCH_INVARIANT if batch_invariant else 0) |
                         (S.BACKGROUND_DECISIONS if background else 0) |
                         (S.BACKGROUND_DETERMINISTIC if background_deterministic else 0) |
                         (S.PTX_ONLY if ptx_only else 0))
        options.arbitration_budget_ms = arbitration_budget_ms
        options.opt_level = opt_level
        encoded = _source_bytes(source, "source")
        handle = ctypes.c_void_p()
        h = self._live()
        check(L.compile(h.value, encoded, len(encoded), ctypes.byref(options),
                        ctypes.byref(handle)))
        module = Module(self, int(handle.value or 0))
        self._modules.add(module)
        return module

    def load(self, package: Any, target: Optional[str] = None,
             arch: Optional[str] = None) -> Module:
        """Loads an ahead-of-time package (bytes of Module.serialize() or
        tessera_jit.write_package, or a file of `tessera-jit compile --emit package`) into a
        Module, with no code generation and no cache: the entry for `target` (default: the
        context's) that fits this machine — for the host, this CPU's own code, else the most
        specific named CPU whose features this one has. DataLossError
        for damaged bytes, FailedPreconditionError when no entry fits this machine (naming what
        differs), InvalidArgumentError for bytes that are not a package."""
        data = memoryview(package).tobytes() if not isinstance(package, bytes) else package
        handle = ctypes.c_void_p()
        h = self._live()
        check(L.module_load(h.value, data, len(data), _encode(target), _encode(arch),
                            ctypes.byref(handle)))
        module = Module(self, int(handle.value or 0))
        self._modules.add(module)
        return module

    def write_plan(self, path: str) -> None:
        """Writes the decisions of every module this context compiled as a plan file, which
        Context(plan=path) replays."""
        encoded = os.fsencode(path)
        check(L.context_write_plan(self._live().value, encoded, len(encoded)))

    # Device memory, streams, events ------------------------------------------------------------

    def empty(self, shape: Any, dtype: Any = np.float32) -> DeviceArray:
        """Uninitialised memory of the context's device."""
        return DeviceArray(self, tuple(shape) if not isinstance(shape, int) else (shape,), dtype)

    def to_device(self, array: Any) -> DeviceArray:
        """A device copy of a host array."""
        return DeviceArray.from_numpy(self, array)

    def stream(self, non_blocking: bool = True) -> Stream:
        return Stream(self, non_blocking)

    def event(self, timing: bool = True) -> Event:
        return Event(self, timing)

    def synchronize(self, stream: Any = None) -> None:
        """Waits for everything on `stream` (None: the legacy default stream)."""
        handle, keep = (0, None) if stream is None else stream_handle(stream)
        h = self._live()
        check(L.stream_synchronize(h.value, handle or None))
        del keep  # the stream's handle was held for the call

    # Introspection -----------------------------------------------------------------------------

    def cache_stats(self) -> Dict[str, Any]:
        stats = S.CacheStats()
        stats.struct_size = ctypes.sizeof(S.CacheStats)
        h = self._live()
        check(L.context_cache_stats(h.value, ctypes.byref(stats)))
        return {name: (getattr(stats, name).decode() if name == "last_miss_reason"
                       else getattr(stats, name))
                for name, _ in S.CacheStats._fields_ if name != "struct_size"}

    def device_info(self, ordinal: Optional[int] = None) -> Dict[str, Any]:
        """The context's device (or device `ordinal`): name, arch, memory, multiprocessors."""
        info = S.DeviceInfo()
        info.struct_size = ctypes.sizeof(S.DeviceInfo)
        check(L.device_get_info(self.device if ordinal is None else ordinal, ctypes.byref(info)))
        return {"name": info.name.decode(), "arch": info.arch.decode(),
                "total_memory_bytes": info.total_memory_bytes,
                "multiprocessors": info.multiprocessors}

    # Lifetime --------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the modules it compiled and releases the context (the C context itself goes
        with the last of its device arrays, streams and events, and calls in flight finish)."""
        for module in list(self.__dict__.get("_modules", ())):
            module.close()
        self._handle = None

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._handle is None:
            return "<tessera_jit.Context closed>"
        target = self.default_target or "default target"
        return f"<tessera_jit.Context {target}, device {self.device}>"
