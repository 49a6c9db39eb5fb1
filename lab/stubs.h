/* stubs: the generated code and packages a starter folder's language
 * needs, and the build of a C or Go folder. Python's stubs come from
 * Debian's protoc with grpc_python_plugin (Debian has no grpc_tools), Node's
 * packages from `npm ci`, C's from protoc-c, Go's from protoc with Debian's
 * protoc-gen-go and protoc-gen-go-grpc (into gen/src/relaylab/pb, built in
 * GOPATH mode: no module proxy); a C or Go folder is built with `make`
 * before grading, because the grader's sandbox cannot write the folder.
 * Each tool runs in the foreground with the lab's stdio. */
#ifndef LAB_STUBS_H
#define LAB_STUBS_H

/* The languages a starter is offered in, as bits of a set. */
enum { LANG_PYTHON = 1u, LANG_NODE = 2u, LANG_C = 4u, LANG_GO = 8u };

/* The languages whose program is built before grading (with `make`). */
#define LANG_BUILT (LANG_C | LANG_GO)

/* What lab_stubs_run_tool returns beside a tool's own exit status, as a
 * shell does. */
enum {
    LAB_TOOL_NOT_RUN = 127, /* the tool could not be started (not on PATH, or no folder) */
    LAB_TOOL_SIGNAL = 128,  /* plus the signal that killed it */
};

/* Runs |argv| (argv[0] found on PATH) in |cwd| (NULL: here) with the lab's
 * stdio and waits. Returns its exit status, LAB_TOOL_NOT_RUN when it could
 * not be started, or LAB_TOOL_SIGNAL + a signal. */
int lab_stubs_run_tool(const char *const argv[], const char *cwd);

/* The stubs of language |lang| (one LANG_ bit) in the folder |dir| (from
 * DIR/proto/relaylab.proto), then every file of |dir| made readable by
 * others. Returns LAB_EXIT_OK, or LAB_EXIT_FAILED after a message saying
 * what to install (status.h). */
int lab_stubs_make(unsigned lang, const char *dir);

/* `make` in |dir|: a C or Go folder's program (|lang|, one of LANG_BUILT)
 * is built before grading, outside the grader's sandbox (which cannot write
 * the folder). Returns LAB_EXIT_OK, or LAB_EXIT_FAILED after a message
 * naming |lang|'s packages. */
int lab_stubs_build(unsigned lang, const char *dir);

#endif
