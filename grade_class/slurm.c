/* slurm: the class as a Slurm job array (slurm.h). Slurm is driven by its
 * own commands (sbatch, squeue, scancel), each run without a shell and
 * bounded in time; squeue is read without accounting (slurmdbd), which
 * Debian's single-host setups and many course clusters lack: a task's end
 * is its state while the controller keeps it (MinJobAge, 300 s by
 * default), and what it graded is what its .done file says. */
#include "slurm.h"

#include "pool.h"
#include "run.h"

#include "rl_alloc.h"
#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_path.h"
#include "rl_proc.h"
#include "rl_text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Each Slurm command's bound: a controller that does not answer in this
 * long is as good as down. */
#define CMD_TIMEOUT_MS 60000
/* After scancel: Slurm's KillWait (30 s by default) between its SIGTERM
 * and SIGKILL, the pool's 15 s grace inside a task, and room to spare. */
#define DRAIN_MS 90000
/* The default --slurm-wait's ceiling, and the queue's allowance. */
#define WAIT_CAP_MIN (24L * 60)
#define QUEUE_MIN    10L
#define OUTPUT_MAX   (4u << 20)
/* squeue failing this long: Slurm is lost to the batch (its controller
 * down or unreachable), and waiting on to --slurm-wait's hours helps no one. */
#define LOST_MIN 10

/* Why the submitter stopped waiting. */
typedef enum { W_ENDED, W_INTERRUPTED, W_WAITED, W_LOST } wait_end;

/* One submission: the array's tasks, a task a student. */
typedef struct sl_run {
    char job[32]; /* the array's job id, as sbatch printed it */
    size_t ntasks;
    size_t *student;               /* owned; ntasks: task -> student index of the plan */
    char (*state)[GC_SLURM_STATE]; /* owned; ntasks: squeue's last state, "" before one */
    char (*reason)[GC_SLURM_REASON];
    int64_t task_min; /* each task's --time */
    int64_t wait_ms;  /* the bound of the wait */
    char seen[160];   /* the last queue line printed */
    char lost[600];   /* squeue's last failure */
} sl_run;

/* ---- running Slurm's commands ---- */

/* Runs |argv| (argv[0] from PATH), its stdout and stderr into |*out|
 * (NUL-terminated, malloc'd, at most OUTPUT_MAX), for at most
 * CMD_TIMEOUT_MS. Returns 0 with |*status| its exit status (-1: killed by
 * a signal), RL_ETIMEOUT (killed), or RL_ESYS. */
