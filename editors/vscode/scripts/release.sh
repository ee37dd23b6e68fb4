#!/usr/bin/env bash
# Every platform's VSIX from the release archives and, with --publish, each
# published to the VS Code Marketplace (vsce) and Open VSX (ovsx; Cursor,
# VSCodium, Windsurf install from there), one `--packagePath` per target:
#   scripts/release.sh <dir> [--publish]
# <dir> holds cargo-dist's archives, ask-lsp-<triple>.tar.gz (.zip on
# Windows), with their .sha256. Each archive's checksum is checked, then
# package.sh <target> <its binary> makes that target's VSIX; a target whose
# archive is missing is skipped and named. Publishing needs VSCE_PAT
# (Marketplace) and OVSX_PAT (Open VSX): tokens this repository does not
# hold, so without them --publish refuses before packaging anything.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/release.sh <dir with ask-lsp-<triple> archives> [--publish]"
dir=${1:?$usage}
publish=${2:-}
if [ "$publish" = --publish ]; then
  missing=()
  [ -n "${VSCE_PAT:-}" ] || missing+=(VSCE_PAT)
  [ -n "${OVSX_PAT:-}" ] || missing+=(OVSX_PAT)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "release.sh: --publish needs ${missing[*]} (a Marketplace / Open VSX token); nothing packaged or published" >&2
    exit 2
  fi
elif [ -n "$publish" ]; then
  echo "$usage" >&2
  exit 2
fi
declare -A triples=(
  [linux-x64]=x86_64-unknown-linux-gnu [linux-arm64]=aarch64-unknown-linux-gnu
  [darwin-x64]=x86_64-apple-darwin [darwin-arm64]=aarch64-apple-darwin [win32-x64]=x86_64-pc-windows-msvc
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
made=()
skipped=()
for target in linux-x64 linux-arm64 darwin-x64 darwin-arm64 win32-x64; do
  triple=${triples[$target]}
  exe=
  archive=$dir/ask-lsp-$triple.tar.gz
  if [[ $target == win32-* ]]; then
    exe=.exe
    archive=$dir/ask-lsp-$triple.zip
  fi
  if [ ! -f "$archive" ]; then
    skipped+=("$target")
    continue
  fi
  if ! (cd "$(dirname "$archive")" && sha256sum --check --status "$(basename "$archive").sha256"); then
    echo "release.sh: $archive does not match its .sha256 (or has none); nothing published" >&2
    exit 1
  fi
  mkdir -p "$work/$target"
  case $archive in
    *.zip) unzip -q "$archive" -d "$work/$target" ;;
    *) tar -xzf "$archive" -C "$work/$target" ;;
  esac
  made+=("$(scripts/package.sh "$target" "$work/$target/ask-lsp-$triple/ask-lsp$exe")")
done
if [ ${#made[@]} -eq 0 ]; then
  echo "release.sh: no ask-lsp-<triple> archive in $dir" >&2
  exit 1
fi
if [ "$publish" = --publish ]; then
  for vsix in "${made[@]}"; do
    npx vsce publish --packagePath "$vsix" --pat "$VSCE_PAT"
    npx --yes ovsx@1.4.0 publish "$vsix" --pat "$OVSX_PAT"
  done
fi
printf 'packaged: %s\n' "${made[@]}"
[ ${#skipped[@]} -eq 0 ] || echo "skipped (no archive): ${skipped[*]}"
