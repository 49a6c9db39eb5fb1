/* rl_memstats: jemalloc counters, /proc RSS and the SIGUSR1 reporter; see
 * rl_memstats.h. */
#include "rl_memstats.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#ifdef RL_HAVE_JEMALLOC
#include <jemalloc/jemalloc.h>

static int64_t jemalloc_stat(const char *name)
{
    size_t value = 0, len = sizeof value;
    if (mallctl(name, &value, &len, NULL, 0) != 0)
        return -1;
    return (int64_t)value;
}
#endif

int rl_memstats_read(rl_memstats *out)
{
    out->allocated = out->resident = -1;
#ifdef RL_HAVE_JEMALLOC
    uint64_t epoch = 1;
    size_t len = sizeof epoch;
    if (mallctl("epoch", &epoch, &len, &epoch, len) == 0) {
        out->allocated = jemalloc_stat("stats.allocated");
        out->resident = jemalloc_stat("stats.resident");
    }
#endif
    out->rss = -1;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f)
        return RL_ESYS;
    long long size = 0, resident = 0;
    int n = fscanf(f, "%lld %lld", &size, &resident);
    fclose(f);
    if (n != 2)
        return RL_ESYS;
    out->rss = (int64_t)resident * sysconf(_SC_PAGESIZE);
    return RL_OK;
}

struct rl_memstats_reporter {
    pthread_t thread;
    atomic_bool stop;
    bool periodic;
    rl_memstats_extra extra;
};

static void report(const rl_memstats_reporter *r, const char *why)
{
    rl_memstats m;
    rl_memstats_read(&m);
    char extra[256] = "";
    if (r->extra)
        r->extra(extra, sizeof extra);
    RL_INFO("stats (%s)%s%s allocated=%lld resident=%lld rss=%lld", why, extra[0] ? " " : "", extra,
            (long long)m.allocated, (long long)m.resident, (long long)m.rss);
}

/* Waits for SIGUSR1 (blocked in every thread, so only this one takes it);
 * wakes every 100 ms to notice the end and to keep the periodic line on
 * time. */
static void *reporter_main(void *arg)
{
    rl_memstats_reporter *r = arg;
    /* Its own name, so counting a program's threads by its name (its main
     * thread and server loops) does not count this one. */
    pthread_setname_np(pthread_self(), "rl-memstats");
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR1);
    int64_t next = rl_now_ns() + RL_NS_PER_SEC;
    while (!atomic_load(&r->stop)) {
        struct timespec wait = {0, 100 * RL_NS_PER_MS};
        if (sigtimedwait(&set, NULL, &wait) == SIGUSR1)
            report(r, "SIGUSR1");
        if (r->periodic && rl_now_ns() >= next) {
            report(r, "periodic");
            next += RL_NS_PER_SEC;
        }
    }
    return NULL;
}

int rl_memstats_reporter_start(bool periodic, rl_memstats_extra extra, rl_memstats_reporter **out)
{
    sigset_t usr1, all, old;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, NULL);
    /* The thread starts with every signal blocked: SIGTERM and SIGINT
     * belong to whoever waits for them (rl_server_wait), and a thread that
     * did not block them could take one and die of it. */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    rl_memstats_reporter *r = rl_xcalloc(1, sizeof *r);
    r->periodic = periodic;
    r->extra = extra;
    atomic_init(&r->stop, false);
    int rc = pthread_create(&r->thread, NULL, reporter_main, r);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        free(r);
        return RL_ESYS;
    }
    *out = r;
    return RL_OK;
}

void rl_memstats_reporter_stop(rl_memstats_reporter *r)
{
    if (!r)
        return;
    atomic_store(&r->stop, true);
    pthread_join(r->thread, NULL);
    free(r);
}
