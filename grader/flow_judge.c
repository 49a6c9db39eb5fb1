/* flow_judge: the flow-control exercise's rules and verdicts; see
 * flow_judge.h. The wording is the scenarios' own: each verdict function
 * is the chain a scenario ran on what it measured. */
#include "flow_judge.h"

#include "rl_err.h"
#include "rl_flow.h"

#include <stdio.h>
#include <string.h>

void gr_flow_judge_memory(uint64_t base_rss, uint64_t peak_rss, uint64_t read, uint64_t count, int64_t watched_ms,
                          bool settled, double budget_mib, gr_flow_mem_check *out)
{
    memset(out, 0, sizeof *out);
    out->base_mib = (double)base_rss / RL_MIB;
    out->peak_mib = (double)peak_rss / RL_MIB;
    out->growth_mib = peak_rss > base_rss ? (double)(peak_rss - base_rss) / RL_MIB : 0.0;
    out->budget_mib = budget_mib;
    out->read = read;
    out->count = count;
    out->watched_ms = watched_ms;
    out->settled = settled;
    out->pass = out->growth_mib <= out->budget_mib;
}

int gr_flow_memory_feedback(const gr_flow_mem_check *c, const char *while_what, char *buf, size_t len)
{
    if (c->pass)
        return snprintf(buf, len,
                        "RSS grew %.1f MiB (%.1f -> %.1f MiB) %s, watched %.1f s%s (budget %.0f MiB): the producer "
                        "waits for the flow-control window",
                        c->growth_mib, c->base_mib, c->peak_mib, while_what, c->watched_ms / 1000.0,
                        c->settled ? " until flat" : "", c->budget_mib);
    return snprintf(buf, len,
                    "RSS grew %.1f MiB (%.1f -> %.1f MiB) %s (budget %.0f MiB): the producer does not wait for the "
                    "flow-control window -- a thread filling an unbounded queue?",
                    c->growth_mib, c->base_mib, c->peak_mib, while_what, c->budget_mib);
}

bool gr_flow_first_late_over_budget(int rc, uint64_t received, uint32_t read_first, uint64_t growth, uint64_t budget)
{
    return rc == RL_ETIMEOUT && received < read_first && growth > budget;
}

bool gr_flow_judge_cancel_cpu(int64_t cpu_ms, int64_t window_ms)
{
    return cpu_ms * GR_FLOW_CANCEL_WINDOW_MS <= GR_FLOW_CANCEL_CPU_MS * window_ms;
}

gr_flow_cancel_verdict gr_flow_judge_cancel(int64_t cpu_ms, int64_t wait_ms, int64_t window_ms)
{
    if (!gr_flow_judge_cancel_cpu(cpu_ms, window_ms))
        return GR_FLOW_WENT_ON;
    if (wait_ms < 0)
        return GR_FLOW_STOPPED;
    int64_t asked = (cpu_ms + wait_ms) * GR_FLOW_CANCEL_WINDOW_MS;
    if (asked > GR_FLOW_CANCEL_GOES_ON_MS * window_ms)
        return GR_FLOW_WENT_ON;
    return asked <= GR_FLOW_CANCEL_IDLE_MS * window_ms ? GR_FLOW_STOPPED : GR_FLOW_STARVED;
}

/* The watch's feedback is cut at this, as the scenarios always did. */
#define WATCH_FEEDBACK 400

gr_verdict gr_flow_judge_watch(const gr_flow_mem_check *c, const char *while_what, char *buf, size_t len)
{
    char fb[WATCH_FEEDBACK];
    gr_flow_memory_feedback(c, while_what, fb, sizeof fb);
    snprintf(buf, len, "%s", fb);
    return c->pass ? GR_PASS : GR_FAIL;
}

gr_verdict gr_flow_judge_failed(int rc, bool call_started, const char *what, const char *err, char *buf, size_t len)
{
    snprintf(buf, len, "%s: %s", what, err);
    switch (rc) {
    case RL_ETIMEOUT: return GR_TIMEOUT;
    case RL_EINVAL: return GR_FAIL;
    case RL_EGRPC: return call_started ? GR_FAIL : GR_ERROR;
    default: return GR_ERROR;
    }
}

gr_verdict gr_flow_judge_grew_before_first(const char *what, uint64_t growth, uint64_t base_rss, uint64_t peak_rss,
                                           uint64_t budget, char *buf, size_t len)
{
    snprintf(buf, len,
             "while %s had sent nothing yet, RSS grew %.1f MiB (%.1f -> %.1f MiB, budget %.0f MiB): "
             "the producer makes the whole response before it sends any of it -- make each chunk "
             "when the window lets the last one go",
             what, (double)growth / RL_MIB, (double)base_rss / RL_MIB, (double)peak_rss / RL_MIB,
             (double)budget / RL_MIB);
    return GR_FAIL;
}

