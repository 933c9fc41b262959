#!/bin/sh
# Runs a test program on NP ranks: run-mpi.sh NP PROGRAM [ARGS...]
# HP_MPI_WRAPPER, when set, goes between mpirun and the program on every
# rank (the valgrindmpi test setup puts valgrind there).
np=$1
shift
# shellcheck disable=SC2086
exec mpirun --oversubscribe -np "$np" $HP_MPI_WRAPPER "$@"
