/* run: the grader's driver: for each scenario run fresh baselines
 * (baselines.c), the exercise's world and a fresh submission
 * (submission.c), the scenario under a watchdog, the verdicts only the
 * driver can give (a death, a flood, an interruption), then the kill of
 * every process group and of anything that escaped them; the run's
 * private folder, and the signal guards; see run.h.
 *
 * Every wait here has a deadline. A signal to the grader kills every child
 * group from the handler itself, so the running scenario's calls fail within
 * milliseconds and the driver can record what it has and return. */
#include "run.h"

#include "baselines.h"
#include "driver.h"
#include "lanes.h"
#include "rl_alloc.h"
#include "rl_channel.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_log.h"
#include "submission.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the grader's private folder ---- */

/* Makes this run's private folder (mkdtemp: mode 0700, owned by the
 * grader) under $TMPDIR or /tmp, for the baselines' observer sockets. A
 * unix socket path has room for 107 bytes, so a long $TMPDIR falls back to
 * /tmp. */
static const char *private_root(void)
{
    const char *tmp = getenv("TMPDIR");
    return !tmp || !*tmp || strlen(tmp) > 60 ? "/tmp" : tmp;
}

static int make_private_dir(gr_ctx *ctx, char *err, size_t errlen)
{
    const char *tmp = private_root();
    /* The pid in the name: a lane's worker that dies leaves its folder,
     * and the grader finds it by that (gr_remove_private_dirs_of). */
    snprintf(ctx->private_dir, sizeof ctx->private_dir, "%s/relaylab-grader-%ld-XXXXXX", tmp, (long)getpid());
    if (!mkdtemp(ctx->private_dir)) {
        snprintf(err, errlen, "cannot create the grader's private folder in %s: %s", tmp, strerror(errno));
        ctx->private_dir[0] = '\0';
        return RL_ESYS;
    }
    return RL_OK;
}

static void remove_private_dir(gr_ctx *ctx)
{
    if (!ctx->private_dir[0])
        return;
    for (int i = 0; i < ctx->nbaselines; i++)
        if (ctx->baselines[i].observer_addr[0])
            unlink(ctx->baselines[i].observer_addr + strlen("unix:"));
    if (rmdir(ctx->private_dir) != 0)
        RL_DEBUG("cannot remove %s: %s", ctx->private_dir, strerror(errno));
    ctx->private_dir[0] = '\0';
}

void gr_remove_private_dirs_of(pid_t pid)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "relaylab-grader-%ld-", (long)pid);
    DIR *d = opendir(private_root());
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        /* Only sockets and files lie in it (observer and tunnel sockets). */
        /* The name is the worker's, but /tmp is everyone's: only a folder
         * of the grader's own user, never a link, is emptied. */
        struct stat st;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid())) {
            close(fd);
            continue;
        }
        DIR *in = fd >= 0 ? fdopendir(fd) : NULL;
        struct dirent *f;
        while (in && (f = readdir(in)))
            if (strcmp(f->d_name, ".") != 0 && strcmp(f->d_name, "..") != 0)
                unlinkat(fd, f->d_name, 0);
        if (in)
            closedir(in);
        else if (fd >= 0)
            close(fd);
        if (unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) != 0)
            RL_DEBUG("cannot remove %s/%s: %s", private_root(), e->d_name, strerror(errno));
    }
    closedir(d);
}

/* ---- one run of one scenario ---- */

/* Everything the scenario needs before it runs: the baselines, the
 * private folder, the exercise's world and every instance of the
 * submission, ready. Returns 0, or -1 with the verdict (ERROR, or the
 * submission's failed start) in |res|. */
