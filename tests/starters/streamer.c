/* >>> TODO(flow): the test's own solution (tests/starters/streamer.c) */
static void produce(scall *sc)
{
    if (sc->request->size > 4 * 1024 * 1024 - 64 || sc->request->count > 1000000) {
        finish(sc, GRPC_STATUS_INVALID_ARGUMENT, "above the reference's limits");
        return;
    }
    sc->next_seq = 0;
    chunk_sent(sc, true);
}

/* Also starts the first chunk (from produce()): each next chunk is made only
 * once the one before has gone. */
static void chunk_sent(scall *sc, bool ok)
{
    if (!ok || sc->cancelled) {
        finish(sc, GRPC_STATUS_CANCELLED, "the client went away");
        return;
    }
    if (sc->next_seq < sc->request->count)
        send_chunk(sc, sc->next_seq++, sc->request->size);
    else
        finish(sc, GRPC_STATUS_OK, "");
}
/* <<< TODO */
