/* leak: judges what a batch of cancelled calls left behind; see leak.h. */
#include "leak.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "run.h"
#include "scenario.h"

#include <stdio.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static int count_tolerance(int calls)
{
    int t = calls / GR_LEAK_COUNT_DIVISOR;
    return t > 1 ? t : 1;
}

/* Whether |now|'s RSS is more than GR_LEAK_RSS_MIB over |before|'s. */
static bool rss_over(const rl_proc_sample *before, const rl_proc_sample *now)
{
    return now->rss_bytes > before->rss_bytes && (double)(now->rss_bytes - before->rss_bytes) / MIB > GR_LEAK_RSS_MIB;
}

uint64_t gr_leak_high_steps(uint64_t before, const uint64_t *rss, int n)
{
    uint64_t top[GR_LEAK_HIGH_STEPS] = {0};
    uint64_t high = before;
    for (int i = 0; i < n; i++) {
        if (rss[i] <= high)
            continue;
        uint64_t step = rss[i] - high;
        high = rss[i];
        /* keep the largest steps, in falling order */
        for (int k = 0; k < GR_LEAK_HIGH_STEPS; k++) {
            if (step > top[k]) {
                uint64_t t = top[k];
                top[k] = step;
                step = t;
            }
        }
    }
    uint64_t sum = 0;
    for (int k = 0; k < GR_LEAK_HIGH_STEPS; k++)
        sum += top[k];
    return sum;
}

void gr_leak_judge(const rl_proc_sample *before, const rl_proc_sample *after, int calls, uint64_t high_steps,
                   gr_leak_check *out)
{
    memset(out, 0, sizeof *out);
    out->calls = calls;
    out->threads_before = before->nthreads;
    out->threads_after = after->nthreads;
    out->fds_before = before->nfds;
    out->fds_after = after->nfds;
    out->rss_before = before->rss_bytes;
    out->rss_after = after->rss_bytes;
    int tol = count_tolerance(calls);
    out->threads_grew = after->nthreads - before->nthreads > tol;
    out->fds_grew = before->nfds >= 0 && after->nfds >= 0 && after->nfds - before->nfds > tol;
    out->rss_high_steps = high_steps;
    out->rss_grew = rss_over(before, after);
    if (out->rss_grew && calls > GR_LEAK_HIGH_STEPS) {
        double grew = (double)(after->rss_bytes - before->rss_bytes) / MIB;
        double elsewhere = grew - (double)high_steps / MIB;
        if (elsewhere <= GR_LEAK_RSS_MIB * (double)(calls - GR_LEAK_HIGH_STEPS) / calls) {
            out->rss_grew = false;
            out->rss_kept_by_highs = true;
        }
    }
    out->pass = !out->threads_grew && !out->fds_grew && !out->rss_grew;
}

/* Appends |part| to |buf| at |*off|, after ", " unless it is the first. */
static void append(char *buf, size_t len, size_t *off, bool *first, const char *part)
{
    if (*off < len) {
        int n = snprintf(buf + *off, len - *off, "%s%s", *first ? "" : ", ", part);
        *off += n > 0 ? (size_t)n : 0;
    }
    *first = false;
}

int gr_leak_feedback(const gr_leak_check *c, const char *calls_what, char *buf, size_t len)
{
    double rss_mib = ((double)c->rss_after - (double)c->rss_before) / MIB;
    double per = c->calls ? 1.0 / c->calls : 0.0;
    if (c->pass)
        return snprintf(buf, len,
                        "after %d %s the submission came back to %d threads (%+d), %d open files (%+d) and "
                        "%.1f MiB RSS (%+.1f%s): nothing was left behind per call",
                        c->calls, calls_what, c->threads_after, c->threads_after - c->threads_before, c->fds_after,
                        c->fds_after - c->fds_before, (double)c->rss_after / MIB, rss_mib,
                        c->rss_kept_by_highs ? ", grown at the few calls that set a new high: what the allocator "
                                               "keeps of the biggest flood before a cancel landed, not a leak per call"
                                             : "");
    size_t off = 0;
    bool first = true;
    int n = snprintf(buf, len, "after %d %s the submission kept ", c->calls, calls_what);
    off = n > 0 ? (size_t)n : 0;
    char part[128];
    if (c->threads_grew) {
        int d = c->threads_after - c->threads_before;
        snprintf(part, sizeof part, "%d more threads (%.2f per call, %d in all)", d, d * per, c->threads_after);
        append(buf, len, &off, &first, part);
    }
    if (c->fds_grew) {
        int d = c->fds_after - c->fds_before;
        snprintf(part, sizeof part, "%d more open files (%.2f per call, %d in all)", d, d * per, c->fds_after);
        append(buf, len, &off, &first, part);
    }
    if (c->rss_grew) {
        snprintf(part, sizeof part, "%.1f MiB more RSS (%.2f MiB per call, %.1f MiB in all)", rss_mib, rss_mib * per,
                 (double)c->rss_after / MIB);
        append(buf, len, &off, &first, part);
    }
    if (off < len)
        snprintf(buf + off, len - off,
                 ": something started per call (a thread, a file, a queue) is never told that a cancelled call "
                 "ended -- release it when the call ends, whichever way it ends");
    return (int)strlen(buf);
}

