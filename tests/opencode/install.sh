#!/usr/bin/env bash
# Installs the real OpenCode servers (pinned) for the end-to-end suites, with
# the plugin package they would otherwise npm-install at every start. Prints
# the environment the suites read. Idempotent.
set -euo pipefail
VERSION=1.18.33
# The build with the second session engine (tests/it/real_opencode_next.rs):
# its platform package alone, as `opencode-ai` wraps it.
NEXT_VERSION=1.18.34
CACHE=${ASK_LSP_E2E_DIR:-/tmp/ask-lsp-e2e}
mkdir -p "$CACHE/oc" "$CACHE/plugin"
BIN="$CACHE/oc/node_modules/opencode-linux-x64/bin/opencode"
if [ ! -x "$BIN" ] || ! "$BIN" --version 2>/dev/null | grep -qx "$VERSION"; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/oc" "opencode-ai@$VERSION" >&2
fi
NEXT_BIN="$CACHE/next/node_modules/opencode-linux-x64/bin/opencode"
if [ ! -x "$NEXT_BIN" ] || ! "$NEXT_BIN" --version 2>/dev/null | grep -qx "$NEXT_VERSION"; then
  mkdir -p "$CACHE/next"
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/next" "opencode-linux-x64@$NEXT_VERSION" >&2
fi
if [ ! -d "$CACHE/plugin/node_modules/@opencode-ai/plugin" ]; then
  printf '{"dependencies": {"@opencode-ai/plugin": "%s"}}\n' "$VERSION" > "$CACHE/plugin/package.json"
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/plugin" >&2
fi
echo "export ASK_LSP_OPENCODE_BIN=$BIN"
echo "export ASK_LSP_OPENCODE_PLUGIN_DIR=$CACHE/plugin"
echo "export ASK_LSP_OPENCODE_NEXT_BIN=$NEXT_BIN"
