"""mlir_tblgen: runs the system mlir-tblgen (LLVM 22) over the dialect's .td files."""

_TBLGEN = "/usr/lib/llvm-22/bin/mlir-tblgen"
_MLIR_INCLUDE = "/usr/lib/llvm-22/include"

def mlir_tblgen(name, td_file, td_srcs, outs):
    """Generates one .inc file per entry of `outs` and bundles them as a header-only library.

    Args:
      name: the cc_library holding the generated files as textual headers.
      td_file: the main .td file.
      td_srcs: every .td file of this package that td_file includes.
      outs: dict from output file name to the mlir-tblgen flags that produce it.
    """
    for out, flags in outs.items():
        native.genrule(
            name = name + "_" + out.replace(".", "_"),
            srcs = td_srcs,
            outs = [out],
            cmd = "%s %s -I %s -I $$(dirname $(location %s)) $(location %s) -o $@" % (
                _TBLGEN,
                flags,
                _MLIR_INCLUDE,
                td_file,
                td_file,
            ),
        )
    native.cc_library(
        name = name,
        textual_hdrs = outs.keys(),
    )
