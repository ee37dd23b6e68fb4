#!/usr/bin/env bash
# Installs the real Codex CLI (pinned) for tests/it/codex_hook.rs, the newer
# Codex beside it for tests/it/codex_daemon.rs, and the Codex ACP adapter
# (pinned, with the same Codex) for tests/it/codex_acp.rs.
# Idempotent. Prints the environment.
set -euo pipefail
VERSION=0.169.0
NEXT_VERSION=0.171.0
ACP_VERSION=0.16.0
CACHE=${ASK_LSP_CODEX_DIR:-/tmp/ask-lsp-codex}
PKG=$CACHE/node_modules/@openai/codex
if ! grep -q "\"version\": \"$VERSION\"" "$PKG/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE" "@openai/codex@$VERSION" >&2
fi
echo "export ASK_LSP_CODEX_BIN=$CACHE/node_modules/.bin/codex"
NEXT=$CACHE/next/node_modules/@openai/codex
if ! grep -q "\"version\": \"$NEXT_VERSION\"" "$NEXT/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/next" "@openai/codex@$NEXT_VERSION" >&2
fi
echo "export ASK_LSP_CODEX_NEXT_BIN=$CACHE/next/node_modules/.bin/codex"
ACP=$CACHE/acp/node_modules/@zed-industries/codex-acp
if ! grep -q "\"version\": \"$ACP_VERSION\"" "$ACP/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/acp" "@zed-industries/codex-acp@$ACP_VERSION" "@openai/codex@$VERSION" >&2
fi
echo "export CODEX_ACP_BIN=$CACHE/acp/node_modules/.bin/codex-acp"
