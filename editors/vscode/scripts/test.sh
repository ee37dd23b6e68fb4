#!/usr/bin/env bash
# Builds the linux-x64 VSIX with the release binary inside (scripts/package.sh),
# checks that binary as shipped, then runs both test layers with node's test
# runner: unit + protocol tests against the real ask-lsp binary, and the
# end-to-end test in code-server (installing that VSIX) through Chromium.
# Installs what it needs.
set -euo pipefail
cd "$(dirname "$0")/.."
# A Codex used on this machine (~/.codex) is not this suite's: its daemon
# would be one more server in every status.
export ASK_LSP_CODEX=0
export ASK_LSP_BIN=${ASK_LSP_BIN:-$(cd ../.. && pwd)/target/debug/ask-lsp}
export ASK_SIM_BIN=${ASK_SIM_BIN:-$(cd ../.. && pwd)/target/debug/ask-sim}
[ -x "$ASK_LSP_BIN" ] && [ -x "$ASK_SIM_BIN" ] || (cd ../.. && cargo build --quiet)
npm ci --no-audit --no-fund --loglevel=error
eval "$(scripts/install-e2e.sh)"
VSIX=$(scripts/package.sh linux-x64)

# The binary in the VSIX: a release build for linux-x64, not a debug one.
mkdir -p test-artifacts
shipped=$(mktemp -d)
# code-server profiles and Chromium's go under $TMPDIR: a run's own folder,
# removed at the end even where a test was killed before its cleanup.
run_tmp=$(mktemp -d)
trap 'rm -rf "$shipped" "$run_tmp"' EXIT
# Unpacked with the modes the VSIX stores (VS Code applies them on install).
python3 -c '
import os, sys, zipfile
archive = zipfile.ZipFile(sys.argv[1])
for entry in archive.infolist():
    path = archive.extract(entry, sys.argv[2])
    if entry.external_attr >> 16:
        os.chmod(path, entry.external_attr >> 16 & 0o7777)' "$VSIX" "$shipped"
described=$(file -b "$shipped/extension/bin/ask-lsp")
grep -q 'TargetPlatform="linux-x64"' "$shipped/extension.vsixmanifest" ||
  { echo "FAIL: the VSIX does not target linux-x64"; exit 1; }
if ! grep -q '^ELF 64-bit LSB .*x86-64' <<<"$described" || grep -q 'with debug_info' <<<"$described"; then
  echo "FAIL: the VSIX's ask-lsp is not an x86-64 release binary: $described"
  exit 1
fi
"$shipped/extension/bin/ask-lsp" --version >/dev/null || { echo "FAIL: the VSIX's ask-lsp does not run"; exit 1; }
size="$(basename "$VSIX"): $(stat -c %s "$VSIX") bytes; extension/bin/ask-lsp: $(stat -c %s "$shipped/extension/bin/ask-lsp") bytes; $described"
echo "$size" | tee test-artifacts/vsix.txt

# release.sh: a VSIX per archive given (its checksum checked), the rest
# named; a wrong checksum or --publish without tokens refuses.
archives=$(mktemp -d)
trap 'rm -rf "$shipped" "$archives" "$run_tmp"' EXIT
mkdir "$archives/ask-lsp-x86_64-unknown-linux-gnu"
cp "$shipped/extension/bin/ask-lsp" "$archives/ask-lsp-x86_64-unknown-linux-gnu/"
tar -czf "$archives/ask-lsp-x86_64-unknown-linux-gnu.tar.gz" -C "$archives" ask-lsp-x86_64-unknown-linux-gnu
(cd "$archives" && sha256sum ask-lsp-x86_64-unknown-linux-gnu.tar.gz >ask-lsp-x86_64-unknown-linux-gnu.tar.gz.sha256)
released=$(scripts/release.sh "$archives")
[ "$released" = "packaged: $VSIX
skipped (no archive): linux-arm64 darwin-x64 darwin-arm64 win32-x64" ] || { echo "FAIL: release.sh said: $released"; exit 1; }
if (env -u VSCE_PAT -u OVSX_PAT scripts/release.sh "$archives" --publish 2>&1 || true) | grep -qx 'release.sh: --publish needs VSCE_PAT OVSX_PAT (a Marketplace / Open VSX token); nothing packaged or published'; then :; else
  echo "FAIL: release.sh --publish without tokens did not refuse"; exit 1
fi
echo 0000000000000000000000000000000000000000000000000000000000000000"  ask-lsp-x86_64-unknown-linux-gnu.tar.gz" >"$archives/ask-lsp-x86_64-unknown-linux-gnu.tar.gz.sha256"
if scripts/release.sh "$archives" >/dev/null 2>&1; then echo "FAIL: release.sh packaged an archive whose checksum is wrong"; exit 1; fi
echo "release.sh: per-target packaging checked"

export CODE_SERVER_DIR CODE_SERVER_NODE ASK_LSP_VSIX=$VSIX ASK_LSP_REQUIRE_E2E=1
# --test-force-exit: a test file ends when its tests do, whatever handles it
# left open (a run hung here once on a leftover handle).
TMPDIR=$run_tmp node --test --test-force-exit --test-reporter=spec test/
