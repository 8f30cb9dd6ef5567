#!/usr/bin/env bash
# Packs an sm_90 build, the shared libraries it needs, the tiny test model and a MANIFEST (the
# commit, when, the toolkit) into .gpu-bundle/ (git-ignored) for a GPU machine that has the driver and the CUDA toolkit but
# not this project's packages or a network (the device machine lent to some sessions). There:
# `tools/gpu-check.sh --prebuilt` with .gpu-bundle carried. glibc, the CUDA driver and cuBLAS
# are the machine's own; the other libraries travel (libstdc++ as a fallback only).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
# BUILD_DIR=build reuses a build already configured with -DLPX_CUDA_ARCHITECTURES=90.
build=${BUILD_DIR:-build-gpu}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLPX_CUDA=ON \
  -DLPX_CUDA_ARCHITECTURES=90 >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target lpx-pipeline cuda_kernel_tests cuda_engine_tests

bundle=.gpu-bundle
rm -rf "$bundle"
mkdir -p "$bundle"/build/{bin,lib/lpx/plugins,tests} "$bundle"/lib "$bundle"/shared/models
cp "$build"/bin/lpx-pipeline "$bundle"/build/bin/
cp "$build"/lib/lpx/plugins/*.so "$bundle"/build/lib/lpx/plugins/
cp "$build"/tests/cuda_kernel_tests "$build"/tests/cuda_engine_tests "$bundle"/build/tests/
cp "$root"/../shared/models/llama-2-tiny-random.gguf "$bundle"/shared/models/

for f in "$bundle"/build/bin/* "$bundle"/build/lib/lpx/plugins/*.so "$bundle"/build/tests/*; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so|/libcuda\.so|/libcublas' |
  while read -r lib; do
    # The C++ runtime travels apart: it needs this machine's glibc; used there only when the
    # machine's own is older than the one the build needs (gpu-check.sh decides).
    case $lib in
      */libstdc++.so.*|*/libgcc_s.so.*) mkdir -p "$bundle"/lib-fallback; cp -L "$lib" "$bundle"/lib-fallback/ ;;
      *) cp -L "$lib" "$bundle"/lib/ ;;
    esac
  done
strip --strip-unneeded "$bundle"/build/bin/* "$bundle"/build/lib/lpx/plugins/*.so \
  "$bundle"/build/tests/* 2>/dev/null || true
{
  echo "commit=$(git rev-parse --short=12 HEAD)$(git diff --quiet HEAD || echo +dirty)"
  echo "built=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "toolkit=$("$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "host=$(uname -n)"
} >"$bundle"/MANIFEST
du -sh "$bundle"
# The dry run checks what the device tool will need: every file, the manifest, and the bundle
# plus the working tree within the 64 MiB it carries.
OUT=$(mktemp -d) tools/gpu-check.sh --dry-run >/dev/null ||
  { echo "error: the bundle does not pass tools/gpu-check.sh --dry-run" >&2; exit 1; }
echo "carry .gpu-bundle and run: tools/gpu-check.sh --prebuilt (timeout_s 480)"
