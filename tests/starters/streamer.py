        # >>> TODO(flow): the test's own solution (tests/starters/streamer.py)
        if request.size > 4 * 1024 * 1024 - 64 or request.count > 1_000_000:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "above the reference's limits")
        for seq in range(request.count):
            if not context.is_active():
                return
            yield pb.Chunk(seq=seq, payload=payload(seq, request.size))
        # <<< TODO
