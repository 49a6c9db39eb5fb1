/* channel-config: check a relaylab channel config, or print its client args
 * for Python grpcio or grpc-js. `check` reports every broken rule with its id,
 * JSON path and one line of why, then asks gRPC itself; exit codes are in
 * usage() and channel_config/README.md. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chancfg/rl_chancfg.h"
#include "rl_file.h"

enum {
    EXIT_CLEAN = 0,    /* no errors (warnings allowed unless --strict) */
    EXIT_RULES = 1,    /* rule errors, or gRPC rejected the config */
    EXIT_USAGE = 2,    /* bad usage, unreadable file, invalid JSON */
    EXIT_INTERNAL = 3, /* out of memory, or gRPC's verdict could not be obtained */
};

static void usage(FILE *f)
{
    fputs("usage: channel-config check [--strict] [--no-grpc] [--timeout-ms N]\n"
          "                            [--world WORLD [--variant SEED]] FILE\n"
          "       channel-config args [--format python|node] [--side client|server] FILE\n"
          "       channel-config rules\n"
          "\n"
          "check   reports every broken rule as FILE: error[RULE] JSON-PATH: why, then the\n"
          "        warnings, then gRPC's own verdict on the client args (\"gRPC: accepted\" or\n"
          "        \"gRPC: rejected: <reason>\"); --no-grpc skips asking gRPC, --strict counts\n"
          "        warnings as errors, --timeout-ms bounds gRPC's probe call (default 1000).\n"
          "        --world judges FILE in the deployment of a world file (an exercise's:\n"
          "        grader/worlds/keepalive.json), --variant picks one of its deployments by\n"
          "        name or seed; what FILE declares of the world is then ignored (a warning).\n"
          "args    prints the channel options of one side (default client) for Python\n"
          "        grpcio (options=[...], the default) or grpc-js (--format node); refuses a\n"
          "        config with errors.\n"
          "rules   lists every rule id with its severity and what it catches.\n"
          "\n"
          "exit status: 0 clean (warnings allowed), 1 rule errors or gRPC rejected the config,\n"
          "             2 usage error, unreadable file or invalid JSON,\n"
          "             3 internal failure (out of memory, gRPC's verdict unavailable).\n"
          "The format and every rule: channel_config/README.md.\n",
          f);
}

/* Loads |path| or explains why not on stderr. Returns an exit code. The
 * file is read as rl_file_read_untrusted reads a submission's (a regular
 * file in its own folder once links are followed, capped): the kit runs
 * this over students' folders, as root too, and a FIFO must not hang it
 * nor a link make it quote a file its student could not read. */
static int load(const char *path, rl_chancfg **cfg)
{
    rl_chancfg_diag diag;
    char *buf, why[200];
    size_t len;
    *cfg = NULL;
    int rc = rl_file_read_untrusted(path, NULL, RL_CHANCFG_MAX_BYTES, &buf, &len, why, sizeof why);
    if (rc != 0) {
        fprintf(stderr, "channel-config: %s: %s%s\n", path, why,
                rc == RL_EINVAL ? " (give the config itself, a regular file)" : "");
        return EXIT_USAGE;
    }
    rc = rl_chancfg_parse(buf, len, cfg, &diag);
    free(buf);
    if (rc == 0)
        return EXIT_CLEAN;
    if (rc == RL_EPARSE)
        fprintf(stderr, "%s:%d:%d: invalid JSON: %s\n", path, diag.line, diag.column, diag.text);
    else
        fprintf(stderr, "channel-config: %s: %s\n", path, diag.text);
    return rc == RL_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
}

/* The one FILE operand of subcommand |cmd| ("check", "args"), loaded into
 * |*cfg| with its name in |*path|. Returns 0, or the exit code (usage, or
 * load's) after saying why. */
static int load_operand(int argc, char **argv, const char *cmd, const char **path, rl_chancfg **cfg)
{
    if (optind != argc - 1) {
        fprintf(stderr, "channel-config %s: give exactly one FILE\n", cmd);
        usage(stderr);
        return EXIT_USAGE;
    }
    *path = argv[optind];
    return load(*path, cfg);
}

static void print_findings(FILE *f, const char *path, const rl_chancfg_report *rep, rl_chancfg_severity sev)
{
    for (size_t i = 0; i < rep->nfindings; i++) {
        const rl_chancfg_finding *x = &rep->findings[i];
        if (x->severity == sev && strcmp(x->rule, "grpc.rejected") != 0)
            fprintf(f, "%s: %s[%s] %s: %s\n", path, sev == RL_CHANCFG_ERROR ? "error" : "warning", x->rule, x->path,
                    x->why);
    }
}

