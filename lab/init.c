/* init: `lab init`, `lab stubs` and `lab check`; see init.h. Starters are
 * plain files under starters/ that this module copies; what differs between
 * exercises (which template, which exercises a folder is graded on) is the
 * one table below, so adding an exercise's starter is a row and a folder. */
#include "init.h"

#include "files.h"
#include "status.h"
#include "stubs.h"

#include "rl_alloc.h"
#include "chancfg/rl_chancfg.h"
#include "rl_err.h"
#include "rl_marker.h"
#include "rl_path.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct starter {
    const char *exercise;  /* lab init's argument */
    const char *kind;      /* the template folder under starters/: relay, streamer, shutdown, overload, config */
    const char *exercises; /* what `lab check` grades, space-separated */
    unsigned langs;        /* the languages offered (0: a config exercise, JSON) */
    const char *program;   /* the README's name for what the student builds */
    const char *given;     /* the README: what the skeleton already does */
} starter;

#define GIVEN_SERVER "listening on `RELAYLAB_LISTEN`, the baseline's address in `RELAYLAB_BASELINE`"

/* deadline and cancel grade the same program, so one relay starter serves
 * both and is checked on both. The shutdown starter is that relay the other
 * way round: Process is given (a plain one, which neither the deadline nor
 * the cancel exercise would pass) and the SIGTERM handling, which the relay
 * and streamer starters do for the student, is the TODO; it is graded on
 * shutdown alone. The overload starter gives the server around the relay
 * (a fail-fast channel, the deadline starter's stop on SIGTERM, the state
 * an admission gate keeps); its TODO is Process with the deadline and cancel
 * rules, given plain as in the shutdown starter, and the gate: untouched,
 * the gate lets one call through at a time and refuses the rest with a
 * status naming the TODO, so the starter fails overload, and it answers
 * neither deadline, cancel nor shutdown's drain. */
static const starter starters[] = {
    {"deadline", "relay", "deadline cancel", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "relay",
     GIVEN_SERVER ", stopping on SIGTERM"},
    {"cancel", "relay", "deadline cancel", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "relay",
     GIVEN_SERVER ", stopping on SIGTERM"},
    {"flow", "streamer", "flow", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "streamer",
     "listening on `RELAYLAB_LISTEN`, stopping on SIGTERM"},
    {"keepalive", "config", "keepalive", 0, NULL, NULL},
    {"retry", "config", "retry", 0, NULL, NULL},
    {"shutdown", "shutdown", "shutdown", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "relay",
     GIVEN_SERVER ", and Process: Lookup then Work, with a way to cancel the downstream calls in flight"},
    {"balance", "config", "balance", 0, NULL, NULL},
    {"overload", "overload", "overload", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "relay",
     GIVEN_SERVER ", stopping on SIGTERM, a fail-fast channel to the baseline, and the state your gate keeps "
                  "(slots, waiting calls, a service-time average)"},
    {"coverage", "coverage", "coverage", LANG_PYTHON | LANG_NODE | LANG_C | LANG_GO, "tunnel agent",
     "dialling `RELAYLAB_TUNNEL`, the streams (opened, named by their server, each call worked and answered, "
     "half-closed on request), grouping them by server once a tick, and closing them all on SIGTERM"},
};

typedef struct lang_info {
    unsigned bit;
    const char *name;  /* --lang's word */
    const char *title; /* for the README */
    const char *stubs; /* README: what the folder holds besides the code */
    const char *build; /* README: a section on building, "" when nothing is built */
} lang_info;

#define C_BUILD                                                                                                        \
    "## Build it\n\n"                                                                                                  \
    "`make` builds the program from your code and `gen/` (warnings are errors). The grader runs `./run` in a\n"        \
    "sandbox, as user nobody, that shows this folder, `/usr` and little else: it cannot build, so the program\n"       \
    "is built before grading, outside the sandbox. `lab check` runs `make` first; if you start the grader or\n"        \
    "`./run` yourself, run `make` before. The top of the `.c` file explains how it uses the gRPC core (one\n"          \
    "thread, one completion queue, a struct per call whose tags say what to do when a batch completes).\n\n"

