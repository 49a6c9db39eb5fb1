/* >>> TODO(coverage): the test's own solution (tests/starters/coverage.c) */
static int by_last_used(const void *a, const void *b)
{
    double x = (*(stream *const *)a)->last_used_ms, y = (*(stream *const *)b)->last_used_ms;
    return (x > y) - (x < y);
}

static void tick(double now)
{
    for (int i = 0; i < nservers; i++)
        servers[i].is_short = servers[i].nstreams < busy_of(&servers[i]) + RESERVE;
    int want = 0;
    for (int i = 0; i < nservers; i++) {
        server *sv = &servers[i];
        int busy = busy_of(sv), idle = sv->nstreams - busy;
        /* Its idle streams, longest unused first. */
        stream **idles = malloc(((size_t)idle + 1) * sizeof *idles);
        int k = 0;
        for (int j = 0; j < sv->nstreams; j++)
            if (!sv->streams[j]->busy)
                idles[k++] = sv->streams[j];
        qsort(idles, (size_t)idle, sizeof *idles, by_last_used);
        if (sv->evacuated_until > now) {
            for (int j = 0; j < idle; j++)
                stream_close(idles[j]); /* recycle: the new ones land elsewhere */
            want += idle;
            free(idles);
            continue;
        }
        if (!sv->is_short) {
            sv->grow_last = 0;
            sv->short_idle_since = -1;
        } else if (busy > 0) {
            sv->short_idle_since = -1;
            int idle_elsewhere = 0;
            for (int j = 0; j < nservers; j++)
                if (j != i && servers[j].evacuated_until <= now)
                    idle_elsewhere += servers[j].nstreams - busy_of(&servers[j]);
            int n = GROW_MIN;
            if (busy > n)
                n = busy;
            if (busy + RESERVE - sv->nstreams > n)
                n = busy + RESERVE - sv->nstreams;
            if (2 * sv->grow_last > n)
                n = 2 * sv->grow_last;
            if (idle_elsewhere >= PAUSE_FACTOR * busy)
                n = 0;
            if (n > CAP_PER_SERVER - sv->nstreams)
                n = CAP_PER_SERVER - sv->nstreams;
            if (n < 0)
                n = 0;
            sv->grow_last = n;
            want += n;
        } else {
            sv->grow_last = 0;
            if (sv->short_idle_since < 0)
                sv->short_idle_since = now;
            bool others_covered = false;
            for (int j = 0; j < nservers; j++)
                others_covered |= j != i && !servers[j].is_short && servers[j].evacuated_until <= now;
            if (now - sv->short_idle_since >= OVERDUE_MS && now - last_evacuation >= EVACUATE_EVERY_MS &&
                others_covered) {
                last_evacuation = now;
                sv->evacuated_until = now + EVACUATED_MS;
                sv->short_idle_since = -1;
                for (int j = 0; j < idle; j++)
                    stream_close(idles[j]);
                want += idle;
                free(idles);
                continue;
            }
            int fill = RESERVE - sv->nstreams;
            want += fill < FILL_PER_TICK ? fill : FILL_PER_TICK;
        }
        int left = sv->nstreams;
        for (int j = 0; j < idle && left > busy + RESERVE; j++)
            if (now - idles[j]->opened_ms >= PRUNE_AGE_MS && now - idles[j]->last_used_ms >= PRUNE_UNUSED_MS) {
                stream_close(idles[j]);
                left--;
            }
        free(idles);
    }
    if (want > pending)
        open_streams(want - pending);
}
/* <<< TODO */
