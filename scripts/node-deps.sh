#!/bin/sh
# Installs the Node submissions' packages (tests/submissions/node) with `npm ci`,
# only when node_modules is missing or older than package-lock.json.
# The Node submission tests are part of the suite, so a missing package is a
# failure, not a skip: without node, npm or the registry it says why and how
# to fix it, keeps npm's output in build/node-deps.log, and exits 1.
# npm is bounded by RELAYLAB_NPM_TIMEOUT seconds (default 120) so a registry
# that drops packets costs minutes at worst, not npm's own 5-minute timeouts.
#
# `node-deps.sh --kit`: the packages the starters pin (every starter pins the
# same; tests/integration/test_all_paths.py checks it), in
# build/node-packages/node_modules, from starters/streamer/node's
# package-lock.json. The grader gives them to a Node submission that has no
# node_modules of its own (NODE_PATH, shown in its sandbox): what students
# upload to Gradescope, which installs them here at image build (setup.sh).
set -u
cd "$(dirname "$0")/.."

dir=tests/submissions/node
log=build/node-deps.log
if [ "${1:-}" = --kit ]; then
    dir=build/node-packages
    log=build/node-packages.log
    mkdir -p "$dir"
    for f in package.json package-lock.json; do
        cmp -s "starters/streamer/node/$f" "$dir/$f" || cp "starters/streamer/node/$f" "$dir/$f"
    done
fi
stamp=$dir/node_modules/.relaylab-npm-ci
limit=${RELAYLAB_NPM_TIMEOUT:-120}

if [ -f "$stamp" ] && [ "$stamp" -nt "$dir/package-lock.json" ] && [ "$stamp" -nt "$dir/package.json" ]; then
    exit 0
fi
mkdir -p build
for tool in node npm; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "relaylab: $tool is not on PATH; the Node submission tests need it (scripts/install-deps.sh installs Debian's nodejs and npm)" | tee "$log" >&2
        exit 1
    fi
done

echo "relaylab: npm ci in $dir"
(cd "$dir" && timeout -k 5 "$limit" npm ci --no-audit --no-fund --fetch-retries=1 --fetch-timeout=30000) >"$log" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
    touch "$stamp"
    rm -f "$log"
    exit 0
fi
# timeout(1): 124 after SIGTERM, 137 when npm outlived it and got SIGKILL.
case $rc in
124 | 137) echo "npm error npm ci did not finish within $limit s (RELAYLAB_NPM_TIMEOUT): is the npm registry reachable?" >>"$log" ;;
esac
# npm's own summary lines, without its stack trace.
{
    echo "relaylab: npm ci failed (exit $rc) in $dir; the Node submission tests need its packages:"
    grep '^npm error' "$log" | grep -v '^npm error  *at ' | head -n 6
    echo "relaylab: npm's whole output is in $log. Check that the npm registry is reachable"
    echo "relaylab: (npm config get registry; a proxy goes in HTTPS_PROXY), then run \`make node-deps\` again."
} >&2
exit 1