#define GO_BUILD                                                                                                       \
    "## Build it\n\n"                                                                                                  \
    "`make` builds the program from your Go files and `gen/` with Debian's Go and grpc-go, in GOPATH mode (no\n"       \
    "module proxy, no network; `go vet` runs first and its findings stop the build). The grader runs `./run` in a\n"   \
    "sandbox, as user nobody, that shows this folder, `/usr` and little else: it cannot build, so the program\n"       \
    "is built before grading, outside the sandbox. `lab check` runs `make` first; if you start the grader or\n"        \
    "`./run` yourself, run `make` before. grpc-go runs each call's handler in a goroutine of its own, with a\n"        \
    "`context.Context` that is done when the call ends.\n\n"

static const lang_info langs[] = {
    {LANG_PYTHON, "python", "Python, grpcio",
     "the generated code (`gen/`, from Debian's protoc and grpc_python_plugin)", ""},
    {LANG_NODE, "node", "Node, @grpc/grpc-js",
     "its packages (`package.json`, `package-lock.json`, and `node_modules/` from `npm ci`)", ""},
    {LANG_C, "c", "C, the gRPC core and protobuf-c",
     "a `Makefile` (`make` builds the program; the grader's sandbox cannot, so `lab check` runs `make` first), "
     "the generated code (`gen/`, from protoc-c)",
     C_BUILD},
    {LANG_GO, "go", "Go, grpc-go",
     "a `Makefile` (`make` builds the program; the grader's sandbox cannot, so `lab check` runs `make` first), "
     "the generated code (`gen/src/relaylab/pb`, from protoc-gen-go and protoc-gen-go-grpc)",
     GO_BUILD},
};

/* "python, node, c or go": the --lang words of the set |bits|. */
static void lang_words(unsigned bits, char *out, size_t len)
{
    size_t n = 0, total = 0, seen = 0;
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++)
        total += (bits & langs[i].bit) != 0;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof langs / sizeof *langs && n < len; i++) {
        if (!(bits & langs[i].bit))
            continue;
        seen++;
        const char *sep = seen == 1 ? "" : seen == total ? " or " : ", ";
        int w = snprintf(out + n, len - n, "%s%s", sep, langs[i].name);
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static const starter *find_starter(const char *name)
{
    for (size_t i = 0; i < sizeof starters / sizeof *starters; i++)
        if (strcmp(starters[i].exercise, name) == 0)
            return &starters[i];
    return NULL;
}

static const lang_info *find_lang(const char *name)
{
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++)
        if (strcmp(langs[i].name, name) == 0)
            return &langs[i];
    return NULL;
}

/* ---- init -------------------------------------------------------------- */

typedef struct subst {
    const char *key; /* "@KIT@" */
    const char *value;
} subst;

/* |text| with every |keys| token replaced, in one pass (a value is never
 * read again, so "@grpc/grpc-js" in one is safe). Caller frees. */
static char *substitute(const char *text, const subst *keys, size_t n)
{
    size_t cap = strlen(text) + 1024, len = 0;
    char *out = rl_xmalloc(cap);
    for (const char *p = text; *p;) {
        const char *val = NULL;
        size_t klen = 0;
        if (*p == '@')
            for (size_t i = 0; i < n && !val; i++)
                if (strncmp(p, keys[i].key, strlen(keys[i].key)) == 0)
                    val = keys[i].value, klen = strlen(keys[i].key);
        size_t add = val ? strlen(val) : 1;
        if (len + add + 1 > cap)
            out = rl_xrealloc(out, cap = 2 * (len + add + 1));
        memcpy(out + len, val ? val : p, add);
        len += add;
        p += val ? klen : 1;
    }
    out[len] = '\0';
    return out;
}

static int write_readme(const char *tmpl, const char *dir, const subst *keys, size_t n)
{
    char *text;
    size_t len;
    int rc = lab_files_read(tmpl, &text, &len);
    if (rc)
        return rc;
    char *out = substitute(text, keys, n);
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/README.md", dir);
    rc = lab_files_write(path, out, strlen(out), 0644);
    free(out);
    free(text);
    return rc;
}

