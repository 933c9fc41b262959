#!/bin/sh
# bench/run-train.sh: tokens/s of the main job, hp-train, on 1 rank and on
# 2 ranks with tensor parallelism (see README.md)
#
#   bench/run-train.sh [BUILDDIR]
#
# For the tiny default model and for bench/train-25m.json (about 26M
# parameters), runs hp-train on 1 rank and on 2 ranks with --tp 2, one
# BLAS thread per rank, and prints tokens/s, the scaling efficiency
# (tokens/s on 2 ranks / twice tokens/s on 1 rank) and the peak resident
# memory per rank. The first steps warm the caches: the rate is taken
# over the whole run, so use enough steps. A measurement: it always
# exits 0.

builddir=${1:-build}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# "<tokens/s> <peak MiB>" of one run
measure () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --log-every 1000000 "$@" |
    awk '/^done:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s;") rate = $(i - 1) }
         /^peak memory per rank:/ { peak = $5 }
         END { print rate, peak }'
}

report () {
  name=$1
  shift
  set -- $(measure 1 "$@") $(measure 2 --tp 2 "$@")
  echo "$name" "$1" "$2" "$3" "$4" |
    awk '{ printf "%-10s 1 rank %8.0f tokens/s %7.1f MiB | 2 ranks tp 2 %8.0f tokens/s %7.1f MiB/rank | efficiency %3.0f %%\n",
                  $1, $2, $3, $4, $5, 100 * $4 / (2 * $2) }'
}

report tiny --steps 300 --batch 16 --seq-len 32
report 25M --config "$srcdir/train-25m.json" --steps 12 --batch 8 --seq-len 128
