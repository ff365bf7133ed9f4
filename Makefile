# dintattn: `make` builds the examples, `make check` runs the test suite,
# `make check-sanitize` runs it again under AddressSanitizer + UndefinedBehaviorSanitizer,
# `make lib` builds the shared library the Python bindings load (see the end of this file).
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wpedantic
LDLIBS  := -lopenblas -lm -lpthread
BUILD   ?= build
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

EXAMPLES := examples/logits examples/tokenize examples/generate examples/bench examples/server examples/score \
            examples/attention examples/needle
TESTS    := test_engine test_loader test_sampler test_tokenizer test_alloc test_cplusplus test_threads test_hardening test_extreme test_unicode test_bpe test_chat

.PHONY: all check check-sanitize check-tsan clean fixtures
all: $(EXAMPLES)

examples/%: examples/%.c dintattn.h
	$(CC) $(WARN) $(CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/%: examples/%.c dintattn.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/test_%: tests/test_%.c tests/test_util.h dintattn.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) -Werror $(CFLAGS) -o $@ $< $(LDLIBS) -lcmocka

# test_engine again with AVX-512 BF16's instructions emulated (tests/emulate_bf16.h): the bf16
# panels and conversions that AMD's Zen 4 / Zen 5 run, checked on any AVX-512 CPU.
$(BUILD)/bf16_emulated/test_engine: tests/test_engine.c tests/test_util.h tests/emulate_bf16.h dintattn.h
	@mkdir -p $(BUILD)/bf16_emulated
	$(CC) $(WARN) -Werror $(CFLAGS) -include tests/emulate_bf16.h -o $@ $< $(LDLIBS) -lcmocka

# Tests build with -Werror: the header must compile warning-free as C99 and as C++.
$(BUILD)/test_cplusplus: tests/test_cplusplus.cpp tests/test_util.h dintattn.h
	@mkdir -p $(BUILD)
	$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror $(CFLAGS) -o $@ $< $(LDLIBS) -lcmocka

check: $(addprefix $(BUILD)/,$(TESTS) logits tokenize generate bench score attention needle) $(BUILD)/bf16_emulated/test_engine
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$(BUILD)/$$t; done
	@echo "== test_engine, portable kernels"; DINTATTN_KERNELS=portable ./$(BUILD)/test_engine
	@echo "== test_engine, AVX2 kernels"; DINTATTN_KERNELS=avx2 ./$(BUILD)/test_engine
	@echo "== test_engine, AVX-512 kernels without AMX's tiles"; DINTATTN_KERNELS=avx512 ./$(BUILD)/test_engine
	@echo "== test_engine, AVX-512 BF16 emulated (tests/emulate_bf16.h)"; \
	if grep -qw avx512bw /proc/cpuinfo 2>/dev/null && grep -qw avx512vl /proc/cpuinfo; then \
	    DINTATTN_KERNELS=avx512 ./$(BUILD)/bf16_emulated/test_engine; \
	else echo "skipped: the CPU has no AVX-512 BW and VL"; fi
	@echo "== cli"; sh tests/cli.sh $(BUILD)/logits $(BUILD)/tokenize $(BUILD)/bench
	@echo "== generate"; sh tests/generate.sh $(BUILD)/generate
	@echo "== score"; sh tests/score.sh $(BUILD)/score $(BUILD)/tokenize $(BUILD)/logits
	@echo "== attention"; sh tests/attention.sh $(BUILD)/attention
	@echo "== needle"; sh tests/needle.sh $(BUILD)/needle $(BUILD)/tokenize

check-sanitize:
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    $(MAKE) check BUILD=build/sanitize CFLAGS="-O1 -g $(SAN)"

# The thread pool under ThreadSanitizer: test_threads (4 threads sharing a model, sessions with
# pools of their own). OpenBLAS's threads are not instrumented, so it runs on one of them.
check-tsan:
	$(MAKE) build/tsan/test_threads BUILD=build/tsan CFLAGS="-O1 -g -fsanitize=thread"
	TSAN_OPTIONS=halt_on_error=1 OPENBLAS_NUM_THREADS=1 ./build/tsan/test_threads

# Regenerates tests/fixtures from tools/reference.py (needs python3-numpy).
fixtures:
	/usr/bin/python3 tools/make_fixtures.py

clean:
	rm -rf build $(EXAMPLES)

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
$(BUILD)/test_hardening: $(addprefix fuzz/fuzz_,$(addsuffix .c,$(FUZZERS)))

$(BUILD)/fuzz/fuzz_%: fuzz/fuzz_%.c dintattn.h
	@mkdir -p $(BUILD)/fuzz
	$(FUZZ_CC) $(FUZZ_FLAGS) -o $@ $< $(LDLIBS)

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

# examples/server: its HTTP layer is in server_http.h (fuzz_http and test_hardening include it too).
# `make check-server` drives the server with curl and the openai npm client (tests/server_test.sh).
.PHONY: check-server
examples/server $(BUILD)/server $(BUILD)/test_hardening $(BUILD)/fuzz/fuzz_http: examples/server_http.h
# examples/textgen.h: what server and generate --chat share (stop strings, prompt encoding, prefix cache)
examples/server $(BUILD)/server examples/generate $(BUILD)/generate: examples/textgen.h examples/server_http.h
# examples/score: textgen.h's prompt encoding, server_http.h's JSON strings
examples/score $(BUILD)/score: examples/textgen.h examples/server_http.h
# examples/attention: the same, for its texts and JSON strings
examples/attention $(BUILD)/attention: examples/textgen.h examples/server_http.h
# examples/needle: server_http.h's JSON strings
examples/needle $(BUILD)/needle: examples/server_http.h
# examples/cli.h: what the examples' command lines share (engine options, model/tokenizer/session
# loading, number, id-list and file reading)
examples/logits examples/generate examples/bench examples/score examples/attention examples/needle examples/server: examples/cli.h
$(BUILD)/logits $(BUILD)/generate $(BUILD)/bench $(BUILD)/score $(BUILD)/attention $(BUILD)/needle $(BUILD)/server: examples/cli.h
check-server: $(BUILD)/server
	bash tests/server_test.sh $(BUILD)/server

check-valgrind: $(BUILD)/logits $(BUILD)/tokenize $(BUILD)/generate $(BUILD)/score $(BUILD)/needle
	sh tests/valgrind.sh $(BUILD)

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

$(BUILD)/libdintattn.so.$(VERSION): dintattn.h
	@mkdir -p $(BUILD)
	$(CC) $(WARN) $(CFLAGS) -fPIC -shared -Wl,-soname,$(SONAME) -DDINTATTN_IMPLEMENTATION -o $@ -x c dintattn.h -x none $(LDLIBS)

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

# The bindings against the fixtures' reference logits and against examples/tokenize and generate.
check-python: lib $(BUILD)/tokenize $(BUILD)/generate
	DINTATTN_LIB=$(BUILD)/libdintattn.so DINTATTN_BUILD=$(BUILD) $(PYTHON) tests/python/test_dintattn.py