/* The leak picture of a count (threads or descriptors) that grew. */
static void count_figure(gr_figure *f, const char *title, const gr_leak_trace *tr, const gr_leak_check *lc,
                         bool threads)
{
    double x[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS], y[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS];
    const char *what = threads ? "threads" : "open files";
    for (int i = 0; i < tr->n; i++) {
        x[i] = i + 1;
        y[i] = threads ? tr->threads[i] : tr->fds[i];
    }
    char ylabel[GR_FIG_LABEL];
    snprintf(ylabel, sizeof ylabel, "%s of the submission's processes", what);
    gr_fig_plot(f, title, "calls made (the first ones warm up)", ylabel);
    gr_fig_series_add(f, threads ? "threads after the call" : "open files after the call", x, y, (size_t)tr->n);
    if (tr->n > GR_LEAK_WARMUP_CALLS)
        gr_fig_event(f, GR_LEAK_WARMUP_CALLS + 0.5, "judged batch of %d calls starts", GR_LEAK_CALLS);
    int before = threads ? lc->threads_before : lc->fds_before, after = threads ? lc->threads_after : lc->fds_after;
    int tol = count_tolerance(lc->calls);
    gr_fig_ref(f, before + tol, "bound: %d before the batch + %d (a third of the calls)", before, tol);
    gr_fig_ref(f, after, "after the settle: %d", after);
    gr_fig_caption(f, "%s grew with the calls (%d -> %d), past the bound: each cancelled call leaves %s behind",
                   threads ? "Threads" : "Open files", before, after, threads ? "a thread" : "a file");
}

void gr_leak_figure(gr_figure *f, const char *calls_what, const gr_leak_trace *tr, const gr_leak_check *lc)
{
    char title[GR_FIG_LABEL];
    snprintf(title, sizeof title, "What the submission held after each of the %s", calls_what);
    int n = tr->n < 0 ? 0 : tr->n > GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS ? GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS : tr->n;
    if (lc && !lc->pass && !lc->rss_grew) {
        gr_leak_trace t = *tr;
        t.n = n;
        count_figure(f, title, &t, lc, lc->threads_grew);
        return;
    }
    double x[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS], y[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS];
    for (int i = 0; i < n; i++) {
        x[i] = i + 1;
        y[i] = (double)tr->rss[i] / MIB;
    }
    gr_fig_plot(f, title, "calls made (the first ones warm up)", "RSS of the submission's processes (MiB)");
    gr_fig_series_add(f, "RSS after the call", x, y, (size_t)n);
    if (n > GR_LEAK_WARMUP_CALLS)
        gr_fig_event(f, GR_LEAK_WARMUP_CALLS + 0.5, "judged batch of %d calls starts", GR_LEAK_CALLS);
    double bound = (double)tr->before / MIB + GR_LEAK_RSS_MIB;
    if (tr->before)
        gr_fig_ref(f, bound, "bound: %d MiB over the most before the batch (%.0f MiB)", GR_LEAK_RSS_MIB, bound);
    if (!lc) {
        gr_fig_ref(f, (double)tr->start / MIB + GR_LEAK_GIVE_UP_MIB, "gives up: %d MiB over the start",
                   GR_LEAK_GIVE_UP_MIB);
        gr_fig_caption(f,
                       "RSS ran away past %d MiB over the start in %d calls: cancelled calls go on making what "
                       "nobody reads",
                       GR_LEAK_GIVE_UP_MIB, n);
        return;
    }
    gr_fig_ref(f, (double)lc->rss_after / MIB, "after the settle: %.1f MiB", (double)lc->rss_after / MIB);
    if (lc->pass)
        /* Say how much it grew: a climb under the bound is drawn as one. */
        gr_fig_caption(f,
                       "RSS %+.1f MiB over the batch, under the %d MiB bound; threads %d -> %d: nothing kept per call",
                       ((double)lc->rss_after - (double)lc->rss_before) / MIB, GR_LEAK_RSS_MIB, lc->threads_before,
                       lc->threads_after);
    else
        gr_fig_caption(f,
                       "RSS grew %.1f MiB over the batch, past the bound: each cancelled call leaves memory "
                       "behind",
                       ((double)lc->rss_after - (double)lc->rss_before) / MIB);
}

