// coverage_good: a correct grpc-js tunnel agent for the coverage exercise.
//
// Mistake: none. It must pass every scenario. It dials $RELAYLAB_TUNNEL (an
// L7 proxy that places each new stream on a tunnel server of its choosing),
// learns each stream's server from its first message, and once a tick sizes
// its streams PER SERVER by the table of lab/exercises/coverage.md (the
// constants are lib/rl_coverage.h's):
//   covered    streams >= busy + RESERVE       nothing
//   growing    short, calls in flight          open max(8, busy, shortfall), twice
//              the last tick's while it stays short; paused while idle streams
//              elsewhere reach 4x its busy; capped
//   filling    short, idle                     open toward the reserve, 4 a tick
//   overdue    short and idle OVERDUE_MS       fill, then evacuate (close its idle
//              streams) while another server is covered, one per EVACUATE_EVERY_MS
//   evacuated  EVACUATED_MS                    close idle streams there; no grow or fill
// and prunes idle streams PRUNE_AGE_MS old and unused PRUNE_UNUSED_MS, the
// longest unused first, never below busy + RESERVE on their server.
// A grpc-js duplex call is the stream: 'data' brings the server's messages,
// write() answers, end() half-closes. coverage_total.js changes one thing.
'use strict';

const { grpc, loadRelaylab } = require('./common');

const relaylab = loadRelaylab();

const TICK_MS = 250;
const RESERVE = 2;
const GROW_MIN = 8;
const PAUSE_FACTOR = 4;
const FILL_PER_TICK = 4;
const CAP_PER_SERVER = 1200;
const CAP_TOTAL = 4000;
const OVERDUE_MS = 3000;
const EVACUATE_EVERY_MS = 3000;
const EVACUATED_MS = 6000;
const PRUNE_AGE_MS = 2000;
const PRUNE_UNUSED_MS = 6000;

// 'per-server' (the rule) or 'total' (the incident: one pool for every server).
const config = { sizing: 'per-server' };

const now = () => performance.now();

class Stream {
  constructor(agent) {
    this.agent = agent;
    this.server = null; // named by the server's first message
    this.busy = false;
    this.closing = false; // end() once the call in hand is answered
    this.ended = false; // end() called
    this.opened = now();
    this.lastUsed = this.opened;
    this.call = agent.client.Open();
    this.call.on('data', (m) => this.onMessage(m));
    // A cancelled or failed stream: 'status' follows and removes it.
    this.call.on('error', () => {});
    this.call.on('status', () => agent.forget(this));
  }

  onMessage(m) {
    if (this.server === null) {
      this.server = m.server_id;
      return;
    }
    if (this.ended) return; // handed after our half-close: cannot be answered
    this.busy = true;
    setTimeout(() => {
      this.busy = false;
      this.lastUsed = now();
      this.call.write({ call_id: m.call_id });
      if (this.closing) this.end();
    }, m.work_ms);
  }

  close() {
    this.closing = true;
    if (!this.busy) this.end();
  }

  end() {
    if (!this.ended) {
      this.ended = true;
      this.call.end();
    }
  }
}

class Agent {
  constructor(target) {
    // grpc-js shares nothing between clients unless asked; one connection.
    this.client = new relaylab.Tunnel(target, grpc.credentials.createInsecure());
    this.streams = new Set();
    this.growLast = new Map(); // server -> opened for it by growing last tick
    this.shortIdleSince = new Map();
    this.evacuatedUntil = new Map();
    this.lastEvacuation = -Infinity;
    this.stopping = false;
  }

  open(n) {
    n = Math.min(n, CAP_TOTAL - this.streams.size);
    for (let i = 0; i < n; i++) this.streams.add(new Stream(this));
  }

  forget(s) {
    this.streams.delete(s);
    if (this.stopping && this.streams.size === 0) this.exit();
  }

  groups() {
    const g = new Map();
    let pending = 0;
    for (const s of this.streams) {
      if (s.closing) continue;
      if (s.server === null) {
        pending++;
        continue;
      }
      const key = config.sizing === 'per-server' ? s.server : '*';
      if (!g.has(key)) g.set(key, []);
      g.get(key).push(s);
    }
    return { g, pending };
  }

  tick() {
    const t = now();
    const { g, pending } = this.groups();
    const figures = new Map();
    for (const [srv, group] of g) {
      const busy = group.filter((s) => s.busy).length;
      figures.set(srv, { group, busy, idle: group.filter((s) => !s.busy), short: group.length < busy + RESERVE });
    }
    const covered = [...figures].filter(([, f]) => !f.short).map(([srv]) => srv);
    let want = 0;
    for (const [srv, f] of figures) {
      const { group, busy, idle, short } = f;
      if ((this.evacuatedUntil.get(srv) || 0) > t) {
        for (const s of idle) s.close(); // recycle: they land elsewhere next time
        want += idle.length;
        continue;
      }
      if (!short) {
        this.growLast.set(srv, 0);
        this.shortIdleSince.delete(srv);
      } else if (busy > 0) {
        this.shortIdleSince.delete(srv);
        let idleElsewhere = 0;
        for (const [other, o] of figures) if (other !== srv) idleElsewhere += o.idle.length;
        let n = Math.max(GROW_MIN, busy, busy + RESERVE - group.length, 2 * (this.growLast.get(srv) || 0));
        if (idleElsewhere >= PAUSE_FACTOR * busy) n = 0; // they keep landing elsewhere: wait for the prune
        n = Math.max(0, Math.min(n, CAP_PER_SERVER - group.length));
        this.growLast.set(srv, n);
        want += n;
      } else {
        if (!this.shortIdleSince.has(srv)) this.shortIdleSince.set(srv, t);
        const overdue = t - this.shortIdleSince.get(srv) >= OVERDUE_MS;
        if (overdue && t - this.lastEvacuation >= EVACUATE_EVERY_MS && covered.some((c) => c !== srv)) {
          this.lastEvacuation = t;
          this.evacuatedUntil.set(srv, t + EVACUATED_MS);
          this.shortIdleSince.delete(srv);
          for (const s of idle) s.close();
          want += idle.length;
          continue;
        }
        want += Math.min(RESERVE - group.length, FILL_PER_TICK);
      }
      // Prune: the longest unused first, never below busy + RESERVE.
      let left = group.length;
      for (const s of [...idle].sort((a, b) => a.lastUsed - b.lastUsed)) {
        if (left <= busy + RESERVE) break;
        if (t - s.opened >= PRUNE_AGE_MS && t - s.lastUsed >= PRUNE_UNUSED_MS) {
          s.close();
          left--;
        }
      }
    }
    // Streams still on their way count toward what was asked for.
    this.open(Math.max(0, want - pending));
    if (this.streams.size === 0) this.open(GROW_MIN);
  }

  run() {
    this.open(GROW_MIN); // it knows no server yet
    this.timer = setInterval(() => this.tick(), TICK_MS);
    process.once('SIGTERM', () => this.stop());
    process.once('SIGINT', () => this.stop());
  }

  stop() {
    this.stopping = true;
    clearInterval(this.timer);
    for (const s of this.streams) s.close();
    // Calls in hand are answered first; whatever is left at 1.5 s is cut.
    setTimeout(() => this.exit(), 1500).unref();
    if (this.streams.size === 0) this.exit();
  }

  exit() {
    this.client.close();
    process.exit(0);
  }
}

module.exports = { config, Agent };

if (require.main === module) {
  const target = process.env.RELAYLAB_TUNNEL;
  if (!target) {
    console.error('coverage_good: RELAYLAB_TUNNEL is not set');
    process.exit(2);
  }
  new Agent(target).run();
}
