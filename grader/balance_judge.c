/* balance_judge: the balance exercise's rules and verdicts; see
 * balance_judge.h. The wording is the scenarios' own: each verdict
 * function is the chain a scenario ran on what the live run measured. */
#include "balance_judge.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The bound on the fill, in lab ms. */
#define FILL_MS (GR_BAL_WORLD_FILL_MS / GR_BAL_LAB_SCALE)

bool gr_bal_stalled(int64_t lag_ms, int64_t lb_turn_ms, int short_timed_out)
{
    return lag_ms > GR_BAL_STALL_MS || lb_turn_ms > GR_BAL_STALL_MS || short_timed_out > 0;
}

void gr_bal_stall_feedback(int attempts, const int64_t *lags, int64_t lb_turn_ms, int short_timed_out, char *buf,
                           size_t len)
{
    snprintf(buf, len,
             "the machine stalled in each of %d runs (the grader's own calls up to %lld, %lld%s ms late, "
             "%d ms the limit; its balancer %lld ms in the last; or a call that answers at once ran out of "
             "its %d ms: %d in the last run): grade again on a less loaded machine",
             attempts, (long long)lags[0], (long long)lags[attempts > 1 ? 1 : 0], attempts > 2 ? ", ..." : "",
             GR_BAL_STALL_MS, (long long)lb_turn_ms, GR_BAL_SLACK_MS, short_timed_out);
}

/* The grader's lag, and the runs made when one before stalled. */
static const char *stall_note(const gr_bal_live *l, char *buf, size_t len)
{
    if (l->attempts > 1)
        snprintf(buf, len, "; judged on run %d (the machine stalled in the one before; this one lagged %lld ms)",
                 l->attempts, (long long)l->lag_ms);
    else
        snprintf(buf, len, "; the grader lagged at most %lld ms, its balancer %lld ms", (long long)l->lag_ms,
                 (long long)l->lb_turn_ms);
    return buf;
}

gr_verdict gr_bal_judge_answered(const gr_bal_live *l, char *buf, size_t len)
{
    if (l->sent > 0 && l->failed + l->raced < l->sent)
        return GR_PASS;
    if (l->sent == 0)
        snprintf(buf, len, "the clients made no call: with this config nothing could be measured%s", l->note);
    else
        snprintf(buf, len,
                 "all %d calls failed (first %s), so no connection carried a call and there is nothing to judge: "
                 "the check scenario says what gRPC refuses%s",
                 l->sent, l->first_failure[0] ? l->first_failure : "with no status", l->note);
    return GR_FAIL;
}

/* A run in which no connection was re-made exercised nothing that
 * no-failures and no-storm judge: with max_connection_age unset (or longer
 * than the run) no GOAWAY was sent, so "no call cut" and "no storm" hold of
 * any config, an empty one included. Such a run scores nothing there, and
 * says why. Returns true with the FAIL's words in |buf|. */
static bool nothing_reconnected(const gr_bal_live *l, char *buf, size_t len)
{
    if (l->reconnects > 0)
        return false;
    snprintf(buf, len,
             "nothing reconnected (%d calls on the clients' first %d connections, max_connection_age %s): nothing "
             "to judge until max_connection_age is set short enough to re-make connections%s",
             l->sent, GR_BAL_NCLIENTS, l->age, l->note);
    return true;
}

gr_verdict gr_bal_judge_fills(const gr_bal_live *l, char *buf, size_t len)
{
    int64_t fill_world = l->fill_ms * GR_BAL_LAB_SCALE;
    if (l->fill_ms >= 0 && l->fill_ms <= FILL_MS && l->share_after >= GR_BAL_FAIR_MIN) {
        snprintf(buf, len,
                 "the joining backend took its share (%.0f %% or more over 30 s) %lld s after it joined "
                 "(bound %d s), %.0f %% of the calls from then on; at the end calls/s [%d %d %d] over "
                 "connections [%d %d %d]; max_connection_age %s%s",
                 100 * GR_BAL_FAIR_MIN, (long long)(fill_world / 1000), GR_BAL_WORLD_FILL_MS / 1000,
                 100 * l->share_after, l->tail_rate[0], l->tail_rate[1], l->tail_rate[2], l->tail_conns[0],
                 l->tail_conns[1], l->tail_conns[2], l->age, l->note);
        return GR_PASS;
    }
    char why[300];
    if (l->age_ms >= INT_MAX)
        snprintf(why, sizeof why,
                 "no grpc.max_connection_age_ms on the server: the clients' connections are made "
                 "once, and an L4 balancer places connections, not calls");
    else if (l->age_ms * 11 / 10 > GR_BAL_WORLD_ADD_MS + GR_BAL_WORLD_FILL_MS)
        snprintf(why, sizeof why,
                 "max_connection_age %s (+10 %% jitter) is longer than the %d s the backend may "
                 "wait after joining %d s in: connections are re-made too late",
                 l->age, GR_BAL_WORLD_FILL_MS / 1000, GR_BAL_WORLD_ADD_MS / 1000);
    else if (l->has_lb && strcmp(l->lb, "round_robin") != 0)
        snprintf(why, sizeof why, "connections were re-made, yet the calls did not follow (client policy %s)", l->lb);
    else
        snprintf(why, sizeof why, "connections were re-made (%d reconnects) but the backend did not get its share",
                 l->reconnects);
    if (l->fill_ms < 0)
        snprintf(buf, len,
                 "the joining backend never took %.0f %% of the calls within %d s (at the end it had %.0f %%; "
                 "calls/s [%d %d %d]): %s%s",
                 100 * GR_BAL_FAIR_MIN, GR_BAL_WORLD_FILL_MS / 1000, 100 * l->share_tail, l->tail_rate[0],
                 l->tail_rate[1], l->tail_rate[2], why, l->note);
    else
        snprintf(buf, len,
                 "the joining backend took its share only %lld s after it joined (bound %d s), %.0f %% from then "
                 "on: %s%s",
                 (long long)(fill_world / 1000), GR_BAL_WORLD_FILL_MS / 1000, 100 * l->share_after, why, l->note);
    return GR_FAIL;
}

