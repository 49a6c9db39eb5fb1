/* ctx: the run's context as the exercises and the driver's files read it:
 * run.h's accessors over driver.h's struct gr_ctx, and the flag a signal to
 * the grader sets. It sits beneath the driver (run.c) and its helpers
 * (submission.c, baselines.c), so that none of them calls back into run.c. */
#include "driver.h"
#include "rl_alloc.h"
#include "rl_channel.h"

#include <string.h>

volatile sig_atomic_t gr_driver_interrupted;

grpc_channel *gr_channel_create(gr_ctx *ctx, const char *target, const grpc_channel_args *extra)
{
    (void)ctx;
    return rl_channel_isolated(target, extra);
}

/* ---- accessors ---- */

const char *gr_config_path(gr_ctx *ctx)
{
    return ctx->ex->kind == GR_SUBMISSION_CONFIG ? ctx->opt->submission : NULL;
}

const char *gr_submission_dir(gr_ctx *ctx)
{
    return ctx->opt->dir;
}

int gr_submission_dir_fd(gr_ctx *ctx)
{
    return ctx->opt->dir_fd;
}

const char *gr_config_rel(gr_ctx *ctx)
{
    return ctx->ex->kind == GR_SUBMISSION_CONFIG && ctx->opt->dir_fd > 0 ? ctx->opt->config_rel : NULL;
}

const char *gr_world_path(gr_ctx *ctx)
{
    return ctx->opt->world;
}

const char *gr_variant(gr_ctx *ctx)
{
    return ctx->opt->variant;
}

const char *gr_made_for(gr_ctx *ctx)
{
    return ctx->opt->made_for;
}

const char *gr_identity_note(gr_ctx *ctx)
{
    return ctx->opt->identity_note;
}

const char *gr_tag(gr_ctx *ctx)
{
    return ctx->tag;
}

void gr_note_tag(gr_ctx *ctx, const char *tag)
{
    if (gr_tag_sent(ctx, tag))
        return;
    RL_GROW(ctx->tags, ctx->ntags, ctx->captags, 16);
    ctx->tags[ctx->ntags++] = rl_xstrdup(tag);
}

bool gr_tag_sent(gr_ctx *ctx, const char *tag)
{
    for (size_t i = 0; i < ctx->ntags; i++)
        if (strcmp(ctx->tags[i], tag) == 0)
            return true;
    return false;
}

int gr_run_index(gr_ctx *ctx)
{
    return ctx->run_index;
}

int gr_run_count(gr_ctx *ctx)
{
    return ctx->opt->runs;
}

void *gr_world(gr_ctx *ctx)
{
    return ctx->world;
}

const gr_scenario *gr_current_scenario(gr_ctx *ctx)
{
    return ctx->sc;
}

const char *gr_bin_dir(gr_ctx *ctx)
{
    return ctx->opt->bin_dir;
}

const char *gr_private_dir(gr_ctx *ctx)
{
    return ctx->private_dir;
}

bool gr_interrupted(gr_ctx *ctx)
{
    return gr_driver_interrupted || gr_watchdog_fired(&ctx->wd);
}
