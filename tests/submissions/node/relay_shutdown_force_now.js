// relay_shutdown_force_now: a grpc-js relay that answers SIGTERM with
// server.forceShutdown() at once.
//
// Mistake: no grace. Every call in flight is cancelled the moment the signal
// arrives (grpc-js resets its streams), so a call that had a few hundred ms
// left fails and its Work is cancelled; the process exits 0. It must fail the
// shutdown exercise's in-flight scenario.
'use strict';

const { relay, relayProcess } = require('./relay_good');

relay(relayProcess, (server) => {
  process.once('SIGTERM', () => {
    server.forceShutdown(); // BUG: no grace for the calls in flight
    setImmediate(() => process.exit(0));
  });
});
