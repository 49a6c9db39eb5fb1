/* config_check: what both config exercises (keepalive, retry) share: the
 * world they judge in, the submission put into it, and the `check` scenario
 * they open with (the file loads, bin/channel-config's rules find no error in
 * that world, and gRPC itself accepts the client args).
 *
 * The world (intermediary, call deadline, server args a platform fixes)
 * belongs to the exercise: grader/worlds/EXERCISE.json unless the instructor
 * gives --world FILE, one deployment of it picked by --variant SEED. A
 * submission only makes choices; whatever world it declares itself is
 * replaced, and the feedback says so. */
#ifndef GR_CONFIG_CHECK_H
#define GR_CONFIG_CHECK_H

#include "exercise.h"
#include "chancfg/rl_chancfg.h"
#include "run.h"

#include <stdbool.h>
#include <stddef.h>

/* Loads the world exercise |exercise| is judged in: |world_file| or the
 * exercise's own file, the deployment |variant| picks (NULL: the default).
 * Also checks what the exercise needs of it (keepalive: an intermediary;
 * retry: a call deadline the grader can wait for). Returns 0 with |*out|
 * (rl_chancfg_world_fini), or an RL_E code with one line in |err|. */
int gr_config_world(const char *exercise, const char *world_file, const char *variant, rl_chancfg_world *out, char *err,
                    size_t errlen);

/* A submission as the exercise judges it. */
typedef struct gr_config_env {
    rl_chancfg *cfg; /* the submission put into the world */
    rl_chancfg_world world;
    rl_chancfg_report notes; /* world.ignored: what the submission declared in vain */
    char variant[72];        /* the --variant that picked the world by seed, or "" */
    bool other_identity;     /* the folder was made for another identity (gr_made_for) */
    char made_for[48];       /* that identity, printable, or "" for none recorded */
} gr_config_env;

/* Loads the submitted file as its student could read it (rl_file.h: a
 * regular file, inside --dir or the file's own folder once links are
 * followed, at most RL_CHANCFG_MAX_BYTES). Returns 0 with |*out|
 * (rl_chancfg_free), or an RL_E code with one line of why in |err|: the
 * submission's fault, quoting nothing of a file it could not read. */
int gr_config_load(gr_ctx *ctx, rl_chancfg **out, char *err, size_t errlen);

/* Loads the submitted file and puts it into |exercise|'s world. Returns 0
 * with |env| filled, or GR_DECIDED (scenario.h) with |res| filled
 * (FAIL when the file is not valid JSON, ERROR when the world cannot be
 * loaded). Release |env| with gr_config_close either way. */
int gr_config_open(gr_ctx *ctx, const char *exercise, gr_config_env *env, gr_scenario_result *res);
void gr_config_close(gr_config_env *env);

/* "world azure-lb" or "world aws-nlb (picked by variant \"s42\")", and
 * ", not the folder's \"s41\"" inside the brackets when the folder was made
 * for another identity. */
const char *gr_config_world_name(const gr_config_env *env, char *buf, size_t len);

/* The notes in one short clause ("your $.intermediary, $.calls are ignored:
 * the exercise sets the world"), or "" when there are none. */
const char *gr_config_notes(const gr_config_env *env, char *buf, size_t len);

/* What a config exercise is about: true when |cfg| (the config in its
 * world) sets the lesson's own setting; else false with |why| saying what
 * is left out ("no client grpc.keepalive_time_ms: ..."). */
typedef bool (*gr_config_lesson)(const rl_chancfg *cfg, char *why, size_t len);

/* True when |cfg| sets the integer arg |name| on |side| to a value other
 * than gRPC's "off" (INT32_MAX): a lesson's setting that is absent or off
 * teaches nothing. Else false with |why| naming the arg and |what| it does. */
bool gr_config_sets(const rl_chancfg *cfg, rl_chancfg_side side, const char *name, const char *what, char *why,
                    size_t len);

/* The `check` scenario of |exercise|: the checker's rules in the world,
 * gRPC's own verdict on the client args, and |lesson|: a config that
 * breaks no rule because it leaves the lesson's setting out FAILs, and
 * says so first. */
int gr_config_check_run(gr_ctx *ctx, const char *exercise, gr_config_lesson lesson, gr_scenario_result *out);

#endif
