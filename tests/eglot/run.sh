#!/usr/bin/env bash
# Emacs eglot (Debian emacs-nox + elpa-eglot) as a real plain client of the
# real ask-lsp binary, in batch (tests/eglot/test.el, one Emacs per case):
# configured through :initializationOptions and through
# eglot-workspace-configuration, a question from the real OpenCode (offline,
# tests/opencode/mock_llm.py) or the simulated server shown with eglot's
# window/showMessageRequest handler and answered. Asserts what the agent
# received (the mock LLM's record of the tool result) or what the simulated
# server received (GET /_sim/log), and that a server listening at the default
# URL ($ASK_LSP_URL) is never followed. tests/eglot/beside.el and
# lsp_mode.el run the setups editors/emacs/README.md gives (eglot's M-x
# ask-lsp and lsp-mode's add-on, beside the files' own server).
# Prints "N passed, N failed"; kills everything it started.
set -euo pipefail
cd "$(dirname "$0")/../.."
# A Codex used on this machine (~/.codex) is not this suite's: its daemon
# would be one more server in every status.
export ASK_LSP_CODEX=0
ROOT=$PWD
BIN=$(realpath "${ASK_LSP_BIN:-$ROOT/target/debug/ask-lsp}")
[ -x "$BIN" ] || cargo build --quiet
# The simulated server (crates/ask-sim).
SIM_CMD=("$(realpath "${SIM_BIN:-$ROOT/target/debug/ask-sim}")" serve --port 0)

eglot_loads() {
  emacs --batch -Q --eval '(progn (dolist (d (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*")) (add-to-list (quote load-path) d)) (require (quote eglot)) (require (quote lsp-mode)))' 2>/dev/null
}
# lsp-mode for editors/emacs/README.md's lsp-mode setup (tests/eglot/lsp_mode.el).
if ! command -v emacs >/dev/null || ! eglot_loads; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends emacs-nox elpa-eglot elpa-lsp-mode >/dev/null
fi
emacs --batch -Q --eval '(progn (dolist (d (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*")) (add-to-list (quote load-path) d)) (message "Emacs %s, eglot from %s" emacs-version (locate-library "eglot")))'
if [ -z "${ASK_LSP_OPENCODE_BIN:-}" ] || [ -z "${ASK_LSP_OPENCODE_PLUGIN_DIR:-}" ]; then
  eval "$(tests/opencode/install.sh)"
fi

tmp=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  [ -n "${EGLOT_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT

http() { # METHOD URL [JSON body]: prints the response body
  python3 - "$@" <<'EOF'
import sys, urllib.request
method, url = sys.argv[1], sys.argv[2]
data = sys.argv[3].encode() if len(sys.argv) > 3 else None
request = urllib.request.Request(url, data=data, method=method,
                                 headers={"content-type": "application/json"})
with urllib.request.urlopen(request, timeout=10) as response:
    sys.stdout.write(response.read().decode())
EOF
}

# Not in a subshell: the trap must know every PID.
start_sim() { # name
  "${SIM_CMD[@]}" >"$tmp/$1.out" 2>"$tmp/$1.err" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q '^listening on ' "$tmp/$1.out" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "simulated server $1 did not start"
  exit 1
}
sim_url() { sed -n 's/^listening on //p' "$tmp/$1.out"; }

start_opencode() {
  local oc=$tmp/opencode
  mkdir -p "$oc"/{home,config/opencode,data,cache,state,project,tmp}
  python3 tests/opencode/mock_llm.py "$oc/llm.port" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$oc/llm.port" ] && break; sleep 0.1; done
  LLM_URL=http://127.0.0.1:$(cat "$oc/llm.port")
  cat >"$oc/config/opencode/opencode.json" <<EOF
{"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock",
   "options": {"baseURL": "$LLM_URL/v1", "apiKey": "mock"},
   "models": {"mock-model": {"name": "Mock"}}}},
 "model": "mock/mock-model", "small_model": "mock/mock-model",
 "autoupdate": false, "share": "disabled"}