static int run_setup(gr_ctx *ctx, gr_scenario_result *res)
{
    const gr_exercise *ex = ctx->ex;
    char err[512];
    if (ex->baselines < 0 || ex->baselines > GR_MAX_BASELINES) {
        gr_result(res, GR_ERROR, "the exercise asks for %d baselines; the grader runs 0 to %d", ex->baselines,
                  GR_MAX_BASELINES);
        return -1;
    }
    ctx->nbaselines = ex->baselines;
    if (ctx->nbaselines && make_private_dir(ctx, err, sizeof err) != RL_OK) {
        gr_result(res, GR_ERROR, "%s", err);
        return -1;
    }
    if (!ex->baselines_by_scenario && gr_baselines_start(ctx, err, sizeof err) != RL_OK) {
        gr_result(res, GR_ERROR, "%s", err);
        return -1;
    }
    if (ex->world) {
        if (!ctx->private_dir[0] && make_private_dir(ctx, err, sizeof err) != RL_OK) {
            gr_result(res, GR_ERROR, "%s", err);
            return -1;
        }
        ctx->world_started = true;
        if (ex->world->start(ctx, &ctx->world, &ctx->world_env, err, sizeof err) != RL_OK) {
            gr_result(res, GR_ERROR, "the grader could not start the exercise's world: %s", err);
            return -1;
        }
    }
    ctx->ninstances = ex->kind != GR_SUBMISSION_COMMAND ? 0
                      : ctx->sc->instances              ? ctx->sc->instances
                      : ex->instances                   ? ex->instances
                                                        : 1;
    if (ctx->ninstances > GR_MAX_INSTANCES) {
        gr_result(res, GR_ERROR, "the exercise asks for %d instances; the grader runs 1 to %d", ctx->ninstances,
                  GR_MAX_INSTANCES);
        ctx->ninstances = 0;
        return -1;
    }
    for (int i = 0; i < ctx->ninstances; i++) {
        gr_instance *s = &ctx->subs[i];
        s->index = i;
        if (ctx->opt->sandbox) {
            s->sandboxed = true;
            if (gr_sandbox_prepare(&s->sb, (uint64_t)ctx->opt->data_limit_mb << 20, err, sizeof err) != RL_OK) {
                gr_result(res, GR_ERROR, "%s", err);
                return -1;
            }
        }
        if (gr_submission_start(ctx, s, res) != GR_PASS)
            return -1;
    }
    return 0;
}

/* Runs the scenario under the watchdog, then gives the verdicts only the
 * driver can: the grader's own failure, an interruption, the watchdog, a
 * submission or baseline that died, a flood of connections. */
static void run_scenario(gr_ctx *ctx, gr_scenario_result *res)
{
    /* The watchdog kills the children: the scenario's calls then fail at once. */
    bool wd_on = gr_watchdog_arm(&ctx->wd, GR_WATCHDOG_MS) == RL_OK;
    int rc = ctx->sc->run(ctx, res);
    if (wd_on)
        gr_watchdog_disarm(&ctx->wd);
    if (rc < 0 && res->verdict != GR_ERROR) {
        /* A copy: the feedback is both an argument and the destination. */
        char *said = rl_xstrdup(res->feedback);
        gr_result(res, GR_ERROR, "the grader failed in this scenario (%s)%s%s", rl_strerror(rc), said[0] ? ": " : "",
                  said);
        free(said);
    }

    if (gr_driver_interrupted) {
        gr_result(res, GR_ERROR, "interrupted: the grader was asked to stop");
    } else if (gr_watchdog_fired(&ctx->wd)) {
        gr_result(res, GR_ERROR, "the scenario did not finish within %d s (grader watchdog)", GR_WATCHDOG_MS / 1000);
    } else if (res->verdict != GR_CRASH && res->verdict != GR_ERROR && gr_submission_dead(ctx)) {
        /* Dead at the end is a crash whatever the scenario concluded: an
         * answer followed by an exit is not a working server. (An exit the
         * scenario asked for with a signal is its to judge.) */
        gr_submission_crash_feedback(ctx, gr_submission_dead(ctx), "during the scenario", res);
    } else {
        gr_baselines_judge_dead(ctx, res);
    }
    if (!gr_driver_interrupted)
        gr_baselines_judge_flood(ctx, res);
}

/* Stops everything the run started, whatever state it reached, and frees
 * |ctx|. Copies into |output| the output of the first instance that
 * crashed or never listened. */
