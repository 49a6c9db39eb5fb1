// relay_wait_for_ready: the overload relay, with waitForReady on its
// downstream calls.
//
// Mistake: waitForReady (in grpc-js a Metadata option, `new
// grpc.Metadata({ waitForReady: true })`; the same key among the call
// options is ignored). With the backend's port closed, a
// fail-fast call fails UNAVAILABLE at once; this one waits for a connection
// that never comes, until its deadline. Must fail overload/refused (every
// call takes its whole deadline, DEADLINE_EXCEEDED) and pass the rest.
'use strict';

const { grpc } = require('./common');
const good = require('./relay_good');
const { overloadProcess } = require('./relay_overload_good');

// BUG: every downstream call waits for a ready connection.
good.Downstream.prototype.call = function call(client, method, request, deadline) {
  return new Promise((resolve, reject) => {
    if (this.cancelled) {
      reject({ code: grpc.status.CANCELLED, details: 'the client went away' });
      return;
    }
    const options = Number.isFinite(deadline) ? { deadline } : {};
    const md = new grpc.Metadata({ waitForReady: true });
    this.inflight = client[method](request, md, options, (err, reply) => {
      this.inflight = null;
      if (err) reject({ code: err.code, details: err.details || err.message });
      else resolve(reply);
    });
  });
};

if (require.main === module) good.relay(overloadProcess);
