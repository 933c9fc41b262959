# Thin wrapper around meson: installs what is missing, builds, runs.
#   make demo    install dependencies, build, train the tiny Llama on text
#                on 2 ranks, plot its losses, generate a sample from it
#   make check   install dependencies, build, run every test suite
#   make check-asan  the unit and mpi suites under ASan + UBSan, on 1 to 4
#                ranks (make check runs the 8-rank cases)
#   make check-valgrind  the unit suite under valgrind (memcheck)
#   make bench   build and run the benchmarks (measurements, not tests):
#                the tensor-parallel MLP step, hp-train on 1 and 2 ranks,
#                bench-matmul, bench-redistribute on 2 and 4 ranks, then
#                the cost of HP_DEBUG=collectives in hp-train and the
#                numpy copies of the Python override, then the data
#                loader's share of the step and generation with and
#                without the KV cache on 1 and 2 ranks
#   make soak    build, train the tiny model for 2000 steps on 2 ranks
#                and fail if its resident memory grows by 1 % or more
#                after warm-up (bench/soak; not part of check or bench)
#   make fuzz    build the libFuzzer targets of fuzz/ with clang, ASan and
#                UBSan in $(FUZZ_BUILDDIR) and run each for FUZZ_SECONDS
#                (not part of make check)

BUILDDIR ?= build
MESON_SETUP_ARGS ?=
MESON_TEST_ARGS ?=
MPIRUN ?= mpirun --oversubscribe

export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

ASAN_BUILDDIR ?= build-asan

.PHONY: all deps build demo check check-asan check-valgrind bench clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILDDIR)/build.ninja:
	meson setup $(BUILDDIR) $(MESON_SETUP_ARGS)

build: deps $(BUILDDIR)/build.ninja
	meson compile -C $(BUILDDIR)