static void run_teardown(gr_ctx *ctx, gr_scenario_result *res, char *output, size_t outlen)
{
    for (int i = 0; i < ctx->ninstances; i++) {
        gr_instance *s = &ctx->subs[i];
        /* The output of the first instance that crashed or never listened. */
        if ((res->verdict == GR_CRASH || res->verdict == GR_NOT_READY) && s->have && !output[0])
            rl_proc_output_text(&s->proc, output, outlen);
        gr_submission_stop(ctx, s, res);
    }
    gr_baselines_stop(ctx);
    if (ctx->world_started)
        ctx->ex->world->stop(ctx->world);
    /* Whatever escaped the groups (setsid, double fork) came back to us as
     * subreaper: nothing of a submission may outlive its scenario. */
    rl_proc_sample_by_cgroup(0, NULL, 0, NULL);
    for (int i = 0; i < ctx->ninstances; i++)
        if (ctx->subs[i].sandboxed)
            gr_sandbox_teardown(&ctx->subs[i].sb);
    int orphans = rl_proc_reap_orphans(NULL, 0, 3000);
    if (orphans)
        RL_DEBUG("killed %d escaped process(es) after %s/%s", orphans, ctx->ex->name, ctx->sc->id);
    remove_private_dir(ctx);
    for (size_t i = 0; i < ctx->ntags; i++)
        free(ctx->tags[i]);
    free(ctx->tags);
    gr_watchdog_fini(&ctx->wd);
    free(ctx);
}

static void run_once(const gr_exercise *ex, const gr_scenario *sc, const gr_options *opt, int run_index,
                     gr_scenario_result *res, char *output, size_t outlen)
{
    gr_ctx *ctx = rl_xcalloc(1, sizeof *ctx);
    ctx->ex = ex;
    ctx->sc = sc;
    ctx->opt = opt;
    ctx->run_index = run_index;
    gr_watchdog_init(&ctx->wd);
    snprintf(ctx->tag, sizeof ctx->tag, "%s.%s.%d.%ld", ex->name, sc->id, run_index, (long)getpid());
    memset(res, 0, sizeof *res);
    output[0] = '\0';
    if (run_setup(ctx, res) == 0)
        run_scenario(ctx, res);
    run_teardown(ctx, res, output, outlen);
}

bool gr_selected(const char *only, const char *id)
{
    if (!only)
        return true;
    size_t n = strlen(id);
    for (const char *p = only; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, id, n) == 0)
            return true;
        if (!comma)
            break;
        p = comma + 1;
    }
    return false;
}

int gr_check_only(const gr_exercise *ex, const char *only, char *err, size_t errlen)
{
    if (!only)
        return RL_OK;
    char *copy = rl_xstrdup(only);
    char *save = NULL;
    int rc = RL_OK;
    for (char *id = strtok_r(copy, ",", &save); id && rc == RL_OK; id = strtok_r(NULL, ",", &save)) {
        bool found = false;
        for (size_t i = 0; i < ex->nscenarios && !found; i++)
            found = strcmp(ex->scenarios[i].id, id) == 0;
        if (!found) {
            snprintf(err, errlen, "exercise %s has no scenario '%s'", ex->name, id);
            rc = RL_EINVAL;
        }
    }
    free(copy);
    return rc;
}