/* "deadline cancel" -> "deadline and cancel". */
static void and_list(const char *words, char *out, size_t len)
{
    const char *sp = strchr(words, ' ');
    if (sp)
        snprintf(out, len, "`%.*s` and `%s`", (int)(sp - words), words, sp + 1);
    else
        snprintf(out, len, "`%s`", words);
}

static int write_marker(const char *dir, const char *exercises, const char *lang, const char *submission,
                        const char *student)
{
    rl_marker m;
    memset(&m, 0, sizeof m);
    snprintf(m.exercises, sizeof m.exercises, "%s", exercises);
    snprintf(m.lang, sizeof m.lang, "%s", lang);
    snprintf(m.submission, sizeof m.submission, "%s", submission);
    snprintf(m.student, sizeof m.student, "%s", student ? student : "");
    return rl_marker_write(dir, &m);
}

static int init_command(const starter *s, const lang_info *lang, const char *kit, const char *dir, const char *student)
{
    char tdir[PATH_MAX + 64], from[PATH_MAX * 2], to[PATH_MAX * 2], file[NAME_MAX + 1] = "";
    snprintf(tdir, sizeof tdir, "%s/starters/%s/%s", kit, s->kind, lang->name);
    DIR *d = opendir(tdir);
    if (!d) {
        fprintf(stderr, "lab: no %s starter in %s: %s\n", lang->name, tdir, strerror(errno));
        return LAB_EXIT_FAILED;
    }
    struct dirent *e;
    int rc = RL_OK;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "node_modules") == 0)
            continue;
        snprintf(from, sizeof from, "%s/%s", tdir, e->d_name);
        snprintf(to, sizeof to, "%s/%s", dir, e->d_name);
        rc = lab_files_copy(from, to);
        size_t n = strlen(e->d_name);
        if ((n > 3 && strcmp(e->d_name + n - 3, ".py") == 0) || (n > 3 && strcmp(e->d_name + n - 3, ".js") == 0) ||
            (n > 3 && strcmp(e->d_name + n - 3, ".go") == 0) || (n > 2 && strcmp(e->d_name + n - 2, ".c") == 0))
            snprintf(file, sizeof file, "%s", e->d_name);
    }
    closedir(d);
    snprintf(to, sizeof to, "%s/proto", dir);
    if (!rc)
        rc = lab_files_make_dir(to);
    snprintf(from, sizeof from, "%s/proto/relaylab.proto", kit);
    snprintf(to, sizeof to, "%s/proto/relaylab.proto", dir);
    if (!rc)
        rc = lab_files_copy(from, to);
    char both[128];
    and_list(s->exercises, both, sizeof both);
    char regen[PATH_MAX + 128];
    snprintf(regen, sizeof regen, "If `proto/relaylab.proto` changes, `%s/bin/lab stubs %s .` makes %s again.", kit,
             lang->name, lang->bit == LANG_NODE ? "`node_modules/`" : "`gen/`");
    /* A streamer calls nobody: only a relay is told where the baseline is. */
    char by_hand[PATH_MAX + 256];
    if (strcmp(s->kind, "streamer") == 0)
        snprintf(by_hand, sizeof by_hand, "    RELAYLAB_LISTEN=127.0.0.1:50051 ./run");
    else
        snprintf(by_hand, sizeof by_hand,
                 "    %s/bin/baseline &           # prints \"baseline listening on 127.0.0.1:PORT\"\n"
                 "    RELAYLAB_LISTEN=127.0.0.1:50051 RELAYLAB_BASELINE=127.0.0.1:PORT ./run",
                 kit);
    const subst keys[] = {
        {"@PROGRAM@", s->program}, {"@EXERCISES_OR@", both}, {"@EXERCISES@", s->exercises},
        {"@LANG@", lang->title},   {"@KIT@", kit},           {"@FILE@", file},
        {"@STUBS@", lang->stubs},  {"@REGEN@", regen},       {"@GIVEN@", s->given},
        {"@BUILD@", lang->build},  {"@BY_HAND@", by_hand},
    };
    /* An exercise whose program is no server (coverage's agent dials out)
     * has a README template of its own beside its language folders. */
    snprintf(from, sizeof from, "%s/starters/%s/README.md", kit, s->kind);
    if (access(from, R_OK) != 0)
        snprintf(from, sizeof from, "%s/starters/README.command.md", kit);
    if (!rc)
        rc = write_readme(from, dir, keys, sizeof keys / sizeof *keys);
    if (!rc)
        rc = write_marker(dir, s->exercises, lang->name, "./run", student);
    if (rc) {
        fprintf(stderr, "lab: cannot write the starter into %s: %s\n", dir, rl_strerror(rc));
        return LAB_EXIT_FAILED;
    }
    rc = lab_stubs_make(lang->bit, dir);
    return rc == LAB_EXIT_OK && (lang->bit & LANG_BUILT) ? lab_stubs_build(lang->bit, dir) : rc;
}

