# relaylab build. `make` builds every program into bin/; `make test` runs the
# unit and integration suites; `make check` runs them again under ASan+UBSan
# (jemalloc off); `make demo` shows the reference relay passing and the
# classic mistakes failing. Every target installs missing Debian packages first.
#
# Layout: lib/ is librelaylab (one module per concern), lib/chancfg/ the
# channel-config library with its own archive (it never aborts, and needs
# nothing of lib/ but rl_err and the generated descriptors), lib/worlds/ the
# labs' worlds with theirs (shared by the grader and the lab program), each
# program folder holds its own sources with main() in main.c, and a program
# folder's other objects are what its unit tests link against.

SANITIZER ?=
ifeq ($(SANITIZER),)
  BUILD   := build
  BIN     := bin
  SANFLAGS :=
  JEMALLOC := $(shell pkg-config --libs jemalloc 2>/dev/null || echo -ljemalloc)
  ALLOCDEF := -DRL_HAVE_JEMALLOC
else
  BUILD   := build/$(SANITIZER)
  BIN     := build/$(SANITIZER)/bin
  SANFLAGS := -fsanitize=$(SANITIZER),undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
  JEMALLOC :=
  ALLOCDEF :=
endif

CC      ?= cc
# `make V=1` shows every command; by default only the target names.
V ?= 0
Q := $(if $(filter 1,$(V)),,@)
OPT     ?= -O2 -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
           -Wpointer-arith -Wwrite-strings -Wformat=2 -Wvla
PKGS    := grpc libprotobuf-c jansson
DEPS_STAMP := build/.deps-installed
GEN     := $(BUILD)/gen

CPPFLAGS := -Ilib -I$(GEN) -D_GNU_SOURCE $(ALLOCDEF)
CFLAGS  := -std=c11 $(OPT) $(WARN) $(SANFLAGS) -MMD -MP \
           $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDFLAGS := $(SANFLAGS)
LDLIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null) $(JEMALLOC) -lpthread -lm
CMOCKA  := $(shell pkg-config --libs cmocka 2>/dev/null || echo -lcmocka)

