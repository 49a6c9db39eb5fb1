#!/bin/sh
# Builds Gradescope's autograder zip: build/relaylab-gradescope.zip (or
# OUTDIR/..., the one argument). Its root holds setup.sh and run_autograder
# (what Gradescope runs), gradescope.conf (the assignment's exercises and
# runs), the Dockerfile, and the kit's sources, which setup.sh builds in
# /autograder/source. The sources are the repository's tracked files: no
# build output, no node_modules. Run by `make gradescope`.
set -eu
cd "$(dirname "$0")/../.."
dest=${1:-build}
out=$dest/relaylab-gradescope
zipfile=$(pwd)/$dest/relaylab-gradescope.zip
case $dest in /*) zipfile=$dest/relaylab-gradescope.zip ;; esac
rm -rf "$out" "$zipfile"
mkdir -p "$out"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    # One tar for every tracked file (a file deleted but not yet committed is skipped).
    git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$out"
else
    echo "gradescope: not a git checkout: cannot tell sources from build output" >&2
    exit 1
fi
for f in setup.sh run_autograder gradescope.conf Dockerfile; do cp -p "scripts/gradescope/$f" "$out/$f"; done
chmod +x "$out/setup.sh" "$out/run_autograder"
(cd "$out" && zip -qr "$zipfile" .)
echo "gradescope: $zipfile ($(du -k "$zipfile" | cut -f1) KiB)"
