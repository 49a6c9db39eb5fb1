// streamer.js: your producer for the relaylab `flow` exercise (`lab show
// flow`). The server is set up for you: it listens on $RELAYLAB_LISTEN and
// stops cleanly on SIGTERM, and payload() makes a chunk's bytes. The lesson
// is yours: the block between the TODO markers in produce(). `./run` starts
// this file; the contract is loaded from proto/relaylab.proto at run time,
// and node_modules comes from `npm ci` (`lab stubs node .` runs it again).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const relaylab = grpc.loadPackageDefinition(
  protoLoader.loadSync(path.join(__dirname, 'proto', 'relaylab.proto'), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
  }),
).relaylab;

// payload[i] = (seq * 31 + i) mod 251 repeats every 251 bytes, so every
// chunk is a slice of one long repetition of 0..250.
let pattern = Buffer.alloc(0);

// The |size| payload bytes of chunk |seq|, as the handout defines them: a
// fresh Buffer the chunk owns.
function payload(seq, size) {
  if (pattern.length < 251 + size) {
    pattern = Buffer.alloc(251 * (Math.ceil(size / 251) + 1));
    for (let i = 0; i < pattern.length; i++) pattern[i] = i % 251;
  }
  const start = (seq * 31) % 251;
  return Buffer.from(pattern.subarray(start, start + size));
}

// One Produce call: |call| is the server's writable stream, call.request the
// ProduceRequest {tag, count, size}.
function produce(call) {
  // >>> TODO(flow): send call.request.count chunks {seq, payload: payload(seq, size)}
  //   for seq = 0 .. count-1, in order, then call.end().
  // Make the next chunk only when the previous one has gone: call.write()
  //   returns false when the stream's buffer is full; wait for 'drain' then.
  // Stop when the client cancels (call.on('cancelled')).
  // Refuse what you cannot serve: size above 4 MiB - 64 or count above
  //   1,000,000 with INVALID_ARGUMENT (call.emit('error', {code, details})).
  call.emit('error', {
    code: grpc.status.UNIMPLEMENTED,
    details: 'TODO in streamer.js: produce() sends no chunks yet (see its TODO block)',
  });
  // <<< TODO
}

function main() {
  const listen = process.env.RELAYLAB_LISTEN || '127.0.0.1:0';
  const server = new grpc.Server();
  server.addService(relaylab.Streamer.service, { Produce: produce });
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    console.log(`streamer listening on ${listen.slice(0, listen.lastIndexOf(':'))}:${port}`);
  });
  // SIGTERM (the grader's stop): take no new calls, give running ones 1 s, exit 0.
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 1000).unref();
    server.tryShutdown(() => process.exit(0));
  });
}

main();