# The main job: a tiny Llama trained tensor-parallel on 2 ranks on the
# licence texts every Debian system has (base-files), with a validation
# loss and a metrics file; then the loss plot and a sample that
# hp-generate writes from the checkpoint, on 2 ranks too
DEMO_DIR ?= $(BUILDDIR)/demo
DEMO_TEXT ?= /usr/share/common-licenses/*
DEMO_STEPS ?= 2000

demo: build
	rm -rf $(DEMO_DIR)
	mkdir -p $(DEMO_DIR)
	$(MPIRUN) -np 2 ./$(BUILDDIR)/examples/hp-train --tp 2 --data '$(DEMO_TEXT)' \
	  --seq-len 64 --set max-seq-len=256 --steps $(DEMO_STEPS) --log-every 100 --eval-every 500 \
	  --save $(DEMO_DIR)/checkpoints --metrics $(DEMO_DIR)/metrics.jsonl
	/usr/bin/python3 examples/tiny-llama/plot-metrics.py $(DEMO_DIR)/metrics.jsonl $(DEMO_DIR)/loss.png
	@echo
	@echo "What the model writes after \"This License\" (hp-generate on 2 ranks, --tp 2):"
	@echo
	@$(MPIRUN) -np 2 ./$(BUILDDIR)/examples/hp-generate --tp 2 --load $(DEMO_DIR)/checkpoints \
	  --prompt "This License" --max-new-tokens 160 --temperature 0.8 --top-k 40 --seed 1
	@echo
	@echo "The loss plot (train and validation loss against the step): $(DEMO_DIR)/loss.png"
	@echo
	@echo "Where to go next:"
	@echo "  docs/train-on-text.md: your own text, sentencepiece token shards, hp-generate's options"
	@echo "  $(MPIRUN) -np 4 ./$(BUILDDIR)/examples/hp-train --dp 2 --tp 2 --data '$(DEMO_TEXT)'   # same losses"
	@echo "  ./$(BUILDDIR)/examples/hp-train --print-config                       # the whole model configuration"
	@echo "  ./$(BUILDDIR)/examples/hp-train --set dim=128 --set n-layers=4       # change any field by its path"
	@echo "  ./$(BUILDDIR)/examples/hp-train --help; ./$(BUILDDIR)/examples/hp-generate --help; make check"

check: build
	meson test -C $(BUILDDIR) --print-errorlogs $(MESON_TEST_ARGS)

# The unit and mpi suites built with AddressSanitizer and UBSan
check-asan: deps
	test -f $(ASAN_BUILDDIR)/build.ninja || meson setup $(ASAN_BUILDDIR) \
	  -Db_sanitize=address,undefined -Db_lundef=false -Dintrospection=disabled -Ddocs=disabled
	meson compile -C $(ASAN_BUILDDIR)
	meson test -C $(ASAN_BUILDDIR) --setup=asan --suite unit --suite mpi --no-suite np8 \
	  --print-errorlogs

# The unit suite under valgrind, suppressing only GLib's type registry and
# Open MPI's own allocations (tests/valgrind.supp)
check-valgrind: build
	meson test -C $(BUILDDIR) --setup=valgrind --suite unit --print-errorlogs

bench: build
	./bench/run-train.sh $(BUILDDIR)
	./$(BUILDDIR)/bench/bench-matmul
	$(MPIRUN) -np 2 ./$(BUILDDIR)/bench/bench-redistribute
	$(MPIRUN) -np 4 ./$(BUILDDIR)/bench/bench-redistribute
	./bench/run-collective-checks.sh $(BUILDDIR)
	GI_TYPELIB_PATH=$(BUILDDIR)/introspection LD_LIBRARY_PATH=$(BUILDDIR)/hp-protocols \
	  /usr/bin/python3 bench/bench-numpy.py
	./bench/run-data.sh $(BUILDDIR)
	./$(BUILDDIR)/bench/bench-generate --repeats 5
	$(MPIRUN) -np 2 ./$(BUILDDIR)/bench/bench-generate --repeats 5

clean:
	rm -rf $(BUILDDIR)

# The tensor-parallel MLP step on 1 and 2 ranks, against mpi4py + numpy
# (bench/README.md); a prerequisite of bench, so it runs before the others
.PHONY: bench-tp-mlp
bench: bench-tp-mlp
bench-tp-mlp: build
	./bench/run-tp-mlp.sh $(BUILDDIR)

# Soak: hp-train for 2000 steps on 2 ranks, VmRSS of each rank sampled
# (bench/README.md); exits non-zero if it grows by 1 % or more after
# warm-up. A long run, so neither check nor bench runs it.
.PHONY: soak
SOAK_ARGS ?=
soak: build
	./bench/soak --mpirun "$(MPIRUN)" $(SOAK_ARGS) $(BUILDDIR)

# Fuzzing: each target runs for FUZZ_SECONDS on its seed corpus
# fuzz/corpus/NAME, adding what it finds to $(FUZZ_BUILDDIR)/corpus/NAME;
# a crash stops make and leaves the input as $(FUZZ_BUILDDIR)/crash-*.
FUZZ_BUILDDIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_ARGS ?=
# target:corpus or target:corpus:dictionary (a libFuzzer -dict file in fuzz/)
FUZZ_RUNS = fuzz-safetensors-header:safetensors \
            fuzz-config-json:config-json:config-json.dict \
            fuzz-placement:placement \
            fuzz-initializer:initializer

.PHONY: fuzz fuzz-deps
fuzz-deps: deps
	./scripts/install-fuzz-deps.sh

$(FUZZ_BUILDDIR)/build.ninja:
	CC=clang meson setup $(FUZZ_BUILDDIR) -Dfuzzing=true \
	  -Db_sanitize=address,undefined -Db_lundef=false \
	  -Dintrospection=disabled -Ddocs=disabled -Dtests=disabled

fuzz: fuzz-deps $(FUZZ_BUILDDIR)/build.ninja
	meson compile -C $(FUZZ_BUILDDIR) $(foreach run,$(FUZZ_RUNS),$(firstword $(subst :, ,$(run))))
	@set -e; for run in $(FUZZ_RUNS); do \
	  target=$${run%%:*}; corpus=$${run#*:}; dict=; \
	  case $$corpus in *:*) dict=-dict=fuzz/$${corpus#*:}; corpus=$${corpus%%:*};; esac; \
	  mkdir -p $(FUZZ_BUILDDIR)/corpus/$$corpus; \
	  echo "fuzz: $$target for $(FUZZ_SECONDS) s"; \
	  ./$(FUZZ_BUILDDIR)/fuzz/$$target -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_BUILDDIR)/ $$dict $(FUZZ_ARGS) \
	    $(FUZZ_BUILDDIR)/corpus/$$corpus fuzz/corpus/$$corpus; \
	done
