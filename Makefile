# dintattn: `make` builds the examples, `make check` builds and runs the test suite (one line per
# suite, then "N passed, M failed"; each suite's output in $(BUILD)/logs/), `make check-sanitize`
# runs it again under AddressSanitizer + UndefinedBehaviorSanitizer, `make lib` builds the shared
# library the Python bindings load (see the end of this file). `make V=1` shows the commands.
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wpedantic
LDLIBS  := -lopenblas -lm -lpthread
BUILD   ?= build
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

# One build per configuration. The default one (BUILD=build) puts the examples where the README
# runs them (examples/generate) and `make check` tests those same binaries; any other BUILD (e.g.
# check-sanitize's build/sanitize) keeps its examples beside its tests and objects.
BIN := $(if $(filter build,$(BUILD)),examples,$(BUILD))

# Parallel by default, one job per core, unless the command line or MAKEFLAGS gives -j (a sub-make
# shares its parent's jobs).
ifeq ($(MAKELEVEL),0)
ifeq ($(findstring -j,$(MAKEFLAGS) $(shell echo "$$MAKEFLAGS")),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif
endif

comma := ,
Q   := $(if $(filter 1,$(V)),,@)
say  = $(if $(Q),@printf '  %-4s %s\n' $(1) $(2))

# Every examples/*.c is a program and every tests/test_*.c(pp) a cmocka suite that make check runs.
EXAMPLES := $(sort $(basename $(notdir $(wildcard examples/*.c))))
TESTS    := $(sort $(basename $(notdir $(wildcard tests/test_*.c tests/test_*.cpp))))

.PHONY: all check check-sanitize check-tsan clean fixtures
all: $(addprefix $(BIN)/,$(EXAMPLES))

# The header's implementation, compiled once per configuration: the examples and the tests that use
# only the API link it, and so does the shared library (hence -fPIC; -fno-semantic-interposition
# lets the compiler inline and call the API's functions directly, as in an executable).
OBJ := $(BUILD)/dintattn.o
PIC := -fPIC -fno-semantic-interposition
$(OBJ): dintattn.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) $(CFLAGS) $(PIC) -DDINTATTN_IMPLEMENTATION -c -o $@ -x c dintattn.h

# Each example and test defines DINTATTN_IMPLEMENTATION, so that it also builds alone
# (cc examples/logits.c -lopenblas -lm -lpthread); here DINTATTN_IMPLEMENTATION_DONE, the header's
# guard against a second copy, leaves it out and the program links $(OBJ) instead.
LINK_OBJ := -DDINTATTN_IMPLEMENTATION_DONE
# Examples that need the implementation in their own file: bench, which measures internal kernels
# on purpose; every other example uses the API alone. The tests that
# link $(OBJ) are listed; the others configure the implementation (DINTATTN_SOLO_BYTES, allocators),
# use its internals, compile it as C++ (test_cplusplus) or, as test_sampler, get <string.h> and
# <math.h> only through it.
SELF_EXAMPLES := bench
LINKED_TESTS  := test_loader test_bpe test_chat test_json
EXAMPLE_DEPS  := dintattn.h $(wildcard examples/*.h)

$(BIN)/%: examples/%.c $(EXAMPLE_DEPS) $(OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) $(CFLAGS) $(LINK_OBJ) -o $@ $< $(OBJ) $(LDLIBS)

$(addprefix $(BIN)/,$(SELF_EXAMPLES)): $(BIN)/%: examples/%.c $(EXAMPLE_DEPS)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) $(CFLAGS) -o $@ $< $(LDLIBS)

# Tests build with -Werror: the header must compile warning-free as C99 and as C++.
$(BUILD)/test_%: tests/test_%.c tests/test_util.h dintattn.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) -Werror $(CFLAGS) -o $@ $< $(LDLIBS) -lcmocka

$(addprefix $(BUILD)/,$(LINKED_TESTS)): $(BUILD)/%: tests/%.c tests/test_util.h dintattn.h $(OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) -Werror $(CFLAGS) $(LINK_OBJ) -o $@ $< $(OBJ) $(LDLIBS) -lcmocka

# test_engine again with AVX-512 BF16's instructions emulated (tests/emulate_bf16.h): the bf16
# panels and conversions that AMD's Zen 4 / Zen 5 run, checked on any AVX-512 CPU.
$(BUILD)/bf16_emulated/test_engine: tests/test_engine.c tests/test_util.h tests/emulate_bf16.h dintattn.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) -Werror $(CFLAGS) -include tests/emulate_bf16.h -o $@ $< $(LDLIBS) -lcmocka

$(BUILD)/test_cplusplus: tests/test_cplusplus.cpp tests/test_util.h dintattn.h
	@mkdir -p $(@D)
	$(call say,CXX,$@)
	$(Q)$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror $(CFLAGS) -o $@ $< $(LDLIBS) -lcmocka

# --- make check: one target per suite (run-NAME, also usable alone), run in parallel -----------
# Each writes $(BUILD)/logs/NAME.log and prints one line; the summary prints the logs of the suites
# that failed and exits non-zero if any did. test_engine and test_batch run once per kernel level.
AVX512_BW_VL := $(shell grep -qw avx512bw /proc/cpuinfo 2>/dev/null && grep -qw avx512vl /proc/cpuinfo && echo yes)
SUITES := test_engine test_engine_portable test_engine_avx2 test_engine_avx512 \
          test_batch_portable test_batch_avx2 test_batch_avx512 \
          $(if $(AVX512_BW_VL),test_engine_bf16_emulated) \
          cli needle generate simple score lowbit attention activations $(filter-out test_engine,$(TESTS))
LOGS   := $(BUILD)/logs
RUN     = @sh tests/run_suite.sh $(LOGS) $(@:run-%=%)

.PHONY: $(addprefix run-,$(SUITES))
$(addprefix run-,$(TESTS)): run-%: $(BUILD)/%
	$(RUN) $(BUILD)/$*
run-test_engine_portable run-test_engine_avx2 run-test_engine_avx512: run-test_engine_%: $(BUILD)/test_engine
	$(RUN) env DINTATTN_KERNELS=$* $(BUILD)/test_engine
run-test_batch_portable run-test_batch_avx2 run-test_batch_avx512: run-test_batch_%: $(BUILD)/test_batch
	$(RUN) env DINTATTN_KERNELS=$* $(BUILD)/test_batch
run-test_engine_bf16_emulated: $(BUILD)/bf16_emulated/test_engine
	$(RUN) env DINTATTN_KERNELS=avx512 $<
run-cli: $(BIN)/logits $(BIN)/tokenize $(BIN)/bench
	$(RUN) sh tests/cli.sh $^
run-generate: $(BIN)/generate
	$(RUN) sh tests/generate.sh $^
run-simple: $(BIN)/simple $(BIN)/generate
	$(RUN) sh tests/simple.sh $^
run-score: $(BIN)/score $(BIN)/tokenize $(BIN)/logits
	$(RUN) sh tests/score.sh $^
run-lowbit: $(BIN)/lowbit $(BIN)/score
	$(RUN) sh tests/lowbit.sh $^
run-attention: $(BIN)/attention
	$(RUN) sh tests/attention.sh $^
run-needle: $(BIN)/needle $(BIN)/tokenize
	$(RUN) sh tests/needle.sh $^
run-activations: $(BIN)/activations
	$(RUN) sh tests/activations.sh $^

check: $(addprefix run-,$(SUITES))
	$(if $(AVX512_BW_VL),,@echo "test_engine_bf16_emulated: skipped, the CPU has no AVX-512 BW and VL")
	@sh tests/run_suite.sh --summary $(LOGS) $(SUITES)

check-sanitize:
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(MAKE) --no-print-directory check BUILD=build/sanitize CFLAGS="-O1 -g $(SAN)"

# The thread pool under ThreadSanitizer: test_threads (4 threads sharing a model, sessions with
# pools of their own) and test_batch (sequences attending on one session's pool, or their own).
# OpenBLAS's threads are not instrumented, so it runs on one of them.
check-tsan:
	$(MAKE) --no-print-directory build/tsan/test_threads build/tsan/test_batch BUILD=build/tsan CFLAGS="-O1 -g -fsanitize=thread"
	TSAN_OPTIONS=halt_on_error=1 OPENBLAS_NUM_THREADS=1 ./build/tsan/test_threads
	TSAN_OPTIONS=halt_on_error=1 OPENBLAS_NUM_THREADS=1 ./build/tsan/test_batch

# Regenerates tests/fixtures from tools/reference.py (needs python3-numpy).
fixtures:
	/usr/bin/python3 tools/make_fixtures.py

clean:
	rm -rf build $(addprefix examples/,$(EXAMPLES))

# --- Hardening: fuzzing and valgrind (issue 6) ---------------------------------------------
# `make fuzz` builds the libFuzzer harnesses in fuzz/ (clang + libclang-rt, ASan + UBSan) and runs
# each for FUZZ_SECONDS, starting from fuzz/corpus/<harness> (and, for `model`, the fixtures);
# what they find goes to $(BUILD)/fuzz/. A crash stops make, leaving crash-* in $(BUILD)/fuzz/:
# fix it and copy the input to fuzz/corpus/<harness>/ (test_hardening replays those corpora).
# `make check-valgrind` runs the examples under valgrind memcheck (tests/valgrind.sh).
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZERS      := header model tokenizer sampler http
FUZZ_FLAGS   := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all

.PHONY: fuzz check-valgrind
$(BUILD)/test_hardening: $(addprefix fuzz/fuzz_,$(addsuffix .c,$(FUZZERS))) $(wildcard examples/*.h)

# The harnesses link one instrumented copy of the implementation, as the examples do; fuzz_sampler
# keeps its own (it gets <math.h> only through it).
FUZZ_OBJ  := $(BUILD)/fuzz/dintattn.o
FUZZ_SELF := sampler
$(FUZZ_OBJ): dintattn.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(subst fuzzer$(comma),fuzzer-no-link$(comma),$(FUZZ_FLAGS)) -DDINTATTN_IMPLEMENTATION -c -o $@ -x c dintattn.h

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c dintattn.h $(FUZZ_OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) $(LINK_OBJ) -o $@ $< $(FUZZ_OBJ) $(LDLIBS)

$(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZ_SELF)): $(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c dintattn.h
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LDLIBS)

fuzz: $(addprefix $(BUILD)/fuzz/fuzz_,$(FUZZERS))
	@set -e; mkdir -p $(BUILD)/fuzz/seeds_model; \
	for f in tests/fixtures/*.safetensors; do \
	    [ $$(wc -c <$$f) -le 65536 ] && cp $$f $(BUILD)/fuzz/seeds_model/ || true; done; \
	for h in $(FUZZERS); do \
	    echo "== fuzz_$$h ($(FUZZ_SECONDS) s)"; mkdir -p $(BUILD)/fuzz/corpus_$$h; \
	    seeds=fuzz/corpus/$$h; [ $$h = model ] && seeds="$$seeds $(BUILD)/fuzz/seeds_model"; \
	    dict=; case $$h in header|model) dict=-dict=fuzz/dintattn.dict;; esac; \
	    OPENBLAS_NUM_THREADS=1 ./$(BUILD)/fuzz/fuzz_$$h $$dict -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=$(BUILD)/fuzz/crash_$$h- \
	        $(BUILD)/fuzz/corpus_$$h $$seeds 2>$(BUILD)/fuzz/fuzz_$$h.log \
	        || { tail -40 $(BUILD)/fuzz/fuzz_$$h.log; exit 1; }; \
	    grep -E '^Done|stat::number_of_executed_units' $(BUILD)/fuzz/fuzz_$$h.log | head -1; \
	done

# examples/server serves HTTP with libmicrohttpd (Debian's libmicrohttpd-dev); its request bodies are
# read by server_params.h, which fuzz_http drives. `make check-server` drives the server with curl
# and the openai npm client (tests/server_test.sh).
$(BIN)/server: LDLIBS += -lmicrohttpd
.PHONY: check-server
$(BUILD)/fuzz/fuzz_http: $(wildcard examples/*.h)
check-server: $(BIN)/server $(BIN)/logits
	bash tests/server_test.sh $(BIN)/server

check-valgrind: $(BIN)/logits $(BIN)/tokenize $(BIN)/generate $(BIN)/score $(BIN)/needle
	sh tests/valgrind.sh $(BIN)

# --- Shared library, pkg-config and Python bindings (issue 14) ------------------------------
# `make lib` compiles dintattn.h's implementation into $(BUILD)/libdintattn.so.VERSION (soname
# libdintattn.so.MAJOR, with both names as symlinks) and writes $(BUILD)/dintattn.pc for PREFIX.
# Only the dintattn_* API is exported: everything else in the header is static.
# `make install PREFIX=... [DESTDIR=...]` installs the header, the library, dintattn.pc and
# python/dintattn.py (told where the library went); `make uninstall` removes them.
# `make check-python` runs tests/python with Debian's python3 and python3-numpy (not in `check`).
VERSION    := $(shell sed -n 's/^\#define DINTATTN_VERSION "\(.*\)"/\1/p' dintattn.h)
SONAME     := libdintattn.so.$(firstword $(subst ., ,$(VERSION)))
PREFIX     ?= /usr/local
INCLUDEDIR ?= $(PREFIX)/include
LIBDIR     ?= $(PREFIX)/lib
PYTHON     ?= /usr/bin/python3
# where PYTHON looks for modules under PREFIX (Debian: PREFIX/lib/python3.X/dist-packages), else
# PREFIX's site-packages (then put it on PYTHONPATH)
PYTHONDIR  ?= $(shell $(PYTHON) -c 'import site, sys, sysconfig; p = "$(PREFIX)".rstrip("/") + "/"; \
                print(([d for d in site.getsitepackages() if d.startswith(p)] + \
                       [sysconfig.get_path("purelib", "posix_prefix", {"base": p[:-1]})])[0])')

.PHONY: lib install uninstall check-python FORCE
lib: $(BUILD)/libdintattn.so $(BUILD)/dintattn.pc

$(BUILD)/libdintattn.so.$(VERSION): $(OBJ)
	$(call say,LD,$@)
	$(Q)$(CC) $(CFLAGS) -shared -Wl,-soname,$(SONAME) -o $@ $(OBJ) $(LDLIBS)

$(BUILD)/libdintattn.so: $(BUILD)/libdintattn.so.$(VERSION)
	ln -sf libdintattn.so.$(VERSION) $(BUILD)/$(SONAME)
	ln -sf libdintattn.so.$(VERSION) $@

# rewritten every time: it carries PREFIX, which may differ from the last run's
$(BUILD)/dintattn.pc: FORCE
	@mkdir -p $(BUILD)
	@printf '%s\n' 'prefix=$(PREFIX)' 'includedir=$(INCLUDEDIR)' 'libdir=$(LIBDIR)' '' 'Name: dintattn' \
	    'Description: differential-attention (DIFF, DINT) decoder LLM inference on a CPU' \
	    'Version: $(VERSION)' 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -ldintattn' \
	    'Libs.private: -lopenblas -lm -lpthread' >$@

install: lib
	install -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(PYTHONDIR)
	install -m 644 dintattn.h $(DESTDIR)$(INCLUDEDIR)/dintattn.h
	install -m 755 $(BUILD)/libdintattn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdintattn.so.$(VERSION)
	ln -sf libdintattn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf libdintattn.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdintattn.so
	install -m 644 $(BUILD)/dintattn.pc $(DESTDIR)$(LIBDIR)/pkgconfig/dintattn.pc
	sed 's|^_INSTALLED_LIBDIR = None|_INSTALLED_LIBDIR = "$(LIBDIR)"|' python/dintattn.py >$(DESTDIR)$(PYTHONDIR)/dintattn.py

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/dintattn.h $(DESTDIR)$(LIBDIR)/libdintattn.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libdintattn.so \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/dintattn.pc $(DESTDIR)$(PYTHONDIR)/dintattn.py

# The bindings against the fixtures' reference logits and against examples/tokenize and generate
# (which tests/python looks for in DINTATTN_BUILD, so the default configuration builds them there too).
ifneq ($(BIN),$(BUILD))
$(BUILD)/%: examples/%.c $(EXAMPLE_DEPS) $(OBJ)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) $(CFLAGS) $(LINK_OBJ) -o $@ $< $(OBJ) $(LDLIBS)
$(addprefix $(BUILD)/,$(SELF_EXAMPLES)): $(BUILD)/%: examples/%.c $(EXAMPLE_DEPS)
	@mkdir -p $(@D)
	$(call say,CC,$@)
	$(Q)$(CC) $(WARN) $(CFLAGS) -o $@ $< $(LDLIBS)
endif
check-python: lib $(BUILD)/tokenize $(BUILD)/generate $(BUILD)/activations
	DINTATTN_LIB=$(BUILD)/libdintattn.so DINTATTN_BUILD=$(BUILD) $(PYTHON) tests/python/test_dintattn.py
