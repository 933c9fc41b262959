#!/usr/bin/python3
# bench/tp_mlp_numpy.py: the step of bench-tp-mlp written with mpi4py + numpy
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A measurement, not a test: it always exits 0. Run it under mpirun with
# OPENBLAS_NUM_THREADS=1, on as many ranks as bench-tp-mlp (see README.md):
#
#   mpirun -np 2 /usr/bin/python3 bench/tp_mlp_numpy.py [--hp-ms MS]
#
# The same Megatron MLP block as bench-tp-mlp: x [512, 1024] (every rank
# holds all of it), W1 [4096, 1024] and b1 split by rows (column parallel),
# W2 [1024, 4096] split by columns (row parallel), b2 whole; loss = mean
# of every output element; forward and backward to all five arrays. The
# two all-reduces are Megatron's g (the output, in forward) and f (the
# gradient of x, in backward), both MPI Allreduce on the numpy buffers.
#
# GELU: hp-protocols computes the exact erf form. numpy has no erf, and
# np.vectorize(math.erf) is a Python call per element (440 ms for the 1M
# elements of one rank's GELU here, against 4.8 ms for hp-protocols' erf
# loop), which would measure Python, not the step. The timed step uses
# the tanh form (PyTorch's approximate='tanh'):
#   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
# one transcendental per element in forward and one in backward, as in
# hp-protocols (erf forward, erf and exp backward), evaluated by numpy's
# vectorised float32 ufuncs. Its loss differs from the exact one in the
# 4th digit, so the script prints the exact-erf loss of the same data once
# (untimed, math.erf per element) next to it. The check that counts is
# the tensor-parallel step against the same step on one process, to 1e-5.
#
# With --hp-ms, the median of the hp-protocols step on the same number of
# ranks (from bench-tp-mlp), it prints the ratio hp / numpy against the
# target <= 0.9.

import argparse
import math
import os
import resource
import sys

import numpy as np
from mpi4py import MPI

DIM = 1024
HIDDEN = 4096
TOKENS = 512
WARMUPS = 2
REPEATS = 10
LOSS_RTOL = 1e-5
RATIO_TARGET = 0.9

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
CUBIC = 0.044715


def gelu(h):
    t = np.tanh(SQRT_2_OVER_PI * (h + CUBIC * h * h * h))
    return 0.5 * h * (1.0 + t)


def gelu_backward(h, grad):
    h2 = h * h
    t = np.tanh(SQRT_2_OVER_PI * h * (1.0 + CUBIC * h2))
    slope = 0.5 * (1.0 + t) + 0.5 * SQRT_2_OVER_PI * h * (1.0 - t * t) * (1.0 + 3.0 * CUBIC * h2)
    return grad * slope


def gelu_exact(h):
    erf = np.frompyfunc(math.erf, 1, 1)
    return (0.5 * h * (1.0 + erf(h / math.sqrt(2.0)).astype(np.float64))).astype(h.dtype)


def step(block, n, comm, activation=gelu):
    """Forward, loss and backward; returns the loss and the gradients of
    (x, w1, b1, w2, b2). With comm, the block is this rank's part."""
    x, w1, b1, w2, b2 = block

    # forward: column parallel, then row parallel with b2 added once
    h = x @ w1.T + b1
    a = activation(h)
    y = a @ w2.T + b2 / n
    if comm is not None:
        comm.Allreduce(MPI.IN_PLACE, y, op=MPI.SUM)
    loss = y.mean(dtype=np.float64)

    # backward of the mean: every output element gets 1 / count
    dy = np.full_like(y, 1.0 / y.size)
    db2 = dy.sum(axis=0)
    dw2 = dy.T @ a
    da = dy @ w2
    dh = gelu_backward(h, da)
    db1 = dh.sum(axis=0)
    dw1 = dh.T @ x
    dx = dh @ w1
    if comm is not None:
        comm.Allreduce(MPI.IN_PLACE, dx, op=MPI.SUM)
    return loss, (dx, dw1, db1, dw2, db2)


def make_block():
    """The whole block, the same on every rank; nn.Linear's default
    initialisation (uniform in +-1/sqrt(in))."""
    rng = np.random.default_rng(20240601)
    f32 = np.float32

    def uniform(shape, fan_in):
        bound = 1.0 / math.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(f32)

    x = rng.standard_normal((TOKENS, DIM)).astype(f32)
    return (x, uniform((HIDDEN, DIM), DIM), uniform((HIDDEN,), DIM),
            uniform((DIM, HIDDEN), HIDDEN), uniform((DIM,), HIDDEN))


def chunk(size, n, index):
    piece = (size + n - 1) // n
    start = min(piece * index, size)
    return slice(start, min(start + piece, size))