static int run_capture(const char *const *argv, char **out, int *status)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return RL_ESYS;
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return RL_ESYS;
    }
    if (pid == 0) {
        /* Its own group: the terminal's Ctrl-C is the batch's to act on,
         * and scancel must still run after one. */
        setpgid(0, 0);
        int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (in < 0 || dup2(in, 0) < 0 || dup2(fds[1], 1) < 0 || dup2(fds[1], 2) < 0)
            _exit(RL_PROC_EXEC_FAILED);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        signal(SIGPIPE, SIG_DFL);
        execvp(argv[0], (char *const *)argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(RL_PROC_EXEC_FAILED);
    }
    close(fds[1]);
    size_t cap = 4096, len = 0;
    char *buf = rl_xmalloc(cap);
    int64_t end = rl_now_ns() + (int64_t)CMD_TIMEOUT_MS * RL_NS_PER_MS;
    bool timed_out = false;
    for (;;) {
        int64_t left_ms = (end - rl_now_ns()) / RL_NS_PER_MS;
        if (left_ms <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd pfd = {fds[0], POLLIN, 0};
        int n = poll(&pfd, 1, (int)(left_ms > 1000 ? 1000 : left_ms));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        if (len + 1 == cap && cap < OUTPUT_MAX)
            buf = rl_xrealloc(buf, cap *= 2);
        ssize_t r = read(fds[0], buf + len, cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        len += (size_t)r;
        if (len + 1 == cap && cap >= OUTPUT_MAX)
            break; /* enough: the rest is not read, the command is ended below */
    }
    close(fds[0]);
    buf[len] = '\0';
    if (timed_out)
        kill(-pid, SIGKILL);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *out = buf;
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return timed_out ? RL_ETIMEOUT : RL_OK;
}

/* |text|'s first line, printable, into |buf|: a command's words in a
 * message. */
static const char *first_line(const char *text, char *buf, size_t len)
{
    size_t n = strcspn(text, "\n");
    rl_text_printable(buf, len, text, n, 0);
    return buf;
}

/* ---- the array task's side ---- */

int gc_slurm_task_student(const char *names, char *name, size_t len, char *err, size_t errlen)
{
    const char *id = getenv("SLURM_ARRAY_TASK_ID");
    char *end;
    long k = id && *id ? strtol(id, &end, 10) : -1;
    if (k < 0 || *end) {
        snprintf(err, errlen, "--slurm-task is for the array tasks of --slurm ($SLURM_ARRAY_TASK_ID not set)");
        return RL_EINVAL;
    }
    const char *at = names;
    for (long i = 0; i < k && at; i++) {
        at = strchr(at, ',');
        at = at ? at + 1 : NULL;
    }
    size_t n = at ? strcspn(at, ",") : 0;
    if (!at || n == 0 || n >= len) {
        snprintf(err, errlen, "array task %ld has no student in --slurm-task", k);
        return RL_EINVAL;
    }
    memcpy(name, at, n);
    name[n] = '\0';
    if (!gc_roster_name_ok(name)) {
        snprintf(err, errlen, "array task %ld: a student name the results cannot use", k);
        return RL_EINVAL;
    }
    return RL_OK;
}

int gc_slurm_task_run(gc_batch *b, gc_plan *p, double *wall_s)
{
    const char *job = getenv("SLURM_ARRAY_JOB_ID"), *task = getenv("SLURM_ARRAY_TASK_ID");
    char path[PATH_MAX + 64];
    if (!job || !task || strspn(job, "0123456789") != strlen(job) || strspn(task, "0123456789") != strlen(task)) {
        fprintf(stderr, "grade-class: --slurm-task runs in an array task ($SLURM_ARRAY_JOB_ID, _TASK_ID)\n");
        return RL_ESYS;
    }
    snprintf(path, sizeof path, "%s/slurm/%s_%s.done", b->out, job, task);
    b->task_log = fopen(path, "we");
    if (!b->task_log) {
        fprintf(stderr, "grade-class: cannot make %s: %s\n", path, strerror(errno));
        return RL_ESYS;
    }
    int rc = gc_run_gradings(b, p, wall_s);
    if (fclose(b->task_log) != 0) {
        fprintf(stderr, "grade-class: cannot write %s: %s\n", path, strerror(errno));
        rc = RL_ESYS;
    }
    b->task_log = NULL;
    return rc;
}

void gc_slurm_task_record(gc_batch *b, const gc_job *job)
{
    const gc_job_info *ji = job->user;
    char flags[3] = "-";
    if (job->timed_out || job->interrupted)
        snprintf(flags, sizeof flags, "%s%s", job->timed_out ? "t" : "", job->interrupted ? "i" : "");
    /* One write of a whole line: a task killed after it still reports it. */
    fprintf(b->task_log, "%s\t%d\t%s\t%.3f\n", b->ex[ji->ex].name, job->status, flags,
            (double)(job->ended_ns - job->started_ns) / 1e9);
    fflush(b->task_log);
}

int gc_slurm_task_status(const gc_plan *p, int prc)
{
    for (size_t i = 0; i < p->njobs; i++)
        if (p->jobs[i].state == GC_JOB_PENDING || p->jobs[i].interrupted)
            return GC_EXIT_INCOMPLETE;
    return prc == RL_OK ? GC_EXIT_OK : GC_EXIT_INCOMPLETE;
}

/* ---- the submitter's side ---- */

/* The students with a grading to run become the tasks of |r|, with the
 * time limit a task gets: its gradings' own limits one after another (the
 * pool's backstops, plan.c), and a start-up allowance. */
static void choose_tasks(const gc_batch *b, const gc_plan *p, sl_run *r)
{
    r->student = rl_xcalloc(p->nstudents ? p->nstudents : 1, sizeof *r->student);
    int64_t longest = 0, all = 0;
    for (size_t s = 0; s < p->nstudents; s++) {
        int64_t ms = 0;
        for (size_t e = 0; e < b->nex; e++) {
            const gc_job *j = &p->jobs[s * b->nex + e];
            if (j->state == GC_JOB_PENDING && j->user && !p->info[s * b->nex + e].error[0])
                ms += j->timeout_ms;
        }
        if (ms == 0 || !gc_roster_name_ok(p->students[s]))
            continue;
        r->student[r->ntasks++] = s;
        longest = ms > longest ? ms : longest;
        all += ms / 60000 + 3;
    }
    r->task_min = longest / 60000 + 3;
    r->wait_ms =
        (b->slurm_wait_min ? b->slurm_wait_min : (all < WAIT_CAP_MIN ? all : WAIT_CAP_MIN) + QUEUE_MIN) * 60000;
    r->state = rl_xcalloc(r->ntasks ? r->ntasks : 1, sizeof *r->state);
    r->reason = rl_xcalloc(r->ntasks ? r->ntasks : 1, sizeof *r->reason);
}

/* |s| single-quoted for sh. */
static void put_quoted(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", f);
        else
            fputc(*s, f);
    }
    fputc('\'', f);
}

/* The script every task runs: this program again with the command line
 * it was given, the students in task order after --slurm-task. sbatch
 * keeps its own copy, so a later run may write it again. */
static int write_script(const gc_options *o, const gc_plan *p, const sl_run *r, const char *path)
{
    char self[PATH_MAX];
    if (rl_path_sibling("grade-class", self, sizeof self) != RL_OK)
        return RL_ESYS;
    FILE *f = fopen(path, "we");
    if (!f)
        return RL_ESYS;
    fputs("#!/bin/sh\n# Written by grade-class --slurm: array task N grades the Nth student after\n"
          "# --slurm-task, with the command line grade-class was given.\nexec ",
          f);
    put_quoted(f, self);
    fputs(" --slurm-task '", f);
    for (size_t t = 0; t < r->ntasks; t++)
        fprintf(f, "%s%s", t ? "," : "", p->students[r->student[t]]); /* gc_roster_name_ok: no quote */
    fputs("'", f);
    for (int i = 1; i < o->argc; i++) {
        fputc(' ', f);
        put_quoted(f, o->argv[i]);
    }
    fputc('\n', f);
    return fclose(f) == 0 ? RL_OK : RL_ESYS;
}

/* sbatch: the array of |r| from |script|. Returns 0 with r->job, or
 * RL_ECHILD with |err|. */
static int submit(const gc_batch *b, sl_run *r, const char *script, char *err, size_t errlen)
{
    char array[64], output[PATH_MAX + 32], cwd[PATH_MAX + 16], cpus[48], time_opt[48];
    char here[PATH_MAX];
    if (!getcwd(here, sizeof here)) {
        snprintf(err, errlen, "cannot read the current folder: %s", strerror(errno));
        return RL_ECHILD;
    }
    snprintf(array, sizeof array, "--array=0-%zu", r->ntasks - 1);
    snprintf(output, sizeof output, "--output=%s/slurm/%%A_%%a.log", b->out);
    snprintf(cwd, sizeof cwd, "--chdir=%s", here);
    /* The verdicts hold up to 5 graders a core (run.c). */
    snprintf(cpus, sizeof cpus, "--cpus-per-task=%d", (b->jobs + 4) / 5);
    snprintf(time_opt, sizeof time_opt, "--time=%lld", (long long)r->task_min);
    /* The comment names the results folder: a later run on it finds the
     * array by it (gc_slurm_check_earlier). */
    char comment[PATH_MAX + 16];
    snprintf(comment, sizeof comment, "--comment=%s", b->out);
    const char *argv[16 + GC_MAX_SBATCH] = {"sbatch", "--parsable", "--job-name=grade-class", array,  output, cwd,
                                            cpus,     time_opt,     "--no-requeue",           comment};
    size_t n = 10;
    for (size_t i = 0; i < b->nsbatch; i++)
        argv[n++] = b->sbatch_opts[i]; /* after ours: sbatch takes the last of an option */
    argv[n++] = script;
    argv[n] = NULL;
    char *out = NULL, line[512];
    int st = -1, rc = run_capture(argv, &out, &st);
    long long id = out ? strtoll(out, NULL, 10) : 0;
    if (rc != RL_OK || st != 0 || id <= 0) {
        snprintf(err, errlen, "sbatch %s: %s",
                 rc == RL_ETIMEOUT ? "did not answer within 60 s"
                 : rc != RL_OK     ? "could not be run"
                                   : "refused the array",
                 rc == RL_ESYS ? strerror(errno) : first_line(out ? out : "", line, sizeof line));
        free(out);
        return RL_ECHILD;
    }
    snprintf(r->job, sizeof r->job, "%lld", id);
    free(out);
    return RL_OK;
}

size_t gc_slurm_apply_done(gc_batch *b, gc_plan *p, size_t s, FILE *f)
{
    size_t n = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char ex[GC_NAME_MAX], flags[8];
        int status;
        double secs;
        /* A line still being written (no newline yet) is read next time. */
        if (!strchr(line, '\n') || sscanf(line, "%63[^\t]\t%d\t%7s\t%lf", ex, &status, flags, &secs) != 4)
            continue;
        int e = gc_batch_find_exercise(b, ex);
        if (e < 0 || s >= p->nstudents)
            continue;
        gc_job *j = &p->jobs[s * b->nex + (size_t)e];
        if (j->state != GC_JOB_PENDING || !j->user || p->info[s * b->nex + (size_t)e].error[0])
            continue;
        j->state = GC_JOB_DONE;
        j->status = status;
        j->timed_out = strchr(flags, 't') != NULL;
        j->interrupted = strchr(flags, 'i') != NULL;
        j->started_ns = 0;
        j->ended_ns = (int64_t)(secs * 1e9);
        gc_run_progress(b, j);
        n++;
    }
    return n;
}

