// relay_good: a correct grpc-js relay for the deadline and cancel exercises.
//
// Mistake: none. It must pass every scenario of both exercises (shrinks, none,
// expires-in-lookup, once; during-work, during-lookup, keeps-serving).
// Every downstream call gets the incoming call's own deadline instant
// (call.getDeadline()), so it carries only the time left when it starts; no
// deadline in (Infinity) means none out. When the client leaves, the server
// call's 'cancelled' event cancels the call in flight, and no further call
// starts. The other relay_*.js files reuse this module and change one thing.
'use strict';

const { grpc, loadRelaylab, serve } = require('./common');

const relaylab = loadRelaylab();

function status(code, details) {
  return { code, details };
}

// The downstream calls of one Process call.
class Downstream {
  // |propagateCancel| false is the relay_no_cancel mistake: the client
  // leaving changes nothing here.
  constructor(call, propagateCancel = true) {
    this.inflight = null; // the client call running now, if any
    this.cancelled = false;
    if (!propagateCancel) return;
    // call.cancelled covers a client that left before this handler ran.
    this.cancelled = call.cancelled === true;
    call.on('cancelled', () => this.cancel());
  }

  cancel() {
    this.cancelled = true;
    if (this.inflight) this.inflight.cancel();
  }

  // Calls |method| of |client| with |request| and the absolute |deadline|
  // (ms since the epoch, Date.now()'s clock; Infinity: none). Resolves with
  // the reply; rejects with a {code, details} status: CANCELLED once the
  // client has left, DEADLINE_EXCEEDED when no time is left (the call is then
  // not started at all), or the downstream call's own status.
  call(client, method, request, deadline) {
    return new Promise((resolve, reject) => {
      if (this.cancelled) {
        reject(status(grpc.status.CANCELLED, 'the client went away'));
        return;
      }
      if (Number.isFinite(deadline) && deadline <= Date.now()) {
        reject(status(grpc.status.DEADLINE_EXCEEDED, 'no time left for the next call'));
        return;
      }
      // No `deadline` key at all for "none": grpc-js then sends no grpc-timeout.
      const options = Number.isFinite(deadline) ? { deadline } : {};
      this.inflight = client[method](request, options, (err, reply) => {
        this.inflight = null;
        if (err) reject(status(err.code, err.details || err.message));
        else resolve(reply);
      });
    });
  }
}

// The incoming call's deadline as an instant: getDeadline() is Date.now()
// when the headers arrived plus grpc-timeout, or Infinity with no deadline.
function deadlineOf(call) {
  const d = call.getDeadline();
  return d instanceof Date ? d.getTime() : d;
}

function lookupRequest(req) {
  return { tag: req.tag, delay_ms: req.lookup_delay_ms };
}

function workRequest(req) {
  return { tag: req.tag, steps: req.steps, step_ms: req.step_ms };
}

async function relayProcess(baseline, call) {
  const calls = new Downstream(call);
  const deadline = deadlineOf(call);
  await calls.call(baseline, 'Lookup', lookupRequest(call.request), deadline);
  // The same instant, so Work gets only what the Lookup left.
  const work = await calls.call(baseline, 'Work', workRequest(call.request), deadline);
  return { tag: work.tag, steps_done: work.steps_done };
}

// Starts a relay whose Process is |processFn(baseline, call)| -> Promise of
// the reply; a rejection {code, details} fails Process with that status.
// |onSigterm| is serve()'s (undefined: its default).
function relay(processFn, onSigterm) {
  const addr = process.env.RELAYLAB_BASELINE;
  if (!addr) {
    console.error('set RELAYLAB_BASELINE=host:port (where the baseline listens)');
    process.exit(2);
  }
  const baseline = new relaylab.Baseline(addr, grpc.credentials.createInsecure());
  serve('relay', relaylab.Relay.service, {
    Process(call, callback) {
      processFn(baseline, call).then(
        (reply) => callback(null, reply),
        (err) => callback(err && 'code' in err ? err : status(grpc.status.INTERNAL, String(err))),
      );
    },
  }, onSigterm);
}

module.exports = { Downstream, deadlineOf, lookupRequest, workRequest, relay, relayProcess };

if (require.main === module) relay(relayProcess);
