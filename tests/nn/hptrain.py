# hptrain.py: what the tests of hp-train share: running it under mpirun,
# reading its loss lines, and TAP results
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import re
import signal
import subprocess
import sys
import tempfile

_results = []


def mpirun(program, np, args, wrapper=(), env=None):
    """Runs PROGRAM (hp-train, hp-generate) with ARGS on NP ranks, each
    under WRAPPER (a command prefix such as strace's), with ENV (default:
    this process's environment). Each run has a private temporary
    directory, removed afterwards, for Open MPI's session directory
    (TMPDIR), PMIx's rendezvous files and the shared-memory segments, as
    ../run-mpi.sh gives: no two runs on the machine share a file name,
    not even with a run killed midway that left its files behind. A run
    past its 600 s is killed with every process it started (its own
    process group), never by name"""
    command = ["mpirun", "--oversubscribe", "-np", str(np), *wrapper, program, *args]
    with tempfile.TemporaryDirectory(prefix="hp-mpi.", ignore_cleanup_errors=True) as private:
        env = dict(os.environ if env is None else env, TMPDIR=private,
                   OMPI_MCA_btl_vader_backing_directory=private,
                   OMPI_MCA_osc_sm_backing_directory=private)
        with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env, start_new_session=True) as job:
            try:
                out, err = job.communicate(timeout=600)
            except subprocess.TimeoutExpired:
                os.killpg(job.pid, signal.SIGKILL)
                job.communicate()
                raise
        return subprocess.CompletedProcess(command, job.returncode, out, err)


def loss_lines(text):
    """The losses of hp-train's progress lines, as printed"""
    return [m.group(1) for m in re.finditer(r"^step +\d+/\d+ +loss ([0-9.]+)", text, re.M)]


def expect_error(hp_train, name, np, args, message):
    """Checks that hp-train with ARGS on NP ranks stops before training
    with one line on rank 0 holding MESSAGE, no GLib warning or critical
    before it, and a non-zero exit"""
    run = mpirun(hp_train, np, args)
    lines = [line for line in run.stderr.splitlines() if line.startswith("hp-train:")]
    ok = run.returncode != 0 and len(lines) == 1 and message in lines[0] and \
        "WARNING" not in run.stderr and "CRITICAL" not in run.stderr and not loss_lines(run.stdout)
    check(name, ok, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")


def check(name, ok, detail=""):
    _results.append((name, ok, detail))


def report():
    """Prints the checks as TAP and exits with their status"""
    print(f"1..{len(_results)}")
    for i, (name, ok, detail) in enumerate(_results, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {name}")
        if not ok:
            for line in detail.splitlines()[-20:]:
                print(f"# {line}")
    sys.exit(0 if all(ok for _, ok, _ in _results) else 1)