EOF
  # The plugin package, so OpenCode does not npm-install it at start.
  cp "$ASK_LSP_OPENCODE_PLUGIN_DIR"/package.json "$ASK_LSP_OPENCODE_PLUGIN_DIR"/package-lock.json "$oc/config/opencode/"
  ln -s "$ASK_LSP_OPENCODE_PLUGIN_DIR/node_modules" "$oc/config/opencode/node_modules"
  OC_DIR=$oc/project
  # A port found free may be taken before OpenCode binds it: then OpenCode
  # exits, and another port is tried.
  local port pid
  for _ in 1 2 3; do
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    OC_URL=http://127.0.0.1:$port
    (cd "$oc/project" && exec env -i PATH="$PATH" HOME="$oc/home" XDG_CONFIG_HOME="$oc/config" \
      XDG_DATA_HOME="$oc/data" XDG_CACHE_HOME="$oc/cache" XDG_STATE_HOME="$oc/state" TMPDIR="$oc/tmp" \
      OPENCODE_DISABLE_MODELS_FETCH=1 OPENCODE_DISABLE_AUTOUPDATE=1 \
      OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_CLIENT=cli \
      "$ASK_LSP_OPENCODE_BIN" serve --hostname 127.0.0.1 --port "$port") >"$oc/server.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    # Early requests can hang while the server starts: short probes.
    for _ in $(seq 120); do
      health=$(python3 -c "import urllib.request; print(urllib.request.urlopen('$OC_URL/global/health', timeout=1).status)" 2>/dev/null || true)
      [ "$health" = 200 ] && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.5
    done
    kill -0 "$pid" 2>/dev/null && break
    echo "opencode exited on port $port:"; tail -n 5 "$oc/server.log"
  done
  echo "opencode not healthy"; tail -n 20 "$oc/server.log"
  exit 1
}

start=$SECONDS
start_sim stranger
start_sim sim
start_sim perm
start_sim beside
start_sim lsp_mode
STRANGER_URL=$(sim_url stranger)
SIM_URL=$(sim_url sim)
PERM_URL=$(sim_url perm)
BESIDE_URL=$(sim_url beside)
LSP_MODE_URL=$(sim_url lsp_mode)
# A question waits where the default URL points: showing it would be a bug.
http POST "$STRANGER_URL/_sim/ask" '{"questions": [{"question": "Stranger question?", "header": "Stranger",
  "options": [{"label": "Yes", "description": ""}, {"label": "No", "description": ""}]}]}' >/dev/null
start_opencode
echo "peers ready in $((SECONDS - start)) s"

passed=0
failed=0
check() { # name, result ("" = ok, else the reason)
  if [ -z "$2" ]; then
    passed=$((passed + 1)); echo "ok - $1"
  else
    failed=$((failed + 1)); echo "not ok - $1: $2"
  fi
}

# Triggers: ask the question once Emacs (and ask-lsp) are ready.
ask_opencode() {
  local session
  session=$(http POST "$OC_URL/session?directory=$OC_DIR" '{}' | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
  http POST "$OC_URL/session/$session/prompt_async?directory=$OC_DIR" \
    '{"parts": [{"type": "text", "text": "ASK:single"}]}' >/dev/null
}
ask_sim() {
  http POST "$SIM_URL/_sim/ask" '{"questions": [{"question": "Which cache?", "header": "Cache",
    "options": [{"label": "Redis", "description": ""}, {"label": "Memcached", "description": ""}]}]}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' >"$tmp/sim.asked"
}
# Checks: what the agent (or the simulated server) received.
agent_received() { # text the tool result contains
  for _ in $(seq 100); do
    http GET "$LLM_URL/_mock/records" | python3 -c '
import json, sys
records = json.load(sys.stdin)["records"]
sys.exit(0 if any(sys.argv[1] in r["content"] for r in records) else 1)' "$1" && return 0
    sleep 0.1
  done
  echo "the agent did not receive $1: $(http GET "$LLM_URL/_mock/records")"
}
sim_received() { # answer label
  http GET "$SIM_URL/_sim/log" | python3 -c '
import json, sys
log, asked, label = json.load(sys.stdin), sys.argv[1], sys.argv[2]
expected = [{"kind": "reply", "id": asked, "answers": [[label]]}]
if log != expected:
    print("the simulated server received %s, expected %s" % (json.dumps(log), json.dumps(expected)))' "$(cat "$tmp/sim.asked")" "$1"
}

