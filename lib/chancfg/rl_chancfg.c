/* rl_chancfg: loading a channel config, the report, and the small helpers
 * every module shares (allocation that can fail, one-line message building,
 * did-you-mean). The catalogue of gRPC channel args it accepts is
 * rl_chancfg_catalogue.c's; reading values out of a config is
 * rl_chancfg_values.c's. */
#include "rl_chancfg_int.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- allocation ------------------------------------------------------- */

static void *(*g_malloc)(size_t) = malloc;
static void (*g_free)(void *) = free;

void rl_chancfg_set_alloc_funcs(void *(*malloc_fn)(size_t), void (*free_fn)(void *))
{
    g_malloc = malloc_fn ? malloc_fn : malloc;
    g_free = free_fn ? free_fn : free;
}

void *cc_malloc(size_t n)
{
    return g_malloc(n ? n : 1);
}

void cc_free(void *p)
{
    if (p)
        g_free(p);
}

char *cc_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = cc_malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

/* ---- cc_buf ----------------------------------------------------------- */

void cc_buf_init(cc_buf *b)
{
    memset(b, 0, sizeof(*b));
}

void cc_buf_fini(cc_buf *b)
{
    cc_free(b->p);
    cc_buf_init(b);
}

static bool buf_reserve(cc_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    /* No realloc in the allocator interface (it mirrors jansson's), so grow
     * by copy; strings here are short. */
    char *p = cc_malloc(cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    if (b->p)
        memcpy(p, b->p, b->len + 1);
    else
        p[0] = '\0';
    cc_free(b->p);
    b->p = p;
    b->cap = cap;
    return true;
}

void cc_buf_add(cc_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

void cc_buf_puts(cc_buf *b, const char *s)
{
    cc_buf_add(b, s, strlen(s));
}

void cc_buf_vprintf(cc_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void cc_buf_printf(cc_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cc_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

static void buf_escaped(cc_buf *b, const char *s, size_t max)
{
    size_t i;
    for (i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            cc_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            cc_buf_printf(b, "\\x%02x", c);
        else
            cc_buf_add(b, (const char *)&c, 1);
    }
    if (s[i])
        cc_buf_puts(b, "...");
}

void cc_buf_user(cc_buf *b, const char *s)
{
    cc_buf_puts(b, "\"");
    buf_escaped(b, s, 60);
    cc_buf_puts(b, "\"");
}

void cc_buf_path_key(cc_buf *b, const char *key)
{
    bool ident = key[0] && (isalpha((unsigned char)key[0]) || key[0] == '_');
    for (const char *p = key; ident && *p; p++)
        ident = isalnum((unsigned char)*p) || *p == '_';
    if (ident) {
        cc_buf_puts(b, ".");
        cc_buf_puts(b, key);
    } else {
        cc_buf_puts(b, "[\"");
        buf_escaped(b, key, 80);
        cc_buf_puts(b, "\"]");
    }
}

const char *cc_buf_str(const cc_buf *b)
{
    return b->p && !b->oom ? b->p : "";
}

char *cc_buf_take(cc_buf *b)
{
    char *p = b->oom ? NULL : b->p;
    if (b->oom)
        cc_free(b->p);
    else if (!p)
        p = cc_strdup("");
    cc_buf_init(b);
    return p;
}

/* ---- did you mean ----------------------------------------------------- */

unsigned cc_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 128 || lb > 128)
        return 255;
    unsigned row[129];
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            unsigned best = diag + cost;
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb] > 255 ? 255 : row[lb];
}

/* |a| and |b| differ by more than |limit| edits when their lengths do. */
static bool too_far(size_t la, size_t lb, unsigned limit)
{
    return (la > lb ? la - lb : lb - la) > limit;
}

const char *cc_suggest(const char *word, const void *base, size_t n, size_t stride)
{
    size_t wl = strlen(word);
    /* Close enough to be a typo: a couple of edits, more for long names. */
    unsigned limit = wl >= 24 ? 4 : wl >= 10 ? 3 : wl >= 4 ? 2 : 1;
    const char *best = NULL;
    unsigned best_score = UINT_MAX;
    for (size_t i = 0; i < n; i++) {
        const char *cand = *(const char *const *)((const char *)base + i * stride);
        size_t cl = strlen(cand);
        unsigned d = 255;
        if (!too_far(wl, cl, limit))
            d = cc_edit_distance(word, cand);
        /* "keepalive_time_ms" for "grpc.keepalive_time_ms": a missing
         * "grpc." prefix is not five mistakes. */
        if (strncmp(cand, "grpc.", 5) == 0 && strncmp(word, "grpc.", 5) != 0 && !too_far(wl, cl - 5, limit)) {
            unsigned d2 = cc_edit_distance(word, cand + 5);
            if (d2 < d)
                d = d2;
        }
        if (d > limit)
            continue;
        /* Twice the distance, one less when the word is a prefix of the
         * candidate: "grpc.keepalive_timeout" is closer to
         * "grpc.keepalive_timeout_ms" than to "grpc.keepalive_time_ms". */
        unsigned score = 2 * d - (strncasecmp(cand, word, wl) == 0 && d > 0 ? 1 : 0);
        if (score < best_score) {
            best_score = score;
            best = cand;
        }
    }
    return best;
}

/* ---- loading ---------------------------------------------------------- */

static void diag_set(rl_chancfg_diag *diag, int line, int column, long pos, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void diag_set(rl_chancfg_diag *diag, int line, int column, long pos, const char *fmt, ...)
{
    if (!diag)
        return;
    diag->line = line;
    diag->column = column;
    diag->position = pos;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(diag->text, sizeof(diag->text), fmt, ap);
    va_end(ap);
    for (char *p = diag->text; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
}

int rl_chancfg_parse(const char *buf, size_t len, rl_chancfg **out, rl_chancfg_diag *diag)
{
    *out = NULL;
    if (len > RL_CHANCFG_MAX_BYTES) {
        diag_set(diag, 0, 0, -1, "file is %zu bytes; the limit is %zu", len, RL_CHANCFG_MAX_BYTES);
        return RL_ETOOBIG;
    }
    rl_chancfg *cfg = cc_malloc(sizeof(*cfg));
    if (!cfg) {
        diag_set(diag, 0, 0, -1, "out of memory");
        return RL_ENOMEM;
    }
    json_error_t err;
    /* Duplicate keys are refused: with them the later value silently wins,
     * which is the kind of surprise this tool exists to catch. */
    cfg->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    if (!cfg->root) {
        cc_free(cfg);
        /* jansson reports most of its allocation failures as an error
         * without text (see "Limits" in the README). */
        if (json_error_code(&err) == json_error_out_of_memory || !err.text[0]) {
            diag_set(diag, 0, 0, -1, "out of memory");
            return RL_ENOMEM;
        }
        diag_set(diag, err.line > 0 ? err.line : 0, err.column > 0 ? err.column : 0, err.position, "%s", err.text);
        return RL_EPARSE;
    }
    *out = cfg;
    if (diag)
        diag_set(diag, 0, 0, -1, "ok");
    return 0;
}

int rl_chancfg_load(const char *path, rl_chancfg **out, rl_chancfg_diag *diag)
{
    *out = NULL;
    /* O_NONBLOCK and O_NOCTTY, then a regular file only: a FIFO no one
     * writes would block open() and read() for ever (issue 21), and a
     * device is no config. A submission's file goes through
     * rl_file_read_untrusted and rl_chancfg_parse instead (lib/rl_file.h). */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        diag_set(diag, 0, 0, -1, "cannot open: %s", strerror(e));
        return e == ENOENT ? RL_ENOTFOUND : RL_ESYS;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        diag_set(diag, 0, 0, -1, "not a regular file (a FIFO, device, socket or folder is no config)");
        close(fd);
        return RL_EINVAL;
    }
    /* Read in a loop rather than trusting st_size: the file may grow. */
    size_t cap = 4096, len = 0;
    char *buf = cc_malloc(cap);
    int rc = 0;
    if (!buf) {
        rc = RL_ENOMEM;
        diag_set(diag, 0, 0, -1, "out of memory");
        goto fail_close;
    }
    for (;;) {
        if (len == cap) {
            if (cap > RL_CHANCFG_MAX_BYTES) {
                rc = RL_ETOOBIG;
                diag_set(diag, 0, 0, -1, "file is above the limit of %zu bytes", RL_CHANCFG_MAX_BYTES);
                goto fail_buf;
            }
            char *bigger = cc_malloc(cap * 2);
            if (!bigger) {
                rc = RL_ENOMEM;
                diag_set(diag, 0, 0, -1, "out of memory");
                goto fail_buf;
            }
            memcpy(bigger, buf, len);
            cc_free(buf);
            buf = bigger;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + len, cap - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = RL_ESYS;
            diag_set(diag, 0, 0, -1, "cannot read: %s", strerror(errno));
            goto fail_buf;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    rc = rl_chancfg_parse(buf, len, out, diag);
    cc_free(buf);
    return rc;

fail_buf:
    cc_free(buf);
fail_close:
    close(fd);
    return rc;
}

void rl_chancfg_free(rl_chancfg *cfg)
{
    if (!cfg)
        return;
    json_decref(cfg->root);
    cc_free(cfg);
}

/* ---- the report ------------------------------------------------------- */

void rl_chancfg_report_init(rl_chancfg_report *report)
{
    memset(report, 0, sizeof(*report));
}

void rl_chancfg_report_fini(rl_chancfg_report *report)
{
    for (size_t i = 0; i < report->nfindings; i++) {
        cc_free(report->findings[i].path);
        cc_free(report->findings[i].why);
    }
    cc_free(report->findings);
    rl_chancfg_report_init(report);
}

int rl_chancfg_report_add(rl_chancfg_report *report, rl_chancfg_severity severity, const char *rule, const char *path,
                          const char *why)
{
    if (report->nfindings == report->cap) {
        size_t cap = report->cap ? report->cap * 2 : 16;
        rl_chancfg_finding *f = cc_malloc(cap * sizeof(*f));
        if (!f)
            return RL_ENOMEM;
        if (report->nfindings)
            memcpy(f, report->findings, report->nfindings * sizeof(*f));
        cc_free(report->findings);
        report->findings = f;
        report->cap = cap;
    }
    char *p = cc_strdup(path);
    char *w = cc_strdup(why);
    if (!p || !w) {
        cc_free(p);
        cc_free(w);
        return RL_ENOMEM;
    }
    rl_chancfg_finding *f = &report->findings[report->nfindings++];
    f->severity = severity;
    f->rule = rule;
    f->path = p;
    f->why = w;
    if (severity == RL_CHANCFG_ERROR)
        report->nerrors++;
    else
        report->nwarnings++;
    return 0;
}

const rl_chancfg_finding *rl_chancfg_report_find(const rl_chancfg_report *report, const char *rule)
{
    for (size_t i = 0; i < report->nfindings; i++)
        if (strcmp(report->findings[i].rule, rule) == 0)
            return &report->findings[i];
    return NULL;
}
