/* stubs: the tools a starter folder needs run (stubs.h): protoc and
 * grpc_python_plugin, npm, protoc-c, protoc with the Go plugins, and make, each started with the lab's
 * stdio so the student sees what it says, and a failure answered with the
 * Debian packages to install. */
#include "stubs.h"

#include "files.h"
#include "status.h"

#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

int lab_stubs_run_tool(const char *const argv[], const char *cwd)
{
    char here[PATH_MAX];
    if (cwd && (!getcwd(here, sizeof here) || chdir(cwd) != 0))
        return LAB_TOOL_NOT_RUN;
    pid_t pid;
    /* posix_spawnp's argv is not const for C's history only; it is not written. */
    int rc = posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ);
    if (cwd && chdir(here) != 0)
        perror("lab: back to the first folder");
    if (rc != 0)
        return LAB_TOOL_NOT_RUN;
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return LAB_TOOL_NOT_RUN;
    return WIFEXITED(st) ? WEXITSTATUS(st) : LAB_TOOL_SIGNAL + WTERMSIG(st);
}

/* What protoc and protoc-c are given for the folder DIR: the output folder
 * DIR/gen, the include flag for DIR/proto and the proto in it. */
typedef struct gen_paths {
    char gen[PATH_MAX];
    char inc[PATH_MAX + 16];
    char proto[PATH_MAX + 32];
} gen_paths;

