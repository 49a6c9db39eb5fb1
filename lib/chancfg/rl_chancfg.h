/* rl_chancfg: load, check and apply a relaylab channel config (JSON).
 *
 * A channel config states both ends of a gRPC connection and what sits between
 * them: the client's channel args and service config, the server's channel args,
 * and the idle timeout of the NAT or load balancer on the path. The checker
 * knows the rules that make the two sides agree (keepalive against ping policy
 * and idle timeouts, retry policy per gRFC A6) and reports every broken one
 * with a stable rule id, a JSON path and one line of why. The format and the
 * rules are documented in channel_config/README.md.
 *
 * This library is meant for reuse: it never aborts on out-of-memory, it
 * returns RL_ENOMEM and leaves nothing allocated. It lives in lib/chancfg/
 * and is its own archive (librlchancfg.a): of librelaylab it uses rl_err
 * alone, plus the protobuf-c descriptors of relaylab.proto (the services and
 * methods a service config may name). It calls into gRPC only in
 * rl_chancfg_grpc_verdict; everything else is plain C over jansson, and
 * grpc_channel_args are only built. A loaded config is read-only: several
 * threads may check it and build args from it at once. Only
 * rl_chancfg_set_alloc_funcs and rl_chancfg_grpc_verdict touch process-wide
 * state.
 *
 * Modules: rl_chancfg.c (loading, the arg catalogue, the report),
 * rl_chancfg_rules.c and rl_chancfg_sc.c (the checker; the second judges the
 * service config), rl_chancfg_values.c (reading values as gRPC does),
 * rl_chancfg_args.c (building args), rl_chancfg_world.c (world files),
 * rl_chancfg_probe.c (gRPC's own verdict). */
#ifndef RL_CHANCFG_H
#define RL_CHANCFG_H

#include <grpc/grpc.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rl_err.h"

typedef struct rl_chancfg rl_chancfg; /* opaque; a loaded config */

/* Which end of the connection an arg is for. */
typedef enum rl_chancfg_side {
    RL_CHANCFG_CLIENT,
    RL_CHANCFG_SERVER,
} rl_chancfg_side;

/* ---- loading ---------------------------------------------------------- */

/* Why a config could not be loaded: a JSON syntax error (with its position),
 * an unreadable file or out-of-memory. */
typedef struct rl_chancfg_diag {
    int line;       /* 1-based; 0 when the problem has no position */
    int column;     /* 1-based, in characters; 0 likewise */
    long position;  /* byte offset; -1 when unknown */
    char text[256]; /* one line, no trailing newline */
} rl_chancfg_diag;

/* Files above this size are refused with RL_ETOOBIG. */
#define RL_CHANCFG_MAX_BYTES ((size_t)1024 * 1024)

/* Reads and parses the config file |path| into |*out|. Only JSON syntax is
 * judged here (duplicate keys count as syntax errors, because the later value
 * would silently win); every other problem is a finding of rl_chancfg_check,
 * so a tool can report them all at once.
 * The file must be a regular file: a FIFO, device, socket or folder is
 * refused at once with RL_EINVAL, never waited on. A submission's file
 * should be read with rl_file_read_untrusted (lib/rl_file.h) and given to
 * rl_chancfg_parse: that also refuses links out of its folder.
 * Returns 0, RL_ENOTFOUND (no such file), RL_EINVAL (not a regular file),
 * RL_ESYS (unreadable: |diag| says why), RL_ETOOBIG, RL_EPARSE (|diag| has
 * line and column) or RL_ENOMEM.
 * |diag| may be NULL. On success the caller frees |*out| with rl_chancfg_free. */
int rl_chancfg_load(const char *path, rl_chancfg **out, rl_chancfg_diag *diag);

/* Same as rl_chancfg_load for |len| bytes at |buf| (need not be
 * NUL-terminated). Returns 0, RL_ETOOBIG, RL_EPARSE or RL_ENOMEM. */
int rl_chancfg_parse(const char *buf, size_t len, rl_chancfg **out, rl_chancfg_diag *diag);

/* Frees |cfg|; accepts NULL. */
void rl_chancfg_free(rl_chancfg *cfg);

