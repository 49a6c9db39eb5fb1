// coverage_total: the incident, in grpc-js. It sizes its streams as one
// TOTAL across every server (covered when all its streams >= all its busy +
// 2) and leaves placement to the L7 proxy, so the server that receives the
// calls can hold a few of its streams, all busy, while idle streams sit on
// the others and nothing tells it to grow: calls queue there.
//
// Must fail coverage/burst-uniform and burst-skewed ("streams sized as a
// total?"). Everything else is coverage_good.js's.
'use strict';

const { config, Agent } = require('./coverage_good');

config.sizing = 'total'; // BUG: one pool for every server

const target = process.env.RELAYLAB_TUNNEL;
if (!target) {
  console.error('coverage_total: RELAYLAB_TUNNEL is not set');
  process.exit(2);
}
new Agent(target).run();
