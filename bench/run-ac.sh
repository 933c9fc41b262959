#!/bin/sh
# bench/run-ac.sh: peak memory and step time of hp-train with and without
# activation checkpointing (see README.md)
#
#   bench/run-ac.sh [BUILDDIR] [STEPS]
#
# Trains bench/train-25m.json (about 26M parameters) on 8 x 256 tokens
# with --ac none, every-2 and full, on 1 rank and on 2 ranks with --tp 2,
# one BLAS thread per rank, and prints the peak resident memory of the
# largest rank and the mean step time (over the whole run, first step
# included). The losses of the three runs are the same (test-hp-train.py
# checks that); this only measures. A measurement: it always exits 0.

builddir=${1:-build}
steps=${2:-4}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"
batch=8
seq_len=256

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# "<tokens/s> <peak MiB> <last loss>" of one run
measure () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --config "$srcdir/train-25m.json" \
      --steps "$steps" --batch $batch --seq-len $seq_len --log-every 1 "$@" |
    awk '/^step / { loss = $4 }
         /^done:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s;") rate = $(i - 1) }
         /^peak memory per rank:/ { peak = $5 }
         END { print rate, peak, loss }'
}

for layout in 1 "2 --tp 2"; do
  for ac in none every-2 full; do
    set -- $layout
    np=$1
    shift
    measure "$np" "$@" --ac $ac |
      awk -v layout="$np rank(s) $*" -v ac="$ac" -v tokens=$((batch * seq_len)) \
        '{ printf "%-16s --ac %-8s %7.2f s/step %8.1f MiB/rank  last loss %s\n",
                  layout, ac, tokens / $1, $2, $3 }'
  done
done
