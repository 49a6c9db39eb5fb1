/* watchdog: the scenario timer that kills published process groups; see
 * watchdog.h. Publication and the kill share one mutex, which is what makes
 * "release, then reap" safe: the old code read a pid that the driver was
 * zeroing at the same time, and kill(-0) is the caller's own group. */
#include "watchdog.h"

#include "rl_deadline.h"
#include "rl_err.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void gr_watchdog_init(gr_watchdog *w)
{
    memset(w, 0, sizeof *w);
    pthread_mutex_init(&w->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->cond, &ca);
    pthread_condattr_destroy(&ca);
    atomic_init(&w->fired, false);
}

bool gr_watchdog_killable(pid_t pgid)
{
    return pgid > 1 && pgid != getpid() && pgid != getpgrp();
}

int gr_watchdog_guard(gr_watchdog *w, int slot, pid_t pgid)
{
    if (slot < 0 || slot >= GR_WATCHDOG_NSLOTS)
        return RL_EINVAL;
    bool ok = gr_watchdog_killable(pgid);
    pthread_mutex_lock(&w->mu);
    w->groups[slot] = ok ? pgid : 0;
    pthread_mutex_unlock(&w->mu);
    return ok ? RL_OK : RL_EINVAL;
}

void gr_watchdog_release(gr_watchdog *w, int slot)
{
    if (slot < 0 || slot >= GR_WATCHDOG_NSLOTS)
        return;
    pthread_mutex_lock(&w->mu);
    w->groups[slot] = 0;
    pthread_mutex_unlock(&w->mu);
}

static void *watchdog_main(void *arg)
{
    gr_watchdog *w = arg;
    struct timespec ts = {.tv_sec = w->until_ns / RL_NS_PER_SEC, .tv_nsec = (long)(w->until_ns % RL_NS_PER_SEC)};
    pthread_mutex_lock(&w->mu);
    int rc = 0;
    while (!w->stop && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&w->cond, &w->mu, &ts);
    if (!w->stop) {
        /* Under the mutex: a group released before this point is not in a
         * slot, and a release waits until these kills are done. */
        atomic_store(&w->fired, true);
        for (int i = 0; i < GR_WATCHDOG_NSLOTS; i++)
            if (gr_watchdog_killable(w->groups[i]))
                kill(-w->groups[i], SIGKILL);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

int gr_watchdog_arm(gr_watchdog *w, int64_t ms)
{
    pthread_mutex_lock(&w->mu);
    if (w->armed) {
        pthread_mutex_unlock(&w->mu);
        return RL_EINVAL;
    }
    w->stop = false;
    w->until_ns = rl_now_ns() + ms * RL_NS_PER_MS;
    int rc = pthread_create(&w->thread, NULL, watchdog_main, w);
    w->armed = rc == 0;
    pthread_mutex_unlock(&w->mu);
    return rc == 0 ? RL_OK : RL_ESYS;
}

void gr_watchdog_disarm(gr_watchdog *w)
{
    pthread_mutex_lock(&w->mu);
    bool armed = w->armed;
    w->stop = true;
    pthread_cond_signal(&w->cond);
    w->armed = false;
    pthread_mutex_unlock(&w->mu);
    if (armed)
        pthread_join(w->thread, NULL);
}

bool gr_watchdog_fired(gr_watchdog *w)
{
    return atomic_load(&w->fired);
}

void gr_watchdog_fini(gr_watchdog *w)
{
    gr_watchdog_disarm(w);
    pthread_cond_destroy(&w->cond);
    pthread_mutex_destroy(&w->mu);
}