bool gr_flow_judge_rising(const gr_flow_rising_facts *f, char *buf, size_t len)
{
    if (!f->rising)
        return false;
    if (f->starved_pct > 0 && f->wait_pct > f->starved_pct)
        snprintf(buf, len,
                 "after %.1f s the producer's processes were still waiting for a CPU %d%% of the "
                 "time (RSS %.1f MiB over the start, budget %.0f MiB): it had too little CPU to "
                 "show whether it waits for the window -- grade again on a less busy machine",
                 f->watched_ms / 1000.0, f->wait_pct, (double)f->growth / RL_MIB, (double)f->budget / RL_MIB);
    else
        snprintf(buf, len,
                 "after %.1f s the producer's RSS was still rising (%.1f MiB in the last second, %.1f "
                 "MiB in the last %.0f s, %.1f MiB in all, budget %.0f MiB): it had too little CPU to "
                 "show whether it waits for the window -- grade again on a less busy machine",
                 f->watched_ms / 1000.0, (double)f->rise_1s / RL_MIB, (double)f->rise_trend / RL_MIB,
                 f->trend_ms / 1000.0, (double)f->growth / RL_MIB, (double)f->budget / RL_MIB);
    return true;
}

gr_verdict gr_flow_judge_before_cancel(const gr_flow_mem_check *c, uint64_t read, char *buf, size_t len)
{
    if (c->pass)
        return GR_PASS;
    snprintf(buf, len,
             "before the cancel, with the reader stalled after %llu chunk(s), RSS grew %.1f MiB (%.1f -> "
             "%.1f MiB, budget %.0f MiB): the producer made chunks nobody had asked for, so there was "
             "nothing left for the cancel to stop -- make each chunk when the window lets the last one "
             "go (see `stall`), and stop when the call ends",
             (unsigned long long)read, c->growth_mib, c->base_mib, c->peak_mib, c->budget_mib);
    return GR_FAIL;
}

gr_verdict gr_flow_judge_cpu_after_cancel(int64_t cpu_ms, int64_t wait_ms, int64_t window_ms, int settle_ms, char *buf,
                                          size_t len)
{
    gr_flow_cancel_verdict cv = gr_flow_judge_cancel(cpu_ms, wait_ms, window_ms);
    if (cv == GR_FLOW_STARVED) {
        snprintf(buf, len,
                 "in the %lld ms starting %d ms after the cancel the submission used %lld ms of CPU but "
                 "waited %lld ms for one (a stopped producer asks for at most %d per %d ms, one that goes on "
                 "for %d or more): the machine gave it too little to show whether it stopped -- grade again on a "
                 "less busy machine",
                 (long long)window_ms, settle_ms, (long long)cpu_ms, (long long)wait_ms, GR_FLOW_CANCEL_IDLE_MS,
                 GR_FLOW_CANCEL_WINDOW_MS, GR_FLOW_CANCEL_GOES_ON_MS);
        return GR_ERROR;
    }
    if (cv == GR_FLOW_WENT_ON && gr_flow_judge_cancel_cpu(cpu_ms, window_ms)) {
        snprintf(buf, len,
                 "in the %lld ms starting %d ms after the cancel the submission used %lld ms of CPU and "
                 "waited %lld ms more for one (it asked for %lld ms; allowed %d per %d ms): the producer "
                 "goes on after the client cancelled -- a thread or a write loop that never checks whether "
                 "the call ended?",
                 (long long)window_ms, settle_ms, (long long)cpu_ms, (long long)wait_ms, (long long)cpu_ms + wait_ms,
                 GR_FLOW_CANCEL_GOES_ON_MS, GR_FLOW_CANCEL_WINDOW_MS);
        return GR_FAIL;
    }
    if (cv == GR_FLOW_WENT_ON) {
        snprintf(buf, len,
                 "the submission used %lld ms of CPU in the %lld ms starting %d ms after the cancel (allowed "
                 "%d per %d ms): the producer goes on after the client cancelled -- a thread or a write "
                 "loop that never checks whether the call ended?",
                 (long long)cpu_ms, (long long)window_ms, settle_ms, GR_FLOW_CANCEL_CPU_MS, GR_FLOW_CANCEL_WINDOW_MS);
        return GR_FAIL;
    }
    return GR_PASS;
}

gr_verdict gr_flow_judge_after_cancel_memory(const gr_flow_mem_check *c, char *buf, size_t len)
{
    if (c->pass)
        return GR_PASS;
    snprintf(buf, len,
             "after the cancel RSS went on growing to %.1f MiB (%.1f MiB over the start, budget %.0f "
             "MiB): the producer goes on after the client cancelled",
             c->peak_mib, c->growth_mib, c->budget_mib);
    return GR_FAIL;
}

gr_verdict gr_flow_judge_cancel_pass(uint64_t read, double growth_mib, int64_t cpu_ms, int64_t window_ms, char *buf,
                                     size_t len)
{
    snprintf(buf, len,
             "stalled after %llu chunk(s), RSS grew %.1f MiB; after the cancel the submission used %lld ms of "
             "CPU in %lld ms, and a new Produce(5 x 1000) succeeded",
             (unsigned long long)read, growth_mib, (long long)cpu_ms, (long long)window_ms);
    return GR_PASS;
}

gr_verdict gr_flow_judge_resume(int64_t stall_ms, uint32_t count, uint64_t bytes, int64_t rest_ms, char *buf,
                                size_t len)
{
    snprintf(buf, len,
             "after a %.1f s stall all %u chunks (%.1f MiB) arrived in order with every byte right, the rest "
             "in %lld ms",
             stall_ms / 1000.0, count, (double)bytes / RL_MIB, (long long)rest_ms);
    return GR_PASS;
}
