// relay_no_cancel: never listens for the client leaving. The downstream call
// in flight runs to its end, and a Process whose client has gone still calls
// Work once Lookup returns. Deadlines are still right (each hop gets the
// incoming deadline instant), so the deadline exercise passes.
//
// Must fail: cancel/during-work (Work runs all its steps), cancel/during-lookup
// (Work starts after the client left). Must pass: keeps-serving; every
// deadline scenario.
'use strict';

const { Downstream, deadlineOf, lookupRequest, workRequest, relay } = require('./relay_good');

async function noCancel(baseline, call) {
  const calls = new Downstream(call, false); // BUG: no 'cancelled' listener
  const deadline = deadlineOf(call);
  await calls.call(baseline, 'Lookup', lookupRequest(call.request), deadline);
  const work = await calls.call(baseline, 'Work', workRequest(call.request), deadline);
  return { tag: work.tag, steps_done: work.steps_done };
}

relay(noCancel);
