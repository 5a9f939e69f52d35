"""The Python package's ctypes mirrors (tessera_jit/_structs.py) against the C header.

A C program compiled against capi/include/tessera_jit.h (and dlpack.h) prints, for every struct
the package mirrors, its size and each field's offset and size, and the value of every constant
the package names; each must equal what ctypes computes. A field appended, reordered or retyped
in C but not in Python fails here (the struct_size the package passes would otherwise be right
while the fields it reads are not).

Run by //tests/capi:struct_layout_test: argv[1] is the header's folder.
"""
import ctypes
import importlib.util
import os
import subprocess
import sys
import tempfile

# ctypes class → C type.
STRUCTS = {
    "DecisionInfo": "tessera_jit_decision_info_t",
    "DLDataType": "DLDataType",
    "ContextOptions": "tessera_jit_context_options_t",
    "CacheStats": "tessera_jit_cache_stats_t",
    "CompileOptions": "tessera_jit_compile_options_t",
    "MatmulProvider": "tessera_jit_matmul_provider_t",
    "ArgInfo": "tessera_jit_arg_info_t",
    "DeviceInfo": "tessera_jit_device_info_t",
}

# Python constant → C enumerator or macro. (KDL_BOOL and the float8 codes are DLPack 1.x's;
# the system dlpack.h the library builds with predates them.)
CONSTANTS = {
    "KDL_CPU": "kDLCPU", "KDL_CUDA": "kDLCUDA", "KDL_CUDA_HOST": "kDLCUDAHost",
    "KDL_CUDA_MANAGED": "kDLCUDAManaged", "KDL_INT": "kDLInt", "KDL_UINT": "kDLUInt",
    "KDL_FLOAT": "kDLFloat", "KDL_BFLOAT": "kDLBfloat",
    "ARG_TENSOR": "TESSERA_JIT_ARG_TENSOR", "ARG_INT": "TESSERA_JIT_ARG_INT",
    "ARG_FLOAT": "TESSERA_JIT_ARG_FLOAT", "ARG_TENSOR_READ_ONLY": "TESSERA_JIT_ARG_TENSOR_READ_ONLY",
    "TEXT_LLVM": "TESSERA_JIT_TEXT_LLVM", "TEXT_PTX": "TESSERA_JIT_TEXT_PTX",
    "TEXT_CUBIN": "TESSERA_JIT_TEXT_CUBIN", "TEXT_DECISIONS": "TESSERA_JIT_TEXT_DECISIONS",
    "TEXT_PLAN": "TESSERA_JIT_TEXT_PLAN", "TEXT_PACKAGE": "TESSERA_JIT_TEXT_PACKAGE",
    "COPY_H2D": "TESSERA_JIT_COPY_HOST_TO_DEVICE", "COPY_D2H": "TESSERA_JIT_COPY_DEVICE_TO_HOST",
    "COPY_D2D": "TESSERA_JIT_COPY_DEVICE_TO_DEVICE",
    "STREAM_NON_BLOCKING": "TESSERA_JIT_STREAM_NON_BLOCKING",
    "EVENT_DISABLE_TIMING": "TESSERA_JIT_EVENT_DISABLE_TIMING",
    "LOG_WARNING": "TESSERA_JIT_LOG_WARNING", "DETERMINISTIC": "TESSERA_JIT_DETERMINISTIC",
    "BATCH_INVARIANT": "TESSERA_JIT_BATCH_INVARIANT",
    "BACKGROUND_DECISIONS": "TESSERA_JIT_BACKGROUND_DECISIONS",
    "BACKGROUND_DETERMINISTIC": "TESSERA_JIT_BACKGROUND_DETERMINISTIC",
    "PTX_ONLY": "TESSERA_JIT_PTX_ONLY",
}


def load_structs(root):
    """_structs.py by path: it needs only ctypes, not the native library."""
    path = os.path.join(root, "capi", "python", "tessera_jit", "_structs.py")
    spec = importlib.util.spec_from_file_location("tessera_structs", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def c_program(structs):
    lines = ["#include <stddef.h>", "#include <stdio.h>", '#include "tessera_jit.h"',
             "#define FIELD(T, f) printf(\"%s.%s %zu %zu\\n\", #T, #f, offsetof(T, f), "
             "sizeof(((T*)0)->f))",
             "int main(void) {"]
    for py_name, c_name in STRUCTS.items():
        lines.append(f'  printf("%s %zu\\n", "{c_name}", sizeof({c_name}));')
        for field in getattr(structs, py_name)._fields_:
            lines.append(f"  FIELD({c_name}, {field[0]});")
    for py_name, c_name in CONSTANTS.items():
        lines.append(f'  printf("{py_name} %lld\\n", (long long)({c_name}));')
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    include = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "capi", "include")
    structs = load_structs(root)
    with tempfile.TemporaryDirectory() as work:
        source = os.path.join(work, "layout.c")
        binary = os.path.join(work, "layout")
        with open(source, "w", encoding="utf-8") as out:
            out.write(c_program(structs))
        compiled = subprocess.run(["cc", "-std=c11", "-I", include, source, "-o", binary],
                                  capture_output=True, text=True)
        if compiled.returncode != 0:
            print(compiled.stderr)
            print("FAIL: the layout program does not compile (a field the package names is "
                  "missing from the header?)")
            return 1
        printed = subprocess.run([binary], capture_output=True, text=True, check=True).stdout
    c_values = {}
    for line in printed.splitlines():
        name, *values = line.split()
        c_values[name] = tuple(int(v) for v in values)
    failures = []
    checked = 0
    for py_name, c_name in STRUCTS.items():
        cls = getattr(structs, py_name)
        if c_values[c_name] != (ctypes.sizeof(cls),):
            failures.append(f"sizeof({c_name}) is {c_values[c_name][0]} in C, "
                            f"{ctypes.sizeof(cls)} in {py_name}")
        for field in cls._fields_:
            descriptor = getattr(cls, field[0])
            expected = (descriptor.offset, descriptor.size)
            got = c_values[f"{c_name}.{field[0]}"]
            checked += 1
            if got != expected:
                failures.append(f"{c_name}.{field[0]}: offset {got[0]}, size {got[1]} in C; "
                                f"offset {expected[0]}, size {expected[1]} in {py_name}")
    for py_name in CONSTANTS:
        checked += 1
        if c_values[py_name] != (getattr(structs, py_name),):
            failures.append(f"{py_name} is {c_values[py_name][0]} in C, "
                            f"{getattr(structs, py_name)} in Python")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(STRUCTS)} structs, {checked} fields and constants checked, "
          f"{len(failures)} mismatch(es)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
