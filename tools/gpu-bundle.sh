#!/usr/bin/env bash
# Packs an sm_90 build, the shared libraries it needs and the tiny test model into
# .gpu-bundle/ (git-ignored) for a GPU machine that has the driver and the CUDA toolkit but
# not this project's packages or a network (the device machine lent to some sessions). There:
# `tools/gpu-check.sh --prebuilt` with .gpu-bundle carried. glibc and the CUDA driver and
# cuBLAS are the machine's own; everything else travels (libstdc++ too: the machine's may be
# older than the one this was built with).
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
# The tests look for plugins, sources and ../shared where the build was made.
echo "$root/$build" >"$bundle"/build-dir

for f in "$bundle"/build/bin/* "$bundle"/build/lib/lpx/plugins/*.so "$bundle"/build/tests/*; do
  ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | sort -u | grep -vE '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so|/libcuda\.so|/libcublas' |
  while read -r lib; do cp -L "$lib" "$bundle"/lib/; done
du -sh "$bundle"
echo "carry .gpu-bundle and run: tools/gpu-check.sh --prebuilt"
