  // >>> TODO(deadline, cancel): the test's own solution (tests/starters/relay.js)
  const req = call.request;
  const d = call.getDeadline();
  const deadline = d instanceof Date ? d.getTime() : d;
  let inflight = null;
  let cancelled = call.cancelled === true;
  call.on('cancelled', () => {
    cancelled = true;
    if (inflight) inflight.cancel();
  });
  const hop = (method, request, next) => {
    if (cancelled) return callback({ code: grpc.status.CANCELLED, details: 'the client went away' });
    if (Number.isFinite(deadline) && deadline <= Date.now())
      return callback({ code: grpc.status.DEADLINE_EXCEEDED, details: 'no time left for the next call' });
    inflight = baseline[method](request, Number.isFinite(deadline) ? { deadline } : {}, (err, reply) => {
      inflight = null;
      if (err) callback({ code: err.code, details: err.details || err.message });
      else next(reply);
    });
  };
  hop('Lookup', { tag: req.tag, delay_ms: req.lookup_delay_ms }, () =>
    hop('Work', { tag: req.tag, steps: req.steps, step_ms: req.step_ms }, (work) =>
      callback(null, { tag: work.tag, steps_done: work.steps_done }),
    ),
  );
  // <<< TODO