/* The deployment object |w| picked in the world file |path|: the file itself
 * when it is one deployment. Borrowed from |root|. */
static json_t *picked_deployment(json_t *root, const rl_chancfg_world *w)
{
    json_t *list = json_object_get(root, "deployments");
    return json_is_array(list) ? json_array_get(list, w->index) : root;
}

/* The config starter: the template's choices ("TODO") in the deployment
 * |variant| picks, its world sections copied in so the student reads them
 * where they apply. */
static int init_config(const starter *s, const char *kit, const char *dir, const char *variant)
{
    char world_path[PATH_MAX + 64], tmpl[PATH_MAX + 64], out[PATH_MAX + 128], err[256], file[80];
    snprintf(world_path, sizeof world_path, "%s/grader/worlds/%s.json", kit, s->exercise);
    snprintf(tmpl, sizeof tmpl, "%s/starters/config/%s.json", kit, s->exercise);
    snprintf(file, sizeof file, "%s.json", s->exercise);
    snprintf(out, sizeof out, "%s/%s", dir, file);

    rl_chancfg_world w = {0};
    if (rl_chancfg_world_load(world_path, variant, &w, err, sizeof err)) {
        fprintf(stderr, "lab: world %s\n", err);
        return LAB_EXIT_FAILED;
    }
    json_error_t jerr;
    json_t *world = json_load_file(world_path, 0, &jerr);
    json_t *choices = json_load_file(tmpl, 0, &jerr);
    json_t *dep = world ? picked_deployment(world, &w) : NULL;
    int rc = LAB_EXIT_FAILED;
    if (!world || !choices || !json_is_object(dep) || !json_is_object(choices)) {
        fprintf(stderr, "lab: cannot read %s: %s\n", !choices ? tmpl : world_path, jerr.text);
        goto done;
    }
    json_t *cfg = json_object();
    json_object_set(cfg, "description", json_object_get(choices, "description"));
    static const char *const world_keys[] = {"intermediary", "calls"};
    for (size_t i = 0; i < 2; i++)
        if (json_object_get(dep, world_keys[i]))
            json_object_set(cfg, world_keys[i], json_object_get(dep, world_keys[i]));
    json_object_set(cfg, "client", json_object_get(choices, "client"));
    json_t *server = json_deep_copy(json_object_get(choices, "server"));
    if (!json_is_object(server)) {
        json_decref(server);
        server = json_object();
    }
    json_object_update(server, json_object_get(dep, "server"));
    if (json_object_size(server))
        json_object_set(cfg, "server", server);
    json_decref(server);
    char *text = json_dumps(cfg, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(cfg);
    if (!text) {
        fprintf(stderr, "lab: out of memory writing %s\n", out);
        goto done;
    }
    /* json_dumps ends without a newline; a text file should not. */
    size_t tl = strlen(text);
    text = rl_xrealloc(text, tl + 2);
    memcpy(text + tl, "\n", 2);
    if (lab_files_write(out, text, tl + 1, 0644)) {
        fprintf(stderr, "lab: cannot write %s: %s\n", out, strerror(errno));
        free(text);
        goto done;
    }
    free(text);
    rc = LAB_EXIT_OK;

    char deployment[384], variant_arg[300];
    rl_chancfg_world_describe(&w, deployment, sizeof deployment);
    if (variant && *variant)
        snprintf(variant_arg, sizeof variant_arg, "--variant %s",
                 variant); /* channel-config and the grader both take it */
    else
        variant_arg[0] = '\0';
    const subst keys[] = {
        {"@EXERCISES_OR@", s->exercise},
        {"@KIT@", kit},
        {"@FILE@", file},
        {"@DEPLOYMENT@", deployment},
        {"@VARIANT@", variant && *variant ? variant : "(none: the world's default)"},
        {"@VARIANT_ARG@", variant_arg},
        {"@FIRST@", s->exercise},
    };
    char readme_tmpl[PATH_MAX + 64];
    snprintf(readme_tmpl, sizeof readme_tmpl, "%s/starters/README.config.md", kit);
    if (!rc && (write_readme(readme_tmpl, dir, keys, sizeof keys / sizeof *keys) ||
                write_marker(dir, s->exercises, "json", file, variant))) {
        fprintf(stderr, "lab: cannot write the README into %s: %s\n", dir, strerror(errno));
        rc = LAB_EXIT_FAILED;
    }
    if (!rc)
        printf("lab: your deployment: %s\n", deployment);
done:
    json_decref(world);
    json_decref(choices);
    rl_chancfg_world_fini(&w);
    return rc;
}

/* The kit's root: the folder holding starters/ (bin/.. in a checkout or a
 * student kit; $RELAYLAB_HOME when set). */
static int kit_root(char out[PATH_MAX])
{
    char found[PATH_MAX];
    if (rl_path_find_data("starters", found, sizeof found) != 0 || !realpath(found, out)) {
        fprintf(stderr, "lab: cannot find starters/ next to the lab program; set RELAYLAB_HOME to the relaylab "
                        "kit's folder\n");
        return RL_ENOTFOUND;
    }
    *strrchr(out, '/') = '\0';
    return RL_OK;
}

static void list_starters(FILE *f)
{
    fprintf(f, "starters:");
    for (size_t i = 0; i < sizeof starters / sizeof *starters; i++)
        fprintf(f, " %s", starters[i].exercise);
    fprintf(f, "\n");
}

/* An identity is quoted in feedback, passed as an argument and used as a
 * folder name by grade-class: its roster's characters only. */
static bool identity_ok(const char *id)
{
    size_t n = strlen(id);
    if (!n || n >= RL_IDENTITY_MAX || id[0] == '-' || id[0] == '.')
        return false;
    return strspn(id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-@+") == n;
}

int lab_init_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"lang", required_argument, NULL, 'l'},
        {"student", required_argument, NULL, 's'},
        {"variant", required_argument, NULL, 'v'},
        {NULL, 0, NULL, 0},
    };
    /* --variant is the older name of --student, for the config exercises. */
    const char *lang_name = NULL, *variant = NULL;
    bool by_variant = false;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, "+l:v:s:", opts, NULL)) != -1) {
        switch (c) {
        case 'l': lang_name = optarg; break;
        case 'v': by_variant = true; /* fall through */
        case 's': variant = optarg; break;
        default: return LAB_EXIT_SHOW_USAGE;
        }
    }
    /* EXERCISE [DIR], options also after them. */
    const char *pos[2] = {NULL, NULL};
    int npos = 0;
    while (optind < argc) {
        if (npos == 2)
            return LAB_EXIT_SHOW_USAGE;
        pos[npos++] = argv[optind++];
        while ((c = getopt_long(argc, argv, "+l:v:s:", opts, NULL)) != -1) {
            switch (c) {
            case 'l': lang_name = optarg; break;
            case 'v': by_variant = true; /* fall through */
            case 's': variant = optarg; break;
            default: return LAB_EXIT_SHOW_USAGE;
            }
        }
    }
    if (npos < 1)
        return LAB_EXIT_SHOW_USAGE;
    if (variant && !identity_ok(variant)) {
        fprintf(stderr, "lab: --student takes your id (letters, digits and ._-@+, up to %d), not '%s'\n",
                RL_IDENTITY_MAX - 1, variant);
        return LAB_EXIT_USAGE;
    }
    const starter *s = find_starter(pos[0]);
    if (!s) {
        fprintf(stderr, "lab: no starter for '%s'; ", pos[0]);
        list_starters(stderr);
        return LAB_EXIT_USAGE;
    }
    const lang_info *lang = NULL;
    if (s->langs) {
        lang = find_lang(lang_name ? lang_name : "python");
        if (!lang || !(s->langs & lang->bit)) {
            char words[64];
            lang_words(s->langs, words, sizeof words);
            fprintf(stderr, "lab: %s has no %s starter; --lang %s\n", s->exercise, lang_name ? lang_name : "python",
                    words);
            return LAB_EXIT_USAGE;
        }
        if (by_variant) {
            fprintf(stderr,
                    "lab: --variant is for the config exercises (keepalive, retry, balance), not %s; "
                    "--student ID records who the folder is for\n",
                    s->exercise);
            return LAB_EXIT_USAGE;
        }
    } else if (lang_name) {
        fprintf(stderr, "lab: %s's submission is a JSON channel config: no --lang\n", s->exercise);
        return LAB_EXIT_USAGE;
    }
    char kit[PATH_MAX];
    if (kit_root(kit))
        return LAB_EXIT_FAILED;
    const char *dir = pos[1] ? pos[1] : s->exercise;
    int rc = lab_files_fresh_dir(dir);
    if (rc) {
        fprintf(stderr, "lab: %s %s; name another folder\n", dir, rc == RL_EINVAL ? "is not empty" : "cannot be made");
        return LAB_EXIT_FAILED;
    }
    char abs[PATH_MAX];
    if (!realpath(dir, abs)) {
        perror(dir);
        return LAB_EXIT_FAILED;
    }
    rc = lang ? init_command(s, lang, kit, abs, variant) : init_config(s, kit, abs, variant);
    if (rc == LAB_EXIT_OK && lab_files_make_readable(abs) != 0) {
        fprintf(stderr, "lab: cannot make %s readable by others: %s\n", abs, strerror(errno));
        rc = LAB_EXIT_FAILED;
    }
    if (rc)
        return rc;
    printf("lab: your %s starter is in %s; next: cd %s && %s/bin/lab check   (README.md says more)\n", s->exercise, dir,
           dir, kit);
    return LAB_EXIT_OK;
}

