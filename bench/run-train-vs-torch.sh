#!/bin/sh
# bench/run-train-vs-torch.sh: the training step of hp-train against the
# same model in PyTorch eager, side by side (see README.md)
#
#   bench/run-train-vs-torch.sh [BUILDDIR [ANCHOR]]
#
# ANCHOR is the PyTorch script that trains the model of a HpDecoderConfig
# JSON file (torch_llama_train.py of the project's shared anchors; default
# $TORCH_ANCHOR, else ../../shared/anchors/torch_llama_train.py from this
# directory). It runs under Debian's python3-torch ($PYTHON, default
# /usr/bin/python3); this script installs nothing and, without torch,
# says so and times hp-train alone.
#
# For bench/train-25m.json, 8 x 128 tokens a step, AdamW, one BLAS thread
# per rank, ROUNDS rounds (default 3) of STEPS steps (default 12) each:
# hp-train on 1 rank and torch on 1 rank, then hp-train --tp 2, hp-train
# --dp 2 and torch DistributedDataParallel over gloo on 2 ranks. Within a
# round the runs alternate, hp first in odd rounds and torch first in
# even ones, so that other load on the machine hits both alike. Prints
# tokens/s of every run, then the best of each and the ratios hp / torch,
# and the peak resident memory per rank. A measurement: it always
# exits 0.
#
# Both sides time the same thing: the clock starts after the model and
# the optimizer are built and initialised and stops after the last step,
# so neither counts its start-up (Python and torch's import, MPI, the
# weights' initialisation) and both count the first step (first-touch
# page faults, the optimizer's state made on its first step); both make
# their batch inside the loop. torch's peak is that of the whole Python
# process, torch's own libraries included (about 235 MiB).

builddir=${1:-build}
srcdir=$(dirname "$0")
anchor=${2:-${TORCH_ANCHOR:-$srcdir/../../shared/anchors/torch_llama_train.py}}
python=${PYTHON:-/usr/bin/python3}
rounds=${ROUNDS:-3}
steps=${STEPS:-12}
train="$builddir/examples/hp-train"
config="$srcdir/train-25m.json"
shape="--batch 8 --seq-len 128 --steps $steps"

export OPENBLAS_NUM_THREADS=1
export OMP_NUM_THREADS=1
export OMPI_ALLOW_RUN_AS_ROOT=1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

have_torch=yes
if [ ! -f "$anchor" ]; then
  echo "no PyTorch anchor at $anchor (pass it as the second argument): timing hp-train alone"
  have_torch=no
elif ! "$python" -c 'import torch' 2>/dev/null; then
  echo "$python has no torch (Debian: apt-get install python3-torch; this script installs nothing): timing hp-train alone"
  have_torch=no
fi

# "<tokens/s> <peak MiB per rank>" of one run; "- -" when it failed.
# hp-train prints its peak; for torch it is GNU time's largest resident
# set of the processes (on 2 ranks, that of the larger rank).
rate_and_peak () {
  awk '/^done:/ { for (i = 1; i <= NF; i++) if ($i == "tokens/s;") rate = $(i - 1) }
       /^peak memory per rank:/ { peak = $5 }
       /^maxrss-kib / { if (peak == "") peak = $2 / 1024 }
       END { if (rate == "") print "- -"; else print rate, (peak == "" ? "-" : peak) }'
}

run_hp () {
  np=$1
  shift
  mpirun --oversubscribe -np "$np" -x OPENBLAS_NUM_THREADS "$train" --log-every 1000000 \
    --config "$config" $shape "$@" 2>&1 | rate_and_peak
}

run_torch () {
  np=$1
  if [ "$np" = 1 ]; then
    /usr/bin/time -f 'maxrss-kib %M' "$python" "$anchor" "$config" $shape 2>&1 | rate_and_peak
  else
    /usr/bin/time -f 'maxrss-kib %M' mpirun --oversubscribe -np "$np" -x OMP_NUM_THREADS \
      -x OPENBLAS_NUM_THREADS "$python" "$anchor" "$config" $shape 2>&1 | rate_and_peak
  fi
}

# one measurement: NAME then "rate peak", appended to the results
results=$(mktemp)
trap 'rm -f "$results"' EXIT INT TERM
record () {
  name=$1
  shift
  set -- $("$@")
  echo "$name $1 $2" >> "$results"
  printf '  %-10s %8s tokens/s  peak %s MiB/rank\n' "$name" "$1" "$2"
}

round=1
while [ "$round" -le "$rounds" ]; do
  echo "round $round of $rounds"
  if [ $((round % 2)) = 1 ] || [ "$have_torch" = no ]; then
    record hp-1 run_hp 1
    [ "$have_torch" = yes ] && record torch-1 run_torch 1
    record hp-tp2 run_hp 2 --tp 2
    record hp-dp2 run_hp 2 --dp 2
    [ "$have_torch" = yes ] && record torch-ddp2 run_torch 2
  else
    record torch-1 run_torch 1
    record hp-1 run_hp 1
    record torch-ddp2 run_torch 2
    record hp-tp2 run_hp 2 --tp 2
    record hp-dp2 run_hp 2 --dp 2
  fi
  round=$((round + 1))
done

echo "best of $rounds rounds (tokens/s), peak MiB per rank of that run:"
awk '$2 != "-" { if (!($1 in best) || $2 > best[$1]) { best[$1] = $2; peak[$1] = $3 } }
     END {
       n = split("hp-1 torch-1 hp-tp2 hp-dp2 torch-ddp2", names, " ")
       for (i = 1; i <= n; i++)
         if (names[i] in best)
           printf "  %-10s %8.0f tokens/s  peak %s MiB\n", names[i], best[names[i]], peak[names[i]]
       if (("hp-1" in best) && ("torch-1" in best))
         printf "1 rank:  hp / torch %.2f (target >= 1.10)\n", best["hp-1"] / best["torch-1"]
       if (("hp-1" in best) && ("torch-1" in best) && peak["hp-1"] != "-" && peak["torch-1"] != "-")
         printf "1 rank:  peak memory hp / torch %.2f (target <= 0.6)\n", peak["hp-1"] / peak["torch-1"]
       if ("torch-ddp2" in best) {
         if ("hp-tp2" in best)
           printf "2 ranks: hp tp 2 / torch DDP %.2f\n", best["hp-tp2"] / best["torch-ddp2"]
         if ("hp-dp2" in best)
           printf "2 ranks: hp dp 2 / torch DDP %.2f\n", best["hp-dp2"] / best["torch-ddp2"]
       }
     }' "$results"
exit 0
