#!/bin/sh
# bench/run-train-profile.sh: where the CPU time of one training step of
# hp-train goes, by kernel (see README.md, "Where the time of a step goes")
#
#   bench/run-train-profile.sh [BUILDDIR [TRAIN]]
#   NP=2 LAYOUT="--dp 2" bench/run-train-profile.sh [BUILDDIR [TRAIN]]
#
# TRAIN is the hp-train to profile (default BUILDDIR/examples/hp-train),
# so that two builds can be compared. With NP ranks (default 1) hp-train
# runs under mpirun with the options LAYOUT (such as "--dp 2" or
# "--tp 2"), every rank recorded, and the figures are those of rank 0.
# For bench/train-25m.json, 8 x 128
# tokens a step, one BLAS thread: `perf record` of a LONG-step and a
# SHORT-step run (defaults 16 and 4), the samples of the second
# subtracted from those of the first, per function, then divided by the
# difference in steps: CPU milliseconds per step in steady state, without
# the start-up (weights initialised, first-touch page faults). Other
# processes on the machine do not add to CPU time, so this is the figure
# to compare on a shared machine; they still move it by a few percent
# (caches, memory bus). Needs perf (Debian: linux-perf); a measurement:
# it always exits 0.

builddir=${1:-build}
train=${2:-$builddir/examples/hp-train}
srcdir=$(dirname "$0")
np=${NP:-1}
layout=${LAYOUT:-}
long=${LONG:-16}
short=${SHORT:-4}
freq=999

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if ! command -v perf > /dev/null; then
  echo "no perf (Debian: apt-get install linux-perf): nothing measured"
  exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# "samples<TAB>function" of a run of $1 steps, on rank 0
samples () {
  run="$train --log-every 1000000 --config $srcdir/train-25m.json --batch 8 --seq-len 128 --steps $1 $layout"
  if [ "$np" = 1 ]; then
    perf record -q -F $freq -o "$tmp/perf.data.0" $run > /dev/null 2>&1
  else
    mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS sh -c \
      "perf record -q -F $freq -o $tmp/perf.data.\$OMPI_COMM_WORLD_RANK $run" > /dev/null 2>&1
  fi
  perf report -i "$tmp/perf.data.0" --no-children --sort sym --stdio -n 2> /dev/null |
    awk '!/^#/ && $1 ~ /%$/ { n = $2; $1 = ""; $2 = ""; sub (/^ +/, ""); print n "\t" $0 }'
}

samples "$long" > "$tmp/long"
samples "$short" > "$tmp/short"

# the functions, grouped as in the README's table
awk -F '\t' -v steps=$((long - short)) -v freq=$freq '
  NR == FNR { before[$2] = $1; next }
  {
    f = $2; d = $1 - before[f]
    if (f ~ /sgemm|blas_|gemm_/) g = "GEMM (OpenBLAS sgemm, its packing)"
    else if (f ~ /memset/) g = "memset (mostly sgemm zeroing C for beta = 0)"
    else if (f ~ /memmove|memcpy|permute/) g = "copies (permute, memcpy)"
    else if (f ~ /update_f|adamw/) g = "AdamW"
    else if (f ~ /divide_f|_copy_to_iter|average_gradients|ompi_|mca_|opal_|MPI_/) g = "MPI: collectives, their copies, the mean"
    else if (f ~ /schedule|sched_yield|clock_gettime/) g = "waiting for the other rank (polling, scheduler)"
    else if (f ~ /silu/) g = "SiLU x up (silu_mul, forward and backward)"
    else if (f ~ /row_softmax|row_exp_sum|row_max|cross_entropy/) g = "cross entropy over the vocabulary"
    else if (f ~ /rms_norm|rms_inv/) g = "RMSNorm"
    else if (f ~ /softmax|attention/) g = "attention softmax, mask, scale (besides GEMMs)"
    else if (f ~ /binary_kernel/) g = "add, mul (residuals, gradient sums)"
    else if (f ~ /rotary/) g = "rotary"
    else if (f ~ /^\[k\]/) g = "kernel: page faults, scheduling"
    else g = "embedding, malloc, autograd, other"
    ms[g] += d / steps / freq * 1000
    total += d / steps / freq * 1000
  }
  END {
    for (g in ms) printf "%8.1f ms  %5.1f %%  %s\n", ms[g], 100 * ms[g] / total, g | "sort -rn"
    close ("sort -rn")
    printf "%8.1f ms          one step (CPU time, steady state)\n", total
  }' "$tmp/short" "$tmp/long"
exit 0
