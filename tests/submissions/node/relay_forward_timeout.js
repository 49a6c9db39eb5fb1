// relay_forward_timeout: reads the time left once, on arrival, and gives that
// same timeout to both downstream calls, so Work gets a deadline later than
// the client's: the time the Lookup took is counted twice.
//
// Must fail: deadline/shrinks (Work's deadline is too long by the Lookup's duration).
// Must pass: deadline/none, expires-in-lookup, once; every cancel scenario.
'use strict';

const { Downstream, deadlineOf, lookupRequest, workRequest, relay } = require('./relay_good');

async function forwardTimeout(baseline, call) {
  const calls = new Downstream(call);
  const timeoutMs = deadlineOf(call) - Date.now(); // BUG: stale by the time Work starts
  await calls.call(baseline, 'Lookup', lookupRequest(call.request), Date.now() + timeoutMs);
  const work = await calls.call(baseline, 'Work', workRequest(call.request), Date.now() + timeoutMs);
  return { tag: work.tag, steps_done: work.steps_done };
}

relay(forwardTimeout);
