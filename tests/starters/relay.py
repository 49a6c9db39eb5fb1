        # >>> TODO(deadline, cancel): the test's own solution (tests/starters/relay.py)
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
            left = context.time_remaining()
            timeout = None if left > 1e12 else left
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
        work = call(self.baseline.Work, pb.WorkRequest(tag=request.tag, steps=request.steps, step_ms=request.step_ms))
        return pb.ProcessReply(tag=work.tag, steps_done=work.steps_done)
        # <<< TODO
