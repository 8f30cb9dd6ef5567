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
# buildah and debootstrap (Debian packages). Where the host lets no OCI runtime start a container
# (the development VMs lack CAP_SYS_RESOURCE, so crun and runc cannot set its rlimits), the image
# runs under buildah's chroot isolation instead: the same filesystem, user, command and volumes,
# without a read-only root or a network namespace of its own.
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

for tool in podman buildah debootstrap curl; do
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
# chroot isolation: RUN steps need no OCI runtime, so no cgroups or rlimits (which some hosts,
# such as the development VMs, do not let a runtime set). docker format: OCI images drop
# HEALTHCHECK, which is checked below.
podman build --isolation chroot --format docker --network host -f "$ROOT/deploy/docker/Dockerfile.cpu" \
  -t "$IMAGE" --build-arg LPX_COMMIT="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" "$ROOT"

[ "$(podman image inspect --format '{{.Config.User}}' "$IMAGE")" = "10001:10001" ] || { echo "FAIL: the image does not run as 10001"; exit 1; }
HEALTHCHECK=$(podman image inspect --format '{{json .Config.Healthcheck.Test}}' "$IMAGE")
case "$HEALTHCHECK" in *"/health"*) ;; *) echo "FAIL: HEALTHCHECK is $HEALTHCHECK"; exit 1 ;; esac
# The image's command, as `docker run IMAGE` runs it.
mapfile -t COMMAND < <(podman image inspect --format '{{json .Config.Entrypoint}}{{json .Config.Cmd}}' "$IMAGE" |
  python3 -c 'import json,sys; t=sys.stdin.read().replace("][", "],["); [print(a) for part in json.loads("["+t+"]") for a in (part or [])]')
mapfile -t CHECK < <(python3 -c 'import json,sys; t=json.loads(sys.argv[1]); print("\n".join(t[1:] if t[0] in ("CMD", "NONE") else ["sh", "-c", t[1]]))' "$HEALTHCHECK")

mkdir -p "$WORK/models"
cp "$MODEL" "$WORK/models/SmolLM2-135M-Instruct.Q4_1.gguf"
KEY=smoke-$RANDOM$RANDOM
echo "$KEY id=smoke" > "$WORK/api-keys"
chmod 644 "$WORK/api-keys"
chmod 755 "$WORK" "$WORK/models"

# podman run where the host lets an OCI runtime start containers; else the same image, user,
# command and volumes under buildah's chroot isolation (which shares the host's network).
if podman run --rm "$BASE" true >/dev/null 2>&1; then
  RUNNER=podman
  step "run it: podman run --read-only (port $PORT)"
  podman run -d --name "$NAME" --read-only -p "127.0.0.1:$PORT:8080" \
    -v "$WORK/models:/models:ro" -v "$WORK/api-keys:/run/secrets/lpx-api-keys:ro" "$IMAGE" >/dev/null
  exec_check() { podman healthcheck run "$NAME"; }
  running() { [ "$(podman inspect --format '{{.State.Running}}' "$NAME")" = true ]; }
  stop_it() {
    podman stop -t 60 "$NAME" >/dev/null
    EXIT_CODE=$(podman inspect --format '{{.State.ExitCode}}' "$NAME")
  }
  show_log() { podman logs "$NAME" 2>&1 | tail -"${1:-40}"; }
else
  RUNNER=buildah
  PORT=8080  # the host's network: the image's own port
  step "run it: podman cannot start containers here ($(podman run --rm "$BASE" true 2>&1 | tail -1)); buildah run --isolation chroot"
  CONTAINER=$(buildah from --name "$NAME" "$IMAGE")
  buildah run --isolation chroot --user 10001:10001 --workingdir /usr/local/share/lpx \
    -v "$WORK/models:/models:ro" -v "$WORK/api-keys:/run/secrets/lpx-api-keys:ro" \
    "$CONTAINER" -- "${COMMAND[@]}" > "$WORK/server.log" 2>&1 &
  SERVER_PID=$!
  exec_check() { buildah run --isolation chroot --user 10001:10001 "$CONTAINER" -- "${CHECK[@]}"; }
  running() { kill -0 "$SERVER_PID" 2>/dev/null; }
  stop_it() {
    local server
    server=$(pgrep -f "^/usr/local/bin/lpx-pipeline serve" | head -1)
    [ -n "$server" ] || { echo "FAIL: the server process is gone"; exit 1; }
    kill -TERM "$server"
    EXIT_CODE=0
    wait "$SERVER_PID" || EXIT_CODE=$?
  }
  show_log() { tail -"${1:-40}" "$WORK/server.log"; }
  cleanup() {
    pkill -KILL -f "^/usr/local/bin/lpx-pipeline serve" 2>/dev/null || true
    buildah rm "$NAME" >/dev/null 2>&1 || true
    rm -rf "$WORK"
  }
fi
echo "command: ${COMMAND[*]}"

for _ in $(seq 120); do
  curl -fsS "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  running || break
  sleep 1
done
health=$(curl -fsS "http://127.0.0.1:$PORT/health") || { show_log; echo "FAIL: /health"; exit 1; }
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
assert "Paris" in answer["choices"][0]["text"], answer
assert answer["usage"]["completion_tokens"] == 4, answer
PY
info=$(curl -fsS "http://127.0.0.1:$PORT/v1/info" -H "Authorization: Bearer $KEY")
python3 - "$info" <<'PY'
import json, sys
info = json.loads(sys.argv[1])
assert info["os"]["name"].startswith("Debian GNU/Linux 12"), info["os"]
assert info["models"][0]["path"] == "/models/SmolLM2-135M-Instruct.Q4_1.gguf", info["models"]
print("run record: LPX", info["lpx"], "on", info["os"]["name"])
PY

step "the image's HEALTHCHECK: ${CHECK[*]}"
exec_check || { echo "FAIL: the HEALTHCHECK command failed"; exit 1; }

step "SIGTERM drains and exits 0"
stop_it
show_log 5
[ "$EXIT_CODE" = 0 ] || { echo "FAIL: exit status $EXIT_CODE after SIGTERM"; exit 1; }
echo "PASS: $IMAGE built from deploy/docker/Dockerfile.cpu answers and stops cleanly ($RUNNER)"
