    // >>> TODO(shutdown): the test's own solution (tests/starters/shutdown.js)
    const now = () => {
      server.forceShutdown();
      downstream.endAll('the relay stopped: its grace is over');
      leave();
    };
    if (stopping || signal === 'SIGINT') {
      now();
      return;
    }
    stopping = true;
    const timer = setTimeout(now, GRACE_MS);
    server.tryShutdown(() => {
      clearTimeout(timer);
      leave();
    });
    // <<< TODO