/* The .done lines of task |t| of |r| into the plan. */
static void read_done(gc_batch *b, gc_plan *p, const sl_run *r, size_t t)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/slurm/%s_%zu.done", b->out, r->job, t);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    gc_slurm_apply_done(b, p, r->student[t], f);
    fclose(f);
}

bool gc_slurm_state_final(const char *st)
{
    static const char *const final[] = {"COMPLETED",     "CANCELLED", "FAILED",   "TIMEOUT", "NODE_FAIL",  "PREEMPTED",
                                        "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE", "REVOKED", GC_SLURM_GONE};
    for (size_t i = 0; i < sizeof final / sizeof *final; i++)
        if (strcmp(st, final[i]) == 0)
            return true;
    return false;
}

size_t gc_slurm_parse_queue(char *text, size_t ntasks, char (*state)[GC_SLURM_STATE], char (*reason)[GC_SLURM_REASON],
                            size_t *ended)
{
    size_t seen = 0;
    char *save = NULL;
    bool *listed = rl_xcalloc(ntasks ? ntasks : 1, sizeof *listed), ranges = false;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *end, *bar = strchr(l, '|');
        long t = strtol(l, &end, 10);
        if (!bar || end != bar || end == l || t < 0 || (size_t)t >= ntasks) {
            /* A range of tasks not started ("2-5"): which are listed is not
             * known, so none is taken for gone. */
            ranges |= bar != NULL;
            continue;
        }
        char *bar2 = strchr(bar + 1, '|');
        if (bar2)
            *bar2 = '\0';
        snprintf(state[t], GC_SLURM_STATE, "%s", bar + 1);
        snprintf(reason[t], GC_SLURM_REASON, "%s", bar2 ? bar2 + 1 : "");
        listed[t] = true;
        seen++;
    }
    /* squeue lists every task it knows, a waiting one too: a task it no
     * longer lists was cancelled before it started (it leaves no record),
     * or ended over MinJobAge ago. */
    *ended = 0;
    for (size_t t = 0; t < ntasks; t++) {
        if (seen && !ranges && !listed[t]) {
            snprintf(state[t], GC_SLURM_STATE, "%s", GC_SLURM_GONE);
            snprintf(reason[t], GC_SLURM_REASON, "no longer listed by squeue: cancelled before it started?");
        }
        *ended += gc_slurm_state_final(state[t]);
    }
    free(listed);
    return seen;
}

