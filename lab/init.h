/* init: a student's first folder. `lab init` copies an exercise's starter
 * from starters/KIND/LANG/ (the proto, generated code or the packages the
 * language needs, a skeleton whose server set-up is done and whose lesson is
 * a marked TODO block, a `run` script the grader starts, a README), or, for
 * a config exercise, writes a channel config with the student's deployment
 * filled in and the choices left "TODO". `lab stubs` makes the generated
 * code again; `lab check` grades the folder exactly as grading does. The
 * folder says what it is for in its `.relaylab` file. */
#ifndef LAB_INIT_H
#define LAB_INIT_H

/* `lab init EXERCISE [--lang python|node|c|go] [--student ID] [DIR]`;
 * |argv|[0] is the command name. --student records the identity the folder
 * is for in its .relaylab (the config exercises' deployment is picked by it;
 * --variant is its older name, for those alone). Writes the starter into DIR (default
 * ./EXERCISE), which must be missing or empty, and leaves it readable by
 * others (the grader's sandbox runs it as nobody). Returns lab's exit status
 * (status.h): LAB_EXIT_OK, LAB_EXIT_FAILED when the starter could not be
 * written (message printed), LAB_EXIT_USAGE for a usage error (message
 * printed), or LAB_EXIT_SHOW_USAGE when the arguments do not parse (the
 * caller prints the usage). */
int lab_init_main(int argc, char **argv);

/* `lab stubs python|node|c|go DIR`: Python: protoc with Debian's
 * grpc_python_plugin from DIR/proto/relaylab.proto (the kit's copied there
 * when missing) into DIR/gen; Node: `npm ci` in DIR (proto-loader needs no
 * generated code); C: protoc-c into DIR/gen; Go: protoc with protoc-gen-go
 * and protoc-gen-go-grpc into DIR/gen/src/relaylab/pb (`lab init --lang c`
 * or `--lang go` then runs `make` in DIR, and so does `lab check` in a C or
 * Go folder before grading: the grader's sandbox cannot build). Returns LAB_EXIT_OK, LAB_EXIT_FAILED when a
 * tool failed (its output shown and what to install named), LAB_EXIT_USAGE for an unknown language, or
 * LAB_EXIT_SHOW_USAGE for bad arguments. */
int lab_stubs_main(int argc, char **argv);

/* `lab check [EXERCISE] [--student ID] [GRADER OPTIONS...]`, in a folder
 * `lab init` made: runs `bin/grader EXERCISE --submission ./run` (a config:
 * the config file and --student, the folder's own identity unless
 * --student names the grading one, as the CI workflow does) for every
 * exercise the folder is for, or the one named, with the options passed on. Returns the worst grader exit code
 * (LAB_EXIT_OK all passed, LAB_EXIT_FAILED a scenario failed, LAB_EXIT_ERROR the grader failed), or
 * LAB_EXIT_ERROR when the folder is not a starter or its build failed, LAB_EXIT_USAGE for a bad --student or
 * an exercise the folder is not for. */
int lab_check_main(int argc, char **argv);

#endif
