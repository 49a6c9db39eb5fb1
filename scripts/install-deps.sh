#!/bin/sh
# Installs the Debian packages relaylab needs, and only those that are missing.
# Called by the Makefile before any build, so a fresh Debian 12 machine needs nothing by hand.
set -eu

PKGS="build-essential pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
libjemalloc-dev libjansson-dev libcmocka-dev python3 python3-grpcio python3-protobuf \
python3-pytest protobuf-compiler-grpc protobuf-compiler valgrind clang libclang-rt-14-dev"

# Node runs the lab's grpc-js submissions (tests/submissions/node). Debian's
# nodejs and npm only when no node is on PATH at all: a machine with its own
# Node (NodeSource's package is also named nodejs, or nvm) keeps it.
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

echo "relaylab: installing missing Debian packages:$missing"
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
