# Thin wrapper around meson: installs what is missing, builds, runs.
#   make demo    install dependencies, build, run the demo
#   make check   install dependencies, build, run every test suite
#   make bench   build and run the benchmarks (measurements, not tests):
#                the tensor-parallel MLP step, bench-matmul, then
#                bench-redistribute on 2 and 4 ranks

BUILDDIR ?= build
MESON_SETUP_ARGS ?=
MESON_TEST_ARGS ?=
MPIRUN ?= mpirun --oversubscribe

export OMPI_ALLOW_RUN_AS_ROOT = 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM = 1

.PHONY: all deps build demo check bench clean

all: build

deps:
	./scripts/install-deps.sh

$(BUILDDIR)/build.ninja:
	meson setup $(BUILDDIR) $(MESON_SETUP_ARGS)

build: deps $(BUILDDIR)/build.ninja
	meson compile -C $(BUILDDIR)

demo: build
	./$(BUILDDIR)/examples/hp-mlp

check: build
	meson test -C $(BUILDDIR) --print-errorlogs $(MESON_TEST_ARGS)

bench: build
	./$(BUILDDIR)/bench/bench-matmul
	$(MPIRUN) -np 2 ./$(BUILDDIR)/bench/bench-redistribute
	$(MPIRUN) -np 4 ./$(BUILDDIR)/bench/bench-redistribute

clean:
	rm -rf $(BUILDDIR)

# The tensor-parallel MLP step on 1 and 2 ranks, against mpi4py + numpy
# (bench/README.md); a prerequisite of bench, so it runs before the others
.PHONY: bench-tp-mlp
bench: bench-tp-mlp
bench-tp-mlp: build
	./bench/run-tp-mlp.sh $(BUILDDIR)
