// streamer_good: a correct grpc-js producer for the flow exercise.
//
// Mistake: none. It must pass every scenario (stall, resume, cancel,
// slow-reader). call.write() returns false once the stream's buffer is full
// (16 messages in object mode, and a message leaves that buffer only when
// HTTP/2 flow control took it), so the producer stops there and goes on at
// 'drain': a reader that stops reading stops the producer after one window
// plus that buffer. 'cancelled' stops it for good. streamer_unbounded.js
// reuses check() and payload().
'use strict';

const { grpc, loadRelaylab, serve } = require('./common');

const relaylab = loadRelaylab();

const MAX_SIZE = 4 * 1024 * 1024 - 64;
const MAX_COUNT = 1000000;
const MAX_TOTAL = 16 * 2 ** 30;

// payload[i] = (seq * 31 + i) mod 251 has period 251, so every chunk is a
// slice of one long repetition of 0..250 starting at (seq * 31) mod 251.
let pattern = Buffer.alloc(0);

function payload(seq, size) {
  if (pattern.length < 251 + size) {
    pattern = Buffer.alloc(251 * (Math.ceil(size / 251) + 1));
    for (let i = 0; i < pattern.length; i++) pattern[i] = i % 251;
  }
  const start = (seq * 31) % 251;
  // A copy, as a chunk made for sending owns its bytes. A view of the shared
  // pattern would make a queued chunk cost a few bytes instead of |size|,
  // and hide what streamer_unbounded.js gets wrong.
  return Buffer.from(pattern.subarray(start, start + size));
}

// The reference streamer's limits: a {code, details} status to refuse the
// request with, or null.
function check(req) {
  if (req.size > MAX_SIZE) return { code: grpc.status.INVALID_ARGUMENT, details: `size ${req.size} is above ${MAX_SIZE} bytes` };
  if (req.count > MAX_COUNT) return { code: grpc.status.INVALID_ARGUMENT, details: `count ${req.count} is above ${MAX_COUNT}` };
  if (req.count * req.size > MAX_TOTAL) return { code: grpc.status.RESOURCE_EXHAUSTED, details: `count x size is above ${MAX_TOTAL} bytes` };
  return null;
}

function produce(call) {
  const refused = check(call.request);
  if (refused) {
    call.emit('error', refused); // grpc-js ends the call with this status
    return;
  }
  const { count, size } = call.request;
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
        call.once('drain', pump); // the buffer has room again
        return;
      }
    }
    if (!stopped) call.end();
  };
  pump();
}

module.exports = { check, payload, produce, relaylab };

if (require.main === module) serve('streamer', relaylab.Streamer.service, { Produce: produce });