/* Fills |g| for |dir| and makes DIR/gen. Returns 0, or 1 after a message. */
static int make_gen(const char *dir, gen_paths *g)
{
    snprintf(g->gen, sizeof g->gen, "%s/gen", dir);
    snprintf(g->inc, sizeof g->inc, "-I%s/proto", dir);
    snprintf(g->proto, sizeof g->proto, "%s/proto/relaylab.proto", dir);
    if (lab_files_make_dir(g->gen)) {
        fprintf(stderr, "lab: cannot make %s: %s\n", g->gen, strerror(errno));
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

static int stubs_python(const char *dir)
{
    gen_paths g = {0};
    char py_out[PATH_MAX + 32], grpc_out[PATH_MAX + 32];
    if (make_gen(dir, &g))
        return LAB_EXIT_FAILED;
    snprintf(py_out, sizeof py_out, "--python_out=%s", g.gen);
    snprintf(grpc_out, sizeof grpc_out, "--grpc_python_out=%s", g.gen);
    /* Debian has no grpc_tools module (`python3 -m grpc_tools.protoc`):
     * its protoc takes the gRPC generator as a plugin. */
    const char *argv[] = {"protoc", py_out,  grpc_out, "--plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin",
                          g.inc,    g.proto, NULL};
    int rc = lab_stubs_run_tool(argv, NULL);
    if (rc != 0) {
        fprintf(stderr,
                "lab: protoc failed (%s) making %s; it needs Debian's protoc and grpc_python_plugin:\n"
                "  sudo apt-get install protobuf-compiler protobuf-compiler-grpc python3-grpcio python3-protobuf\n",
                rc == LAB_TOOL_NOT_RUN ? "not found" : "see its message above", g.gen);
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

static int stubs_node(const char *dir)
{
    /* --prefer-offline: the packages the kit's own tests fetched are in npm's
     * cache, so a second folder needs no network. */
    const char *argv[] = {"npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", NULL};
    int rc = lab_stubs_run_tool(argv, dir);
    if (rc != 0) {
        fprintf(stderr,
                "lab: `npm ci` failed (%s) in %s: its packages (@grpc/grpc-js, @grpc/proto-loader) come from "
                "the npm registry. Install Node (sudo apt-get install nodejs npm), check that the registry is "
                "reachable (npm config get registry), then run `lab stubs node %s`.\n",
                rc == LAB_TOOL_NOT_RUN ? "npm not found" : "see its message above", dir, dir);
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

#define C_PACKAGES "libgrpc-dev libprotobuf-c-dev protobuf-c-compiler pkg-config make gcc"

static int stubs_c(const char *dir)
{
    gen_paths g = {0};
    char c_out[PATH_MAX + 16];
    if (make_gen(dir, &g))
        return LAB_EXIT_FAILED;
    snprintf(c_out, sizeof c_out, "--c_out=%s", g.gen);
    const char *argv[] = {"protoc-c", c_out, g.inc, g.proto, NULL};
    int rc = lab_stubs_run_tool(argv, NULL);
    if (rc != 0) {
        fprintf(stderr,
                "lab: protoc-c failed (%s) making %s; the C starter needs:\n  sudo apt-get install " C_PACKAGES "\n",
                rc == LAB_TOOL_NOT_RUN ? "not found" : "see its message above", g.gen);
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

#define GO_PACKAGES                                                                                                    \
    "golang-go golang-google-grpc-dev golang-github-golang-protobuf-1-5-dev golang-google-protobuf-dev "               \
    "protobuf-compiler protoc-gen-go protoc-gen-go-grpc make"

/* Go's generated code goes where GOPATH mode finds the import path
 * "relaylab/pb": DIR/gen/src/relaylab/pb (the import path needs a slash). */
static int stubs_go(const char *dir)
{
    gen_paths g = {0};
    if (make_gen(dir, &g))
        return LAB_EXIT_FAILED;
    char pb[PATH_MAX + 32], go_out[PATH_MAX + 48], grpc_out[PATH_MAX + 48];
    snprintf(pb, sizeof pb, "%s/src/relaylab/pb", g.gen);
    if (lab_files_make_dirs(pb)) {
        fprintf(stderr, "lab: cannot make %s: %s\n", pb, strerror(errno));
        return LAB_EXIT_FAILED;
    }
    snprintf(go_out, sizeof go_out, "--go_out=%s", pb);
    snprintf(grpc_out, sizeof grpc_out, "--go-grpc_out=%s", pb);
    const char *argv[] = {"protoc",
                          go_out,
                          "--go_opt=paths=source_relative",
                          "--go_opt=Mrelaylab.proto=relaylab/pb",
                          grpc_out,
                          "--go-grpc_opt=paths=source_relative",
                          "--go-grpc_opt=Mrelaylab.proto=relaylab/pb",
                          g.inc,
                          g.proto,
                          NULL};
    int rc = lab_stubs_run_tool(argv, NULL);
    if (rc != 0) {
        fprintf(stderr,
                "lab: protoc failed (%s) making %s; the Go starter needs:\n  sudo apt-get install " GO_PACKAGES "\n",
                rc == LAB_TOOL_NOT_RUN ? "not found" : "see its message above", pb);
        return LAB_EXIT_FAILED;
    }
    return LAB_EXIT_OK;
}

int lab_stubs_build(unsigned lang, const char *dir)
{
    const char *argv[] = {"make", "--no-print-directory", "-s", NULL};
    int rc = lab_stubs_run_tool(argv, dir);
    if (rc != 0) {
        fprintf(stderr,
                "lab: `make` failed (%s) in %s: fix what it says above (%s), or install the %s starter's packages:\n"
                "  sudo apt-get install %s\n",
                rc == LAB_TOOL_NOT_RUN ? "make not found" : "see its message above", dir,
                lang == LANG_GO ? "go vet's findings count" : "warnings are errors", lang == LANG_GO ? "Go" : "C",
                lang == LANG_GO ? GO_PACKAGES : C_PACKAGES);
        return LAB_EXIT_FAILED;
    }
    return lab_files_make_readable(dir) == 0 ? LAB_EXIT_OK : LAB_EXIT_FAILED;
}

int lab_stubs_make(unsigned lang, const char *dir)
{
    int rc = lang == LANG_PYTHON ? stubs_python(dir)
             : lang == LANG_NODE ? stubs_node(dir)
             : lang == LANG_GO   ? stubs_go(dir)
                                 : stubs_c(dir);
    if (rc == LAB_EXIT_OK && lab_files_make_readable(dir)) {
        fprintf(stderr, "lab: cannot make %s readable by others: %s\n", dir, strerror(errno));
        return LAB_EXIT_FAILED;
    }
    return rc;
}
