#!/bin/sh
# Runs a test program on NP ranks: run-mpi.sh NP PROGRAM [ARGS...]
# HP_MPI_WRAPPER, when set, goes between mpirun and the program on every
# rank (the valgrindmpi test setup puts valgrind there).
#
# Each run has a private temporary directory, removed afterwards: Open
# MPI's session directory (TMPDIR), PMIx's rendezvous files and the
# shared-memory segments of the vader BTL and of MPI windows go there,
# so that no two runs on the machine (tests run at once, other jobs,
# jobs killed midway that leave their files behind) share a name.
np=$1
shift
private=$(mktemp -d "${TMPDIR:-/tmp}/hp-mpi.XXXXXX") || exit 99
trap 'rm -rf "$private"' EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
TMPDIR=$private
OMPI_MCA_btl_vader_backing_directory=$private
OMPI_MCA_osc_sm_backing_directory=$private
export TMPDIR OMPI_MCA_btl_vader_backing_directory OMPI_MCA_osc_sm_backing_directory
# shellcheck disable=SC2086
mpirun --oversubscribe -np "$np" $HP_MPI_WRAPPER "$@"
