// relay.js: your relay for the relaylab `shutdown` exercise (`lab show
// shutdown`). The server is set up for you: it listens on $RELAYLAB_LISTEN and
// holds a client for the baseline at $RELAYLAB_BASELINE; Process is written
// too, a plain relay (Lookup, then Work) that keeps its downstream calls in
// flight where downstream.endAll() can cancel them. (The deadline and cancel
// rules are their own exercises and this grader does not judge them: bring
// your process() from them if you have it.) The lesson is yours: what the
// relay does at SIGTERM, the block between the TODO markers in onSignal().
// `./run` starts this file; the contract is loaded from proto/relaylab.proto
// at run time, and node_modules comes from `npm ci` (`lab stubs node .` runs
// it again).
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

// The grace the platform gives (the grader sets it), in milliseconds.
const GRACE_MS = Number(process.env.RELAYLAB_GRACE_MS || 5000);

// The downstream calls in flight, and why endAll() cut them (the answer of
// their Process calls, and of any later one).
const downstream = {
  calls: new Set(),
  endedBy: null,
  // Cancels every downstream call in flight (the baseline sees its Work
  // cancelled); their Process calls fail UNAVAILABLE with |why|.
  endAll(why) {
    this.endedBy = why;
    for (const c of this.calls) c.cancel();
  },
};

// Calls |method| of |baseline| with |request|; |next| gets the reply, and a
// failure answers the Process call through |callback|.
function callDownstream(baseline, method, request, callback, next) {
  if (downstream.endedBy !== null) {
    callback({ code: grpc.status.UNAVAILABLE, details: downstream.endedBy });
    return;
  }
  const c = baseline[method](request, (err, reply) => {
    downstream.calls.delete(c);
    if (!err) next(reply);
    else if (downstream.endedBy !== null) callback({ code: grpc.status.UNAVAILABLE, details: downstream.endedBy });
    else callback({ code: err.code, details: err.details || '' });
  });
  downstream.calls.add(c);
}

// One Process call: Lookup, then Work, and Work's reply.
function process_(baseline, call, callback) {
  const r = call.request;
  callDownstream(baseline, 'Lookup', { tag: r.tag, delay_ms: r.lookup_delay_ms }, callback, () =>
    callDownstream(baseline, 'Work', { tag: r.tag, steps: r.steps, step_ms: r.step_ms }, callback, (work) =>
      callback(null, { tag: work.tag, steps_done: work.steps_done }),
    ),
  );
}

// Exits once the current events are out (the status of a call that just
// failed goes out on the next turn of the loop). Open client channels keep
// Node alive: the exit must be explicit.
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
  const baseline = new relaylab.Baseline(addr, grpc.credentials.createInsecure());
  const server = new grpc.Server();
  server.addService(relaylab.Relay.service, {
    Process: (call, callback) => process_(baseline, call, callback),
  });
  server.bindAsync(listen, grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) {
      console.error(`cannot listen on ${listen}: ${err.message}`);
      process.exit(1);
    }
    console.log(`relay listening on ${listen.slice(0, listen.lastIndexOf(':'))}:${port}`);
  });

  // SIGTERM: the platform's stop (SIGINT: Ctrl-C). Node's default action
  // for both is to die at once.
  let stopping = false; // set by the first signal (a second one means now)
  const onSignal = (signal) => {
    // >>> TODO(shutdown): drain instead of cutting every call at once.
    //   1. Stop admitting and let the calls in flight finish:
    //      server.tryShutdown(cb) closes the listener, refuses new calls, and
    //      runs cb once every call has ended and the clients' connections
    //      have closed (an idle client may keep its own open); then leave().
    //   2. Bound it by the grace: a timer at GRACE_MS calls
    //      server.forceShutdown() (which cancels the calls still running),
    //      ends what still runs downstream (downstream.endAll(...)), and leave().
    //   3. A second SIGTERM, or a SIGINT, means now: do 2 at once.
    // Until then, the calls in flight are cut at once, no grace:
    downstream.endAll('TODO in relay.js: the SIGTERM handler cuts every call at once, with no grace (its TODO block)');
    setTimeout(leave, 1000);
    server.tryShutdown(() => leave());
    // <<< TODO
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

main();
