/* rl_chancfg_int: what the modules of the channel-config library share and
 * callers do not see: the arg catalogue, allocation that can fail, a growable
 * string with a sticky out-of-memory flag, and small parsers (durations,
 * status codes, did-you-mean). */
#ifndef RL_CHANCFG_INT_H
#define RL_CHANCFG_INT_H

#include <jansson.h>
#include <stdarg.h>

#include "rl_chancfg.h"

struct rl_chancfg {
    json_t *root; /* owned; any JSON value (the checker judges its shape) */
};

/* ---- allocation (every failure is reported, never fatal) ---- */
void *cc_malloc(size_t n);
void cc_free(void *p);
char *cc_strdup(const char *s);

/* A growable NUL-terminated string. After an allocation failure |oom| stays
 * set, further appends do nothing, and the owner reports RL_ENOMEM once. */
typedef struct cc_buf {
    char *p; /* NULL until the first append */
    size_t len;
    size_t cap;
    bool oom;
} cc_buf;

void cc_buf_init(cc_buf *b);
void cc_buf_fini(cc_buf *b);
void cc_buf_add(cc_buf *b, const char *s, size_t n);
void cc_buf_puts(cc_buf *b, const char *s);
void cc_buf_printf(cc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cc_buf_vprintf(cc_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Appends user-supplied text for a one-line message: quoted, control and
 * non-ASCII bytes escaped, cut at 60 bytes with "...". */
void cc_buf_user(cc_buf *b, const char *s);
/* Appends one step of a JSON path: .key when |key| is an identifier, else
 * ["key"] with escapes. */
void cc_buf_path_key(cc_buf *b, const char *key);
/* The content (never NULL: "" when empty or after OOM). */
const char *cc_buf_str(const cc_buf *b);
/* Hands the string over to the caller (free with cc_free); NULL after OOM. */
char *cc_buf_take(cc_buf *b);

/* ---- channel args ---- */
enum { CC_SIDE_CLIENT = 1u, CC_SIDE_SERVER = 2u, CC_SIDE_BOTH = 3u };

typedef enum cc_argtype {
    CC_INT,     /* a C int; JSON integer within [min, max] */
    CC_BOOL,    /* 0 or 1 (JSON true/false accepted) */
    CC_STRING,  /* a JSON string; |choices| lists the legal values if set */
    CC_POINTER, /* takes a C object: cannot come from a file */
} cc_argtype;

#define CC_NODEFAULT INT64_MIN

typedef struct cc_argdef {
    const char *name;  /* the string gRPC reads; first field (see cc_suggest) */
    const char *macro; /* the C macro in grpc_types.h */
    unsigned sides;    /* CC_SIDE_* the arg has an effect on */
    cc_argtype type;
    int64_t min, max;               /* CC_INT only */
    int64_t def_client, def_server; /* gRPC 1.51's defaults; INT32_MAX = off */
    const char *const *choices;     /* CC_STRING: NULL-terminated, or NULL */
} cc_argdef;

const cc_argdef *cc_argdef_find(const char *name);
const cc_argdef *cc_argdef_table(size_t *n);

/* How a value of the file stands, for rules that combine several. */
typedef enum cc_state {
    CC_ABSENT, /* not configured: gRPC's default applies */
    CC_VALID,
    CC_INVALID, /* configured but wrong (another rule reports it) */
} cc_state;

/* Reads the integer or boolean arg |name| of |side| from |cfg|: the value if
 * valid, else the side's default. Returns the state. */
cc_state cc_arg_int(const rl_chancfg *cfg, unsigned side, const char *name, int64_t *value);
/* Whether |v| is a legal value of |def| (type and range); |*ival| gets the
 * integer for CC_INT/CC_BOOL. */
bool cc_arg_value_ok(const cc_argdef *def, const json_t *v, int64_t *ival);

/* The section object ("client", "server") or NULL if absent or not an object. */
const json_t *cc_section(const rl_chancfg *cfg, const char *name);

/* ---- did you mean ---- */
/* Levenshtein distance, case-insensitive; saturates at 255 and gives up on
 * strings longer than 128 bytes (returns 255). */
unsigned cc_edit_distance(const char *a, const char *b);
/* The closest of |n| candidates (each an object starting with a const char *
 * name, |stride| bytes apart) if it is close enough to be a likely typo of
 * |word|, else NULL. */
const char *cc_suggest(const char *word, const void *base, size_t n, size_t stride);

/* ---- service config values ---- */
/* A proto3 JSON duration "1.5s": digits, up to 9 fractional digits, "s";
 * seconds in [0, 315576000000]. */
typedef struct cc_duration {
    int64_t seconds;
    int32_t nanos;
} cc_duration;
/* Returns true and fills |d| if |s| is a duration; else false with a static
 * reason in |*why|. */
bool cc_parse_duration(const char *s, cc_duration *d, const char **why);
/* The duration in whole milliseconds, as gRPC 1.51 keeps it (truncated). */
int64_t cc_duration_ms(const cc_duration *d);

/* Status code names as the service config spells them. */
const char *cc_status_name(int code);      /* NULL if not 0..16 */
int cc_status_from_name(const char *name); /* -1 if not a name */
extern const char *const cc_status_names[17];

/* Whether |d| is a whole number, without the undefined behaviour of casting
 * a huge double to an integer (beyond 2^53 every double is whole). */
static inline bool cc_is_integral(double d)
{
    if (d >= 9007199254740992.0 || d <= -9007199254740992.0)
        return true;
    return d == (double)(long long)d;
}

/* Reads a service-config number that gRPC 1.51 also takes as a quoted string
 * ("3"). Returns 1 for a JSON number, 2 for a quoted number, 0 otherwise. */
int cc_sc_number(const json_t *v, double *out);

/* ---- for gRPC's verdict ---- */
/* The client's valid args plus its service config whatever it is (the
 * verdict is wanted exactly when it is wrong). Free with rl_chancfg_args_free.
 * Returns 0 or RL_ENOMEM. */
int cc_client_args_lenient(const rl_chancfg *cfg, grpc_channel_args **out);

#endif
