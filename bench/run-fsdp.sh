#!/bin/sh
# bench/run-fsdp.sh: what fully sharded data parallelism saves per rank,
# and what it costs (see README.md)
#
#   bench/run-fsdp.sh [BUILDDIR] [STEPS] [ROUNDS]
#
# 1. The bytes of parameters + gradients + AdamW state per rank for
#    bench/train-25m.json after one step, from the sizes of the tensors
#    the library holds (bench/fsdp_state.py): 1 rank, 4 ranks --dp 4
#    (replicas) and 4 ranks --fsdp 4, with the target of issue 18
#    (0.3 x the 1-rank figure + one block's full parameters).
# 2. hp-train's step time and peak RSS on 8 x 256 tokens with --fsdp on 2
#    and 4 ranks next to --dp on as many, one BLAS thread per rank.
# 3. FSDP's prefetch (the next unit's all-gather started while the
#    current one computes) on and off, on 2 and 4 ranks: ROUNDS runs each
#    way, alternating, and the fastest step of each way.
# A measurement: it always exits 0.

builddir=${1:-build}
steps=${2:-3}
rounds=${3:-3}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"

python=${PYTHON:-/usr/bin/python3}
export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export GI_TYPELIB_PATH="$builddir/introspection${GI_TYPELIB_PATH:+:$GI_TYPELIB_PATH}"
export LD_LIBRARY_PATH="$builddir/hp-protocols${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

echo "== parameters + gradients + AdamW state per rank (tensor sizes), $srcdir/train-25m.json"
"$python" "$srcdir/fsdp_state.py" "$srcdir/train-25m.json" one
mpirun --oversubscribe -np 4 -x GI_TYPELIB_PATH -x LD_LIBRARY_PATH -x OPENBLAS_NUM_THREADS \
  "$python" "$srcdir/fsdp_state.py" "$srcdir/train-25m.json" dp
mpirun --oversubscribe -np 4 -x GI_TYPELIB_PATH -x LD_LIBRARY_PATH -x OPENBLAS_NUM_THREADS \
  "$python" "$srcdir/fsdp_state.py" "$srcdir/train-25m.json" fsdp

echo "== hp-train, 8 x 256 tokens, $steps steps: fastest and mean step, peak RSS of the largest rank"
for np in 2 4; do
  for layout in "--dp $np" "--fsdp $np"; do
    mpirun --oversubscribe -np $np -x OPENBLAS_NUM_THREADS "$train" --config "$srcdir/train-25m.json" \
        --steps "$steps" --batch 8 --seq-len 256 --log-every 1 $layout |
      awk -v key="$np ranks $layout" -v tokens=2048 \
          '/^step / { t = tokens / $6; sum += t; n++; if (n == 1 || t < best) best = t }
           /^peak memory per rank:/ { peak = $5 }
           END { printf "%-16s fastest %6.2f s/step  mean %6.2f s/step  peak %7.1f MiB/rank\n", key, best, sum / n, peak }'
  done
done

echo "== FSDP prefetch on / off, 8 x 256 tokens, $steps steps, best of $rounds alternating runs"
for np in 2 4; do
  best_on= best_off=
  for round in $(seq "$rounds"); do
    for prefetch in on off; do
      t=$(mpirun --oversubscribe -np $np -x OPENBLAS_NUM_THREADS "$train" \
            --config "$srcdir/train-25m.json" --steps "$steps" --batch 8 --seq-len 256 \
            --log-every 1 --fsdp $np --fsdp-prefetch $prefetch |
          awk -v tokens=2048 '/^step / { t = tokens / $6; if (n++ == 0 || t < best) best = t }
                              END { if (n > 0) printf "%.3f", best }')
      [ -n "$t" ] || continue
      if [ $prefetch = on ]; then
        if [ -z "$best_on" ] || awk "BEGIN { exit !($t < $best_on) }"; then best_on=$t; fi
      else
        if [ -z "$best_off" ] || awk "BEGIN { exit !($t < $best_off) }"; then best_off=$t; fi
      fi
    done
  done
  awk -v np=$np -v on="$best_on" -v off="$best_off" 'BEGIN {
    if (on == "" || off == "") { printf "%d ranks --fsdp %d: a run failed\n", np, np; exit }
    printf "%d ranks --fsdp %d  prefetch on %6.2f s/step  off %6.2f s/step  saved %5.1f %%\n",
           np, np, on, off, 100 * (off - on) / off }'
done
exit 0