/* The array's tasks as squeue sees them, into r->state and r->reason.
 * Returns 0 with |*ended| the tasks in a final state, RL_ENOTFOUND when
 * the controller no longer knows the job (every task ended long enough
 * ago), or RL_ECHILD with |err| when squeue failed. */
static int query(sl_run *r, size_t *ended, char *err, size_t errlen)
{
    char jobs[48];
    snprintf(jobs, sizeof jobs, "--jobs=%s", r->job);
    const char *argv[] = {"squeue", "--noheader", "--array", "--states=all", jobs, "--format=%K|%T|%r", NULL};
    char *out = NULL, line[256];
    int st = -1, rc = run_capture(argv, &out, &st);
    if (rc != RL_OK || st != 0) {
        bool gone = rc == RL_OK && out && strstr(out, "Invalid job id");
        snprintf(err, errlen, "squeue %s",
                 rc != RL_OK ? "did not answer" : first_line(out ? out : "", line, sizeof line));
        free(out);
        return gone ? RL_ENOTFOUND : RL_ECHILD;
    }
    size_t seen = gc_slurm_parse_queue(out, r->ntasks, r->state, r->reason, ended);
    free(out);
    return seen ? RL_OK : RL_ENOTFOUND;
}

/* One line when the queue's picture changes: how many tasks wait (and
 * why), run, ended. */
