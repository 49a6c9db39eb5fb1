/* Unit tests for rl_proc_spawn: a command line starts the way the grader
 * starts a submission. The shell text follows the rule (exec before a
 * simple command, exec env before a NAME=value one, nothing before a list or
 * a pipeline); the started pid is then the program itself, not a shell
 * waiting on it (Debian's dash does not exec a -c command's last program by
 * itself, so without the rule the pid stays "sh"); a line that starts with
 * NAME=value still gets its variable and runs; the caller's variables, the
 * limits and a wrapper reach the program; the program leads its own group.
 * Every wait is bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rl_deadline.h"
#include "rl_err.h"
#include "rl_proc_spawn.h"

/* Reads /proc/|pid|/|what| into |buf| (NUL-terminated); returns the byte
 * count, 0 when it cannot be read. */
static size_t read_proc(pid_t pid, const char *what, char *buf, size_t len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return n;
}

/* True when /proc/|pid|/comm reads |want|. */
static bool comm_is(pid_t pid, const char *want)
{
    char comm[64];
    read_proc(pid, "comm", comm, sizeof comm);
    comm[strcspn(comm, "\n")] = '\0';
    return strcmp(comm, want) == 0;
}

/* True when /proc/|pid|/environ holds the entry |entry| ("NAME=VALUE"). */
static bool environ_has(pid_t pid, const char *entry)
{
    char buf[65536];
    size_t n = read_proc(pid, "environ", buf, sizeof buf);
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        if (strcmp(buf + i, entry) == 0)
            return true;
    return false;
}

/* The soft limit /proc/|pid|/limits shows on the line starting |name|, or
 * -1. */
static long limit_of(pid_t pid, const char *name)
{
    char buf[4096];
    read_proc(pid, "limits", buf, sizeof buf);
    const char *line = strstr(buf, name);
    return line ? strtol(line + strlen(name), NULL, 10) : -1;
}

/* Waits up to 5 s for |holds|(|pid|, |arg|): a shell or env(1) execs the
 * program a moment after the start, and the kernel names the new program
 * (comm) before it fills in its environment. */
static bool becomes(bool (*holds)(pid_t, const char *), pid_t pid, const char *arg)
{
    int64_t until = rl_now_ns() + 5 * RL_NS_PER_SEC;
    while (!holds(pid, arg)) {
        if (rl_now_ns() >= until)
            return false;
        rl_sleep_ms(5, NULL);
    }
    return true;
}

static void assert_text(const char *line, const char *want)
{
    char *text = NULL;
    assert_int_equal(rl_proc_command_text(line, &text), RL_OK);
    assert_string_equal(text, want);
    free(text);
}

static void text_follows_the_graders_rule(void **state)
{
    (void)state;
    assert_text("python3 relay.py --x 1", "exec python3 relay.py --x 1");
    assert_text("./relay > log < /dev/null", "exec ./relay > log < /dev/null");
    assert_text("PORT=1 python3 relay.py", "exec env PORT=1 python3 relay.py");
    assert_text("  _A1=x B=y node r.js", "exec env   _A1=x B=y node r.js");
    /* Not assignments: a digit first, or no '=' before the first blank. */
    assert_text("1A=2 prog", "exec 1A=2 prog");
    assert_text("prog A=1", "exec prog A=1");
    /* The shell must stay for these. */
    assert_text("cd sub && ./relay", "cd sub && ./relay");
    assert_text("a; b", "a; b");
    assert_text("a | b", "a | b");
    /* The rule looks at characters, not syntax: "&" in a redirection too. */
    assert_text("./relay 2>&1", "./relay 2>&1");
    assert_text("(a)", "(a)");
    assert_text("echo `id`", "echo `id`");
    assert_text("a\nb", "a\nb");
    assert_text("exec ./relay", "exec ./relay");
    assert_int_equal(rl_proc_command_text(NULL, &(char *){NULL}), RL_EINVAL);
}

/* Starts |c| and checks that the started pid becomes |comm| (the program
 * itself, or the shell that stays) and leads a group of its own. */
static void start_as(rl_proc *p, const rl_proc_command *c, const char *comm)
{
    assert_int_equal(rl_proc_spawn_command(p, c), RL_OK);
    assert_true(becomes(comm_is, p->pid, comm));
    assert_int_equal(getpgid(p->pid), p->pid);
    assert_int_not_equal(getpgid(p->pid), getpgid(0));
}

/* Checks that |p| printed the line |entry| ("NAME=VALUE", as env(1) prints
 * it), then exited with status 0. */
static void prints_then_exits_0(rl_proc *p, const char *entry)
{
    char line[128], name[64];
    snprintf(name, sizeof name, "%.*s", (int)(strchr(entry, '=') + 1 - entry), entry);
    assert_int_equal(rl_proc_wait_line(p, name, 5000, line, sizeof line), RL_OK);
    assert_string_equal(line, entry);
    assert_true(rl_proc_wait_exit(p, 5000));
    assert_int_equal(p->exit_code, 0);
}

