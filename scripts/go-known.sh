#!/bin/sh
# Builds the known Go submissions (tests/submissions/go, one program:
# `known NAME`) into build/go-known/known, with Debian's Go and grpc-go in
# GOPATH mode (no module proxy, no network), as the Go starters build:
# protoc with protoc-gen-go and protoc-gen-go-grpc into
# build/go-known/gen/src/relaylab/pb, go vet, then a static go build.
# scripts/selftest.py runs it once before the first 'go:NAME' row; by hand:
#   sh scripts/go-known.sh && build/go-known/known list
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/go-known
PB=$OUT/gen/src/relaylab/pb
mkdir -p "$PB"
protoc -I"$ROOT/proto" --go_out="$PB" --go_opt=paths=source_relative --go_opt=Mrelaylab.proto=relaylab/pb \
    --go-grpc_out="$PB" --go-grpc_opt=paths=source_relative --go-grpc_opt=Mrelaylab.proto=relaylab/pb \
    "$ROOT/proto/relaylab.proto"
export GO111MODULE=off GOPATH="$OUT/gen:/usr/share/gocode" GOFLAGS= GOPROXY=off CGO_ENABLED=0
# Go's build cache: the user's, else one under build/ (no home folder).
if [ -z "${GOCACHE:-}" ]; then
    GOCACHE=$(go env GOCACHE 2>/dev/null || true)
    if [ -z "$GOCACHE" ] || [ "$GOCACHE" = off ]; then GOCACHE=$ROOT/build/go-cache; fi
    export GOCACHE
fi
cd "$ROOT/tests/submissions/go"
go vet .
go build -o "$OUT/known.tmp" .
mv "$OUT/known.tmp" "$OUT/known"
# The grader's sandbox runs it as nobody.
chmod -R o+rX "$OUT"
