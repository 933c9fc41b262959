#!/bin/sh
# bench/run-collective-checks.sh: what the default checks of collectives
# and HP_DEBUG=collectives cost (see README.md)
#
#   bench/run-collective-checks.sh [BUILDDIR] [ROUNDS]
#
# Runs hp-train with tensor parallelism on 2 ranks, and with data times
# tensor parallelism on 4, three ways, alternating: without the default
# checks (libblocking-collectives.so preloaded: blocking collectives, no
# digest agreement, see blocking-collectives.c), as every user runs it
# (the default checks), and with HP_DEBUG=collectives. For the tiny
# default model (many small collectives: the per-call cost dominates) and
# for bench/train-25m.json (fewer, larger ones). Prints the best tokens/s
# of ROUNDS runs (default 3) each way and the cost of each mode against
# the run without checks. One BLAS thread per rank. On one rank nothing is
# checked, so it is not run. A measurement: it always exits 0.

builddir=${1:-build}
rounds=${2:-3}
srcdir=$(dirname "$0")
train="$builddir/examples/hp-train"
shim=$(cd "$builddir/bench" && pwd)/libblocking-collectives.so

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# tokens/s of one run: MODE is without, default or debug
rate () {
  mode=$1
  np=$2
  shift 2
  case $mode in
    without) env="-x LD_PRELOAD=$shim -x HP_DEBUG=" ;;
    default) env="-x HP_DEBUG=" ;;
    debug) env="-x HP_DEBUG=collectives" ;;
  esac
  # shellcheck disable=SC2086 # $env is several words on purpose
  HP_DEBUG= mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS $env "$train" --log-every 1000000 "$@" |
    awk '/^done:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s;") rate = $(i - 1) } END { print rate }'
}

best () {
  awk 'BEGIN { best = 0 } { for (i = 1; i <= NF; i++) if ($i > best) best = $i } END { print best }'
}

report () {
  name=$1
  np=$2
  shift 2
  withouts=
  defaults=
  debugs=
  run=0
  while [ "$run" -lt "$rounds" ]; do
    withouts="$withouts $(rate without "$np" "$@")"
    defaults="$defaults $(rate default "$np" "$@")"
    debugs="$debugs $(rate debug "$np" "$@")"
    run=$((run + 1))
  done
  echo "$name $np $(echo "$withouts" | best) $(echo "$defaults" | best) $(echo "$debugs" | best)" |
    awk '{ printf "%-12s %d ranks: without %8.0f | default %8.0f (%5.1f %%) | debug %8.0f (%5.1f %%) tokens/s\n",
                  $1, $2, $3, $4, 100 * (1 - $4 / $3), $5, 100 * (1 - $5 / $3) }'
}

report tiny-tp2 2 --tp 2 --steps 1000 --batch 16 --seq-len 32
report tiny-dp2xtp2 4 --dp 2 --tp 2 --steps 300 --batch 16 --seq-len 32
report 25M-tp2 2 --tp 2 --config "$srcdir/train-25m.json" --steps 12 --batch 8 --seq-len 128
report 25M-dp2 2 --dp 2 --config "$srcdir/train-25m.json" --steps 12 --batch 8 --seq-len 128
