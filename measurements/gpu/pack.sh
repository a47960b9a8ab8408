#!/usr/bin/env bash
# Packs what a GPU-machine run needs beside the working tree into .device/ (git-ignored), to be
# carried (`carry: [".device"]`): the machine has no Node, no node_modules and no ../shared, and
# a call takes 64 MiB in all, the tracked files included. Run here, from the checkout's root,
# after `npm install` (which builds the addon with nvcc for sm_90, and dist/):
#
#   bash measurements/gpu/pack.sh [--data DIR]   (DIR: the ToM data, default ../shared/data/tom)
#
# .device/node.xz    this machine's node binary
# .device/pack.tar.xz dist/, native/build/ and, under .device/, node_modules/ (the packages dist/
#                    imports outside the command line's bundle) and data/ (ToMi val and
#                    ParaphrasedToMi val_600): env.sh unpacks it in place on the GPU machine
set -euo pipefail
cd "$(dirname "$0")/../.."
DATA_DIR=../shared/data/tom
while [ $# -gt 0 ]; do
  case "$1" in
    --data) DATA_DIR=$2; shift ;;
    *) echo "pack.sh: unknown argument $1 (--data DIR)" >&2; exit 2 ;;
  esac
  shift
done
# The packages dist/measurements/ and the commands' workers import that the bundle does not hold
# (found by running learn-demo in a copy without node_modules).
PACKAGES=(zod @huggingface/tokenizers @huggingface/jinja protobufjs hyparquet)
for f in dist/measurements/learn-demo.js native/build/Release/socialworld_native.node; do
  [ -f "$f" ] || { echo "pack.sh: $f is missing: run npm install (or npm run build) first" >&2; exit 1; }
done
grep -q '"cuda":{' native/build/socialworld-config.json || echo "pack.sh: warning: the addon was built without CUDA (no nvcc found): the GPU machine will recompile it" >&2
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/.device/node_modules/@huggingface" "$STAGE/.device/data" .device
for p in "${PACKAGES[@]}"; do cp -r "node_modules/$p" "$STAGE/.device/node_modules/$p"; done
cp "$DATA_DIR/tomi/original/fb_all_val.txt" "$DATA_DIR/tomi/paraphrased_symbolictom/val_600.txt" "$STAGE/.device/data/"
tar -cf "$STAGE/pack.tar" dist native/build
tar -C "$STAGE" -rf "$STAGE/pack.tar" .device
xz -T0 -6 -c "$STAGE/pack.tar" >.device/pack.tar.xz
NODE_BIN=$(command -v node)
if [ ! -f .device/node.xz ] || [ "$NODE_BIN" -nt .device/node.xz ]; then xz -T0 -6 -c "$NODE_BIN" >.device/node.xz; fi
du -h .device/node.xz .device/pack.tar.xz
echo "tracked files: $(git ls-files -z | du -ch --files0-from=- | tail -1 | cut -f1) (the call takes 64 MiB in all)"
