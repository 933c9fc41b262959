#!/bin/sh
# bench/run-collectives-debug.sh: what HP_DEBUG=collectives costs (see
# README.md)
#
#   bench/run-collectives-debug.sh [BUILDDIR]
#
# Runs hp-train with tensor parallelism on 2 ranks, and with data times
# tensor parallelism on 4, once without and once with HP_DEBUG=collectives,
# for the tiny default model (many small collectives: the per-call cost of
# the agreement dominates) and for bench/train-25m.json (fewer, larger
# ones), and prints tokens/s both ways and their ratio: the best of three
# runs each, alternating, as short runs on a shared machine are noisy.
# One BLAS thread per rank. A measurement: it always exits 0.

builddir=${1:-build}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# tokens/s of one run; HP_DEBUG is passed on as it is set
rate () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS -x HP_DEBUG "$train" --log-every 1000000 "$@" |
    awk '/^done:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s;") rate = $(i - 1) } END { print rate }'
}

best () {
  awk 'BEGIN { best = 0 } { for (i = 1; i <= NF; i++) if ($i > best) best = $i } END { print best }'
}

report () {
  name=$1
  np=$2
  shift 2
  offs=
  ons=
  for run in 1 2 3; do
    offs="$offs $(HP_DEBUG= rate "$np" "$@")"
    ons="$ons $(HP_DEBUG=collectives rate "$np" "$@")"
  done
  off=$(echo "$offs" | best)
  on=$(echo "$ons" | best)
  echo "$name $np $off $on" |
    awk '{ printf "%-22s %d ranks: off %8.0f tokens/s | collectives %8.0f tokens/s | %5.1f %% slower\n",
                  $1, $2, $3, $4, 100 * (1 - $4 / $3) }'
}

report tiny-tp2 2 --tp 2 --steps 1000 --batch 16 --seq-len 32
report tiny-dp2xtp2 4 --dp 2 --tp 2 --steps 300 --batch 16 --seq-len 32
report 25M-tp2 2 --tp 2 --config "$srcdir/train-25m.json" --steps 12 --batch 8 --seq-len 128
