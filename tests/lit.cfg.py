# lit configuration for Tessera's FileCheck suites (tests/dialect, ...). Run by tools/test.sh;
# by hand: `lit-22 -sv tests` after `bazel build //tools/...`.
import os

import lit.formats

config.name = "Tessera"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["lit.cfg.py"]

repo_root = os.path.dirname(config.test_source_root)
bazel_bin = os.environ.get("TESSERA_BAZEL_BIN", os.path.join(repo_root, "bazel-bin"))
tessera_opt = os.path.join(bazel_bin, "tools", "tessera-opt", "tessera-opt")
if not os.path.exists(tessera_opt):
    lit_config.fatal("tessera-opt not found at %s; build it first (bazel build //tools/...)"
                     % tessera_opt)

config.substitutions.append(("%examples", os.path.join(repo_root, "examples")))
# The CLI's compile cache goes to a private directory, not the user's.
config.environment["TESSERA_JIT_CACHE_DIR"] = os.path.join(
    config.test_exec_root if hasattr(config, "test_exec_root") and config.test_exec_root
    else repo_root, ".lit-cache")
# The project tools, then FileCheck and not from LLVM 22 (Debian installs them under /usr/lib/llvm-22/bin).
config.environment["PATH"] = os.pathsep.join(
    [os.path.dirname(tessera_opt), os.path.join(bazel_bin, "tools", "tessera-jit"),
     "/usr/lib/llvm-22/bin", config.environment.get("PATH", "")])