static void say_queue(const gc_batch *b, sl_run *r, size_t ended)
{
    size_t pending = 0, running = 0;
    const char *why = "";
    for (size_t t = 0; t < r->ntasks; t++) {
        if (strcmp(r->state[t], "PENDING") == 0 || !r->state[t][0]) {
            pending++;
            /* "None": Slurm's word for no reason yet. */
            why = r->reason[t][0] && strcmp(r->reason[t], "None") != 0 ? r->reason[t] : why;
        } else if (!gc_slurm_state_final(r->state[t])) {
            running++;
        }
    }
    char now[sizeof r->seen];
    snprintf(now, sizeof now, "%zu waiting%s%s%s, %zu running, %zu ended", pending, *why ? " (" : "", why,
             *why ? ")" : "", running, ended);
    if (b->quiet || strcmp(now, r->seen) == 0)
        return;
    memcpy(r->seen, now, sizeof now);
    fprintf(stderr, "%sgrade-class: Slurm job %s: %s\n", b->tty ? "\r" : "", r->job, now);
}

static void read_all_done(gc_batch *b, gc_plan *p, const sl_run *r)
{
    for (size_t t = 0; t < r->ntasks; t++)
        read_done(b, p, r, t);
}

/* Polls until every task ended, the wait's bound, or the interrupt. */
static wait_end wait_array(gc_batch *b, gc_plan *p, sl_run *r)
{
    int64_t end = rl_now_ns() + r->wait_ms * RL_NS_PER_MS, failing_since = 0;
    for (;;) {
        read_all_done(b, p, r);
        if (gc_pool_interrupted())
            return W_INTERRUPTED;
        int64_t now = rl_now_ns();
        if (now > end)
            return W_WAITED;
        size_t ended = 0;
        int q = query(r, &ended, r->lost, sizeof r->lost);
        if (q == RL_ENOTFOUND || (q == RL_OK && ended == r->ntasks))
            return W_ENDED;
        if (q == RL_OK) {
            failing_since = 0;
            say_queue(b, r, ended);
        } else if (!failing_since) {
            failing_since = now;
            fprintf(stderr, "grade-class: Slurm job %s: %s; trying again for %d min\n", r->job, r->lost, LOST_MIN);
        } else if (now - failing_since > (int64_t)LOST_MIN * 60 * 1000 * RL_NS_PER_MS) {
            return W_LOST;
        }
        gc_run_progress(b, NULL);
        /* A second a poll: a task's end is seen within it, and a class of
         * hundreds costs the controller one squeue a second. */
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
}

/* scancel, then the tasks' last words (their gradings stop and write
 * their results) for up to DRAIN_MS. Returns true when every task ended. */
static bool cancel_array(gc_batch *b, gc_plan *p, sl_run *r)
{
    const char *argv[] = {"scancel", r->job, NULL};
    char *out = NULL, line[512];
    int st = -1, rc = run_capture(argv, &out, &st);
    if (rc != RL_OK || st != 0)
        fprintf(stderr, "grade-class: could not cancel Slurm job %s (scancel: %s): cancel it by hand: scancel %s\n",
                r->job, rc != RL_OK ? "did not answer" : first_line(out ? out : "", line, sizeof line), r->job);
    else if (!b->quiet)
        fprintf(stderr, "grade-class: Slurm job %s cancelled; waiting for its tasks to stop\n", r->job);
    free(out);
    int64_t end = rl_now_ns() + (int64_t)DRAIN_MS * RL_NS_PER_MS;
    while (rl_now_ns() < end) {
        char err[600];
        size_t ended = 0;
        int q = query(r, &ended, err, sizeof err);
        read_all_done(b, p, r);
        if (q == RL_ENOTFOUND || (q == RL_OK && ended == r->ntasks))
            return true;
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    fprintf(stderr, "grade-class: Slurm job %s: tasks still running %d s after scancel: see squeue -j %s\n", r->job,
            DRAIN_MS / 1000, r->job);
    return false;
}

/* Every grading of task |t| still PENDING gets |why| as its reason. Returns
 * how many. */
static size_t mark_task(const gc_batch *b, gc_plan *p, const sl_run *r, size_t t, const char *why)
{
    size_t n = 0, s = r->student[t];
    for (size_t e = 0; e < b->nex; e++) {
        gc_job *j = &p->jobs[s * b->nex + e];
        gc_job_info *ji = &p->info[s * b->nex + e];
        if (j->state != GC_JOB_PENDING || !j->user || ji->error[0])
            continue;
        snprintf(ji->unfinished, sizeof ji->unfinished, "%s", why);
        n++;
    }
    return n;
}

/* After the wait: every grading no task reported says why, and the tasks
 * that ended without grading everything are named. Returns 0, or
 * RL_ECHILD when a grading was left (and not by the interrupt). */
static int settle(const gc_batch *b, gc_plan *p, const sl_run *r, wait_end how)
{
    char why[1024];
    size_t left = 0;
    for (size_t t = 0; t < r->ntasks; t++) {
        const char *st = r->state[t][0] ? r->state[t] : GC_SLURM_GONE;
        const char *student = p->students[r->student[t]];
        if (how == W_INTERRUPTED)
            snprintf(why, sizeof why,
                     "not graded: the batch was interrupted (Slurm job %s cancelled): run it again "
                     "to resume",
                     r->job);
        else if (how == W_LOST)
            snprintf(why, sizeof why,
                     "not graded: Slurm did not answer about job %s for %d min (%.300s): run again to "
                     "resume once it does",
                     r->job, LOST_MIN, r->lost);
        else if (how == W_WAITED)
            snprintf(why, sizeof why,
                     "not graded: Slurm job %s had not ended after %lld min and was cancelled: run "
                     "again to resume, or give --slurm-wait more",
                     r->job, (long long)(r->wait_ms / 60000));
        else
            snprintf(why, sizeof why,
                     "not graded: Slurm job %s task %zu ended %s%s%s%s before this grading "
                     "ended (its log: slurm/%s_%zu.log): run again to resume",
                     r->job, t, st, r->reason[t][0] ? " (" : "", r->reason[t], r->reason[t][0] ? ")" : "", r->job, t);
        size_t n = mark_task(b, p, r, t, why);
        left += n;
        if (n && how == W_ENDED)
            fprintf(stderr,
                    "grade-class: Slurm job %s task %zu (%s) ended %s with %zu grading%s not done: its log "
                    "is %s/slurm/%s_%zu.log\n",
                    r->job, t, student, st, n, n == 1 ? "" : "s", b->out, r->job, t);
        else if (how == W_ENDED && strcmp(st, "COMPLETED") != 0 && strcmp(st, GC_SLURM_GONE) != 0)
            /* Every grading reported, then the task failed (its exit
             * status, a sanitizer's report): not the verdicts', but said. */
            fprintf(stderr,
                    "grade-class: warning: Slurm job %s task %zu (%s) ended %s after reporting every grading: its "
                    "log is %s/slurm/%s_%zu.log\n",
                    r->job, t, student, st, b->out, r->job, t);
    }
    if (how == W_LOST)
        fprintf(stderr, "grade-class: Slurm did not answer about job %s for %d min (%s): stopped waiting\n", r->job,
                LOST_MIN, r->lost);
    if (how == W_WAITED)
        fprintf(stderr, "grade-class: Slurm job %s had not ended after %lld min (--slurm-wait): cancelled\n", r->job,
                (long long)(r->wait_ms / 60000));
    return left && how != W_INTERRUPTED ? RL_ECHILD : RL_OK;
}

/* sbatch refused: every grading to run says so. */
static int refused(const gc_batch *b, gc_plan *p, const sl_run *r, const char *err)
{
    char why[1024];
    fprintf(stderr, "grade-class: %s\n", err);
    snprintf(why, sizeof why, "not graded: the Slurm job was not submitted (%.900s)", err);
    for (size_t t = 0; t < r->ntasks; t++)
        mark_task(b, p, r, t, why);
    return RL_ECHILD;
}

static void free_run(sl_run *r)
{
    free(r->student);
    free(r->state);
    free(r->reason);
}

/* OUT/slurm/job: the id of the array graded into OUT, while it may run. */
static void job_file(const gc_batch *b, char *path, size_t len)
{
    snprintf(path, len, "%s/slurm/job", b->out);
}

int gc_slurm_check_earlier(const gc_batch *b)
{
    char path[PATH_MAX + 16], id[32] = "", jobs[48], line[256];
    job_file(b, path, sizeof path);
    FILE *f = fopen(path, "re");
    if (!f)
        return RL_OK;
    bool read = fgets(id, sizeof id, f) != NULL;
    fclose(f);
    id[strcspn(id, "\n")] = '\0';
    if (!read || !id[0] || strspn(id, "0123456789") != strlen(id))
        return RL_OK;
    snprintf(jobs, sizeof jobs, "--jobs=%s", id);
    const char *argv[] = {"squeue", "--noheader", "--states=all", jobs, "--format=%T|%k", NULL};
    char *out = NULL;
    int st = -1, rc = run_capture(argv, &out, &st);
    bool running = false;
    /* Slurm not answering: sbatch will say so. */
    bool known = rc == RL_OK && (st == 0 || !strstr(out ? out : "", "Invalid job id"));
    char *save = NULL;
    for (char *l = known && st == 0 ? strtok_r(out, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
        char *bar = strchr(l, '|');
        if (!bar)
            continue;
        *bar = '\0';
        /* The comment names the results folder: the same id on another
         * cluster, or reused, is another job. */
        running |= strcmp(bar + 1, b->out) == 0 && !gc_slurm_state_final(l);
    }
    free(out);
    if (running) {
        first_line(b->out, line, sizeof line);
        fprintf(stderr,
                "grade-class: Slurm job %s of an earlier run is still grading into %s (was its grade-class killed?): "
                "cancel it (scancel %s) or let it end, then run again\n",
                id, line, id);
        return RL_EINVAL;
    }
    if (known)
        unlink(path);
    return RL_OK;
}

/* Records r->job in OUT/slurm/job (atomically). */
static void write_job_file(const gc_batch *b, const sl_run *r)
{
    char path[PATH_MAX + 16], tmp[PATH_MAX + 32];
    job_file(b, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "we");
    if (!f)
        return;
    fprintf(f, "%s\n", r->job);
    if (fclose(f) != 0 || rename(tmp, path) != 0)
        unlink(tmp);
}

int gc_slurm_run(gc_batch *b, const gc_options *o, gc_plan *p, double *wall_s)
{
    sl_run r;
    memset(&r, 0, sizeof r);
    b->tty = isatty(STDERR_FILENO);
    b->t0 = rl_now_ns();
    choose_tasks(b, p, &r);
    char dir[PATH_MAX + 16], script[PATH_MAX + 48], err[PATH_MAX + 1024];
    int rc = RL_OK;
    if (!b->quiet)
        fprintf(stderr,
                "grade-class: %zu students, %zu gradings to run on Slurm: %zu array tasks (one a student), "
                "each asking for %d CPU%s and at most %lld min\n",
                p->nstudents, b->total, r.ntasks, (b->jobs + 4) / 5, (b->jobs + 4) / 5 == 1 ? "" : "s",
                (long long)r.task_min);
    if (r.ntasks == 0 || gc_pool_interrupted())
        goto done;
    snprintf(dir, sizeof dir, "%s/slurm", b->out);
    snprintf(script, sizeof script, "%s/grade-class.sbatch", dir);
    if (gc_batch_make_dir(dir) != RL_OK || write_script(o, p, &r, script) != RL_OK) {
        snprintf(err, sizeof err, "cannot write %s: %s", script, strerror(errno));
        rc = refused(b, p, &r, err);
        goto done;
    }
    if (submit(b, &r, script, err, sizeof err) != RL_OK) {
        rc = refused(b, p, &r, err);
        goto done;
    }
    write_job_file(b, &r); /* first: a kill from here on leaves the array found */
    if (!b->quiet)
        fprintf(stderr, "grade-class: Slurm job %s submitted (logs: %s/slurm/%s_TASK.log); waiting at most %lld min\n",
                r.job, b->out, r.job, (long long)(r.wait_ms / 60000));
    wait_end how = wait_array(b, p, &r);
    bool ended = how == W_ENDED || cancel_array(b, p, &r);
    if (ended) {
        /* Nothing of it runs on: no later run need wait for it. */
        char path[PATH_MAX + 16];
        job_file(b, path, sizeof path);
        unlink(path);
    }
    read_all_done(b, p, &r);
    rc = settle(b, p, &r, how);
done:
    *wall_s = (double)(rl_now_ns() - b->t0) / 1e9;
    free_run(&r);
    return rc;
}