/* Replaces the allocator of this library (not jansson's: see
 * json_set_alloc_funcs; the probe's gRPC objects are gRPC's). For tests that
 * inject allocation failures and for embedders with their own heap. Not
 * thread-safe: call before any other function; NULLs restore malloc and
 * free. */
void rl_chancfg_set_alloc_funcs(void *(*malloc_fn)(size_t), void (*free_fn)(void *));

/* ---- checking --------------------------------------------------------- */

typedef enum rl_chancfg_severity {
    RL_CHANCFG_ERROR,   /* the config misbehaves: gRPC refuses it, ignores it, or
                         * the connection fails in the field */
    RL_CHANCFG_WARNING, /* legal and working, but probably not what was meant */
} rl_chancfg_severity;

typedef struct rl_chancfg_finding {
    rl_chancfg_severity severity;
    const char *rule; /* stable id, e.g. "keepalive.idle-timeout"; static storage */
    char *path;       /* JSON path of the offending (or missing) value, e.g.
                       * $.client["grpc.keepalive_time_ms"]; owned by the report */
    char *why;        /* one line, no newline, user text escaped; owned likewise */
} rl_chancfg_finding;

typedef struct rl_chancfg_report {
    rl_chancfg_finding *findings; /* in file order within each rule family */
    size_t nfindings;
    size_t cap;       /* allocated slots */
    size_t nerrors;   /* findings with RL_CHANCFG_ERROR */
    size_t nwarnings; /* findings with RL_CHANCFG_WARNING */
} rl_chancfg_report;

void rl_chancfg_report_init(rl_chancfg_report *report);
/* Frees every finding; the report is empty (and reusable) afterwards. */
void rl_chancfg_report_fini(rl_chancfg_report *report);

/* Adds a finding; |rule| must be static. For callers that add verdicts of
 * their own (the CLI adds gRPC's). Returns 0 or RL_ENOMEM. */
int rl_chancfg_report_add(rl_chancfg_report *report, rl_chancfg_severity severity, const char *rule, const char *path,
                          const char *why);

/* The first finding of |rule| in |report|, or NULL. */
const rl_chancfg_finding *rl_chancfg_report_find(const rl_chancfg_report *report, const char *rule);

/* Checks every rule against |cfg| and appends the findings to |report|
 * (initialised by the caller). Returns 0 whatever was found (look at
 * report->nerrors), or RL_ENOMEM (the report then holds what was found so far
 * and must still be finalised). */
int rl_chancfg_check(const rl_chancfg *cfg, rl_chancfg_report *report);

/* The catalogue of rules, for --help, docs and tests. */
typedef struct rl_chancfg_rule {
    const char *id;
    rl_chancfg_severity severity;
    const char *summary; /* one line */
} rl_chancfg_rule;

/* Returns the static table and its length in |*n|. */
const rl_chancfg_rule *rl_chancfg_rules(size_t *n);

/* ---- applying --------------------------------------------------------- */

/* Builds the channel args for one side: every arg of that side in the file,
 * and for the client the service config under GRPC_ARG_SERVICE_CONFIG,
 * followed by copies of the |nextra| args at |extra| (integer and string args
 * only; may be NULL/0). Booleans become integers 0/1 as gRPC reads them.
 * The result owns all its strings and does not refer to |cfg|; free it with
 * rl_chancfg_args_free. Refuses a config the checker finds errors in.
 * Returns 0, RL_EINVAL (the config has errors, or a pointer arg in |extra|)
 * or RL_ENOMEM. */
int rl_chancfg_channel_args(const rl_chancfg *cfg, rl_chancfg_side side, const grpc_arg *extra, size_t nextra,
                            grpc_channel_args **out);

/* Loads |path| and builds |side|'s args in one step, for programs that take
 * --config FILE. Returns 0 with *out (free with rl_chancfg_args_free), or an
 * RL_E code with one line in |err|: the JSON position, or the first rule the
 * config breaks (bin/channel-config check lists them all). */
int rl_chancfg_load_args(const char *path, rl_chancfg_side side, grpc_channel_args **out, char *err, size_t errlen);

/* Frees args made by rl_chancfg_channel_args; accepts NULL. */
void rl_chancfg_args_free(grpc_channel_args *args);

