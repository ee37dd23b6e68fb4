#!/usr/bin/env bash
# Packages the extension for one VS Code platform with the ask-lsp release
# binary for that platform inside:
#   scripts/package.sh <target> [ask-lsp binary]
# target: linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64 win32-arm64.
# For linux-x64 on a linux x86_64 machine the binary is built here with
# `cargo build --release --locked -p ask-lsp` (ask-lsp alone: not the
# workspace's simulator features); every other target needs the binary built
# for it (e.g. from that platform's release archive) given as the second
# argument. Writes ask-lsp-<version>-<target>.vsix and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-}
binary=${2:-}
case "$target" in
  linux-x64) triple=x86_64-unknown-linux-gnu; kind='ELF 64-bit.*x86-64' ;;
  linux-arm64) triple=aarch64-unknown-linux-gnu; kind='ELF 64-bit.*aarch64' ;;
  darwin-x64) triple=x86_64-apple-darwin; kind='Mach-O 64-bit.*x86_64' ;;
  darwin-arm64) triple=aarch64-apple-darwin; kind='Mach-O 64-bit.*arm64' ;;
  win32-x64) triple=x86_64-pc-windows-msvc; kind='PE32\+.*x86-64' ;;
  win32-arm64) triple=aarch64-pc-windows-msvc; kind='PE32\+.*Aarch64' ;;
  *)
    echo "usage: scripts/package.sh <linux-x64|linux-arm64|darwin-x64|darwin-arm64|win32-x64|win32-arm64> [ask-lsp binary]" >&2
    exit 2
    ;;
esac
if [ -z "$binary" ]; then
  if [ "$target" != linux-x64 ] || [ "$(uname -s)-$(uname -m)" != Linux-x86_64 ]; then
    echo "package.sh: no binary for $target: build ask-lsp for $triple (cargo build --release --locked --target $triple" >&2
    echo "on such a machine, or take it from ask-lsp-$triple.tar.gz) and pass it as the second argument" >&2
    exit 2
  fi
  root=$(cd ../.. && pwd)
  (cd "$root" && cargo build --release --locked --quiet -p ask-lsp)
  target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps | node -p 'JSON.parse(require("fs").readFileSync(0)).target_directory')
  binary=$target_dir/release/ask-lsp
fi
[ -f "$binary" ] || { echo "package.sh: $binary does not exist" >&2; exit 2; }
described=$(file -b "$binary")
if ! grep -Eq "$kind" <<<"$described"; then
  echo "package.sh: $binary is not a $target binary: $described" >&2
  exit 2
fi
if grep -q 'with debug_info' <<<"$described"; then
  echo "package.sh: $binary has debug info: give the release build" >&2
  exit 2
fi
exe=
[[ $target == win32-* ]] && exe=.exe
rm -rf bin
mkdir -p bin
cp "$binary" "bin/ask-lsp$exe"
chmod 755 "bin/ask-lsp$exe"
npm run --silent build
version=$(node -p 'require("./package.json").version')
out=ask-lsp-$version-$target.vsix
npx vsce package --target "$target" --no-dependencies --skip-license -o "$out" >&2
echo "$PWD/$out"
