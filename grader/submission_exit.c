/* submission_exit: the end a scenario asks of the submission: the signal
 * it sends (gr_signal_submission) and the wait for the exit that follows
 * (gr_await_submission_exit), which judges a busy machine fairly: a
 * process still running at the deadline that had been waiting for a CPU
 * since the signal gets that wait again before it is killed. Also the
 * chain's CPU wait that judges of late events read (gr_chain_wait_ns).
 * Declared in run.h (the scenarios' API); the instances are the driver's
 * (submission.c). */
#include "run.h"
#include "submission.h"

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc_sample.h"
#include "sandbox.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

int gr_signal_submission_at(gr_ctx *ctx, int i, int sig)
{
    gr_instance *s = gr_started_instance(ctx, i);
    if (!s || sig <= 0 || sig >= NSIG)
        return RL_EINVAL;
    if (!rl_proc_alive(&s->proc))
        return RL_ECHILD;
    s->signalled = true;
    s->signal_ns = rl_now_ns();
    if (s->tallied)
        rl_wait_tally_fini(&s->signal_wait);
    s->tallied = rl_wait_tally_start(&s->signal_wait, s->proc.pid) == RL_OK;
    /* Unsandboxed, the leader is the program (the shell exec'd it; see
     * start_once) and our unreaped child, so its pid cannot be reused. */
    if (!s->sandboxed)
        return kill(s->proc.pid, sig) == 0 ? RL_OK : RL_ESYS;
    int rc = gr_sandbox_signal_command(s->proc.pid, sig);
    /* Gone between the look and the signal: it exited on its own, and the
     * wait will say how. */
    return rc == RL_ENOTFOUND && !rl_proc_alive(&s->proc) ? RL_ECHILD : rc;
}

int gr_signal_submission(gr_ctx *ctx, int sig)
{
    return gr_signal_submission_at(ctx, 0, sig);
}

int gr_await_submission_exit_at(gr_ctx *ctx, int i, int64_t within_ms, bool kill_at_deadline, gr_exit *out)
{
    memset(out, 0, sizeof *out);
    out->status = -1;
    gr_instance *s = gr_started_instance(ctx, i);
    if (!s)
        return RL_EINVAL;
    int64_t from = s->signalled ? s->signal_ns : rl_now_ns();
    int64_t until = from + within_ms * RL_NS_PER_MS;
    bool extended = false;
    /* In slices, to notice an interruption (the watchdog's kill ends the
     * wait at once anyway) and to read the CPU wait of threads before they
     * end: an exiting process ends its threads one by one, and what each
     * waited leaves with it (rl_wait_tally.h). */
    int64_t waited = 0;
    for (;;) {
        int64_t left_ms = (until - rl_now_ns()) / RL_NS_PER_MS;
        if (gr_interrupted(ctx) || (left_ms > 0 && rl_proc_wait_exit(&s->proc, left_ms < 50 ? left_ms : 50)))
            break;
        bool read = s->tallied && rl_wait_tally_read(&s->signal_wait, &waited) == RL_OK;
        if (left_ms > 0)
            continue;
        /* Past the deadline: the time it spent runnable but waiting for a
         * CPU since the signal was time it could not use to exit, so it is
         * granted once more (GR_EXIT_STARVED_MAX_MS at most). A process
         * blocked in a stuck call waits for no CPU and gets nothing; one
         * spinning on a busy machine is only killed later. Seen: a Go
         * relay that ends its call at the grace and exits at once was still
         * running 1.8 s past the grace, with a hog on each core and three
         * test groups beside six graders (load 25-30); and the C relay,
         * whose loop threads had ended with most of the wait. */
        if (extended || !read || waited < GR_EXIT_STARVED_MIN_MS * RL_NS_PER_MS)
            break;
        int64_t more = waited;
        if (more > GR_EXIT_STARVED_MAX_MS * RL_NS_PER_MS)
            more = GR_EXIT_STARVED_MAX_MS * RL_NS_PER_MS;
        until = rl_now_ns() + more;
        extended = true;
    }
    out->exited = !rl_proc_alive(&s->proc);
    if (!out->exited && kill_at_deadline && !gr_interrupted(ctx)) {
        /* The group and the leader, as rl_proc_stop does, without reaping:
         * the leader keeps its pid (and the watchdog its slot) until the
         * teardown. The sandbox's init dies with unshare's SIGKILL and takes
         * the namespace along. */
        kill(-s->proc.pid, SIGKILL);
        kill(s->proc.pid, SIGKILL);
        out->killed = rl_proc_wait_exit(&s->proc, 5000);
    }
    int64_t end = out->exited ? s->proc.exit_ns : rl_now_ns();
    out->ms = (end - from) / RL_NS_PER_MS;
    if (out->exited || out->killed) {
        out->signal = rl_proc_death_signal(&s->proc);
        out->status = out->signal ? -1 : s->proc.exit_code;
        gr_submission_describe(ctx, s, out->how, sizeof out->how);
        /* The last bytes it wrote may still be in the pipe: let the reader
         * reach the end (no line holds "\n", so this waits for the end of
         * the output, or shortly after the exit when an orphan holds it). */
        char none[2];
        rl_proc_wait_line(&s->proc, "\n", 500, none, sizeof none);
    } else {
        snprintf(out->how, sizeof out->how, "still running");
    }
    char tail[sizeof out->output + 64];
    rl_proc_output_tail(&s->proc, tail, sizeof tail);
    gr_last_lines(tail, out->output, sizeof out->output, sizeof out->output - 8);
    return out->exited ? RL_OK : RL_ETIMEOUT;
}

int gr_await_submission_exit(gr_ctx *ctx, int64_t within_ms, bool kill_at_deadline, gr_exit *out)
{
    return gr_await_submission_exit_at(ctx, 0, within_ms, kill_at_deadline, out);
}

int64_t gr_waited_ms(int64_t a, int64_t b)
{
    if (a < 0 || b < 0)
        return -1;
    return b > a ? (b - a) / RL_NS_PER_MS : 0;
}

int64_t gr_chain_wait_ns(gr_ctx *ctx)
{
    int64_t run, wait, total = 0;
    pid_t groups[] = {gr_submission_pgid(ctx), gr_baseline_pid(ctx, 0)};
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        if (groups[i] <= 0 || rl_proc_group_sched(groups[i], &run, &wait) != RL_OK)
            return -1;
        total += wait;
    }
    return total;
}