static void simple_command_is_the_started_pid(void **state)
{
    (void)state;
    rl_proc p;
    rl_proc_command c = {.line = "sleep 30"};
    start_as(&p, &c, "sleep");
    rl_proc_fini(&p);
}

static void program_signal_reaches_the_caller_unaltered(void **state)
{
    (void)state;
    rl_proc p;
    /* The inner sh kills itself; with no shell between, the started pid is
     * the one killed (a waiting shell would exit with status 139). */
    rl_proc_command c = {.line = "sh -c 'kill -SEGV $$'"};
    assert_int_equal(rl_proc_spawn_command(&p, &c), RL_OK);
    assert_true(rl_proc_wait_exit(&p, 5000));
    assert_int_equal(p.term_sig, SIGSEGV);
    assert_int_equal(p.exit_code, -1);
    rl_proc_fini(&p);
}

static void leading_assignment_gets_its_variable_and_runs(void **state)
{
    (void)state;
    rl_proc p;
    /* env(1) sets the variable and execs the program in the same pid. */
    rl_proc_command c = {.line = "RL_T_FOO=one sleep 30"};
    start_as(&p, &c, "sleep");
    assert_true(becomes(environ_has, p.pid, "RL_T_FOO=one"));
    rl_proc_fini(&p);
}

static void assignment_and_added_variables_reach_the_output(void **state)
{
    (void)state;
    rl_proc p;
    /* Only these variables, so env's whole output fits the searched head. */
    const char *env[] = {"PATH=/usr/bin:/bin", "RL_T_BAR=two", NULL};
    rl_proc_command c = {.line = "RL_T_FOO=one env", .opt = {.setenv = env, .clean_env = true}};
    assert_int_equal(rl_proc_spawn_command(&p, &c), RL_OK);
    prints_then_exits_0(&p, "RL_T_BAR=two");
    prints_then_exits_0(&p, "RL_T_FOO=one");
    rl_proc_fini(&p);
}

static void limits_apply_to_the_program(void **state)
{
    (void)state;
    rl_proc p;
    rl_proc_limits lim = {.nofile = 37};
    rl_proc_command c = {.line = "sleep 30", .opt = {.limits = &lim}};
    start_as(&p, &c, "sleep");
    assert_int_equal(limit_of(p.pid, "Max open files"), 37);
    rl_proc_fini(&p);
}

static void list_keeps_the_shell_in_the_group(void **state)
{
    (void)state;
    rl_proc p;
    rl_proc_command c = {.line = "echo started; sleep 30"};
    assert_int_equal(rl_proc_spawn_command(&p, &c), RL_OK);
    char line[64];
    assert_int_equal(rl_proc_wait_line(&p, "started", 5000, line, sizeof line), RL_OK);
    /* Had the shell exec'd echo, the pid would be "echo" by now. */
    assert_true(comm_is(p.pid, "sh"));
    assert_int_equal(getpgid(p.pid), p.pid);
    rl_proc_fini(&p);
}

static void wrapper_runs_in_front_of_the_shell(void **state)
{
    (void)state;
    rl_proc p;
    const char *wrap[] = {"env", "RL_T_WRAP=three", NULL};
    const char *env[] = {"PATH=/usr/bin:/bin", NULL};
    rl_proc_command c = {.line = "env", .wrapper = wrap, .opt = {.setenv = env, .clean_env = true}};
    assert_int_equal(rl_proc_spawn_command(&p, &c), RL_OK);
    prints_then_exits_0(&p, "RL_T_WRAP=three");
    rl_proc_fini(&p);
}

static void bad_commands_are_refused_and_leave_a_safe_struct(void **state)
{
    (void)state;
    const char *argv[] = {"true", NULL};
    rl_proc_command bad[] = {{.line = NULL}, {.line = ""}, {.line = "true", .opt = {.argv = argv}}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rl_proc p;
        memset(&p, 0xff, sizeof p);
        assert_int_equal(rl_proc_spawn_command(&p, &bad[i]), RL_EINVAL);
        assert_int_equal(p.pid, 0);
        assert_int_equal(p.out_fd, -1);
        rl_proc_stop(&p, 0);
        rl_proc_fini(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_follows_the_graders_rule),
        cmocka_unit_test(simple_command_is_the_started_pid),
        cmocka_unit_test(program_signal_reaches_the_caller_unaltered),
        cmocka_unit_test(leading_assignment_gets_its_variable_and_runs),
        cmocka_unit_test(assignment_and_added_variables_reach_the_output),
        cmocka_unit_test(limits_apply_to_the_program),
        cmocka_unit_test(list_keeps_the_shell_in_the_group),
        cmocka_unit_test(wrapper_runs_in_front_of_the_shell),
        cmocka_unit_test(bad_commands_are_refused_and_leave_a_safe_struct),
    };
    return cmocka_run_group_tests_name("rl_proc_spawn", tests, NULL, NULL);
}
