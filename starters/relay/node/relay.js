// relay.js: your relay for the relaylab `deadline` and `cancel` exercises
// (`lab show deadline`, `lab show cancel`). The server is set up for you: it
// listens on $RELAYLAB_LISTEN, holds a client for the baseline at
// $RELAYLAB_BASELINE, and stops cleanly on SIGTERM. The lesson is yours: the
// block between the TODO markers in process(). `./run` starts this file; the
// contract is loaded from proto/relaylab.proto at run time, and
// node_modules comes from `npm ci` (`lab stubs node .` runs it again).
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

// One Process call. |baseline| is a relaylab.Baseline client:
// baseline.Lookup(request, {deadline}, (err, reply) => ...) returns a call
// you can .cancel(); the same for Work. |call| is the server call: its
// .request, .getDeadline() (a Date, or Infinity with no deadline) and its
// 'cancelled' event. Answer with callback(null, reply) or callback({code, details}).
function process_(baseline, call, callback) {
  // >>> TODO(deadline, cancel): relay one Process call.
  //   1. Call Lookup with {tag: call.request.tag, delay_ms: call.request.lookup_delay_ms},
  //   2. then Work with {tag, steps, step_ms} from call.request,
  //   3. and answer {tag, steps_done} from Work's reply.
  // deadline: give each call only the time left ({deadline: ...} with the
  //   incoming call's deadline; with none (Infinity) pass no deadline at all).
  //   No time left: fail DEADLINE_EXCEEDED, no Work. A failed downstream call
  //   fails Process with its status code.
  // cancel: when the client gives up (call.on('cancelled')), cancel the call in
  //   flight and start no further one.
  callback({
    code: grpc.status.UNIMPLEMENTED,
    details: 'TODO in relay.js: process() does not call Lookup and Work yet (see its TODO block)',
  });
  // <<< TODO
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
  // SIGTERM (the grader's stop): take no new calls, give running ones 1 s,
  // exit 0 (the open client channel would keep Node alive otherwise).
  process.once('SIGTERM', () => {
    setTimeout(() => process.exit(0), 1000).unref();
    server.tryShutdown(() => process.exit(0));
  });
}

main();
