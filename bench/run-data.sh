#!/bin/sh
# bench/run-data.sh: what reading --data costs hp-train, as a fraction
# of the training time (see README.md)
#
#   bench/run-data.sh [BUILDDIR]
#
# Writes a text of 1 MB and an llm.c shard of 4M uint16 tokens, trains
# the tiny default model on each for 300 steps on 1 rank, on 2 ranks
# with --tp 2 and on 2 ranks with --dp 2, one BLAS thread per rank, and
# prints the time rank 0 spends in the data loader per step and its
# share of the training time, with PASS or FAIL against 1 %. A
# measurement: it always exits 0.

builddir=${1:-build}
train="$builddir/examples/hp-train"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

export OPENBLAS_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

python3 - "$tmp" <<'PY'
import os, random, struct, sys
rand = random.Random(1)
words = ["data", "loader", "token", "shard", "batch", "rank", "step", "model", "über"]
with open(os.path.join(sys.argv[1], "text.txt"), "w", encoding="utf-8") as f:
    while f.tell() < 1 << 20:
        f.write(" ".join(rand.choice(words) for _ in range(12)) + ".\n")
n = 4 << 20
with open(os.path.join(sys.argv[1], "tokens.bin"), "wb") as f:
    f.write(struct.pack("<256i", 20240520, 1, n, *[0] * 253))
    f.write(struct.pack(f"<{n}H", *(rand.randrange(1000) for _ in range(n))))
PY

for data in text.txt tokens.bin; do
  for layout in "1" "2 --tp 2" "2 --dp 2"; do
    set -- $layout
    np=$1
    shift
    mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" "$@" --data "$tmp/$data" \
      --set vocab-size=1000 --steps 300 --log-every 1000000 |
      awk -v name="$data" -v layout="$np rank(s) $*" '
        /^data loading:/ { printf "%-10s %-16s data loader %6.1f us/step, %5.2f %% of the training time  %s\n",
                                  name, layout, $3, $7, $7 + 0 <= 1 ? "PASS" : "FAIL" }'
  done
done
