#!/usr/bin/env bash
# Installs the real Claude Code CLI (pinned) for tests/it/claude_hook.rs.
# Idempotent. Prints the environment.
set -euo pipefail
VERSION=2.1.332
CACHE=${ASK_LSP_HOOK_DIR:-/tmp/ask-lsp-hook}
PKG=$CACHE/node_modules/@anthropic-ai/claude-code
if ! grep -q "\"version\": \"$VERSION\"" "$PKG/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE" "@anthropic-ai/claude-code@$VERSION" >&2
fi
echo "export ASK_LSP_CLAUDE_BIN=$CACHE/node_modules/.bin/claude"