static const char *plural(size_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"strict", no_argument, NULL, 's'},
        {"no-grpc", no_argument, NULL, 'n'},
        {"timeout-ms", required_argument, NULL, 't'},
        {"world", required_argument, NULL, 'w'},
        {"variant", required_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool strict = false, ask_grpc = true;
    const char *world_path = NULL, *variant = NULL;
    int timeout_ms = 1000, c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 's': strict = true; break;
        case 'n': ask_grpc = false; break;
        case 'w': world_path = optarg; break;
        case 'v': variant = optarg; break;
        case 't': {
            char *end;
            long v = strtol(optarg, &end, 10);
            if (*end || v < 1 || v > 60000) {
                fprintf(stderr, "channel-config: --timeout-ms wants 1..60000, not \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            timeout_ms = (int)v;
            break;
        }
        case 'h': usage(stdout); return EXIT_CLEAN;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (variant && !world_path && optind == argc - 1) {
        fprintf(stderr, "channel-config check: --variant picks a deployment of a --world file\n");
        return EXIT_USAGE;
    }
    const char *path;
    rl_chancfg *cfg;
    int ex = load_operand(argc, argv, "check", &path, &cfg);
    if (ex)
        return ex;

    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    if (world_path) {
        /* The config's choices in the world's deployment: what it declares
         * of the world itself becomes a world.ignored warning. */
        rl_chancfg_world world;
        char err[512], desc[512];
        int rc = rl_chancfg_world_load(world_path, variant, &world, err, sizeof err);
        if (rc != 0) {
            fprintf(stderr, "channel-config: world %s\n", err);
            rl_chancfg_free(cfg);
            return rc == RL_ENOMEM ? EXIT_INTERNAL : EXIT_USAGE;
        }
        rl_chancfg_world_describe(&world, desc, sizeof desc);
        printf("world: %s%s\n", desc, world.by_seed ? " (picked by --variant's seed)" : "");
        rl_chancfg *judged;
        rc = rl_chancfg_in_world(cfg, &world, &judged, &rep);
        rl_chancfg_world_fini(&world);
        rl_chancfg_free(cfg);
        cfg = judged;
        if (rc != 0) {
            fprintf(stderr, "channel-config: %s: out of memory while applying the world\n", path);
            ex = EXIT_INTERNAL;
            goto out;
        }
    }
    if (rl_chancfg_check(cfg, &rep) != 0) {
        fprintf(stderr, "channel-config: %s: out of memory while checking\n", path);
        ex = EXIT_INTERNAL;
        goto out;
    }
    print_findings(stdout, path, &rep, RL_CHANCFG_ERROR);
    print_findings(stdout, path, &rep, RL_CHANCFG_WARNING);
    if (ask_grpc) {
        rl_chancfg_verdict v;
        int rc = rl_chancfg_grpc_verdict(cfg, timeout_ms, &v);
        if (rc != 0) {
            printf("gRPC: no verdict: %s\n", rl_strerror(rc));
            ex = EXIT_INTERNAL;
        } else if (v.accepted) {
            printf("gRPC: accepted%s%s%s\n", v.reason[0] ? " (it logged: " : "", v.reason, v.reason[0] ? ")" : "");
        } else {
            printf("gRPC: rejected: %s\n", v.reason);
            if (rl_chancfg_report_add(&rep, RL_CHANCFG_ERROR, "grpc.rejected", "$.client.service_config", v.reason) !=
                0) {
                ex = EXIT_INTERNAL;
                goto out;
            }
        }
    }
    printf("%s: %zu %s, %zu %s\n", path, rep.nerrors, plural(rep.nerrors, "error", "errors"), rep.nwarnings,
           plural(rep.nwarnings, "warning", "warnings"));
    if (!ex)
        ex = rep.nerrors || (strict && rep.nwarnings) ? EXIT_RULES : EXIT_CLEAN;
out:
    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(cfg);
    return ex;
}

static int cmd_args(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"side", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    rl_chancfg_format format = RL_CHANCFG_FORMAT_PYTHON;
    rl_chancfg_side side = RL_CHANCFG_CLIENT;
    int c;
    while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (strcmp(optarg, "python") == 0)
                format = RL_CHANCFG_FORMAT_PYTHON;
            else if (strcmp(optarg, "node") == 0)
                format = RL_CHANCFG_FORMAT_NODE;
            else {
                fprintf(stderr, "channel-config: --format is python or node, not \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 's':
            if (strcmp(optarg, "client") == 0)
                side = RL_CHANCFG_CLIENT;
            else if (strcmp(optarg, "server") == 0)
                side = RL_CHANCFG_SERVER;
            else {
                fprintf(stderr, "channel-config: --side is client or server, not \"%s\"\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return EXIT_CLEAN;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    const char *path;
    rl_chancfg *cfg;
    int ex = load_operand(argc, argv, "args", &path, &cfg);
    if (ex)
        return ex;
    rl_chancfg_report rep;
    rl_chancfg_report_init(&rep);
    char *text = NULL;
    if (rl_chancfg_check(cfg, &rep) != 0) {
        fprintf(stderr, "channel-config: %s: out of memory while checking\n", path);
        ex = EXIT_INTERNAL;
        goto out;
    }
    /* stdout stays pasteable: findings go to stderr. */
    print_findings(stderr, path, &rep, RL_CHANCFG_ERROR);
    print_findings(stderr, path, &rep, RL_CHANCFG_WARNING);
    if (rep.nerrors) {
        fprintf(stderr, "%s: %zu %s: fix them first (channel-config check %s)\n", path, rep.nerrors,
                plural(rep.nerrors, "error", "errors"), path);
        ex = EXIT_RULES;
        goto out;
    }
    int rc = rl_chancfg_format_args(cfg, side, format, &text);
    if (rc != 0) {
        fprintf(stderr, "channel-config: %s: %s\n", path, rl_strerror(rc));
        ex = rc == RL_ENOMEM ? EXIT_INTERNAL : EXIT_RULES;
        goto out;
    }
    fputs(text, stdout);
out:
    free(text);
    rl_chancfg_report_fini(&rep);
    rl_chancfg_free(cfg);
    return ex;
}

static int cmd_rules(void)
{
    size_t n;
    const rl_chancfg_rule *r = rl_chancfg_rules(&n);
    for (size_t i = 0; i < n; i++)
        printf("%-30s %-7s %s\n", r[i].id, r[i].severity == RL_CHANCFG_ERROR ? "error" : "warning", r[i].summary);
    return EXIT_CLEAN;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return EXIT_CLEAN;
    }
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "args") == 0)
        return cmd_args(argc - 1, argv + 1);
    if (strcmp(cmd, "rules") == 0 && argc == 2)
        return cmd_rules();
    fprintf(stderr, "channel-config: unknown command \"%s\"\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
