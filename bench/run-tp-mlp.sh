#!/bin/sh
# bench/run-tp-mlp.sh: the tensor-parallel MLP benchmark, as `make bench`
# runs it (see README.md)
#
#   bench/run-tp-mlp.sh [BUILDDIR [RANKS]]
#
# Runs bench-tp-mlp on 1 rank (the plain step, t1) and on RANKS ranks
# (default 2; the DTensor step, t2, and the speedup t1 / t2), then
# tp_mlp_numpy.py on RANKS ranks with the hp-protocols median for the
# ratio, as numpy runs by default and with glibc malloc keeping freed
# memory. One BLAS thread per rank. A measurement: it always exits 0.

builddir=${1:-build}
ranks=${2:-2}
srcdir=$(dirname "$0")
bench="$builddir/bench/bench-tp-mlp"

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# the median in ms from a line "tp-mlp step, <what>: median <ms> ms ..."
median_of () {
  sed -n "s/^tp-mlp step, $1: median \([0-9.]*\) ms.*/\1/p"
}

one=$(mpirun --oversubscribe -np 1 "$bench")
echo "$one"
t1=$(echo "$one" | median_of "plain tensors on 1 rank")

many=$(mpirun --oversubscribe -np "$ranks" "$bench" ${t1:+--t1-ms="$t1"})
echo "$many"
t2=$(echo "$many" | median_of "DTensors on $ranks ranks")

mpirun --oversubscribe -np "$ranks" /usr/bin/python3 "$srcdir/tp_mlp_numpy.py" \
  ${t2:+--hp-ms="$t2"}

# numpy again with glibc told to keep freed memory mapped (no page faults
# on fresh arrays), for information
mpirun --oversubscribe -np "$ranks" \
  -x MALLOC_MMAP_THRESHOLD_=33554432 -x MALLOC_TRIM_THRESHOLD_=1073741824 \
  /usr/bin/python3 "$srcdir/tp_mlp_numpy.py" ${t2:+--hp-ms="$t2"}

exit 0
