#!/bin/sh
# bench/run-ac.sh: peak memory and step time of hp-train with and without
# activation checkpointing (see README.md)
#
#   bench/run-ac.sh [BUILDDIR] [STEPS] [ROUNDS]
#
# Trains bench/train-25m.json (about 26M parameters) on 8 x 256 tokens
# with --ac none, every-2 and full, on 1 rank and on 2 ranks with --tp 2,
# one BLAS thread per rank. The runs are interleaved: ROUNDS rounds
# (default 3) of every mode and layout, so that the load of other work on
# a shared machine falls on all of them alike. For each mode and layout
# it prints the peak resident memory of the largest rank and the fastest
# step of all rounds (the least disturbed one) next to the median step.
# The losses of the modes are the same (test-hp-train.py checks that);
# this only measures. A measurement: it always exits 0.

builddir=${1:-build}
steps=${2:-3}
rounds=${3:-3}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"
batch=8
seq_len=256

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# One line per step of one run: "<layout> <mode> step <seconds>", then
# "<layout> <mode> peak <MiB>"
measure () {
  layout=$1
  ac=$2
  set -- $layout
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --config "$srcdir/train-25m.json" \
      --steps "$steps" --batch $batch --seq-len $seq_len --log-every 1 --ac "$ac" "$@" |
    awk -v key="$(echo "$layout" | tr ' ' '_') $ac" -v tokens=$((batch * seq_len)) \
        '/^step / { print key, "step", tokens / $6 }
         /^peak memory per rank:/ { print key, "peak", $5 }'
}

round=1
while [ $round -le "$rounds" ]; do
  for layout in 1 "2 --tp 2"; do
    for ac in none every-2 full; do
      measure "$layout" "$ac"
    done
  done
  round=$((round + 1))
done |
  sort -k1,1 -k2,2 -k3,3 -k4,4g |
  awk '{ key = $1 " " $2 }
       $3 == "peak" { if ($4 > peak[key]) peak[key] = $4 }
       $3 == "step" { t[key, ++n[key]] = $4; if (!(key in order)) order[key] = ++keys; name[order[key]] = key }
       END {
         for (k = 1; k <= keys; k++) {
           key = name[k]; split(key, part, " "); layout = part[1]; gsub("_", " ", layout)
           printf "%-9s ranks, --ac %-8s fastest %6.2f s/step  median %6.2f s/step  peak %7.1f MiB/rank\n",
                  layout, part[2], t[key, 1], t[key, int((n[key] + 1) / 2)], peak[key]
         }
       }'