# A permission to run a command; one Enter at eglot's prompt must not allow it.
ask_permission() {
  http POST "$PERM_URL/_sim/permission" '{"permission": "bash", "patterns": ["rm -rf build"],
    "metadata": {"command": "rm -rf build"}, "always": ["rm *"]}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])' >"$tmp/perm.asked"
}
permission_rejected() {
  http GET "$PERM_URL/_sim/log" | python3 -c '
import json, sys
log, asked = json.load(sys.stdin), sys.argv[1]
expected = [{"kind": "permission", "id": asked, "reply": "reject", "message": None}]
if log != expected:
    print("the simulated server received %s, expected %s" % (json.dumps(log), json.dumps(expected)))' "$(cat "$tmp/perm.asked")"
}

run_case() { # name, config, server URL, expect, answer, trigger, check...
  local name=$1 config=$2 url=$3 expect=$4 answer=$5 trigger=$6
  shift 6
  local n=$((passed + failed)) case_start=$SECONDS
  local dir=$tmp/case$n
  mkdir -p "$dir/project"
  # "beside" / "lsp-mode": editors/emacs/README.md's setups, beside the
  # files' own server (HOME: lsp-mode writes under ~/.emacs.d).
  local script=tests/eglot/test.el
  [ "$config" = beside ] && script=tests/eglot/beside.el
  [ "$config" = lsp-mode ] && script=tests/eglot/lsp_mode.el
  env -u OPENCODE_SERVER_PASSWORD ASK_LSP_URL="$STRANGER_URL" ASK_LSP_BIN="$BIN" \
    PATH="$(dirname "$BIN"):$PATH" HOME="$dir" \
    EGLOT_CONFIG="$config" EGLOT_SERVER_URL="$url" EGLOT_PROJECT="$dir/project" \
    EGLOT_READY_FILE="$dir/ready" EGLOT_EXPECT="$expect" EGLOT_ANSWER="$answer" \
    EGLOT_FORBID="Stranger question" EGLOT_COUNTER="${EGLOT_COUNTER:-answeredHere}" \
    timeout 120 emacs --batch -Q -l "$script" >"$dir/emacs.log" 2>&1 &
  local emacs=$!
  pids+=("$emacs")
  while [ ! -e "$dir/ready" ] && kill -0 "$emacs" 2>/dev/null; do sleep 0.1; done
  local reason=""
  if [ -e "$dir/ready" ]; then
    "$trigger"
  fi
  wait "$emacs" || reason="emacs: $(grep '^FAIL' "$dir/emacs.log" || tail -n 5 "$dir/emacs.log")"
  [ -n "$reason" ] || reason=$("$@")
  check "$name ($((SECONDS - case_start)) s)" "$reason"
  if [ -z "$reason" ]; then
    grep -E '^(connected to|question shown)' "$dir/emacs.log" | sed 's/^/    /'
  else
    sed 's/^/    /' "$dir/emacs.log"
  fi
}

run_case "initializationOptions, real OpenCode" init "$OC_URL" "Which database?" Postgres \
  ask_opencode agent_received '"Which database?"="Postgres"'
run_case "workspace configuration, real OpenCode" workspace "$OC_URL" "Which database?" SQLite \
  ask_opencode agent_received '"Which database?"="SQLite"'
run_case "workspace configuration, simulated server" workspace "$SIM_URL" "Which cache?" Memcached \
  ask_sim sim_received Memcached
EGLOT_COUNTER=rejectedHere run_case "one Enter on a permission rejects it, simulated server" workspace \
  "$PERM_URL" "Run rm -rf build" :RET ask_permission permission_rejected
# A server of its own: sim_received wants exactly one answer there.
ask_beside() { SIM_URL=$BESIDE_URL ask_sim; }
beside_received() { SIM_URL=$BESIDE_URL sim_received "$@"; }
run_case "editors/emacs/README.md: M-x ask-lsp beside the files' own server, simulated server" beside "$BESIDE_URL" "Which cache?" Redis \
  ask_beside beside_received Redis
ask_lsp_mode() { SIM_URL=$LSP_MODE_URL ask_sim; }
lsp_mode_received() { SIM_URL=$LSP_MODE_URL sim_received "$@"; }
run_case "editors/emacs/README.md: lsp-mode add-on beside the files' own server, simulated server" lsp-mode "$LSP_MODE_URL" "Which cache?" Memcached \
  ask_lsp_mode lsp_mode_received Memcached
stranger_log=$(http GET "$STRANGER_URL/_sim/log")
check "nothing reached the server at the default URL" \
  "$([ "$stranger_log" = "[]" ] || echo "it received $stranger_log")"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