static bool settled(const rl_proc_sample *before, const rl_proc_sample *now, int calls)
{
    int tol = count_tolerance(calls);
    if (now->nthreads - before->nthreads > tol)
        return false;
    return before->nfds < 0 || now->nfds < 0 || now->nfds - before->nfds <= tol;
}

bool gr_leak_runaway(const rl_proc_sample *start, const rl_proc_sample *now)
{
    return now->rss_bytes > start->rss_bytes && (double)(now->rss_bytes - start->rss_bytes) / MIB > GR_LEAK_GIVE_UP_MIB;
}

int gr_leak_runaway_feedback(const rl_proc_sample *start, const rl_proc_sample *now, int calls, const char *calls_what,
                             char *buf, size_t len)
{
    return snprintf(buf, len,
                    "while %d %s ran, RSS grew %.1f MiB (%.1f -> %.1f MiB) and was still growing: each cancelled "
                    "call goes on making what nobody will read -- stop the work when the call ends",
                    calls, calls_what, ((double)now->rss_bytes - (double)start->rss_bytes) / MIB,
                    (double)start->rss_bytes / MIB, (double)now->rss_bytes / MIB);
}

int gr_leak_settle(pid_t pgid, const rl_proc_sample *start, const rl_proc_sample *before, int calls, int64_t until_ns,
                   rl_proc_sample *after)
{
    int64_t falling_until = until_ns + GR_LEAK_FALLING_MS * RL_NS_PER_MS;
    uint64_t low = UINT64_MAX;
    int64_t low_ns = rl_now_ns();
    for (;;) {
        int rc = rl_proc_group_sample(pgid, after);
        if (rc != RL_OK)
            return rc;
        int64_t now = rl_now_ns();
        if (after->rss_bytes + GR_LEAK_FALL_STEP < low) {
            low = after->rss_bytes;
            low_ns = now;
        }
        /* Over the bound but still giving memory back: a starved runtime
         * freeing what its cancelled calls held, not yet a leak. */
        bool falling = rss_over(before, after) && now - low_ns < RL_NS_PER_SEC;
        if (gr_leak_runaway(start, after) || now >= falling_until)
            return RL_OK;
        if (!falling && (settled(before, after, calls) || now >= until_ns))
            return RL_OK;
        rl_sleep_ms(50, NULL);
    }
}

/* Samples every 100 ms until two samples in a row agree on threads and
 * descriptors (what the warm-up's calls held is released), or |until_ns|. */
static int steady(pid_t pgid, int64_t until_ns, rl_proc_sample *out)
{
    int rc = rl_proc_group_sample(pgid, out);
    while (rc == RL_OK && rl_now_ns() < until_ns) {
        rl_sleep_ms(100, NULL);
        rl_proc_sample again;
        if ((rc = rl_proc_group_sample(pgid, &again)) != RL_OK)
            break;
        bool same = again.nthreads == out->nthreads && again.nfds == out->nfds;
        *out = again;
        if (same)
            break;
    }
    return rc;
}

/* The group could not be sampled: CRASH when the submission died (a group
 * gone from /proc is a sign of death), else ERROR. Returns
 * GR_DECIDED. */
static int gone(gr_ctx *ctx, gr_scenario_result *out)
{
    if (gr_scenario_crash_check(ctx, true, "during the cancelled calls", out))
        return GR_DECIDED;
    return gr_result(out, GR_ERROR, "cannot read the submission's processes from /proc");
}

/* The picture of a batch that a call stopped (it failed, or the submission
 * died at it): RSS after each call made before call |at|, the start's when
 * none was. Not drawn over a picture the call's verdict drew. */
static void stopped_figure(gr_figure *f, const char *calls_what, const gr_leak_trace *tr, int at)
{
    if (f->kind != GR_FIG_NONE)
        return;
    double x[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS + 1], y[GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS + 1];
    int n = 0;
    x[n] = 0;
    y[n++] = (double)tr->start / MIB;
    for (int i = 0; i < tr->n && i < GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS; i++) {
        x[n] = i + 1;
        y[n++] = (double)tr->rss[i] / MIB;
    }
    char title[GR_FIG_LABEL];
    snprintf(title, sizeof title, "What the submission held after each of the %s", calls_what);
    gr_fig_plot(f, title, "calls made (0: before the first)", "RSS of the submission's processes (MiB)");
    gr_fig_series_add(f, "RSS after the call", x, y, (size_t)n);
    gr_fig_event(f, at + 1, "call %d: stopped here", at + 1);
    gr_fig_caption(f, "The batch stopped at call %d of %d: that call's verdict is the scenario's (see the feedback)",
                   at + 1, GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS);
}

