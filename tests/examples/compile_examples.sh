#!/usr/bin/env bash
# Every example compiles for the nvptx target, for every arch `tessera-jit --help` lists, to PTX
# (one module per kernel) that the toolkit's ptxas (an independent assembler) accepts for that
# arch. An example's
# delegates come from its header line `// tessera-jit flags: …`, used as written from the
# examples folder. Usage: compile_examples.sh EXAMPLES_DIR WORK_DIR
set -euo pipefail
dir="$1"
work="$2"
mkdir -p "$work"
ptxas="${CUDA_HOME:-/usr/local/cuda}/bin/ptxas"
archs="$(tessera-jit --help | sed -n 's/^supported archs (--arch): //p' | tr -d ',')"
[ -n "$archs" ] || { echo "no archs in tessera-jit --help" >&2; exit 1; }
cd "$dir"
for example in *.mlir; do
  flags="$(sed -n 's|^// tessera-jit flags: ||p' "$example" | head -n 1)"
  for arch in $archs; do
    ptx="$work/${example%.mlir}.$arch.ptx"
    # shellcheck disable=SC2086  # the header's flags are words
    tessera-jit compile "$example" $flags --target nvptx --arch "$arch" --emit ptx -o "$ptx" || {
      echo "FAILED: $example does not compile for $arch" >&2; exit 1; }
    # One image per kernel: each "// gpu.module @NAME" section is a PTX module of its own.
    rm -f "$ptx".image.*
    awk -v out="$ptx.image." '/^\/\/ gpu.module @/ { n++ } n { print > (out n) }' "$ptx"
    images=("$ptx".image.*)
    [ -e "${images[0]}" ] || { echo "FAILED: $example: no device image for $arch" >&2; exit 1; }
    for image in "${images[@]}"; do
      grep -q "^\.target $arch\$" "$image" || {
        echo "FAILED: $example: PTX not for $arch" >&2; exit 1; }
      "$ptxas" -arch="$arch" "$image" -o /dev/null || {
        echo "FAILED: ptxas rejects $example ($image) for $arch" >&2; exit 1; }
    done
  done
  echo "assembled: $example for $(wc -w <<<"$archs") archs"
done
