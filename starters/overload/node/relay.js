// relay.js: your relay for the relaylab `overload` exercise (`lab show
// overload`). The server is set up for you: it listens on $RELAYLAB_LISTEN,
// holds a client for the baseline at $RELAYLAB_BASELINE, and stops on
// SIGTERM. Process is given too, a plain relay (Lookup, then Work, on a
// fail-fast channel): it drops the client's deadline and lets the downstream
// calls run on after the client left. (The deadline and cancel rules are
// their own exercises, and this one judges them too: bring your process()
// from them.) The lesson is yours, the block between the TODO markers:
// process() with those rules, and admission control, enter() and leave(),
// which process() passes every call through around its downstream calls.
// `./run` starts this file; the contract is loaded from
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

// The client's deadline in Date.now() milliseconds, Infinity when none.
function deadlineOf(call) {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : Number(d);
}

// The relay: the Process handler and the admission state in front of the
// downstream calls. grpc-js runs everything on one thread: no lock is
// needed, and a waiting call is a Promise kept in an array until a slot frees.
class Relay {
  // |baseline| is a relaylab.Baseline client: baseline.Lookup(request,
  // {deadline}, (err, reply) => ...) returns a call you can .cancel(); the
  // same for Work.
  constructor(baseline) {
    this.baseline = baseline;
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

  // >>> TODO(overload): process() with the deadline and cancel rules, and admission control.
  // process(call, callback): bring yours from the deadline and cancel
  // exercises (each downstream call with the client's deadline, none when it
  // has none (Infinity); the client leaving (call.on('cancelled')) cancels
  // the call in flight and starts no further one). It awaits
  // this.enter(call, deadline) before its first downstream call and calls
  // this.leave(tookMs) after its last, with how long the backend held it.
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
  // Until then, process() is a plain relay and the gate lets one call through
  // at a time and refuses the rest:
  enter(call, deadline) {
    if (this.inflight === 0) {
      this.inflight++;
      return Promise.resolve();
    }
    return Promise.reject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'TODO in relay.js: no admission control yet, the gate takes one call at a time (its TODO block)',
    });
  }

  leave(tookMs) {
    this.inflight--;
    this.served(tookMs);
  }

  process(call, callback) {
    const req = call.request;
    this.enter(call, deadlineOf(call)).then(
      () => {
        const start = Date.now();
        const done = (status, reply) => {
          this.leave(Date.now() - start);
          callback(status, reply);
        };
        const hop = (method, request, next) =>
          this.baseline[method](request, (err, reply) => {
            if (err) done({ code: err.code, details: err.details || err.message });
            else next(reply);
          });
        hop('Lookup', { tag: req.tag, delay_ms: req.lookup_delay_ms }, () =>
          hop('Work', { tag: req.tag, steps: req.steps, step_ms: req.step_ms }, (work) =>
            done(null, { tag: work.tag, steps_done: work.steps_done }),
          ),
        );
      },
      (status) => callback(status),
    );
  }
  // <<< TODO
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
  const relay = new Relay(new relaylab.Baseline(addr, grpc.credentials.createInsecure()));
  const server = new grpc.Server();
  server.addService(relaylab.Relay.service, {
    Process: (call, callback) => relay.process(call, callback),
  });
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    console.log(`relay listening on ${listen.slice(0, listen.lastIndexOf(':'))}:${port}`);
  });
  // SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
  // exit 0 (the open client channel would keep Node alive otherwise).
  // (Draining within the platform's grace is the shutdown exercise.)
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 1000).unref();
    server.tryShutdown(() => process.exit(0));
  });
}

main();