/* The client's service config as compact JSON text, for GRPC_ARG_SERVICE_CONFIG.
 * |*out| is NULL when the config has none. The caller frees |*out| with free()
 * (or the function given to rl_chancfg_set_alloc_funcs).
 * Returns 0 or RL_ENOMEM. */
int rl_chancfg_service_config(const rl_chancfg *cfg, char **out);

typedef enum rl_chancfg_format {
    RL_CHANCFG_FORMAT_PYTHON, /* options=[("grpc.x", 1), ...] for grpc.insecure_channel */
    RL_CHANCFG_FORMAT_NODE,   /* {"grpc.x": 1, ...} for @grpc/grpc-js */
} rl_chancfg_format;

/* Renders one side's args as source text in |format|, one arg a line, the
 * service config as a JSON string under "grpc.service_config". The caller
 * frees |*out| like rl_chancfg_service_config's. Refuses a config with errors.
 * Returns 0, RL_EINVAL or RL_ENOMEM. */
int rl_chancfg_format_args(const rl_chancfg *cfg, rl_chancfg_side side, rl_chancfg_format format, char **out);

/* ---- reading values (for graders and programs that act on a config) ---- */

/* The value gRPC 1.51 will use for the integer or boolean arg |name| on
 * |side|: the configured one when it is valid, else gRPC's default (INT32_MAX
 * for "off"/"infinite"; INT64_MIN where gRPC computes the default at run
 * time). |*configured| (may be NULL) says which.
 * Returns 0, or RL_ENOTFOUND if |name| is not an integer arg of that side. */
int rl_chancfg_effective_int(const rl_chancfg *cfg, rl_chancfg_side side, const char *name, int64_t *value,
                             bool *configured);

/* The intermediary's idle timeout and kind ("nat", "l4-lb", ...; static or
 * owned by |cfg|). Returns 0, or RL_ENOTFOUND when none is declared (or it
 * is invalid). */
int rl_chancfg_intermediary(const rl_chancfg *cfg, int64_t *idle_timeout_ms, const char **kind);

/* One method's settings from the service config, looked up as gRPC does:
 * the exact {service, method} name, else {service}, else the default {}. */
typedef struct rl_chancfg_method {
    bool has_timeout;
    int64_t timeout_ms;
    bool has_retry;
    int max_attempts; /* as gRPC uses it: clamped to 5 */
    int64_t initial_backoff_ms;
    int64_t max_backoff_ms;
    double backoff_multiplier;
    uint32_t retryable_codes; /* bit (1u << code) for each retryable grpc_status_code */
} rl_chancfg_method;

/* Fills |out| for /|service|/|method|. A retry policy the checker would
 * refuse leaves has_retry false. Returns 0, or RL_ENOTFOUND when no
 * methodConfig names the method (or the config has no service config). */
int rl_chancfg_method_config(const rl_chancfg *cfg, const char *service, const char *method, rl_chancfg_method *out);

/* ---- the world a config is judged in ---------------------------------- */

/* A config states choices: both sides' args and the service config. What
 * surrounds the connection is not a choice: the intermediary on the path and
 * its idle timeout, the longest deadline calls get, and server args a platform
 * team fixes. A config may describe that world itself (its `intermediary`
 * and `calls` sections, for a tool run on a real deployment); an exercise
 * states it instead, in a world file, and judges every submission in it.
 *
 * A world file is one deployment, or several of which a variant picks one:
 *
 *   {"description": "...", "default": "azure-lb",
 *    "deployments": [{"name": "azure-lb", "description": "...",
 *                     "intermediary": {"kind": "l4-lb", "idle_timeout_ms": 240000},
 *                     "calls": {"longest_deadline_ms": 120000},
 *                     "server": {"grpc.http2.min_ping_interval_without_data_ms": 120000},
 *                     "backend": {"unavailable_in_a_row": 3}}, ...]}
 *
 * A deployment's intermediary, calls and server sections follow the channel
 * config format and must pass its rules; every section is optional. backend
 * is the world's alone: how many attempts in a row a restarting backend fails
 * with UNAVAILABLE before it answers (1..4), which a retry policy must outlast. */
