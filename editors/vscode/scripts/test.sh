#!/usr/bin/env bash
# Builds and packages the extension, then runs both test layers with node's
# test runner: unit + protocol tests against the real ask-lsp binary, and the
# end-to-end test in code-server through Chromium. Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
export ASK_LSP_BIN=${ASK_LSP_BIN:-$(cd ../.. && pwd)/target/debug/ask-lsp}
npm ci --no-audit --no-fund --loglevel=error
npm run --silent build
mkdir -p bin
strip -o bin/ask-lsp "$ASK_LSP_BIN"
npx vsce package --no-dependencies --skip-license -o ask-lsp.vsix >/dev/null
eval "$(scripts/install-e2e.sh)"
export CODE_SERVER_DIR CODE_SERVER_NODE ASK_LSP_VSIX=$PWD/ask-lsp.vsix ASK_LSP_REQUIRE_E2E=1
# --test-force-exit: a test file ends when its tests do, whatever handles it
# left open (a run hung here once on a leftover handle).
node --test --test-force-exit --test-reporter=spec test/
