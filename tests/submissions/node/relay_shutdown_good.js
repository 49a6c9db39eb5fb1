// relay_shutdown_good: a grpc-js relay that shuts down by the rule; the
// shutdown lab's model answer in Node.
//
// Mistake: none. Process is relay_good's (a server call's 'cancelled' event
// cancels the downstream call in flight). At SIGTERM, server.tryShutdown():
// grpc-js closes its listeners and refuses new calls, and calls its callback
// once the calls in flight are done; then the process exits 0. A timer at the
// grace calls server.forceShutdown(), which cancels the calls still running
// (their 'cancelled' events cancel the downstream calls), then exits 0. A
// second SIGTERM or a SIGINT forces at once. The grace is RELAYLAB_GRACE_MS
// (default 5000 ms), well under an orchestrator's kill timeout.
'use strict';

const { relay, relayProcess } = require('./relay_good');

const GRACE_MS = Number(process.env.RELAYLAB_GRACE_MS || 5000);

// Exits once the current events are out (the status of a cancelled call
// goes out on the next turn of the loop).
function leave() {
  setImmediate(() => process.exit(0));
}

function drainOnSigterm(server, graceMs = GRACE_MS) {
  let stopping = false;
  const force = () => {
    server.forceShutdown();
    leave();
  };
  const onSignal = (signal) => {
    if (stopping || signal === 'SIGINT') {
      force();
      return;
    }
    stopping = true;
    console.error(`relay: SIGTERM: stopping with a ${graceMs} ms grace`);
    // Open client channels keep the event loop alive: the timer must not be
    // unref'd, and the exit is explicit.
    const timer = setTimeout(force, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      leave();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

module.exports = { drainOnSigterm };

if (require.main === module) relay(relayProcess, drainOnSigterm);