typedef struct rl_chancfg_world {
    char name[64];            /* the deployment's name: [a-z0-9._-], 1..63 bytes */
    char description[256];    /* one line, control bytes replaced; may be "" */
    size_t index, count;      /* which deployment of how many in the file */
    bool by_seed;             /* picked by hashing the variant (not by name or default) */
    int unavailable_in_a_row; /* backend.unavailable_in_a_row; 0: not stated */
    rl_chancfg *deployment;   /* owned: a config holding only the world's sections */
} rl_chancfg_world;

/* Loads the world file |path| and picks one deployment: the one named
 * |variant|, else (|variant| a seed such as a student id) the one at
 * FNV-1a-64(variant) mod count, else (|variant| NULL or "") the file's
 * "default" or its first. The pick depends on the seed and the list only, so
 * one seed keeps its deployment on every machine. Returns 0 with |*out|
 * filled (release with rl_chancfg_world_fini), or RL_ENOTFOUND/RL_ESYS/
 * RL_EPARSE/RL_EINVAL (a malformed world) /RL_ENOMEM with one line in |err|. */
int rl_chancfg_world_load(const char *path, const char *variant, rl_chancfg_world *out, char *err, size_t errlen);

/* Frees what |w| owns; accepts a zeroed or finalised world. */
void rl_chancfg_world_fini(rl_chancfg_world *w);

/* One line for people: "azure-lb: an l4-lb that drops connections idle for
 * 240000 ms; calls run up to 120000 ms; the servers' ping policy is fixed:
 * grpc.http2.min_ping_interval_without_data_ms 120000". Always terminated. */
void rl_chancfg_world_describe(const rl_chancfg_world *w, char *buf, size_t len);

/* The config |cfg| as it stands in |w|: a new config (free with
 * rl_chancfg_free) whose intermediary and calls are the world's (absent when
 * the world has none) and whose server args are |cfg|'s with the world's
 * fixed ones in their place. Everything |cfg| declared that the world
 * replaces with something else (an intermediary, a call deadline, a fixed
 * server arg set to another value) is appended to |notes| as a warning
 * "world.ignored" at its path. A |cfg| that is not a JSON object, or whose
 * server section is not one, is copied as it is (the checker reports it).
 * Returns 0 or RL_ENOMEM (nothing allocated in |*out|). */
int rl_chancfg_in_world(const rl_chancfg *cfg, const rl_chancfg_world *w, rl_chancfg **out, rl_chancfg_report *notes);

/* The calls section's longest_deadline_ms. Returns 0, or RL_ENOTFOUND when
 * the config has none (or it is invalid). */
int rl_chancfg_calls_deadline(const rl_chancfg *cfg, int64_t *ms);

/* ---- gRPC's own verdict ----------------------------------------------- */

typedef struct rl_chancfg_verdict {
    bool accepted;     /* gRPC built a working channel from the client args */
    int status;        /* grpc_status_code of the probe call */
    char reason[1024]; /* when rejected: gRPC's own words from its ERROR log
                        * line; when accepted: any ERROR lines gRPC logged
                        * (e.g. "clamped retryPolicy.maxAttempts at 5"), or "" */
} rl_chancfg_verdict;

/* Hands the client args (service config included) to gRPC: creates a channel
 * to a loopback port that is bound but not listening, and makes one call with
 * a |timeout_ms| deadline. gRPC turns a channel with an invalid service config
 * into a lame channel whose calls fail INVALID_ARGUMENT at once; a valid one
 * fails to connect (UNAVAILABLE) or runs out of time. The real reason is in
 * gRPC's ERROR log, so this temporarily replaces gRPC's log function (see
 * gpr_set_log_function); afterwards records go to stderr in gRPC's usual
 * format. Calls grpc_init/grpc_shutdown itself. Not for concurrent use.
 * Unlike the args builders it accepts a config with checker errors (that is
 * the point). Returns 0, RL_ESYS (no loopback socket), RL_EGRPC (the probe
 * call could not be started), RL_ETIMEOUT or RL_ENOMEM. */
int rl_chancfg_grpc_verdict(const rl_chancfg *cfg, int timeout_ms, rl_chancfg_verdict *out);

#endif
