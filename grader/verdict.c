/* verdict: a scenario run's verdict and feedback line, made printable and
 * marked when cut where they are written; the shared crash wording; see
 * verdict.h. */
#include "verdict.h"

#include "rl_text.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

gr_verdict gr_verdict_worse(gr_verdict a, gr_verdict b)
{
    return a > b ? a : b;
}

double gr_verdict_points(int runs, int passed, double points)
{
    return runs > 0 && passed == runs ? points : 0.0;
}

const char *gr_verdict_name(gr_verdict v)
{
    switch (v) {
    case GR_PASS: return "PASS";
    case GR_FAIL: return "FAIL";
    case GR_TIMEOUT: return "TIMEOUT";
    case GR_CRASH: return "CRASH";
    case GR_NOT_READY: return "NOT-READY";
    case GR_ERROR: return "ERROR";
    }
    return "ERROR";
}

/* Ends |fb| (of |size| bytes) with GR_FEEDBACK_CUT when |needed| bytes of
 * text did not fit. */
static void mark_cut(char *fb, size_t size, size_t needed)
{
    size_t cut = sizeof GR_FEEDBACK_CUT;
    if (needed < size || size < cut)
        return;
    memcpy(fb + size - cut, GR_FEEDBACK_CUT, cut);
}

/* Feedback quotes what a submission said (status details, tags, its
 * output): it is made printable here, where it is made, so no terminal,
 * log, CSV or results.json downstream ever gets an ESC or a CR from it
 * (rl_text.h). Feedback is one line: newlines are escaped too. */
int gr_result(gr_scenario_result *out, gr_verdict v, const char *fmt, ...)
{
    out->verdict = v;
    char raw[GR_FEEDBACK_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    size_t m = rl_text_printable(out->feedback, sizeof out->feedback, raw, strlen(raw), 0);
    if (n > 0 && (size_t)n > m)
        m = (size_t)n;
    mark_cut(out->feedback, sizeof out->feedback, m);
    return GR_DECIDED;
}

void gr_feedback_append(gr_scenario_result *out, const char *text)
{
    size_t n = strlen(out->feedback);
    if (n >= sizeof out->feedback - 1)
        return; /* full, and already marked */
    size_t m = 0;
    if (n) {
        snprintf(out->feedback + n, sizeof out->feedback - n, "; ");
        m = 2;
    }
    m += rl_text_printable(out->feedback + n + m, sizeof out->feedback - n - m, text, strlen(text), 0);
    mark_cut(out->feedback, sizeof out->feedback, n + m);
}

/* Words that name why a program would not start, in the line that says
 * it: a stack's tail below it names only where (Node's "at Module..."). */
static const char *const key_words[] = {
    "Cannot find module", "ModuleNotFoundError",       "ImportError",
    "SyntaxError",        "cannot find package",       "no required module",
    "command not found",  "No such file or directory", NULL,
};

/* The first line of |text| (up to |n|) holding a key word, its start into
 * *at and its length returned; 0 when none. */
static size_t key_line(const char *text, size_t n, size_t *at)
{
    for (size_t i = 0; key_words[i]; i++) {
        const char *p = strstr(text, key_words[i]);
        if (!p || (size_t)(p - text) >= n)
            continue;
        const char *b = p;
        while (b > text && b[-1] != '\n')
            b--;
        while (*b == ' ' || *b == '\t')
            b++;
        const char *e = strchr(p, '\n');
        size_t end = e ? (size_t)(e - text) : n;
        *at = (size_t)(b - text);
        return (end > n ? n : end) - *at;
    }
    return 0;
}

/* Appends text[from, to) to buf at *o, newlines as " | ". */
static void put_lines(const char *text, size_t from, size_t to, char *buf, size_t len, size_t *o)
{
    for (size_t i = from; i < to && *o + 4 < len; i++) {
        if (text[i] == '\n') {
            buf[(*o)++] = ' ';
            buf[(*o)++] = '|';
            buf[(*o)++] = ' ';
        } else {
            buf[(*o)++] = text[i];
        }
    }
    buf[*o] = '\0';
}

/* The last line or two of |text|, on one line, at most |max| chars; a line
 * that says why the program failed (key_words) is kept first when the end
 * alone would drop it. */
void gr_last_lines(const char *text, char *buf, size_t len, size_t max)
{
    size_t n = strlen(text);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
        n--;
    size_t start = n > max ? n - max : 0;
    size_t o = 0;
    buf[0] = '\0';
    size_t kat = 0, klen = start ? key_line(text, n, &kat) : 0;
    if (klen && kat < start && len > 16) {
        /* At most half the room for it; the end gets the rest. */
        size_t keep = klen < max / 2 ? klen : max / 2;
        put_lines(text, kat, kat + keep, buf, len, &o);
        size_t rest = max > keep + 7 ? max - keep - 7 : 0;
        start = n > rest ? n - rest : 0;
        if (start < kat + klen)
            start = kat + klen;
        put_lines(" | ...", 0, 6, buf, len, &o);
        put_lines(text, start, n, buf, len, &o);
        return;
    }
    if (start && len > 4) {
        memcpy(buf, "...", 3);
        o = 3;
    }
    put_lines(text, start, n, buf, len, &o);
}

void gr_crash_result(gr_scenario_result *out, const char *who, const char *how, const char *what, const char *tail,
                     int tasks_max)
{
    char lines[200];
    gr_last_lines(tail, lines, sizeof lines, 160);
    /* "can't start new thread" names no mistake: the mistake is a thread
     * per call (or stream), which the sandbox's task limit stops under
     * load where a bounded pool would not. */
    bool threads = strstr(tail, "can't start new thread") || strstr(tail, "pthread_create") ||
                   strstr(tail, "uv_thread_create") || strstr(tail, "Thread creation failed");
    if (threads)
        gr_result(out, GR_CRASH,
                  "%s %s %s: it could not start another thread, past the sandbox's limit of %d tasks (threads and "
                  "processes): a thread per call or stream? Serve calls from a bounded pool%s%s",
                  who, how, what, tasks_max, lines[0] ? "; last output: " : "", lines);
    else
        gr_result(out, GR_CRASH, "%s %s %s%s%s", who, how, what, lines[0] ? "; last output: " : "", lines);
}