/* User and system CPU seconds of |who| (RUSAGE_SELF or RUSAGE_CHILDREN). */
static double cpu_seconds(int who)
{
    struct rusage ru;
    if (getrusage(who, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

void gr_run_outcome(const gr_exercise *ex, const gr_scenario *sc, const gr_options *opt, gr_outcome *o)
{
    memset(o, 0, sizeof *o);
    o->scenario = sc;
    o->verdict = GR_PASS;
    int64_t t0 = rl_now_ns();
    /* Where a scenario's time goes (bench/class_times.py): its wall time
     * against the CPU of the grader and of what it ran; the rest is
     * waiting, on purpose or not. A lane's worker measures its own. */
    double self0 = cpu_seconds(RUSAGE_SELF), children0 = cpu_seconds(RUSAGE_CHILDREN);
    for (int r = 1; r <= opt->runs; r++) {
        if (gr_driver_interrupted) {
            if (o->runs == 0 || o->verdict != GR_ERROR)
                snprintf(o->feedback, sizeof o->feedback, "interrupted: the grader was asked to stop");
            o->verdict = GR_ERROR;
            break;
        }
        gr_scenario_result res;
        char output[sizeof o->output];
        if (opt->progress)
            fprintf(stderr, "%s/%s run %d/%d ...\n", ex->name, sc->id, r, opt->runs);
        int64_t r0 = rl_now_ns();
        run_once(ex, sc, opt, r, &res, output, sizeof output);
        o->runs++;
        if (res.verdict == GR_PASS)
            o->passed++;
        /* Keep the worst run's story; on ties the first one. */
        if (o->runs == 1 || gr_verdict_worse(res.verdict, o->verdict) != o->verdict) {
            o->verdict = res.verdict;
            memcpy(o->feedback, res.feedback, sizeof o->feedback);
            memcpy(o->output, output, sizeof o->output);
            o->figure = res.figure;
        }
        if (opt->progress)
            fprintf(stderr, "%s/%s run %d/%d: %s (%.1f s) %s\n", ex->name, sc->id, r, opt->runs,
                    gr_verdict_name(res.verdict), (double)(rl_now_ns() - r0) / 1e9, res.feedback);
    }
    o->seconds = (double)(rl_now_ns() - t0) / 1e9;
    o->cpu_grader_s = cpu_seconds(RUSAGE_SELF) - self0;
    o->cpu_others_s = cpu_seconds(RUSAGE_CHILDREN) - children0;
}

int gr_run_exercise(const gr_exercise *ex, const gr_options *opt, gr_outcome *outcomes, size_t *noutcomes, char *err,
                    size_t errlen)
{
    *noutcomes = 0;
    if (gr_check_only(ex, opt->only, err, errlen) != RL_OK)
        return RL_EINVAL;
    /* Lanes at once where the exercise has them, in forked workers: only
     * from a process gRPC has not started in, and not when one at a time
     * was asked for (--parallel 1). A command submission's lanes need the
     * sandbox, which gives each its own network (lanes.c): unsandboxed,
     * a submission could reach a neighbouring lane's world, so its
     * scenarios run one at a time, as they always did. */
    size_t nlanes = gr_lanes_count(ex, opt->only);
    bool isolated = ex->kind == GR_SUBMISSION_CONFIG || opt->sandbox;
    bool lanes = nlanes > 1 && opt->parallel != 1 && isolated;
    if (lanes && !gr_lanes_single_threaded()) {
        RL_WARN("the grader already runs threads, so it cannot fork its lanes: one scenario at a time");
        lanes = false;
    }
    if (lanes) {
        int parallel = opt->parallel > 0 ? opt->parallel : (int)nlanes;
        int rc = gr_lanes_run(ex, opt, parallel, outcomes, noutcomes, err, errlen);
        if (rc != RL_ESYS && rc != RL_EINVAL)
            return rc;
        RL_WARN("%s; running the scenarios one at a time", err);
    }
    grpc_init();
    for (size_t i = 0; i < ex->nscenarios; i++)
        if (gr_selected(opt->only, ex->scenarios[i].id))
            gr_run_outcome(ex, &ex->scenarios[i], opt, &outcomes[(*noutcomes)++]);
    grpc_shutdown();
    return RL_OK;
}

/* ---- guards ---- */

static void on_signal(int sig)
{
    (void)sig;
    gr_driver_interrupted = 1;
    rl_proc_signal_all(SIGKILL);
}

int gr_install_guards(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) || sigaction(SIGHUP, &sa, NULL))
        return RL_ESYS;
    signal(SIGPIPE, SIG_IGN);
    return rl_proc_become_subreaper();
}

bool gr_was_interrupted(void)
{
    return gr_driver_interrupted;
}
