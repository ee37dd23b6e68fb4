#!/usr/bin/env bash
# Installs the sandbox-agent server (pinned; a static binary inside the npm
# package) and the real Claude ACP agent (pinned) for tests/it/sandbox_agent.rs.
# Idempotent. Prints the environment.
set -euo pipefail
VERSION=0.4.2
CLAUDE_ACP_VERSION=0.101.0
CACHE=${ASK_LSP_SA_DIR:-/tmp/ask-lsp-sa}
BIN=$CACHE/node_modules/@sandbox-agent/cli-linux-x64/bin/sandbox-agent
if ! "$BIN" --version 2>/dev/null | grep -q "$VERSION"; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE" "@sandbox-agent/cli-linux-x64@$VERSION" >&2
fi
echo "export SANDBOX_AGENT_BIN=$BIN"
CLAUDE=$CACHE/claude/node_modules/@agentclientprotocol/claude-agent-acp
if ! grep -q "\"version\": \"$CLAUDE_ACP_VERSION\"" "$CLAUDE/package.json" 2>/dev/null; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/claude" "@agentclientprotocol/claude-agent-acp@$CLAUDE_ACP_VERSION" >&2
fi
echo "export CLAUDE_AGENT_ACP=$CLAUDE/dist/index.js"
