#!/bin/sh
# Builds Gradescope's autograder zip for one assignment's exercises:
# EXERCISES=deadline,cancel (or EXERCISES=all for every exercise, only when
# asked) makes build/relaylab-gradescope-deadline-cancel.zip (or OUTDIR/...,
# the one argument), whose name says what it grades. Its root holds setup.sh
# and run_autograder (what Gradescope runs), gradescope.conf (the
# assignment's exercises, from EXERCISES, and RUNS), the Dockerfile, and the
# kit's sources, which setup.sh builds in /autograder/source. The sources
# are the repository's tracked files: no build output, no node_modules. Run
# by `make gradescope EXERCISES=...`; the names are checked against
# `bin/grader list` when the kit is built.
set -eu
cd "$(dirname "$0")/../.."
ex=${EXERCISES:-}
if [ -z "$ex" ]; then
    echo "gradescope: say which exercises the assignment grades: make gradescope EXERCISES=deadline,cancel" >&2
    echo "  (EXERCISES=all for every one; the exercises: $(bin/grader list 2>/dev/null | sed -n 's/^\([a-z]*\):.*/\1/p' | tr '\n' ' '))" >&2
    exit 2
fi
ex=$(printf '%s' "$ex" | tr ' ' ',' | tr -s ',' | sed 's/^,//; s/,$//')
case $ex in *[!a-z,-]*|'')
    echo "gradescope: EXERCISES='$EXERCISES': names of exercises separated by commas, or all" >&2
    exit 2 ;;
esac
if [ "$ex" != all ] && [ -x bin/grader ]; then
    known=$(bin/grader list | sed -n 's/^\([a-z]*\):.*/\1/p')
    for e in $(printf '%s' "$ex" | tr ',' ' '); do
        printf '%s\n' "$known" | grep -qx "$e" || {
            echo "gradescope: no exercise '$e' (the exercises: $(printf '%s' "$known" | tr '\n' ' '))" >&2
            exit 2
        }
    done
fi
dest=${1:-build}
name=relaylab-gradescope-$(printf '%s' "$ex" | tr ',' '-')
out=$dest/$name
zipfile=$(pwd)/$dest/$name.zip
case $dest in /*) zipfile=$dest/$name.zip ;; esac
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
# The assignment's exercises, in the conf run_autograder reads.
sed "s/^EXERCISES=.*/EXERCISES=$ex/" scripts/gradescope/gradescope.conf > "$out/gradescope.conf"
chmod +x "$out/setup.sh" "$out/run_autograder"
(cd "$out" && zip -qr "$zipfile" .)
echo "gradescope: $zipfile ($(du -k "$zipfile" | cut -f1) KiB), grading $ex"
