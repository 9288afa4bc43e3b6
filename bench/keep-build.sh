#!/usr/bin/env bash
# Keeps the current build aside for bench/cpu-ab.mjs: `bash bench/keep-build.sh <dir>`
# copies dist/ to <dir>/dist with package.json ("type": "module"), config/ (the
# defaults it reads at start) and a link to
# this repo's node_modules beside it, so <dir>/dist/cli.js runs as it did here.
set -euo pipefail
dir=${1:?usage: keep-build.sh <dir>}
repo=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$dir" && mkdir -p "$dir"
cp -r "$repo/dist" "$dir/dist"
cp "$repo/package.json" "$dir/"
cp -r "$repo/config" "$dir/config"
cp -r "$repo/src" "$dir/src" # files dist/ reads at run time (openapi.yaml, migrations)
ln -s "$repo/node_modules" "$dir/node_modules"
echo "$dir/dist ($(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" status --porcelain -- src | grep -q . && echo ' + uncommitted src/'))"
