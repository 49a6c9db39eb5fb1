#!/bin/sh
# Gradescope's setup: runs once as root when the autograder image is built,
# with this zip unpacked in /autograder/source. Installs the distribution's
# packages the grader needs (Ubuntu 24.04 "noble" or Debian 12: both ship
# gRPC 1.51.1; the names below exist in Debian 12, checked with apt-cache
# policy, and are assumed to be the same in noble, which could not be tried
# here), builds the kit and installs the Node packages the starters pin.
# Go (Debian's golang-go and grpc-go, GOPATH mode: no module proxy) builds
# the Go starters; a Go folder is graded as uploaded, its program built.
# No test tools: the autograder only grades.
set -eu
cd "$(dirname "$0")"
PKGS="build-essential pkg-config libgrpc-dev protobuf-c-compiler libprotobuf-c-dev libjemalloc-dev \
libjansson-dev python3 python3-grpcio python3-protobuf protobuf-compiler-grpc protobuf-compiler \
golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev protoc-gen-go \
protoc-gen-go-grpc"
command -v node >/dev/null 2>&1 || PKGS="$PKGS nodejs npm"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $PKGS
# The Makefile's own installer would add the test tools (cmocka, valgrind,
# clang): mark the packages as installed, then build the programs alone.
mkdir -p build && touch build/.deps-installed
make build
# The Node packages the starters pin, from npm now (image build is when
# Gradescope lets the autograder reach the network): students upload their
# Node folders without node_modules, and the grader then runs them with these
# (NODE_PATH, shown in the sandbox). A failure here fails the image build,
# not every student's grading later.
sh scripts/node-deps.sh --kit
chmod +x run_autograder
