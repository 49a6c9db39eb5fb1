// relay_overload_good: a correct grpc-js relay for the overload exercise.
//
// Mistake: none. It must pass every scenario of overload (refused,
// blackhole, recovers, overload) and of deadline and cancel.
// On top of relay_good (the incoming deadline on every hop, cancellation,
// fail-fast downstream calls: grpc-js's default, no waitForReady) it admits
// calls through a Gate: at most SLOTS Process calls have a downstream call
// in flight, at most QUEUE wait for one (first come, first served), and a
// call is refused at once with RESOURCE_EXHAUSTED when its time left cannot
// cover the expected wait and service. A queued call whose client leaves,
// or whose time runs short while it waits, leaves the queue at once.
'use strict';

const { grpc } = require('./common');
const { Downstream, deadlineOf, lookupRequest, workRequest, relay } = require('./relay_good');

const SLOTS = 8; // downstream calls in flight at once
const QUEUE = 16; // calls waiting for a slot
const SLACK_MS = 50; // scheduling delays on a loaded machine

function overloaded(details) {
  return { code: grpc.status.RESOURCE_EXHAUSTED, details: `the relay is overloaded: ${details}` };
}

// The service time is a moving average of how long the backend held each
// call (answered or not: a blackholed backend holds calls until their
// deadline, and that is what a waiting call can expect); it jumps up at once
// when a call took longer (a slowing backend must not fill the queue while
// the average catches up) and comes down slowly.
class Gate {
  constructor(slots = SLOTS, queue = QUEUE) {
    this.slots = slots;
    this.queue = queue;
    this.inflight = 0;
    this.waiting = []; // {deadline, resolve, reject, timer}
    this.service = 0;
  }

  // What a call must have left once it has a slot.
  needed() {
    return 1.5 * this.service + SLACK_MS;
  }

  // Resolves once |call| holds a slot; rejects with RESOURCE_EXHAUSTED.
  enter(call, deadline) {
    if (this.inflight < this.slots && this.waiting.length === 0) {
      this.inflight++;
      return Promise.resolve();
    }
    const wait = (Math.floor(this.waiting.length / this.slots) + 1) * this.service;
    if (this.waiting.length >= this.queue || deadline - Date.now() < wait + this.needed()) {
      return Promise.reject(overloaded(`${this.waiting.length} calls waiting`));
    }
    return new Promise((resolve, reject) => {
      const w = { deadline, resolve, reject, timer: null };
      const drop = (why) => {
        const i = this.waiting.indexOf(w);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        clearTimeout(w.timer);
        reject(why);
      };
      call.on('cancelled', () => drop({ code: grpc.status.CANCELLED, details: 'the client went away' }));
      // Leave as soon as the time left no longer covers the service.
      if (Number.isFinite(deadline)) {
        w.timer = setTimeout(() => drop(overloaded('the call can no longer be served in time')),
          Math.max(0, deadline - Date.now() - this.needed()));
      }
      this.waiting.push(w);
    });
  }

  leave(tookMs) {
    this.inflight--;
    if (tookMs !== undefined) {
      this.service = tookMs > this.service ? tookMs : 0.8 * this.service + 0.2 * tookMs;
    }
    while (this.inflight < this.slots && this.waiting.length) {
      const w = this.waiting.shift();
      clearTimeout(w.timer);
      if (w.deadline - Date.now() < this.needed()) {
        w.reject(overloaded('the call can no longer be served in time'));
        continue;
      }
      this.inflight++;
      w.resolve();
    }
    // The service time may have grown: refuse now the waiting calls that
    // can no longer be served in time, rather than when their timer fires.
    const now = Date.now();
    const kept = [];
    for (const w of this.waiting) {
      const wait = (Math.floor(kept.length / this.slots) + 1) * this.service;
      if (w.deadline - now < wait + this.needed()) {
        clearTimeout(w.timer);
        w.reject(overloaded('the call can no longer be served in time'));
      } else {
        kept.push(w);
      }
    }
    this.waiting = kept;
  }
}

const gate = new Gate();

async function overloadProcess(baseline, call) {
  const deadline = deadlineOf(call);
  await gate.enter(call, deadline);
  const start = Date.now();
  try {
    const calls = new Downstream(call);
    await calls.call(baseline, 'Lookup', lookupRequest(call.request), deadline);
    const work = await calls.call(baseline, 'Work', workRequest(call.request), deadline);
    return { tag: work.tag, steps_done: work.steps_done };
  } finally {
    gate.leave(Date.now() - start);
  }
}

module.exports = { Gate, overloadProcess };

if (require.main === module) relay(overloadProcess);
