#!/bin/sh
# Installs the Debian/Ubuntu packages the student kit needs, only those
# missing: the libraries its programs link (through their -dev packages,
# whose names are the same on Debian 12 and Ubuntu 24.04), Python's grpcio
# and the protoc that makes its stubs, Node and npm when no node is on PATH,
# and util-linux's unshare for the grader's sandbox.
set -eu
PKGS="libgrpc-dev libprotobuf-c-dev libjansson-dev libjemalloc-dev util-linux \
python3 python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc"
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
