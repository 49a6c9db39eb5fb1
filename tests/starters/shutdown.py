        # >>> TODO(shutdown): the test's own solution (tests/starters/shutdown.py)
        if first.is_set() or signum == signal.SIGINT:
            server.stop(0)
            return
        first.set()
        stopped = server.stop(GRACE_S)

        def finish():
            stopped.wait()
            relay.end_all("the relay stopped: its grace is over")
            leave(0)

        threading.Thread(target=finish, daemon=True).start()
        # <<< TODO