int lab_stubs_main(int argc, char **argv)
{
    if (argc != 3)
        return LAB_EXIT_SHOW_USAGE;
    const lang_info *lang = find_lang(argv[1]);
    if (!lang) {
        char words[64];
        lang_words(~0u, words, sizeof words);
        fprintf(stderr, "lab: stubs for %s, not '%s'\n", words, argv[1]);
        return LAB_EXIT_USAGE;
    }
    char dir[PATH_MAX], proto[PATH_MAX + 32];
    if (!realpath(argv[2], dir)) {
        perror(argv[2]);
        return LAB_EXIT_FAILED;
    }
    snprintf(proto, sizeof proto, "%s/proto/relaylab.proto", dir);
    if (access(proto, R_OK) != 0) {
        char kit[PATH_MAX], from[PATH_MAX + 32], pdir[PATH_MAX + 8];
        if (kit_root(kit))
            return LAB_EXIT_FAILED;
        snprintf(from, sizeof from, "%s/proto/relaylab.proto", kit);
        snprintf(pdir, sizeof pdir, "%s/proto", dir);
        if (lab_files_make_dir(pdir) || lab_files_copy(from, proto)) {
            fprintf(stderr, "lab: cannot copy %s to %s: %s\n", from, proto, strerror(errno));
            return LAB_EXIT_FAILED;
        }
    }
    return lab_stubs_make(lang->bit, dir);
}

