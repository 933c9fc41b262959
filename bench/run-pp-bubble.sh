#!/bin/sh
# bench/run-pp-bubble.sh: the pipeline bubble of hp-train (see README.md)
#
#   bench/run-pp-bubble.sh [BUILDDIR] [STEPS] [CONFIG]
#
# Step time of 2 pipeline stages (--pp 2 on 2 ranks) with GPipe and 1F1B
# and M = 1, 2, 4 and 8 microbatches, next to the ideal: the 1-rank step
# time divided by the 2 stages. CONFIG is bench/train-25m.json unless
# given; the batch is 8 x 128 tokens, one BLAS thread per rank. Prints
# the median step of each run. A measurement: it always exits 0.

builddir=${1:-build}
steps=${2:-5}
srcdir=$(dirname "$0")
config=${3:-$srcdir/train-25m.json}
train="$builddir/examples/hp-train"
batch=8
seq_len=128

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The median seconds per step of one run (the first step left out)
median_step () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --config "$config" \
      --steps "$steps" --batch $batch --seq-len $seq_len --log-every 1 "$@" |
    awk -v tokens=$((batch * seq_len)) '/^step / && ++n > 1 { print tokens / $6 }' |
    sort -g | awk '{ t[++n] = $1 } END { if (n) printf "%.3f", t[int((n + 1) / 2)]; else printf "nan" }'
}

one=$(median_step 1)
printf "1 rank: %s s/step; ideal for 2 stages: %s s/step\n" "$one" \
  "$(echo "$one" | awk '{ printf "%.3f", $1 / 2 }')"
for m in 1 2 4 8; do
  gpipe=$(median_step 2 --pp 2 --pp-schedule gpipe --microbatches $m)
  onef=$(median_step 2 --pp 2 --pp-schedule 1f1b --microbatches $m)
  printf "pp 2, M = %d: gpipe %s s/step, 1f1b %s s/step (ideal %s)\n" "$m" "$gpipe" "$onef" \
    "$(echo "$one" | awk '{ printf "%.3f", $1 / 2 }')"
done
exit 0
