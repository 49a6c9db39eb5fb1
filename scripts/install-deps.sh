#!/bin/sh
# Installs the Debian/Ubuntu packages relaylab needs, and only those that are
# missing. Two lists, one script (the student kit ships this file):
#   install-deps.sh        the checkout: everything to build and test the kit,
#                          and make lint's clang-format, clang-tidy (14 on
#                          Debian 12) and cppcheck (called by the Makefile
#                          before any build, so a fresh Debian 12 machine
#                          needs nothing by hand); Slurm's daemons, its
#                          commands and munge for the test of grade-class
#                          --slurm, which starts a cluster of its own
#                          (tests/integration/slurm_cluster.py);
#   install-deps.sh --kit  the student kit: the libraries its prebuilt
#                          programs link (through their -dev packages, whose
#                          names are the same on Debian 12 and Ubuntu 24.04),
#                          Python's grpcio and the protoc that makes its
#                          stubs, what the C starter builds with, the Go
#                          starter's toolchain, and util-linux's unshare for
#                          the grader's sandbox.
# Go: Debian's golang-go and its packages of grpc-go and protobuf, built in
# GOPATH mode (no module proxy is needed or reached). golang-github-golang-
# protobuf-1-5-dev is named because apt otherwise satisfies grpc's dependency
# with the 1.3 API, and code from protoc-gen-go 1.28 then panics at its first
# call (docs/grpc-facts.md, "Go").
set -eu

GO_PKGS="golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev \
golang-google-protobuf-dev protoc-gen-go protoc-gen-go-grpc"

case "${1:-}" in
"")
    PKGS="build-essential pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
libjemalloc-dev libjansson-dev libcmocka-dev python3 python3-grpcio python3-protobuf \
python3-pytest protobuf-compiler-grpc protobuf-compiler valgrind clang libclang-rt-14-dev \
clang-format clang-tidy cppcheck chromium librsvg2-bin slurmctld slurmd slurm-client munge $GO_PKGS" ;;
--kit)
    PKGS="libgrpc-dev libprotobuf-c-dev libjansson-dev libjemalloc-dev util-linux \
python3 python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc \
protobuf-c-compiler pkg-config make gcc $GO_PKGS" ;;
*)
    echo "usage: install-deps.sh [--kit]" >&2
    exit 2 ;;
esac

# Node runs the grpc-js submissions and starters. Debian's nodejs and npm
# only when no node is on PATH at all: a machine with its own Node
# (NodeSource's package is also named nodejs, or nvm) keeps it.
if ! command -v node >/dev/null 2>&1; then
    PKGS="$PKGS nodejs npm"
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

echo "relaylab: installing missing packages:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "relaylab: run as root or install:$missing" >&2; exit 1
    fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
