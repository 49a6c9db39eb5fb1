#!/bin/sh
# Builds the student kit: build/relaylab-student/ and
# build/relaylab-student.tar.gz (or OUTDIR/..., the one argument). It holds what a student needs to start,
# check and hand in every exercise (the programs the grader needs, prebuilt
# for this distribution: baseline, grader, lab, channel-config, jail; the
# handouts, the worlds and rubric, the starters, the protos and their stubs)
# and nothing that answers one: no reference relay or streamer (binaries or
# sources), no known-good submissions or configs, no test solutions, and the
# worked-example config channel_config/lab.json only while it fails the
# graded worlds. tests/integration/test_student_kit.py lists the tarball
# against a deny list. Run by `make student-kit` after the build.
set -eu
cd "$(dirname "$0")/.."

name=relaylab-student
dest=${1:-build}
out=$dest/$name
tarball=$dest/$name.tar.gz
rm -rf "$out" "$tarball"
mkdir -p "$out"

copy() { # copy FILE... into the kit at the same relative path
    for f in "$@"; do
        mkdir -p "$out/$(dirname "$f")"
        cp -p "$f" "$out/$f"
    done
}

for p in baseline tunnel grader lab channel-config jail; do
    [ -x "bin/$p" ] || { echo "student-kit: bin/$p is missing: run make first" >&2; exit 1; }
    copy "bin/$p"
done
copy proto/relaylab.proto proto/health.proto grader/rubric.json grader/worlds/*.json lab/exercises/*.md docs/sandbox.md \
    channel_config/README.md channel_config/lab-world.json \
    build/gen/relaylab.pb-c.c build/gen/relaylab.pb-c.h build/gen/py/relaylab_pb2.py build/gen/py/relaylab_pb2_grpc.py \
    build/gen/py/health_pb2.py build/gen/py/health_pb2_grpc.py
# The starters, without anything a test or npm left in them, nor
# starters/README.md (how the maintainers make them: it names the tests and
# the sources the kit does not hold).
find starters -type f ! -path '*/node_modules/*' ! -path starters/README.md | while read -r f; do copy "$f"; done

# The worked example is reasoning a student may read, unless it answers an
# exercise: it stays out when it passes keepalive's rules or all of retry
# in their graded worlds (config exercises run no student code: no sandbox).
keep_example=1
if bin/grader keepalive --submission channel_config/lab.json --only check --quiet >/dev/null 2>&1; then
    keep_example=0
fi
if bin/grader retry --submission channel_config/lab.json --quiet >/dev/null 2>&1; then
    keep_example=0
fi
if [ "$keep_example" -eq 1 ]; then
    copy channel_config/lab.json
else
    echo "student-kit: channel_config/lab.json passes a graded world: left out of the kit"
fi

# What only the instructor's kit can back (lab/handout.h: its reference
# programs, known submissions, benches) is marked in the handouts and
# docs, and left out here: a block between the marks alone on their lines,
# or a phrase between them inline. tests/integration/test_student_kit.py
# checks that every file and command the kit's handouts name is in it.
find "$out" -name '*.md' | while read -r f; do
    perl -0pi -e 's/^<!--instructor-->\n.*?^<!--\/instructor-->\n//gms; s/<!--instructor-->.*?<!--\/instructor-->//gs' "$f"
done
cp scripts/kit/README.md "$out/README.md"
cp scripts/kit/Makefile "$out/Makefile"
mkdir -p "$out/scripts" && cp scripts/install-deps.sh "$out/scripts/install-deps.sh"
chmod -R u+rwX,go+rX "$out"
tar -C "$dest" -czf "$tarball" "$name"
echo "student-kit: $tarball ($(du -k "$tarball" | cut -f1) KiB) and $out/"
