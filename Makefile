# dintattn: `make` builds the examples, `make check` runs the test suite,
# `make check-sanitize` runs it again under AddressSanitizer + UndefinedBehaviorSanitizer.
CC      ?= cc
CXX     ?= c++
CFLAGS  ?= -O2 -g
WARN    := -std=c99 -Wall -Wextra -Wpedantic
LDLIBS  := -lopenblas -lm -lpthread
BUILD   ?= build
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

EXAMPLES := examples/logits examples/tokenize examples/generate examples/bench examples/server examples/score
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

# Tests build with -Werror: the header must compile warning-free as C99 and as C++.
$(BUILD)/test_cplusplus: tests/test_cplusplus.cpp tests/test_util.h dintattn.h
	@mkdir -p $(BUILD)
	$(CXX) -std=c++11 -Wall -Wextra -Wpedantic -Werror $(CFLAGS) -o $@ $< $(LDLIBS) -lcmocka

check: $(addprefix $(BUILD)/,$(TESTS) logits tokenize generate bench score)
	@set -e; for t in $(TESTS); do echo "== $$t"; ./$(BUILD)/$$t; done
	@echo "== test_engine, portable kernels"; DINTATTN_KERNELS=portable ./$(BUILD)/test_engine
	@echo "== test_engine, AVX2 kernels"; DINTATTN_KERNELS=avx2 ./$(BUILD)/test_engine
	@echo "== cli"; sh tests/cli.sh $(BUILD)/logits $(BUILD)/tokenize $(BUILD)/bench
	@echo "== generate"; sh tests/generate.sh $(BUILD)/generate
	@echo "== score"; sh tests/score.sh $(BUILD)/score $(BUILD)/tokenize $(BUILD)/logits

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
check-server: $(BUILD)/server
	bash tests/server_test.sh $(BUILD)/server

check-valgrind: $(BUILD)/logits $(BUILD)/tokenize $(BUILD)/generate $(BUILD)/score
	sh tests/valgrind.sh $(BUILD)