/* ---- check ------------------------------------------------------------- */

/* |student|: the grading identity (the marker's own, or lab check's
 * --student); the grader compares it with the marker's and says so first
 * when they differ (rl_marker.h). */
static int grade_one(const char *exercise, const rl_marker *m, const char *student, int argc, char **argv)
{
    char grader[PATH_MAX];
    if (rl_path_sibling("grader", grader, sizeof grader)) {
        fprintf(stderr, "lab: cannot find the grader next to the lab program\n");
        return LAB_EXIT_ERROR;
    }
    const char **gv = rl_xcalloc((size_t)argc + 8, sizeof *gv);
    int n = 0;
    gv[n++] = grader;
    gv[n++] = exercise;
    gv[n++] = "--submission";
    gv[n++] = m->submission;
    /* Only the config exercises have a deployment to pick. */
    if (strcmp(m->lang, "json") == 0 && student[0]) {
        gv[n++] = "--student";
        gv[n++] = student;
    }
    for (int i = 0; i < argc; i++)
        gv[n++] = argv[i];
    printf("lab check:");
    for (int i = 0; i < n; i++)
        printf(" %s", i == 0 ? "bin/grader" : gv[i]);
    printf("\n");
    fflush(stdout);
    int rc = lab_stubs_run_tool(gv, NULL);
    free((void *)gv);
    return rc > LAB_EXIT_ERROR ? LAB_EXIT_ERROR : rc;
}

