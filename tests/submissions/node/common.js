// common: what every Node submission here shares and no grading depends on:
// loading proto/relaylab.proto at run time with proto-loader (no generated
// code), listening on $RELAYLAB_LISTEN with the readiness line the tests
// read, and exiting on SIGTERM after a short grace (the shutdown lab's
// submissions bring their own handling).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The contract lives at <repo>/proto; this file is <repo>/tests/submissions/node/.
const PROTO = path.join(__dirname, '..', '..', '..', 'proto', 'relaylab.proto');

// keepCase: the handouts name fields as the proto spells them (steps_done,
// lookup_delay_ms), not camelCase. longs: Number is exact for every value the
// lab uses (seq < 1,000,000). defaults: absent scalars read as 0, not undefined.
function loadRelaylab() {
  const def = protoLoader.loadSync(PROTO, { keepCase: true, longs: Number, enums: String, defaults: true });
  return grpc.loadPackageDefinition(def).relaylab;
}

// The default SIGTERM handling: stop taking calls, give running ones a
// second, exit 0.
function shutdownBriefly(server) {
  process.once('SIGTERM', () => {
    // Open client channels keep the event loop alive, so exit explicitly.
    setTimeout(() => process.exit(0), 1000).unref();
    server.tryShutdown(() => process.exit(0));
  });
}

// Serves |impl| for |service| on $RELAYLAB_LISTEN and prints
// "<name> listening on HOST:PORT" once bound. |onSigterm(server)| installs
// the SIGTERM handling (default shutdownBriefly; null: none at all).
function serve(name, service, impl, onSigterm = shutdownBriefly) {
  const listen = process.env.RELAYLAB_LISTEN || '127.0.0.1:0';
  const server = new grpc.Server();
  server.addService(service, impl);
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    // Since grpc-js 1.10 bindAsync starts serving by itself.
    console.log(`${name} listening on ${listen.slice(0, listen.lastIndexOf(':'))}:${port}`);
  });
  if (onSigterm) onSigterm(server);
  return server;
}

module.exports = { grpc, loadRelaylab, serve };