/* Runs calls |from| to |to| (exclusive), checking after each that the group
 * has not run away from |start|, raising *peak_rss (NULL: not kept) to the
 * largest RSS seen after a call and keeping each call's in |tr| (indexed
 * by the call's number). A runaway is drawn (gr_leak_figure) as it is
 * judged. Returns 0, or GR_DECIDED. */
static int run_calls(gr_ctx *ctx, gr_leak_call_fn call, int from, int to, const rl_proc_sample *start,
                     const char *calls_what, uint64_t *peak_rss, gr_leak_trace *tr, gr_scenario_result *out)
{
    for (int i = from; i < to; i++) {
        if (call(ctx, i, start, out)) {
            stopped_figure(&out->figure, calls_what, tr, i);
            return GR_DECIDED;
        }
        rl_proc_sample now;
        if (rl_proc_group_sample(gr_submission_pgid(ctx), &now) != RL_OK)
            return gone(ctx, out);
        if (peak_rss && now.rss_bytes > *peak_rss)
            *peak_rss = now.rss_bytes;
        tr->rss[i] = now.rss_bytes;
        tr->threads[i] = now.nthreads;
        tr->fds[i] = now.nfds;
        tr->n = i + 1;
        if (gr_leak_runaway(start, &now)) {
            char fb[400];
            gr_leak_figure(&out->figure, calls_what, tr, NULL);
            gr_leak_runaway_feedback(start, &now, i + 1, calls_what, fb, sizeof fb);
            return gr_result(out, GR_FAIL, "%s", fb);
        }
    }
    return 0;
}

/* The whole no-leak scenario; always decides, so it returns
 * GR_DECIDED. */
static int judge_batch(gr_ctx *ctx, gr_leak_call_fn call, const char *calls_what, gr_scenario_result *out)
{
    pid_t pgid = gr_submission_pgid(ctx);
    const int total = GR_LEAK_WARMUP_CALLS + GR_LEAK_CALLS;
    rl_proc_sample start, before, after;
    char fb[480];
    if (rl_proc_group_sample(pgid, &start) != RL_OK)
        return gone(ctx, out);
    gr_leak_trace tr;
    memset(&tr, 0, sizeof tr);
    tr.start = start.rss_bytes;
    uint64_t warm_peak = start.rss_bytes;
    if (run_calls(ctx, call, 0, GR_LEAK_WARMUP_CALLS, &start, calls_what, &warm_peak, &tr, out))
        return GR_DECIDED;
    if (steady(pgid, rl_now_ns() + GR_LEAK_SETTLE_MS * RL_NS_PER_MS, &before) != RL_OK)
        return gone(ctx, out);
    /* What the allocator keeps of a call of this kind shows between the
     * warm-up's calls: memory is judged from the most it held then. */
    if (warm_peak > before.rss_bytes)
        before.rss_bytes = warm_peak;
    tr.before = before.rss_bytes;
    if (run_calls(ctx, call, GR_LEAK_WARMUP_CALLS, total, &start, calls_what, NULL, &tr, out))
        return GR_DECIDED;
    if (gr_leak_settle(pgid, &start, &before, GR_LEAK_CALLS, rl_now_ns() + GR_LEAK_SETTLE_MS * RL_NS_PER_MS, &after) !=
        RL_OK)
        return gone(ctx, out);
    if (gr_leak_runaway(&start, &after)) {
        gr_leak_figure(&out->figure, calls_what, &tr, NULL);
        gr_leak_runaway_feedback(&start, &after, total, calls_what, fb, sizeof fb);
        return gr_result(out, GR_FAIL, "%s", fb);
    }
    gr_leak_check lc;
    uint64_t highs = gr_leak_high_steps(before.rss_bytes, tr.rss + GR_LEAK_WARMUP_CALLS, GR_LEAK_CALLS);
    gr_leak_judge(&before, &after, GR_LEAK_CALLS, highs, &lc);
    gr_leak_figure(&out->figure, calls_what, &tr, &lc);
    gr_leak_feedback(&lc, calls_what, fb, sizeof fb);
    return gr_result(out, lc.pass ? GR_PASS : GR_FAIL, "%s", fb);
}

int gr_leak_scenario(gr_ctx *ctx, gr_leak_call_fn call, const char *calls_what, gr_scenario_result *out)
{
    judge_batch(ctx, call, calls_what, out);
    return 0;
}
