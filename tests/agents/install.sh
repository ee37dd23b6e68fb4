#!/usr/bin/env bash
# Installs the real Qwen Code, GitHub Copilot CLI and Gemini CLI (pinned) for
# tests/it/qwen_hook.rs, tests/it/copilot_hook.rs and tests/it/gemini_acp.rs, and
# unpacks Copilot's bundled package into a cache of its own (Copilot unpacks
# it into $XDG_CACHE_HOME on its first run; the tests share this one).
# Idempotent. Prints the environment.
set -euo pipefail
QWEN_VERSION=0.24.4
COPILOT_VERSION=1.0.102
GEMINI_VERSION=0.61.0
CACHE=${ASK_LSP_AGENTS_DIR:-/tmp/ask-lsp-agents}
install() { # prefix package version
  if ! grep -q "\"version\": \"$3\"" "$CACHE/$1/node_modules/$2/package.json" 2>/dev/null; then
    npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/$1" "$2@$3" >&2
  fi
}
install qwen @qwen-code/qwen-code "$QWEN_VERSION"
echo "export ASK_LSP_QWEN_BIN=$CACHE/qwen/node_modules/.bin/qwen"
install copilot @github/copilot "$COPILOT_VERSION"
if [ ! -d "$CACHE/copilot-cache/copilot/pkg" ]; then
  XDG_CACHE_HOME=$CACHE/copilot-cache COPILOT_AUTO_UPDATE=false COPILOT_OFFLINE=true \
    "$CACHE/copilot/node_modules/.bin/copilot" --version >&2
fi
echo "export ASK_LSP_COPILOT_BIN=$CACHE/copilot/node_modules/.bin/copilot"
echo "export ASK_LSP_COPILOT_CACHE=$CACHE/copilot-cache"
install gemini @google/gemini-cli "$GEMINI_VERSION"
echo "export ASK_LSP_GEMINI_BIN=$CACHE/gemini/node_modules/.bin/gemini"
