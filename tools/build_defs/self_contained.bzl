"""Binaries with LLVM/MLIR linked in statically: a shared library that exports only its C API
(self_contained_library), and an executable that loads no LLVM or MLIR shared library
(self_contained_binary: the CLI, which then starts without loading 246 MiB of libLLVM and
libMLIR and running every static constructor in them).

cc_binary cannot do either: the system LLVM target (@llvm//:mlir) puts -lMLIR -lLLVM on every
link line, and a linker exports every symbol a shared library on its line references, whatever
the version script says (MLIR's weak TypeIDResolver templates among them). These rules link the
same objects and libraries through the C++ toolchain (so every configuration's flags,
sanitizers included, apply), with those two flags taken out and the static archives put in
their place.
"""

load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")

def _static_flag(flag, prefixes):
    """-lNAME of a library to link statically → -l:libNAME.a."""
    for prefix in prefixes:
        if flag.startswith(prefix):
            return "-l:lib" + flag[2:] + ".a"
    return flag

def _link(ctx, output_type):
    cc_toolchain = find_cpp_toolchain(ctx)
    features = cc_common.configure_features(
        ctx = ctx,
        cc_toolchain = cc_toolchain,
        requested_features = ctx.features,
        unsupported_features = ctx.disabled_features,
    )
    dropped = ctx.attr.drop_link_flags

    linker_inputs = []
    for dep in ctx.attr.deps:
        for linker_input in dep[CcInfo].linking_context.linker_inputs.to_list():
            linker_inputs.append(cc_common.create_linker_input(
                owner = linker_input.owner,
                libraries = depset(linker_input.libraries),
                user_link_flags = depset([
                    _static_flag(f, ctx.attr.static_link_prefixes)
                    for f in linker_input.user_link_flags
                    if f not in dropped
                ]),
                additional_inputs = depset(linker_input.additional_inputs),
            ))
    archives = ctx.files.static_libraries
    flags = ["-Wl,--start-group"] + [a.path for a in archives] + ["-Wl,--end-group"]
    inputs = list(archives)
    if output_type == "dynamic_library":
        flags += ["-Wl,--version-script=" + ctx.file.version_script.path]
        inputs.append(ctx.file.version_script)
    flags += ctx.attr.linkopts
    linker_inputs.append(cc_common.create_linker_input(
        owner = ctx.label,
        user_link_flags = depset(flags),
        additional_inputs = depset(inputs),
    ))
    linking_context = cc_common.create_linking_context(
        linker_inputs = depset(linker_inputs, order = "topological"),
    )
    return cc_common.link(
        actions = ctx.actions,
        name = ctx.attr.library_name if output_type == "dynamic_library" else ctx.label.name,
        feature_configuration = features,
        cc_toolchain = cc_toolchain,
        linking_contexts = [linking_context],
        output_type = output_type,
    )

def _library_impl(ctx):
    outputs = _link(ctx, "dynamic_library")
    library = outputs.library_to_link.resolved_symlink_dynamic_library or \
              outputs.library_to_link.dynamic_library
    return [DefaultInfo(files = depset([library]), runfiles = ctx.runfiles(files = [library]))]

def _binary_impl(ctx):
    executable = _link(ctx, "executable").executable
    return [DefaultInfo(
        files = depset([executable]),
        executable = executable,
        runfiles = ctx.runfiles(files = [executable]),
    )]

_COMMON_ATTRS = {
    "deps": attr.label_list(providers = [CcInfo]),
    "static_libraries": attr.label_list(allow_files = [".a"]),
    "drop_link_flags": attr.string_list(),
    "static_link_prefixes": attr.string_list(
        doc = "-l flags starting with one of these link the system's static archive instead",
    ),
    "linkopts": attr.string_list(),
    "_cc_toolchain": attr.label(default = Label("@bazel_tools//tools/cpp:current_cc_toolchain")),
}

self_contained_library = rule(
    implementation = _library_impl,
    attrs = dict(_COMMON_ATTRS, **{
        "library_name": attr.string(mandatory = True, doc = "NAME for libNAME.so"),
        "version_script": attr.label(allow_single_file = True, mandatory = True),
    }),
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)

self_contained_binary = rule(
    implementation = _binary_impl,
    attrs = _COMMON_ATTRS,
    executable = True,
    fragments = ["cpp"],
    toolchains = ["@bazel_tools//tools/cpp:toolchain_type"],
)
