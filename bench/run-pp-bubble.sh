#!/bin/sh
# bench/run-pp-bubble.sh: the pipeline bubble of hp-train (see README.md)
#
#   bench/run-pp-bubble.sh [BUILDDIR] [STEPS] [CONFIG]
#
# Step time of 2 pipeline stages (--pp 2 on 2 ranks) with GPipe and 1F1B
# and M = 1, 2, 4 and 8 microbatches, next to the ideal: the 1-rank step
# time divided by the 2 stages. CONFIG is bench/train-25m.json unless
# given; the batch is 8 x 128 tokens, one BLAS thread per rank. Prints
# the median step of each run and its peak resident memory (of the rank
# with the most, as hp-train's "peak memory per rank" line gives it), so
# that GPipe's M activations in flight show against 1F1B's. A
# measurement: it always exits 0.

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

# "SECONDS MIB" of one run: the median seconds per step (the first step
# left out) and the peak resident memory of its largest rank
measure () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --config "$config" \
      --steps "$steps" --batch $batch --seq-len $seq_len --log-every 1 "$@" |
    awk -v tokens=$((batch * seq_len)) '
      /^step / && ++n > 1 { t[n - 1] = tokens / $6 }
      /^peak memory per rank:/ { peak = $5 }
      END {
        m = n - 1
        for (i = 1; i <= m; i++)
          for (j = i + 1; j <= m; j++)
            if (t[j] < t[i]) { x = t[i]; t[i] = t[j]; t[j] = x }
        median = "nan"
        if (m > 0)
          median = sprintf("%.3f", t[int((m + 1) / 2)])
        if (peak == "")
          peak = "nan"
        printf "%s %s", median, peak
      }'
}

set -- $(measure 1)
one=$1
ideal=$(echo "$one" | awk '{ printf "%.3f", $1 / 2 }')
printf "1 rank: %s s/step, peak %s MiB; ideal for 2 stages: %s s/step\n" "$one" "$2" "$ideal"
for m in 1 2 4 8; do
  set -- $(measure 2 --pp 2 --pp-schedule gpipe --microbatches $m) \
         $(measure 2 --pp 2 --pp-schedule 1f1b --microbatches $m)
  printf "pp 2, M = %d: gpipe %s s/step, peak %s MiB; 1f1b %s s/step, peak %s MiB (ideal %s s/step)\n" \
    "$m" "$1" "$2" "$3" "$4" "$ideal"
done
exit 0
