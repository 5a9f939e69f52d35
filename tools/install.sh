#!/usr/bin/env bash
# Installs the C API for C and C++ programs under PREFIX, the layout pkg-config and CMake look
# for (docs/capi.md, "C and C++ programs"):
#
#   lib/libtessera_jit.so.<major>.<minor>     the library (SONAME libtessera_jit.so.<major>),
#   lib/libtessera_jit.so.<major> -> …         stripped, RUNPATH $ORIGIN/tessera-jit
#   lib/libtessera_jit.so -> …
#   lib/tessera-jit/libabsl_*.so.*            the abseil libraries it links (private to it)
#   include/tessera_jit.h, include/dlpack/dlpack.h
#   lib/pkgconfig/tessera-jit.pc
#   lib/cmake/TesseraJIT/TesseraJITConfig.cmake, TesseraJITConfigVersion.cmake
#                                             (imported target TesseraJIT::tessera_jit)
#
# The prefix is relocatable (the .pc and CMake files find it from their own location). The
# version is the C API's (TESSERA_JIT_API_MAJOR/MINOR): minor versions add to the API and keep
# its ABI (struct_size), so the SONAME carries the major only.
#
#   tools/install.sh [--mode opt|fastbuild] PREFIX    # opt (default): the release build
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$TESSERA_ROOT"

mode=opt
prefix=""
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) mode="$2"; shift 2 ;;
    -*) echo "usage: tools/install.sh [--mode opt|fastbuild] PREFIX" >&2; exit 2 ;;
    *) prefix="$1"; shift ;;
  esac
done
if [ -z "$prefix" ]; then
  echo "usage: tools/install.sh [--mode opt|fastbuild] PREFIX" >&2
  exit 2
fi

if [ "$mode" = opt ]; then
  # The GPU bundle's and the wheel's flags (tools/gpu_bundle.sh): the three share outputs.
  tessera_build -c opt --force_pic --copt=-ffunction-sections --copt=-fdata-sections \
    //capi:libtessera_jit.so
  built="bazel-out/k8-opt/bin/capi/libtessera_jit.so"
elif [ "$mode" = fastbuild ]; then
  tessera_build //capi:libtessera_jit.so
  built="bazel-bin/capi/libtessera_jit.so"
else
  echo "tools/install.sh: --mode is opt or fastbuild, not $mode" >&2
  exit 2
fi

header=capi/include/tessera_jit.h
major="$(awk '/#define TESSERA_JIT_API_MAJOR/ {print $3}' "$header")"
minor="$(awk '/#define TESSERA_JIT_API_MINOR/ {print $3}' "$header")"
version="$major.$minor"
soname="libtessera_jit.so.$major"
real="libtessera_jit.so.$version"

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
lib="$prefix/lib"
mkdir -p "$lib/tessera-jit" "$lib/pkgconfig" "$lib/cmake/TesseraJIT" "$prefix/include/dlpack"

rm -f "$lib/$real" "$lib/$soname" "$lib/libtessera_jit.so"
cp "$built" "$lib/$real"
chmod u+w "$lib/$real"
# The abseil shared libraries it links (machines without libabsl-dev have none), beside it in a
# directory of its own so they never shadow another abseil of the prefix.
for library in $(ldd "$built" | awk '/libabsl_/ {print $3}' | sort -u); do
  cp -L "$library" "$lib/tessera-jit/"
done
chmod u+w "$lib"/tessera-jit/*
strip --strip-unneeded "$lib/$real" "$lib"/tessera-jit/*.so*
patchelf --set-soname "$soname" "$lib/$real"
patchelf --set-rpath '$ORIGIN/tessera-jit' "$lib/$real"
for library in "$lib"/tessera-jit/*.so*; do patchelf --set-rpath '$ORIGIN' "$library"; done
ln -s "$real" "$lib/$soname"
ln -s "$soname" "$lib/libtessera_jit.so"

cp "$header" "$prefix/include/tessera_jit.h"
cp /usr/include/dlpack/dlpack.h "$prefix/include/dlpack/dlpack.h"

cat > "$lib/pkgconfig/tessera-jit.pc" <<EOF
# Tessera JIT's C API (tools/install.sh). Relocatable: the prefix is two levels above this file.
prefix=\${pcfiledir}/../..
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: tessera-jit
Description: Tessera JIT: compile Tessera IR and run it on the host or an NVIDIA GPU
Version: $version
Libs: -L\${libdir} -ltessera_jit
Cflags: -I\${includedir}
EOF

cat > "$lib/cmake/TesseraJIT/TesseraJITConfig.cmake" <<EOF
# Tessera JIT's C API (tools/install.sh): find_package(TesseraJIT) defines the imported target
# TesseraJIT::tessera_jit (the library, its include directory). Relocatable.
get_filename_component(_tessera_jit_prefix "\${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET TesseraJIT::tessera_jit)
  add_library(TesseraJIT::tessera_jit SHARED IMPORTED)
  set_target_properties(TesseraJIT::tessera_jit PROPERTIES
    IMPORTED_LOCATION "\${_tessera_jit_prefix}/lib/$real"
    IMPORTED_SONAME "$soname"
    INTERFACE_INCLUDE_DIRECTORIES "\${_tessera_jit_prefix}/include")
endif()
set(TesseraJIT_INCLUDE_DIRS "\${_tessera_jit_prefix}/include")
set(TesseraJIT_LIBRARIES TesseraJIT::tessera_jit)
unset(_tessera_jit_prefix)
EOF

cat > "$lib/cmake/TesseraJIT/TesseraJITConfigVersion.cmake" <<EOF
# Minor versions add to the C API and keep its ABI: any $major.x up to $version is served.
set(PACKAGE_VERSION "$version")
if(NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
elseif(NOT PACKAGE_FIND_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(NOT PACKAGE_FIND_VERSION_MAJOR EQUAL $major OR
       PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
else()
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
  if(PACKAGE_FIND_VERSION VERSION_EQUAL PACKAGE_VERSION)
    set(PACKAGE_VERSION_EXACT TRUE)
  endif()
endif()
EOF

echo "installed Tessera JIT $version into $prefix ($(du -sh "$lib/$real" | cut -f1) library)"
