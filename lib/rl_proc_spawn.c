/* rl_proc_spawn: a command line started the grader's way; see
 * rl_proc_spawn.h. The rule is grader/run.c's (start_once) to the letter,
 * so that a line behaves the same under the benches and the lab as under
 * the grader that judges it. */
#include "rl_proc_spawn.h"

#include "rl_alloc.h"
#include "rl_err.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* True when |line| begins with a shell assignment word, "NAME=value ...":
 * `exec NAME=value prog` would look for a program called "NAME=value". */
static bool starts_with_assignment(const char *line)
{
    while (*line == ' ' || *line == '\t')
        line++;
    if (!(isalpha((unsigned char)*line) || *line == '_'))
        return false;
    while (isalnum((unsigned char)*line) || *line == '_')
        line++;
    return *line == '=';
}

int rl_proc_command_text(const char *line, char **text)
{
    if (!line)
        return RL_EINVAL;
    /* A list, a pipeline, a subshell or a substitution needs the shell to
     * stay; so does a line that already says exec. */
    bool simple = strpbrk(line, ";&|()`\n") == NULL && strncmp(line, "exec ", 5) != 0;
    const char *prefix = !simple ? "" : starts_with_assignment(line) ? "exec env " : "exec ";
    size_t n = strlen(prefix) + strlen(line) + 1;
    *text = rl_xmalloc(n);
    snprintf(*text, n, "%s%s", prefix, line);
    return RL_OK;
}

int rl_proc_spawn_command(rl_proc *p, const rl_proc_command *c)
{
    char *text;
    if (!c->line || !*c->line || c->opt.argv || rl_proc_command_text(c->line, &text) != RL_OK) {
        /* As a failed rl_proc_spawn leaves it: stop and fini are no-ops. */
        memset(p, 0, sizeof *p);
        p->out_fd = -1;
        p->exit_code = -1;
        return RL_EINVAL;
    }
    size_t nwrap = 0;
    while (c->wrapper && c->wrapper[nwrap])
        nwrap++;
    const char **argv = rl_xcalloc(nwrap + 4, sizeof *argv);
    for (size_t i = 0; i < nwrap; i++)
        argv[i] = c->wrapper[i];
    argv[nwrap] = "/bin/sh";
    argv[nwrap + 1] = "-c";
    argv[nwrap + 2] = text;
    rl_proc_options opt = c->opt;
    opt.argv = argv;
    int rc = rl_proc_spawn(p, &opt);
    int e = errno;
    free(argv);
    free(text);
    errno = e;
    return rc;
}
