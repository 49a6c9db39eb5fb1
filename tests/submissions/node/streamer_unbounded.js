// streamer_unbounded: the classic flow-control mistake, in grpc-js.
//
// Mistake: Produce writes every chunk in one loop and ignores what
// call.write() returns. The Writable stream takes each message anyway and
// buffers it, so a reader that stops after one chunk leaves count x size
// bytes queued in the process: about 190 MiB for 3000 x 64 KiB. It must fail
// `stall` (and `slow-reader`) by a wide margin while its data stay right
// (`resume` passes).
'use strict';

const { serve } = require('./common');
const { check, payload, relaylab } = require('./streamer_good');

function produce(call) {
  const refused = check(call.request);
  if (refused) {
    call.emit('error', refused);
    return;
  }
  const { count, size } = call.request;
  for (let seq = 0; seq < count; seq++) {
    call.write({ seq, payload: payload(seq, size) }); // BUG: false means "stop until 'drain'"
  }
  call.end();
}

serve('streamer', relaylab.Streamer.service, { Produce: produce });
