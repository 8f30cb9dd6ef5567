#!/usr/bin/env bash
# The CPU image end to end: builds deploy/docker/Dockerfile.cpu with podman, unchanged, starts it
# as docs/deploy.md does (read-only root filesystem, models and key file from volumes), and checks
# /health, a completion with the key, the image's own HEALTHCHECK, and a clean exit on SIGTERM.
#
# Registries other than Debian's and PyPI's are unreachable on the development and CI machines, so
# the base image the Dockerfile names, debian:bookworm-slim, is made here with debootstrap from
# Debian's mirror and imported under that name. Slow (the image compiles LPX: about 15 minutes on
# 2 cores), so it is not part of the README's test run: configure with -DLPX_CONTAINER_TESTS=ON
# and run `ctest --test-dir build -L container`. Needs root (or rootless podman), podman and
# debootstrap (Debian packages).
#
# Environment: LPX_MODEL (the model file mounted at /models), LPX_ROOTFS (where the debootstrap
# tree is kept between runs), LPX_SMOKE_PORT (the host port, default 18080).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
MODEL=${LPX_MODEL:-$ROOT/models/SmolLM2-135M-Instruct.Q4_1.gguf}
ROOTFS=${LPX_ROOTFS:-/var/tmp/lpx-bookworm-rootfs}
PORT=${LPX_SMOKE_PORT:-18080}
BASE=docker.io/library/debian:bookworm-slim
IMAGE=localhost/lpx:cpu-smoke
NAME=lpx-smoke-$$
WORK=$(mktemp -d)

for tool in podman debootstrap curl; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is not installed (apt-get install podman debootstrap curl)"; exit 1; }
done
[ -f "$MODEL" ] || { echo "FAIL: $MODEL is missing (tools/setup.sh installs it)"; exit 1; }

cleanup() {
  podman rm -f "$NAME" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

step() { echo "== $*"; }

if ! podman image exists "$BASE"; then
  if [ ! -x "$ROOTFS/usr/bin/apt-get" ]; then
    step "debootstrap bookworm into $ROOTFS"
    debootstrap --variant=minbase bookworm "$ROOTFS" http://deb.debian.org/debian
  fi
  step "import $ROOTFS as $BASE"
  tar -C "$ROOTFS" -c . | podman import --change 'CMD ["bash"]' - "$BASE"
fi

step "build deploy/docker/Dockerfile.cpu"
# docker format: OCI images drop HEALTHCHECK, which is checked below.
podman build --format docker --network host -f "$ROOT/deploy/docker/Dockerfile.cpu" -t "$IMAGE" \
  --build-arg LPX_COMMIT="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" "$ROOT"

step "run it"
mkdir -p "$WORK/models"
cp "$MODEL" "$WORK/models/SmolLM2-135M-Instruct.Q4_1.gguf"
KEY=smoke-$RANDOM$RANDOM
echo "$KEY id=smoke" > "$WORK/api-keys"
chmod 644 "$WORK/api-keys"
chmod 755 "$WORK" "$WORK/models"
podman run -d --name "$NAME" --read-only -p "127.0.0.1:$PORT:8080" \
  -v "$WORK/models:/models:ro" -v "$WORK/api-keys:/run/secrets/lpx-api-keys:ro" "$IMAGE" >/dev/null

for _ in $(seq 120); do
  curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ] || break
  sleep 1
done
health=$(curl -fsS "http://127.0.0.1:$PORT/health") || { podman logs "$NAME"; echo "FAIL: /health"; exit 1; }
[ "$health" = '{"status":"ok"}' ] || { echo "FAIL: /health said $health"; exit 1; }
echo "/health: $health"

status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/models")
[ "$status" = 401 ] || { echo "FAIL: /v1/models without the key answered $status, not 401"; exit 1; }

answer=$(curl -fsS "http://127.0.0.1:$PORT/v1/completions" -H "Authorization: Bearer $KEY" \
  -H 'Content-Type: application/json' -d '{"prompt":"The capital of France is","max_tokens":4}')
echo "completion: $answer"
python3 - "$answer" <<'PY'
import json, sys
answer = json.loads(sys.argv[1])
text = answer["choices"][0]["text"]
assert "Paris" in text, text
assert answer["usage"]["completion_tokens"] == 4, answer
PY

step "the image's HEALTHCHECK"
podman healthcheck run "$NAME" || { echo "FAIL: podman healthcheck run"; exit 1; }
[ "$(podman inspect --format '{{.Config.User}}' "$NAME")" = "10001:10001" ] || { echo "FAIL: not user 10001"; exit 1; }

step "SIGTERM drains and exits 0"
podman stop -t 60 "$NAME" >/dev/null
code=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
podman logs "$NAME" 2>&1 | tail -5
[ "$code" = 0 ] || { echo "FAIL: exit status $code after SIGTERM"; exit 1; }
echo "PASS: $IMAGE built from deploy/docker/Dockerfile.cpu answers and stops cleanly"
