#!/usr/bin/env bash
# Installs the real OpenCode server (pinned) for the end-to-end suite, with
# the plugin package it would otherwise npm-install at every start. Prints the
# environment the suite reads. Idempotent.
set -euo pipefail
VERSION=1.18.33
CACHE=${ASK_LSP_E2E_DIR:-/tmp/ask-lsp-e2e}
mkdir -p "$CACHE/oc" "$CACHE/plugin"
BIN="$CACHE/oc/node_modules/opencode-linux-x64/bin/opencode"
if [ ! -x "$BIN" ] || ! "$BIN" --version 2>/dev/null | grep -qx "$VERSION"; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/oc" "opencode-ai@$VERSION" >&2
fi
if [ ! -d "$CACHE/plugin/node_modules/@opencode-ai/plugin" ]; then
  printf '{"dependencies": {"@opencode-ai/plugin": "%s"}}\n' "$VERSION" > "$CACHE/plugin/package.json"
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/plugin" >&2
fi
echo "export ASK_LSP_OPENCODE_BIN=$BIN"
echo "export ASK_LSP_OPENCODE_PLUGIN_DIR=$CACHE/plugin"