gr_verdict gr_bal_judge_no_failures(const gr_bal_live *l, char *buf, size_t len)
{
    char race[480] = "", stall[160];
    if (l->raced)
        snprintf(race, sizeof race,
                 "; %d call%s that answer%s at once met a GOAWAY on the way and failed %s, gRPC 1.51's own race "
                 "(grpc/grpc#31733; not cut by the grace: a client retry on UNAVAILABLE absorbs it)",
                 l->raced, l->raced == 1 ? "" : "s", l->raced == 1 ? "s" : "", l->first_race);
    if (l->failed == 0 && nothing_reconnected(l, buf, len))
        return GR_FAIL;
    if (l->failed == 0) {
        snprintf(buf, len,
                 "%d calls, %d of them long (%lld ms), %d reconnects: none cut; max_connection_age %s, "
                 "grace %s%s%s%s",
                 l->sent, l->long_sent, (long long)(l->longest_ms * 9 / 10), l->reconnects, l->age, l->grace, race,
                 l->note, stall_note(l, stall, sizeof stall));
        return GR_PASS;
    }
    char why[300] = "";
    if (l->failed_long && l->grace_ms < l->longest_ms)
        snprintf(why, sizeof why,
                 ": after the GOAWAY the server closes the connection %s later, but calls run up to "
                 "%lld ms: set grpc.max_connection_age_grace_ms to the longest deadline or more",
                 l->grace, (long long)l->longest_ms);
    snprintf(buf, len, "%d of %d calls failed (%d of %d long ones), first %s%s%s%s", l->failed, l->sent, l->failed_long,
             l->long_sent, l->first_failure, why, l->note, stall_note(l, stall, sizeof stall));
    return GR_FAIL;
}

double gr_bal_churn_limit(void)
{
    return 60000.0 / GR_BAL_WORLD_MIN_LIFE_MS;
}

gr_verdict gr_bal_judge_churn(const gr_bal_live *l, char *buf, size_t len)
{
    double limit = gr_bal_churn_limit();
    int calls_per = l->reconnects ? l->sent / (l->reconnects + GR_BAL_NCLIENTS) : l->sent / GR_BAL_NCLIENTS;
    if (l->per_client_min <= limit) {
        snprintf(buf, len,
                 "%.1f reconnects per client per minute (at most %.0f), about %d calls per "
                 "connection; max_connection_age %s%s",
                 l->per_client_min, limit, calls_per, l->age, l->note);
        return GR_PASS;
    }
    snprintf(buf, len,
             "reconnects dominate: %.1f per client per minute (at most %.0f: a connection should live %d s "
             "or more), %d connections for %d calls, about %d calls each; every reconnect is a TCP and TLS "
             "handshake and a call waiting for it: max_connection_age %s is too short%s",
             l->per_client_min, limit, GR_BAL_WORLD_MIN_LIFE_MS / 1000, l->reconnects + GR_BAL_NCLIENTS, l->sent,
             calls_per, l->age, l->note);
    return GR_FAIL;
}

gr_verdict gr_bal_judge_no_storm(const gr_bal_live *l, char *buf, size_t len)
{
    if (nothing_reconnected(l, buf, len))
        return GR_FAIL;
    if (l->storms < 2) {
        snprintf(buf, len,
                 "%d reconnects, at most %d within %.1f s (%d clients), %d such round%s: spread "
                 "by gRPC's +-10 %% jitter on max_connection_age %s%s",
                 l->reconnects, l->storm, GR_BAL_WORLD_STORM_MS / 1000.0, GR_BAL_NCLIENTS, l->storms,
                 l->storms == 1 ? "" : "s", l->age, l->note);
        return GR_PASS;
    }
    snprintf(buf, len,
             "GOAWAY storms: %d times every client (%d) reconnected within %.1f s, up to %d reconnects at "
             "%.1f s: gRPC's +-10 %% jitter on max_connection_age %s spreads them over too little time%s",
             l->storms, GR_BAL_NCLIENTS, GR_BAL_WORLD_STORM_MS / 1000.0, l->storm, l->storm_at_ms / 1000.0, l->age,
             l->note);
    return GR_FAIL;
}
