/* rl_chancfg_rules: what the checker's files share. rl_chancfg_rules.c
 * walks a config (the sections, each arg, the rules across values) and
 * rl_chancfg_sc.c judges the client's service config; both add findings to
 * one check through the helpers here. Callers see only rl_chancfg_check
 * (rl_chancfg.h). Like the rest of the library, nothing here aborts: an
 * allocation failure sets the check's rc to RL_ENOMEM and the walk goes on
 * adding nothing. */
#ifndef RL_CHANCFG_RULES_H
#define RL_CHANCFG_RULES_H

#include "rl_chancfg_int.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* One run of rl_chancfg_check. */
typedef struct cc_check {
    const rl_chancfg *cfg;
    rl_chancfg_report *rep;
    int rc;                      /* first RL_ENOMEM, sticky */
    int64_t longest_deadline_ms; /* from methodConfig timeouts and calls; 0 = none */
    char *first_retry_path;      /* path of the first retryPolicy, or NULL; owned */
    bool has_throttling;         /* the service config has retryThrottling */
    char **names;                /* "/service/method" of methodConfig names seen; owned */
    size_t nnames, capnames;
} cc_check;

/* Adds a finding of |rule| at |path| with the message |fmt|; on
 * out-of-memory (also one that |path| met while being built) sets c->rc. */
void cc_check_add(cc_check *c, rl_chancfg_severity sev, const char *rule, const cc_buf *path, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Initialises |b| with |s| quoted and escaped for a message (cc_buf_user)
 * and returns its text; the caller finalises |b|. */
const char *cc_check_user(cc_buf *b, const char *s);

/* Initialises |p| with the JSON path |base| followed by the step |key|
 * (none when NULL); the caller finalises |p|. */
void cc_check_path(cc_buf *p, const char *base, const char *key);

/* The same for the arg |name| of |side| (CC_SIDE_CLIENT or CC_SIDE_SERVER). */
void cc_check_path_arg(cc_buf *p, unsigned side, const char *name);

/* "an object", "a string", ...: |v|'s JSON type for a message. */
const char *cc_json_type(const json_t *v);

/* Reports the key |key| of the object at |base| under |rule| as not |what|,
 * suggesting the closest of the |nknown| names at |known|. */
void cc_check_unknown_key(cc_check *c, const char *rule, const char *base, const char *key, const char *const *known,
                          size_t nknown, const char *what);

/* Judges the client's service config |sc| (any JSON value) by gRFC A6 and
 * gRPC 1.51, at $.client.service_config (rl_chancfg_sc.c). Records in |c|
 * the longest timeout, the first retryPolicy's path and whether throttling
 * is configured, for the rules across values. */
void cc_check_service_config(cc_check *c, const json_t *sc);

#endif