# Programs: bin name = folder (channel_config -> channel-config, bench/x -> bench-x).
# jail/ is the exception: see its rule below.
PROGRAM_DIRS := $(filter-out jail,$(sort $(patsubst %/main.c,%,$(wildcard */main.c bench/*/main.c))))
prog_name = $(subst /,-,$(subst _,-,$(1)))
PROGRAMS := $(foreach d,$(PROGRAM_DIRS),$(BIN)/$(call prog_name,$(d))) $(BIN)/jail

LIB_SRCS := $(wildcard lib/*.c)
# Every proto/X.proto becomes $(GEN)/X.pb-c.[ch] in the library and Python
# stubs X_pb2*.py; Node loads the .proto files at run time.
PROTOS   := $(wildcard proto/*.proto)
PROTO_HS := $(patsubst proto/%.proto,$(GEN)/%.pb-c.h,$(PROTOS))
LIB_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(LIB_SRCS)) $(patsubst proto/%.proto,$(GEN)/%.pb-c.o,$(PROTOS))
LIBRL    := $(BUILD)/librelaylab.a

# The channel-config library: lib/chancfg/, archived on its own. Programs and
# unit tests link it before librelaylab, which resolves its rl_err and
# relaylab.pb-c references; it must not call anything else of lib/ (the fuzz
# build below links it with rl_err and the descriptors alone, so it checks).
CHANCFG_SRCS := $(wildcard lib/chancfg/*.c)
CHANCFG_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(CHANCFG_SRCS))
LIBCHANCFG   := $(BUILD)/lib/librlchancfg.a

# The labs' worlds: lib/worlds/, archived on their own. A world is what an
# exercise's scenarios run in (the intermediary, the balance world, the L7
# proxy, the coverage world), used by the grader's exercise and by its `lab
# demo` alike. A world may use anything of librelaylab and the generated
# descriptors, and other worlds; nothing in lib/ outside lib/worlds/ may use
# a world, nor may a world use lib/chancfg/ (it is given built channel args).
# Every program and unit test links the archive first, before the two it
# depends on; the linker takes only the worlds a program calls. The archive's
# rule checks the includes both ways.
WORLDS_SRCS := $(wildcard lib/worlds/*.c)
WORLDS_OBJS := $(patsubst %.c,$(BUILD)/%.o,$(WORLDS_SRCS))
LIBWORLDS   := $(BUILD)/lib/librlworlds.a
LIBS         := $(LIBWORLDS) $(LIBCHANCFG) $(LIBRL)

# Generated code is compiled without -Werror on purpose: protoc-c's output is not ours.
GEN_CFLAGS := -std=c11 $(OPT) $(SANFLAGS) -MMD -MP $(shell pkg-config --cflags libprotobuf-c 2>/dev/null)

.PHONY: all build deps test unit integration integration-matrix integration-demos integration-whole integration-rest check demo bench bench-peers clean lint format fuzz pystubs node-deps selftest student-kit

# Public targets install missing packages first, then re-run make, so that
# pkg-config's flags are read after the packages exist on a fresh machine.
all: deps
	@$(MAKE) --no-print-directory build

build: $(PROGRAMS) pystubs

deps: $(DEPS_STAMP)
$(DEPS_STAMP): scripts/install-deps.sh
	@sh scripts/install-deps.sh
	@mkdir -p $(dir $@) && touch $@

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: proto/%.proto | $(DEPS_STAMP)
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -Iproto $<

# Kept: as pattern-rule prerequisites alone they would be intermediate files,
# deleted after each build and made again (with every object) by the next.
.SECONDARY: $(PROTO_HS) $(PROTO_HS:.h=.c)

$(GEN)/%.pb-c.o: $(GEN)/%.pb-c.c
	$(CC) $(GEN_CFLAGS) -c -o $@ $<

# Python stubs for the test harness and the Python example submissions.
PYGEN := build/gen/py
pystubs: $(patsubst proto/%.proto,$(PYGEN)/%_pb2_grpc.py,$(PROTOS))
$(PYGEN)/%_pb2_grpc.py: proto/%.proto | $(DEPS_STAMP)
	@mkdir -p $(PYGEN)
	protoc --python_out=$(PYGEN) --grpc_python_out=$(PYGEN) \
	  --plugin=protoc-gen-grpc_python=/usr/bin/grpc_python_plugin -Iproto $<

$(BUILD)/%.o: %.c $(PROTO_HS) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  CC      $<")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The archives are made again when the Makefile changes, so a module that
# moved out of one leaves no stale copy in it.
$(LIBRL): $(LIB_OBJS) Makefile
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

$(LIBCHANCFG): $(CHANCFG_OBJS) Makefile
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

$(LIBWORLDS): $(WORLDS_OBJS) Makefile
	@! grep -ln '#include "worlds/' lib/*.[ch] || { echo "lib/ must not use a world" >&2; exit 1; }
	@! grep -ln '#include "chancfg/' lib/worlds/*.[ch] || { echo "a world must not use lib/chancfg" >&2; exit 1; }
	@mkdir -p $(dir $@)
	@rm -f $@
	ar rcs $@ $(filter %.o,$^)

# The services relaylab.proto defines, as a list of protobuf-c service
# descriptors for the channel-config checker (names and methods are read
# from the descriptors; protoc-c declares each one on a line of its own).
$(GEN)/relaylab_services.inc: $(GEN)/relaylab.pb-c.h
	sed -n 's/^extern const ProtobufCServiceDescriptor \([a-z0-9_]*\);$$/\&\1,/p' $< > $@.tmp
	@test -s $@.tmp || { echo "no service descriptors in $<" >&2; rm -f $@.tmp; exit 1; }
	@mv $@.tmp $@
$(BUILD)/lib/chancfg/rl_chancfg_sc.o: $(GEN)/relaylab_services.inc

# One rule per program: every .c in its folder, plus the three archives.
define PROGRAM_RULE
$(1)_OBJS := $$(patsubst %.c,$(BUILD)/%.o,$$(wildcard $(1)/*.c))
$(BIN)/$(call prog_name,$(1)): $$($(1)_OBJS) $(LIBS)
	@mkdir -p $(BIN)
	$(if $(Q),@echo "  LINK    $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$($(1)_OBJS) $(LIBS) $(LDLIBS)
endef
$(foreach d,$(PROGRAM_DIRS),$(eval $(call PROGRAM_RULE,$(d))))

# The jail starts inside the submission's limits (RLIMIT_DATA among them),
# where a sanitizer's terabytes of shadow memory cannot be reserved: it is
# built without one, also in a sanitizer build, and links libc alone (it
# runs before every submission; nothing of gRPC belongs in it).
$(BUILD)/jail/%.o: CFLAGS := -std=c11 $(OPT) $(WARN) -MMD -MP
$(BIN)/jail: $(BUILD)/jail/main.o $(BUILD)/jail/confine.o
	@mkdir -p $(BIN)
	$(if $(Q),@echo "  LINK    $@")
	$(Q)$(CC) -o $@ $^

# Unit tests mirror the source tree: tests/unit/DIR/test_M.c tests DIR/M.c
# (tests/unit/lib/test_rl_proc.c tests lib/rl_proc.c, tests/unit/grader/test_sandbox.c
# tests grader/sandbox.c). A test of a program's module links that program's
# objects other than main.o; one under lib/ links the archives alone, as do the
# runner's own tests at the top (test_rl_test.c). Each is compiled with
# tests/unit/rl_test.h force-included: every test gets a time limit.
UNIT_SRCS  := $(sort $(shell find tests/unit -name 'test_*.c'))
UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
unit_dir   = $(patsubst %/,%,$(dir $(patsubst tests/unit/%,%,$(1))))
unit_prog  = $(filter-out . lib lib/%,$(call unit_dir,$(1)))
unit_objs  = $(if $(call unit_prog,$(1)),$(filter-out %/main.o,$(patsubst %.c,$(BUILD)/%.o,$(wildcard $(call unit_prog,$(1))/*.c))))

define UNIT_RULE
$(BUILD)/$(basename $(1)).o: CPPFLAGS += -include tests/unit/rl_test.h -Itests/unit $(if $(call unit_prog,$(1)),-I$(call unit_prog,$(1)))
$(BUILD)/tests/$(basename $(patsubst tests/unit/%,%,$(1))): $(BUILD)/$(basename $(1)).o $(call unit_objs,$(1)) $(LIBS)
	@mkdir -p $$(dir $$@)
	$(if $(Q),@echo "  LINK    $$@")
	$(Q)$(CC) $(LDFLAGS) -o $$@ $$^ $(LDLIBS) $(CMOCKA)
endef
$(foreach t,$(UNIT_SRCS),$(eval $(call UNIT_RULE,$(t))))

PYTHON := /usr/bin/python3

unit: $(UNIT_BINS)
	@set -e; for t in $(UNIT_BINS); do echo "== $$t"; ./$$t; done
	@echo "unit: $(words $(UNIT_BINS)) cmocka suites passed"

# -rs prints why a test was skipped (an ASan build, no valgrind). The verdict
# matrix (a grader run per cell, three at a time) runs beside the other tests:
# both mostly wait on timers and sockets, so together they take about the time
# of the longer one on two cores (the suite alone took 9.5 min, over `make
# test`'s budget), and every verdict is meant to hold with every core busy.
# -O keeps each one's output together.
PYTEST_RUN = RELAYLAB_BIN=$(abspath $(BIN)) PYTHONPATH=$(abspath $(PYGEN)) \
	  $(PYTHON) -m pytest -q -rs --durations=10 -p no:cacheprovider
integration: build node-deps
	@$(MAKE) --no-print-directory -j4 -O integration-matrix integration-demos integration-whole integration-rest

# Four pytest processes side by side. On a fresh clone with three groups
# (the matrix with grade-class, the demos, the rest) the groups took 7.4,
# 7.5 and 8.0 min, 11.3 min of CPU in 8.2 min on two cores (69 %): the
# rest was the longest, and the machine had room for a fourth. The files
# that run whole gradings end to end (the sandbox, the hostile hand-ins,
# every path, the worlds, the pictures, the flow grader) now run as a group
# of their own, and grade-class joins the demos (each group's per-file
# times are in the JUNIT reports: `make soak` keeps them).
MATRIX_TESTS := tests/integration/test_verdict_matrix.py
DEMO_TESTS   := tests/integration/test_lab_overload.py tests/integration/test_lab_balance.py \
                tests/integration/test_starters.py tests/integration/test_lab_flow.py \
                tests/integration/test_lab_coverage.py tests/integration/test_starters_coverage.py \
                tests/integration/test_grade_class.py tests/integration/test_grade_class_slurm.py
WHOLE_TESTS  := tests/integration/test_sandbox.py tests/integration/test_hostile.py \
                tests/integration/test_all_paths.py tests/integration/test_pictures.py \
                tests/integration/test_grader_world.py tests/integration/test_coverage.py \
                tests/integration/test_grader_flow.py
# Every exercise's report for a passing and a failing submission, rendered
# in headless chromium (one picture a scenario, no two labels overlapping):
# eighteen whole gradings, 3.4-4.5 min measured on this 2-core machine, so
# it is `make report-layout`, not a part of `make test`.
LAYOUT_TESTS := tests/integration/test_report_layout.py
.PHONY: report-layout
report-layout: build
	$(PYTEST_RUN) $(LAYOUT_TESTS)

# JUNIT=PREFIX: each group also writes pytest's junitxml report to
# PREFIX-GROUP.xml (`make soak` reads them).
junit = $(if $(JUNIT),--junitxml=$(JUNIT)-$(1).xml -o junit_family=xunit1)
integration-matrix:
	$(PYTEST_RUN) $(call junit,matrix) $(MATRIX_TESTS)

integration-demos:
	$(PYTEST_RUN) $(call junit,demos) $(DEMO_TESTS)

integration-whole:
	$(PYTEST_RUN) $(call junit,whole) $(WHOLE_TESTS)

integration-rest:
	$(PYTEST_RUN) $(call junit,rest) $(addprefix --ignore=,$(MATRIX_TESTS) $(DEMO_TESTS) $(WHOLE_TESTS) $(LAYOUT_TESTS)) tests/integration

# The Node (@grpc/grpc-js) submissions' packages: `npm ci` when node_modules is
# missing or older than package-lock.json. Fatal when it fails: the Node tests
# are part of the suite, so the script prints npm's error and how to fix it
# (npm's whole output stays in build/node-deps.log) and `make test` stops.
node-deps: $(DEPS_STAMP)
	@sh scripts/node-deps.sh
	@sh scripts/node-deps.sh --kit

# The build and the unit suites' objects compile two at a time (a fresh
# clone: 32 + 46 s one at a time, 20 + 37 s two at a time).
NPROC := $(shell nproc 2>/dev/null || echo 2)
test: deps
	@$(MAKE) --no-print-directory house
	@$(MAKE) --no-print-directory -j$(NPROC) build
	@$(MAKE) --no-print-directory -j$(NPROC) unit
	@$(MAKE) --no-print-directory integration

# ASan+UBSan; LeakSanitizer runs with ASan. gRPC keeps some process-wide
# state until exit, which is not a leak of ours.
check: deps
	@$(MAKE) --no-print-directory SANITIZER=address OPT="-O1 -g" build unit integration

demo: deps
	@$(MAKE) --no-print-directory build
	./$(BIN)/lab demo deadline
	./$(BIN)/lab demo cancel
	./$(BIN)/lab demo shutdown
	./$(BIN)/lab demo balance
	RELAYLAB_DEMO_SVG=$(BUILD)/overload-goodput.svg ./$(BIN)/lab demo overload
	./$(BIN)/lab demo coverage
	./$(BIN)/grader deadline --submission ./$(BIN)/relay
	./$(BIN)/grader deadline --submission './$(BIN)/relay --mistake forward-timeout' || \
	  echo "demo: the mistaken relay failed, as it should (grader exit status $$?)"

# The reference relay beside a grpcio and a grpc-js relay (bench/README.md).
bench: deps
	@$(MAKE) --no-print-directory build node-deps
	./$(BIN)/bench-relay --relay '$(PYTHON) tests/submissions/relay_good.py' \
	  --relay 'node tests/submissions/node/relay_good.js'

# The reference relay beside nginx grpc_pass, a grpcio and a grpc-js relay,
# driven by h2load (bench/peers.py; bench/results/relay.md). h2load and nginx
# come from Debian (nghttp2-client, nginx-core), installed only when missing.
bench-peers: deps
	@$(MAKE) --no-print-directory build node-deps
	@command -v h2load >/dev/null && { command -v nginx >/dev/null || test -x /usr/sbin/nginx; } || \
	  { echo "bench-peers: installing h2load (nghttp2-client) and nginx (nginx-core)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nghttp2-client nginx-core; }
	RELAYLAB_BIN=$(abspath $(BIN)) $(PYTHON) bench/peers.py

# The verdict matrix: every known submission on every exercise it belongs to,
# RUNS runs each (default 20), with a CPU hog on every core when LOAD=1,
# JOBS graders at once; expected against got per scenario
# (tests/verdicts.json). REPORT=FILE keeps it as Markdown. Too long for
# `make test`, which runs each row once. Then the long tests: every starter,
# every path's coverage, and grade-class --slurm's wait bound (a minute).
RUNS ?= 20
LOAD ?= 0
JOBS ?= 1
selftest: deps
	@$(MAKE) --no-print-directory build node-deps
	RUNS=$(RUNS) LOAD=$(LOAD) JOBS=$(JOBS) $(PYTHON) scripts/selftest.py $(if $(REPORT),--report $(REPORT))
	RELAYLAB_STARTERS_FULL=1 RELAYLAB_ALL_PATHS_COVERAGE=1 RELAYLAB_SLURM_WAIT=1 RELAYLAB_BIN=$(abspath $(BIN)) \
	  PYTHONPATH=$(abspath $(PYGEN)) $(PYTHON) -m pytest -q -p no:cacheprovider tests/integration/test_starters.py \
	  tests/integration/test_all_paths.py tests/integration/test_grade_class_slurm.py

# The soak: the integration suite RUNS times (default 5 here), from a fresh
# clone of HEAD under a 0700 folder, half of the runs with a CPU hog on
# every core; prints each test that failed with its rate, quiet and loaded
# apart (scripts/soak.py; reports in build/soak/). A run is `make
# integration`'s 7-10 min, so it is not part of `make test`.
SOAK_RUNS = $(if $(filter file,$(origin RUNS)),5,$(RUNS))
.PHONY: soak
soak: deps
	$(PYTHON) scripts/soak.py --runs $(SOAK_RUNS)

# What a student receives: build/relaylab-student.tar.gz (and the folder),
# everything needed to start, check and hand in the exercises and nothing
# that answers one (scripts/student-kit.sh says what is in it and why).
student-kit: deps
	@$(MAKE) --no-print-directory build
	@sh scripts/student-kit.sh

# Gradescope's autograder zip for one assignment: `make gradescope
# EXERCISES=deadline,cancel` builds build/relaylab-gradescope-deadline-cancel.zip
# (EXERCISES=all: every exercise; setup.sh, run_autograder, gradescope.conf,
# a Debian 12 Dockerfile and the sources; scripts/gradescope/build.sh says
# what is in it).
.PHONY: gradescope
gradescope: deps
	@$(MAKE) --no-print-directory build
	@EXERCISES='$(EXERCISES)' sh scripts/gradescope/build.sh

# libFuzzer on the channel-config library (without its gRPC probe): clang
# with ASan+UBSan, bounded by FUZZ_TIME seconds; new inputs go to
# build/fuzz/corpus, the seeds stay in fuzz/corpus.
FUZZ_TIME ?= 60
FUZZ_BIN  := build/fuzz/chancfg_fuzz
FUZZ_SRCS := fuzz/chancfg_fuzz.c $(filter-out %/rl_chancfg_probe.c,$(CHANCFG_SRCS)) lib/rl_err.c
FUZZ_SAN  := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# The generated descriptors, compiled apart: without -Werror (not our code).
build/fuzz/relaylab.pb-c.o: $(GEN)/relaylab.pb-c.c
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link $(shell pkg-config --cflags libprotobuf-c) -c -o $@ $<
$(FUZZ_BIN): $(FUZZ_SRCS) $(wildcard lib/chancfg/*.h) lib/rl_err.h build/fuzz/relaylab.pb-c.o \
             $(GEN)/relaylab_services.inc | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	clang -std=c11 -g -O1 $(WARN) -D_GNU_SOURCE -Ilib -I$(GEN) -fsanitize=fuzzer $(FUZZ_SAN) \
	  $(shell pkg-config --cflags grpc jansson libprotobuf-c) -o $@ $(FUZZ_SRCS) build/fuzz/relaylab.pb-c.o \
	  $(shell pkg-config --libs jansson libprotobuf-c)
fuzz: $(FUZZ_BIN)
	@mkdir -p build/fuzz/corpus
	./$(FUZZ_BIN) -max_total_time=$(FUZZ_TIME) -dict=fuzz/chancfg.dict -print_final_stats=1 \
	  build/fuzz/corpus fuzz/corpus

clean:
	rm -rf build bin

# make format and make lint cover every C file of the project, found rather
# than listed (a new folder is covered without an edit here), except what is
# the students': starters/ (what `lab init` hands them: self-contained
# programs in their own Makefile's flags, each read on its own, and the text
# test_starters.py splices tests/starters/' filled-in TODO blocks into, so
# those go with them) and tests/submissions/ (hand-ins, hostile on purpose).
LINT_SKIP := ./build ./bin ./starters ./tests/starters ./tests/submissions ./node_modules ./.git
LINT_SRCS := $(sort $(patsubst ./%,%,$(shell find . \( $(foreach d,$(LINT_SKIP),-path $(d) -o) \
               -name node_modules \) -prune -o -name '*.[ch]' -type f -print)))
LINT_HDRS := $(filter %.h,$(LINT_SRCS))
TIDY_SRCS := $(filter %.c,$(LINT_SRCS))

# Applies .clang-format (clang-format 14) in place. Not part of any build:
# run it before committing (make lint fails on any difference).
format:
	clang-format -i $(LINT_SRCS)

# make lint: the format (any difference fails, naming the file and line),
# clang-tidy with .clang-tidy (every finding is an error) on each .c, and
# cppcheck. clang-tidy compiles each file as the build does (a unit test with
# rl_test.h force-included and its program's folder on the include path) and
# leaves a stamp per file, so a second make lint re-checks only what changed
# (any header of the project, or .clang-tidy, re-checks all); `make -j2 lint`
# checks two files at a time.
TIDY_OK := $(patsubst %.c,$(BUILD)/tidy/%.ok,$(TIDY_SRCS))
tidy_flags = $(CPPFLAGS) -std=c11 $(shell pkg-config --cflags $(PKGS) 2>/dev/null) -I$(patsubst %/,%,$(dir $(1))) \
  $(if $(filter tests/unit/%,$(1)),-include tests/unit/rl_test.h -Itests/unit $(if $(call unit_prog,$(1)),-I$(call unit_prog,$(1))))
.PHONY: house lint-format lint-tidy lint-cppcheck
lint: deps
	@$(MAKE) --no-print-directory lint-format
	@$(MAKE) --no-print-directory lint-tidy lint-cppcheck

# The house's limits, in seconds, first in `make test` (so CI holds them):
# the format, and no C file over 800 lines nor function over 120
# (scripts/house.py). clang-tidy and cppcheck stay in `make lint`: minutes.
house: deps
	@$(MAKE) --no-print-directory lint-format
	@$(PYTHON) scripts/house.py $(LINT_SRCS) || \
	  { echo "house: the sizes above are over the house's limits (docs/DESIGN.md)" >&2; exit 1; }

lint-format:
	@clang-format --dry-run -Werror $(LINT_SRCS) || \
	  { echo "lint: the files above differ from .clang-format: run make format" >&2; exit 1; }

lint-tidy: $(TIDY_OK)

$(BUILD)/tidy/%.ok: %.c .clang-tidy $(LINT_HDRS) $(PROTO_HS) $(GEN)/relaylab_services.inc | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(if $(Q),@echo "  TIDY    $<")
	$(Q)clang-tidy --quiet $< -- $(call tidy_flags,$<)
	@touch $@

lint-cppcheck:
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance -Ilib $(filter-out tests/%,$(TIDY_SRCS))

-include $(shell find build -name '*.d' 2>/dev/null)
