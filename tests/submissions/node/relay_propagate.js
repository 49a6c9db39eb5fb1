// relay_propagate: a correct relay the way the handouts suggest for grpc-js:
// each downstream call is a child of the server call, with
// {parent: call, propagate_flags: DEADLINE | CANCELLATION}. grpc-js then gives
// the child min(own deadline, parent's) and cancels it on the parent's
// 'cancelled' event. What propagation cannot do is not start Work: a child
// created after the client left, or after the deadline passed, would still
// reach the baseline, so both are checked before Work.
//
// Mistake: none. It must pass every scenario of both exercises.
'use strict';

const { grpc } = require('./common');
const { deadlineOf, lookupRequest, workRequest, relay } = require('./relay_good');

const FLAGS = grpc.propagate.DEADLINE | grpc.propagate.CANCELLATION;

function child(baseline, method, request, call) {
  return new Promise((resolve, reject) => {
    baseline[method](request, { parent: call, propagate_flags: FLAGS }, (err, reply) => {
      if (err) reject({ code: err.code, details: err.details || err.message });
      else resolve(reply);
    });
  });
}

async function propagate(baseline, call) {
  await child(baseline, 'Lookup', lookupRequest(call.request), call);
  if (call.cancelled) throw { code: grpc.status.CANCELLED, details: 'the client went away' };
  if (deadlineOf(call) <= Date.now()) throw { code: grpc.status.DEADLINE_EXCEEDED, details: 'no time left for Work' };
  const work = await child(baseline, 'Work', workRequest(call.request), call);
  return { tag: work.tag, steps_done: work.steps_done };
}

relay(propagate);
