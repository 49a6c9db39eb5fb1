// relay_shutdown_no_handler: a correct grpc-js relay with no SIGTERM handler.
//
// Mistake: SIGTERM keeps Node's default action, so the process dies at once:
// every call in flight fails UNAVAILABLE and the baseline sees its Work
// cancelled. It must fail the shutdown exercise ("killed by SIGTERM").
'use strict';

const { relay, relayProcess } = require('./relay_good');

relay(relayProcess, null); // BUG: nothing handles SIGTERM