def local_part(block, n, rank):
    x, w1, b1, w2, b2 = block
    rows = chunk(HIDDEN, n, rank)
    return tuple(np.ascontiguousarray(t) for t in
                 (x, w1[rows], b1[rows], w2[:, rows], b2))


def max_relative_difference(got, want):
    scale = float(np.max(np.abs(want))) or 1.0
    return float(np.max(np.abs(got.astype(np.float64) - want))) / scale


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--hp-ms', type=float,
                        help='median hp-protocols step on as many ranks, in ms')
    args = parser.parse_args()

    comm = MPI.COMM_WORLD
    rank, n = comm.Get_rank(), comm.Get_size()
    whole = make_block()
    mine = local_part(whole, n, rank)
    rows = chunk(HIDDEN, n, rank)

    if rank == 0:
        print('# tp_mlp_numpy.py: %d rank%s; x [%d, %d] -> linear [%d] -> gelu (tanh form) '
              '-> linear [%d] -> mean, float32, forward + backward; median of %d steps '
              'after %d warm-ups, the slowest rank counts; numpy %s, mpi4py %s; '
              'OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s'
              % (n, 's' if n > 1 else '', TOKENS, DIM, HIDDEN, DIM, REPEATS, WARMUPS,
                 np.__version__, sys.modules['mpi4py'].__version__,
                 os.environ.get('OPENBLAS_NUM_THREADS', '(unset)'),
                 os.environ.get('OPENBLAS_CORETYPE', '(unset)')), flush=True)

    # timing first, as bench-tp-mlp does
    times = []
    faults = 0
    for r in range(WARMUPS + REPEATS):
        comm.Barrier()
        faults_before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = MPI.Wtime()
        step(mine, n, comm)
        elapsed = comm.allreduce(MPI.Wtime() - start, op=MPI.MAX)
        if r >= WARMUPS:
            times.append(elapsed)
            faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults_before
    times.sort()
    median = 0.5 * (times[(REPEATS - 1) // 2] + times[REPEATS // 2])
    faults = comm.allreduce(faults / REPEATS, op=MPI.MAX)

    # then the check: the parallel step against one process doing it all
    # in float64
    want_loss, want = step(tuple(t.astype(np.float64) for t in whole), 1, None)
    loss, got = step(mine, n, comm)
    rel = abs(loss - want_loss) / abs(want_loss)
    worst = max(max_relative_difference(got[0], want[0]),
                max_relative_difference(got[1], want[1][rows]),
                max_relative_difference(got[2], want[2][rows]),
                max_relative_difference(got[3], want[3][:, rows]),
                max_relative_difference(got[4], want[4]))
    rel = comm.allreduce(rel, op=MPI.MAX)
    worst = comm.allreduce(worst, op=MPI.MAX)

    malloc = ' '.join('%s=%s' % (k, v) for k, v in sorted(os.environ.items())
                      if k.startswith('MALLOC_'))
    if rank == 0:
        exact_loss, _ = step(whole, 1, None, activation=gelu_exact)
        print('tp-mlp step, numpy + mpi4py on %d rank%s%s: median %.1f ms (best %.1f), '
              '%.0f page faults per step'
              % (n, 's' if n > 1 else '', ' with ' + malloc if malloc else '', 1e3 * median,
                 1e3 * times[0], faults))
        print('tp-mlp numpy loss: %d rank%s %.9g, one process in float64 %.9g, relative '
              'difference %.1e, gradients within %.1e of the largest element (target <= %.0e): %s'
              % (n, 's' if n > 1 else '', loss, want_loss, rel, worst, LOSS_RTOL,
                 'PASS' if rel <= LOSS_RTOL and worst <= 1e-4 else 'FAIL'))
        print('tp-mlp numpy loss with exact erf GELU (untimed, one process): %.9g, tanh form '
              'differs by %.1e relative' % (exact_loss, abs(loss - exact_loss) / abs(exact_loss)))
        if args.hp_ms is not None:
            ratio = args.hp_ms / (1e3 * median)
            if malloc:
                tail = ' (for information: the target is against numpy as it runs by default)'
            else:
                tail = ' (target <= %.1f): %s' % (RATIO_TARGET,
                                                  'PASS' if ratio <= RATIO_TARGET else 'FAIL')
            print('tp-mlp hp-protocols / numpy on %d rank%s%s: %.1f ms / %.1f ms = %.3f%s'
                  % (n, 's' if n > 1 else '', ' with ' + malloc if malloc else '', args.hp_ms,
                     1e3 * median, ratio, tail))
        sys.stdout.flush()
    return 0


if __name__ == '__main__':
    sys.exit(main())
