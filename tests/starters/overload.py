    # >>> TODO(overload): the test's own solution (tests/starters/overload.py)
    # Process as tests/starters/relay.py has it, between enter() and leave().
    def needed(self):
        # What a call must have left once it has a slot: the service and
        # half of it again, for its variation, and the machine's slack.
        return 1.5 * self.service_s + SLACK_S

    def enter(self, context):
        with self.cond:
            if self.inflight < MAX_INFLIGHT and self.waiting == 0:
                self.inflight += 1
                return
            left = time_left(context)
            wait = (self.waiting // MAX_INFLIGHT + 1) * self.service_s
            if self.waiting >= MAX_QUEUE:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, f"overloaded: {self.waiting} calls wait already")
            if left is not None and left < wait + self.needed():
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "overloaded: the wait would outlast the deadline")
            self.waiting += 1
            try:
                while self.inflight >= MAX_INFLIGHT:
                    left = time_left(context)
                    if not context.is_active() or (left is not None and left < self.needed()):
                        context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED,
                                      "overloaded: the call can no longer be served in time")
                    self.cond.wait(0.05 if left is None else min(0.05, left))
            finally:
                self.waiting -= 1
            self.inflight += 1

    def leave(self, took_s):
        with self.cond:
            self.inflight -= 1
            self.served(took_s)
            self.cond.notify()

    def Process(self, request, context):
        self.enter(context)
        start = time.monotonic()
        try:
            lock = threading.Lock()
            state = {"future": None, "cancelled": False}

            def cancel():
                with lock:
                    state["cancelled"] = True
                    if state["future"] is not None:
                        state["future"].cancel()

            if not context.add_callback(cancel):
                cancel()

            def call(method, req):
                timeout = time_left(context)
                if timeout is not None and timeout <= 0:
                    context.abort(grpc.StatusCode.DEADLINE_EXCEEDED, "no time left for the next call")
                with lock:
                    if state["cancelled"]:
                        context.abort(grpc.StatusCode.CANCELLED, "the client went away")
                    state["future"] = method.future(req, timeout=timeout)
                try:
                    return state["future"].result()
                except grpc.FutureCancelledError:
                    context.abort(grpc.StatusCode.CANCELLED, "the client went away")
                except grpc.RpcError as e:
                    context.abort(e.code(), e.details() or "")

            call(self.baseline.Lookup, pb.LookupRequest(tag=request.tag, delay_ms=request.lookup_delay_ms))
            work = call(self.baseline.Work,
                        pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms))
            return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)
        finally:
            self.leave(time.monotonic() - start)
    # <<< TODO
