// relay.js: your relay for the relaylab `overload` exercise (`lab show
// overload`). The server is set up for you: it listens on $RELAYLAB_LISTEN,
// holds a client for the baseline at $RELAYLAB_BASELINE, and drains on
// SIGTERM (the shutdown exercise's rules). Process is written too: each
// downstream call gets the client's deadline, the client leaving cancels the
// call in flight, and the calls are fail-fast (grpc-js's default, no
// waitForReady), so with the backend down they fail UNAVAILABLE at once. The
// lesson is yours: admission control, the Gate's enter() and leave() between
// the TODO markers, which process_() passes every call through before it
// calls the baseline. `./run` starts this file; the contract is loaded from
// proto/relaylab.proto at run time, and node_modules comes from `npm ci`
// (`lab stubs node .` runs it again).
'use strict';

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// keepCase: fields as the proto spells them (steps_done, lookup_delay_ms).
const relaylab = grpc.loadPackageDefinition(
  protoLoader.loadSync(path.join(__dirname, 'proto', 'relaylab.proto'), {
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
  }),
).relaylab;

const MAX_INFLIGHT = 8; // Process calls with a downstream call in flight at once
const MAX_QUEUE = 16; // calls waiting for one of those slots
const SLACK_MS = 50; // what a loaded machine adds to a call's way through the relay

// The grace the platform gives at SIGTERM (the grader sets it), in milliseconds.
const GRACE_MS = Number(process.env.RELAYLAB_GRACE_MS || 5000);

// Admission control in front of the downstream calls. process_() awaits
// enter(call, deadline) before its first downstream call and calls
// leave(tookMs) after its last, with how long the backend held it. grpc-js
// runs everything on one thread: no lock is needed, and a waiting call is a
// Promise kept in an array until a slot frees.
class Gate {
  constructor() {
    this.inflight = 0; // calls holding a slot (at most MAX_INFLIGHT)
    this.waiting = []; // the calls waiting for one, first come first served (at most MAX_QUEUE)
    this.serviceMs = 0; // how long the backend holds a call: see served()
  }

  // Counts one call's service time into this.serviceMs: a moving average
  // that rises at once when a call took longer (a slowing backend must not
  // fill the queue while the average catches up) and comes down slowly. A
  // blackholed backend holds calls until their deadline, and that is what
  // a waiting call can expect too.
  served(tookMs) {
    this.serviceMs = tookMs > this.serviceMs ? tookMs : 0.8 * this.serviceMs + 0.2 * tookMs;
  }

  // >>> TODO(overload): admission control: enter() and leave().
  // enter(call, deadline) returns a Promise: resolved once the call holds one
  // of the MAX_INFLIGHT slots, or rejected with the status to refuse it with,
  // {code: grpc.status.RESOURCE_EXHAUSTED, details: why}. |deadline| is the
  // client's, in Date.now() milliseconds (Infinity: none).
  //   1. A slot free and no call waiting: take it.
  //   2. Otherwise refuse at once when MAX_QUEUE calls wait already, or when
  //      the time left (deadline - Date.now()) cannot cover the expected wait
  //      (the calls ahead, MAX_INFLIGHT at a time, each this.serviceMs) plus
  //      this call's own service and SLACK_MS.
  //   3. Else wait in this.waiting. Leave it, refused, as soon as the time left
  //      no longer covers the service (a timer), or the client has gone
  //      (call.on('cancelled', ...)): a call the relay cannot serve in time is
  //      never forwarded.
  // leave(tookMs) gives the slot back, counts tookMs (this.served), and hands
  // the slot to the first waiting call that can still be served in time.
  // Until then, the Gate lets one call through at a time and refuses the rest:
  enter(call, deadline) {
    if (this.inflight === 0) {
      this.inflight++;
      return Promise.resolve();
    }
    return Promise.reject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'TODO in relay.js: no admission control yet, the Gate takes one call at a time (its TODO block)',
    });
  }

  leave(tookMs) {
    this.inflight--;
    this.served(tookMs);
  }
  // <<< TODO
}

// The downstream calls in flight, which a forced stop cancels.
const downstreamCalls = new Set();

// One Process call once it holds a slot: Lookup, then Work, each with the
// client's deadline, and Work's reply; |done|(status, reply) answers it. The
// client leaving cancels the call in flight and starts no further one.
function relayOne(baseline, call, deadline, done) {
  const req = call.request;
  let inflight = null;
  let cancelled = call.cancelled === true;
  call.on('cancelled', () => {
    cancelled = true;
    if (inflight) inflight.cancel();
  });
  const hop = (method, request, next) => {
    if (cancelled) return done({ code: grpc.status.CANCELLED, details: 'the client went away' });
    if (deadline <= Date.now()) {
      return done({ code: grpc.status.DEADLINE_EXCEEDED, details: 'no time left for the next call' });
    }
    const c = baseline[method](request, Number.isFinite(deadline) ? { deadline } : {}, (err, reply) => {
      downstreamCalls.delete(c);
      inflight = null;
      if (err) done({ code: err.code, details: err.details || err.message });
      else next(reply);
    });
    downstreamCalls.add(c);
    inflight = c;
  };
  hop('Lookup', { tag: req.tag, delay_ms: req.lookup_delay_ms }, () =>
    hop('Work', { tag: req.tag, steps: req.steps, step_ms: req.step_ms }, (work) =>
      done(null, { tag: work.tag, steps_done: work.steps_done }),
    ),
  );
}

// The client's deadline in Date.now() milliseconds, Infinity when none.
function deadlineOf(call) {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : Number(d);
}

function process_(gate, baseline, call, callback) {
  const deadline = deadlineOf(call);
  gate.enter(call, deadline).then(
    () => {
      const start = Date.now();
      relayOne(baseline, call, deadline, (status, reply) => {
        gate.leave(Date.now() - start);
        callback(status, reply);
      });
    },
    (status) => callback(status),
  );
}

// Exits once the current events are out (a status just sent goes out on
// the next turn of the loop; the open client channel would keep Node alive).
function leave() {
  setImmediate(() => process.exit(0));
}

function main() {
  const listen = process.env.RELAYLAB_LISTEN || '127.0.0.1:0';
  const addr = process.env.RELAYLAB_BASELINE;
  if (!addr) {
    console.error('set RELAYLAB_BASELINE=host:port (where the baseline listens)');
    process.exit(2);
  }
  // A fail-fast channel: grpc-js's default. {waitForReady: true} on a call
  // would hold it until the backend is back or its deadline passes.
  const baseline = new relaylab.Baseline(addr, grpc.credentials.createInsecure());
  const gate = new Gate();
  const server = new grpc.Server();
  server.addService(relaylab.Relay.service, {
    Process: (call, callback) => process_(gate, baseline, call, callback),
  });
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    console.log(`relay listening on ${listen.slice(0, listen.lastIndexOf(':'))}:${port}`);
  });

  // SIGTERM: take no new calls, let the calls in flight finish within the
  // grace, then cancel what is left (downstream too) and exit 0. A second
  // SIGTERM, or a SIGINT, means now.
  let stopping = false;
  const now = () => {
    server.forceShutdown();
    for (const c of downstreamCalls) c.cancel();
    leave();
  };
  const onSignal = (signal) => {
    if (stopping || signal === 'SIGINT') {
      now();
      return;
    }
    stopping = true;
    const timer = setTimeout(now, GRACE_MS);
    server.tryShutdown(() => {
      clearTimeout(timer);
      leave();
    });
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main();