int lab_check_main(int argc, char **argv)
{
    rl_marker m;
    char err[PATH_MAX + 300];
    int rc = rl_marker_read(".", &m, err, sizeof err);
    if (rc) {
        fprintf(stderr,
                "lab: this folder is not a starter (%s): run `lab check` in a folder `lab init` "
                "made, or grade with bin/grader EXERCISE --submission CMD\n",
                rc == RL_ENOTFOUND ? "no .relaylab" : err);
        return LAB_EXIT_ERROR;
    }
    /* --student ID: grade as that identity (the CI workflow's setting)
     * instead of the folder's own; taken out of the grader's options. */
    const char *student = m.student;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int drop = 0;
        if (strcmp(argv[i], "--student") == 0 && i + 1 < argc) {
            v = argv[i + 1];
            drop = 2;
        } else if (strncmp(argv[i], "--student=", 10) == 0) {
            v = argv[i] + 10;
            drop = 1;
        }
        if (!drop)
            continue;
        if (*v && !identity_ok(v)) {
            fprintf(stderr, "lab: --student takes an id (letters, digits and ._-@+), not '%s'\n", v);
            return LAB_EXIT_USAGE;
        }
        student = v;
        memmove(argv + i, argv + i + drop, (size_t)(argc - i - drop + 1) * sizeof *argv);
        argc -= drop;
        i--;
    }
    int first = 1;
    const char *only = NULL;
    if (argc > 1 && argv[1][0] != '-') {
        only = argv[1];
        first = 2;
    }
    /* A C or Go folder is graded as built: build it first (the sandbox
     * cannot). */
    const lang_info *built = find_lang(m.lang);
    if (built && (built->bit & LANG_BUILT)) {
        printf("lab check: make\n");
        fflush(stdout);
        if (lab_stubs_build(built->bit, "."))
            return LAB_EXIT_ERROR;
    }
    int worst = LAB_EXIT_OK, graded = 0;
    char list[sizeof m.exercises];
    snprintf(list, sizeof list, "%s", m.exercises);
    char *save = NULL;
    for (char *ex = strtok_r(list, " ", &save); ex; ex = strtok_r(NULL, " ", &save)) {
        if (only && strcmp(only, ex) != 0)
            continue;
        int r = grade_one(ex, &m, student, argc - first, argv + first);
        graded++;
        if (r > worst)
            worst = r;
    }
    if (!graded) {
        fprintf(stderr, "lab: this folder is for %s, not '%s'\n", m.exercises, only);
        return LAB_EXIT_USAGE;
    }
    return worst;
}
