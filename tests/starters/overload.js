  // >>> TODO(overload): the test's own solution (tests/starters/overload.js)
  // What a call must have left once it has a slot: the service and half of
  // it again, for its variation, and the machine's slack.
  needed() {
    return 1.5 * this.serviceMs + SLACK_MS;
  }

  static refusal(why) {
    return { code: grpc.status.RESOURCE_EXHAUSTED, details: `overloaded: ${why}` };
  }

  enter(call, deadline) {
    if (this.inflight < MAX_INFLIGHT && this.waiting.length === 0) {
      this.inflight++;
      return Promise.resolve();
    }
    const wait = (Math.floor(this.waiting.length / MAX_INFLIGHT) + 1) * this.serviceMs;
    if (this.waiting.length >= MAX_QUEUE) {
      return Promise.reject(Gate.refusal(`${this.waiting.length} calls wait already`));
    }
    if (deadline - Date.now() < wait + this.needed()) {
      return Promise.reject(Gate.refusal('the wait would outlast the deadline'));
    }
    return new Promise((resolve, reject) => {
      const w = { deadline, resolve, reject, timer: null };
      const drop = (status) => {
        const i = this.waiting.indexOf(w);
        if (i < 0) return;
        this.waiting.splice(i, 1);
        clearTimeout(w.timer);
        reject(status);
      };
      call.on('cancelled', () => drop({ code: grpc.status.CANCELLED, details: 'the client went away' }));
      if (Number.isFinite(deadline)) {
        w.timer = setTimeout(() => drop(Gate.refusal('the call can no longer be served in time')),
          Math.max(0, deadline - Date.now() - this.needed()));
      }
      this.waiting.push(w);
    });
  }

  leave(tookMs) {
    this.inflight--;
    this.served(tookMs);
    while (this.inflight < MAX_INFLIGHT && this.waiting.length) {
      const w = this.waiting.shift();
      clearTimeout(w.timer);
      if (w.deadline - Date.now() < this.needed()) {
        w.reject(Gate.refusal('the call can no longer be served in time'));
        continue;
      }
      this.inflight++;
      w.resolve();
    }
  }
  // <<< TODO
