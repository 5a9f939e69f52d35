#!/usr/bin/env bash
# C and C++ programs as a user builds them: installs the C API into a temporary prefix
# (tools/install.sh --mode fastbuild), checks its layout (SONAME, links, headers, no NEEDED
# entry on CUDA libraries), then copies capi/examples/ out of the tree and builds it from the
# prefix alone — with pkg-config and its Makefile, and with CMake's find_package(TesseraJIT) —
# and runs both programs (run_mlp checks the MLP against a C reference). Finally moves the
# prefix and builds again (it is relocatable), and asks CMake for a version it does not serve.
#
#   tools/install_test.sh [REPORT.xml]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"
source tools/test_python.sh

report="${1:-$(mktemp --suffix=.xml)}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

cases=()
record() { tessera_record_case install "$1" "$2"; }
write_report() { tessera_junit_report install "$report" "${cases[@]}"; }
finish() {
  write_report
  for case in "${cases[@]}"; do [ -z "${case#*|}" ] || exit 1; done
  exit 0
}
# Runs a step; its output is kept for the failure message.
step() {
  local name="$1"; shift
  if out="$("$@" 2>&1)"; then record "$name" ""; return 0; fi
  record "$name" "$(echo "$out" | tail -8)"
  return 1
}

prefix="$work/prefix"
step "tools/install.sh" tools/install.sh --mode fastbuild "$prefix" || finish
major="$(awk '/#define TESSERA_JIT_API_MAJOR/ {print $3}' capi/include/tessera_jit.h)"
minor="$(awk '/#define TESSERA_JIT_API_MINOR/ {print $3}' capi/include/tessera_jit.h)"

layout() {
  local lib="$prefix/lib"
  [ -f "$lib/libtessera_jit.so.$major.$minor" ] || { echo "no libtessera_jit.so.$major.$minor"; return 1; }
  [ "$(readlink "$lib/libtessera_jit.so.$major")" = "libtessera_jit.so.$major.$minor" ] ||
    { echo "libtessera_jit.so.$major does not link to the library"; return 1; }
  [ "$(readlink "$lib/libtessera_jit.so")" = "libtessera_jit.so.$major" ] ||
    { echo "libtessera_jit.so does not link to the SONAME"; return 1; }
  local dynamic
  dynamic="$(readelf -d "$lib/libtessera_jit.so.$major.$minor")"
  grep -q "SONAME.*\[libtessera_jit.so.$major\]" <<<"$dynamic" ||
    { echo "SONAME is not libtessera_jit.so.$major"; return 1; }
  ! grep NEEDED <<<"$dynamic" | grep -i -E "nvrtc|nvjitlink|cuda" ||
    { echo "the library needs a CUDA library"; return 1; }
  for file in include/tessera_jit.h include/dlpack/dlpack.h lib/pkgconfig/tessera-jit.pc \
      lib/cmake/TesseraJIT/TesseraJITConfig.cmake lib/cmake/TesseraJIT/TesseraJITConfigVersion.cmake; do
    [ -f "$prefix/$file" ] || { echo "no $file"; return 1; }
  done
  # Every library it needs resolves inside the prefix or the system (abseil in lib/tessera-jit).
  if env -u LD_LIBRARY_PATH ldd "$lib/libtessera_jit.so.$major.$minor" | grep "not found"; then return 1; fi
  [ "$(PKG_CONFIG_PATH="$lib/pkgconfig" pkg-config --modversion tessera-jit)" = "$major.$minor" ]
}
step "prefix layout: SONAME, links, headers, pkg-config and CMake files" layout || true

examples="$work/examples"
cp -r capi/examples "$examples"
rm -f "$examples/BUILD"
cp examples/mlp.mlir "$work/mlp.mlir"

# describe_module's output names the MLP's signature. (Its output is captured first: with
# pipefail, `program | grep -q` fails when grep exits before the program's last write.)
described() { grep -q "^@mlp(%x: memref<?x784xf32>" <<<"$1"; }
# Out of the tree, from the prefix alone: no source tree on the include or library path.
with_make() {
  local prefix="$1" out
  make -C "$examples" clean >/dev/null
  PKG_CONFIG_PATH="$prefix/lib/pkgconfig" make -C "$examples" &&
    LD_LIBRARY_PATH="$prefix/lib" "$examples/run_mlp" "$work/mlp.mlir" &&
    out="$(LD_LIBRARY_PATH="$prefix/lib" "$examples/describe_module" "$work/mlp.mlir")" &&
    described "$out"
}
with_cmake() {
  local prefix="$1" build out
  build="$(mktemp -d "$work/build-XXXXXX")" || return 1
  cmake -S "$examples" -B "$build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null &&
    cmake --build "$build" &&
    "$build/run_mlp" "$work/mlp.mlir" &&
    out="$("$build/describe_module" "$work/mlp.mlir")" && described "$out"
}
step "pkg-config + Makefile: run_mlp and describe_module build and run" with_make "$prefix" || true
step "CMake find_package(TesseraJIT): run_mlp and describe_module build and run" \
  with_cmake "$prefix" || true

moved="$work/moved/elsewhere"
mkdir -p "$(dirname "$moved")"
mv "$prefix" "$moved"
step "relocated prefix: pkg-config and CMake still build and run" \
  bash -c "$(declare -f described with_make with_cmake); work='$work' examples='$examples'
           with_make '$moved' && with_cmake '$moved'" || true

# A version the prefix does not serve is refused by CMake (the version file).
mkdir -p "$work/too-new"
cat > "$work/too-new/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.16)
project(too_new LANGUAGES C)
find_package(TesseraJIT $major.$((minor + 1)) REQUIRED CONFIG)
EOF
refused() {
  ! cmake -S "$work/too-new" -B "$work/too-new/build" -DCMAKE_PREFIX_PATH="$moved" >/dev/null 2>&1
}
step "CMake refuses TesseraJIT $major.$((minor + 1)) from a $major.$minor prefix" refused || true

finish
