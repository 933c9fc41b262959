#!/usr/bin/env python3
# test-checkpoint-crash.py: a save of hp-train killed (SIGKILL) at each
# of its renames and fsyncs, failing at an fsync, or running out of disk
# never costs the previous checkpoint: the folder still loads and
# resumes on the exact loss curve, and an incomplete step is never
# chosen. On 1 rank and on 2 (tp 2).
#
# The kills and fsync errors are injected with strace; the full disk is
# a small tmpfs mounted in a private mount namespace (unshare).
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: test-checkpoint-crash.py HP_TRAIN (TAP on stdout)

import math
import os
import shutil
import subprocess
import sys
import tempfile

from hptrain import check, loss_lines, report
import hptrain

HP_TRAIN = sys.argv[1]
COMMON = ["--log-every", "1", "--seed", "7"]
PAGE = 4096
# the calls a save makes at least: a rename per file written through a
# temporary name (model, config.json, hp-config.json, optimizer) and of
# the step directory; an fsync per file, the manifest, the step
# directory and the folder
FAMILIES = (("rename", "rename,renameat,renameat2", 5), ("fsync", "fsync,fdatasync", 7))
# a private mount namespace, in a user namespace unless root
UNSHARE = ["unshare", "--mount", "--propagation", "private"] + \
    ([] if os.geteuid() == 0 else ["--user", "--map-root-user"])


def run(np, args, wrapper=()):
    return hptrain.mpirun(HP_TRAIN, np, args, wrapper)


def strace(syscalls, action):
    return [shutil.which("strace") or "strace", "-f", "-o", os.devnull,
            "-e", f"trace={syscalls}", "-e", f"inject={syscalls}:{action}"]


def resumes(np, layout, folder, reference):
    """Whether FOLDER holds nothing but complete steps and resumes: after
    step 2 on the reference curve, or at step 4 with nothing to train"""
    entries = sorted(os.listdir(folder))
    steps = [e for e in entries if not e.startswith(".step-4.tmp-")]
    done = run(np, [*layout, *COMMON, "--steps", "4", "--load", folder])
    out = done.stdout + done.stderr
    if done.returncode != 0 or steps not in (["step-2"], ["step-2", "step-4"]):
        return False, f"{entries}\n{out}"
    if "after step 2" in done.stdout:
        return loss_lines(done.stdout) == reference[2:], out
    return "is at step 4, and --steps is 4: nothing to train" in done.stdout and \
        "step-4" in entries and not loss_lines(done.stdout), out


def save_command(layout, folder):
    return [*layout, *COMMON, "--steps", "4", "--load", folder, "--save", folder]


def pages(path):
    return sum(math.ceil(os.path.getsize(os.path.join(path, f)) / PAGE) for f in os.listdir(path))


def full_disk(size, mount, base, np, reference, layout):
    """In a private mount namespace: saves into a tmpfs of SIZE holding a
    copy of BASE; prints "ok" if the save fails with ENOSPC and the copy
    resumes from its step"""
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mount], check=True)
    folder = os.path.join(mount, "ck")
    shutil.copytree(base, folder)
    failed = run(np, save_command(layout, folder))
    listing = sorted(os.listdir(folder))
    ok, detail = resumes(np, layout, folder, reference)
    if failed.returncode != 0 and "No space left on device" in failed.stderr and ok and \
            listing == ["step-2"]:
        print("ok")
    else:
        print(f"exit {failed.returncode}, {listing}\n{failed.stderr}\n{detail}")


if len(sys.argv) > 2 and sys.argv[2] == "--full-disk":
    full_disk(sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6]), sys.argv[7].split(","),
              sys.argv[8:])
    sys.exit(0)

for np, layout in ((1, []), (2, ["--tp", "2"])):
    name = f"{np} rank{'s' if np > 1 else ''}{' ' if layout else ''}{' '.join(layout)}"
    with tempfile.TemporaryDirectory() as tmp:
        reference = loss_lines(run(np, [*layout, *COMMON, "--steps", "4"]).stdout)
        base = os.path.join(tmp, "base")
        made = run(np, [*layout, *COMMON, "--steps", "2", "--save", base])
        check(f"{name}: the reference runs", len(reference) == 4 and made.returncode == 0,
              made.stdout + made.stderr)
        if made.returncode != 0:
            continue

        # SIGKILL at the k-th call, for every k until a save goes through
        for family, syscalls, at_least in FAMILIES:
            killed = 0
            failures = []
            for k in range(1, 40):
                folder = os.path.join(tmp, f"{family}-{k}")
                shutil.copytree(base, folder)
                crash = run(np, save_command(layout, folder), strace(syscalls, f"signal=KILL:when={k}"))
                if crash.returncode == 0:
                    break
                killed += 1
                ok, detail = resumes(np, layout, folder, reference)
                if not ok:
                    failures.append(f"killed at {family} call {k}: {detail}")
            check(f"{name}: killed at each of the {killed} {family} calls of a save, "
                  "the previous step resumes on the exact curve",
                  killed >= at_least and not failures, "\n".join(failures))

        # a crashed save's staging directory goes with the next save
        folder = os.path.join(tmp, "rename-1")
        after = run(np, save_command(layout, folder))
        check(f"{name}: the next save removes what a killed save left",
              after.returncode == 0 and sorted(os.listdir(folder)) == ["step-2", "step-4"],
              f"{os.listdir(folder)}\n{after.stderr}")

        # an fsync that fails (as with a full disk on a filesystem that
        # allocates late): one error, the steps as they were; rank 0
        # alone writes, so 1 rank tells it
        if np == 1:
            failed_at = 0
            failures = []
            for k in range(1, 40):
                folder = os.path.join(tmp, f"enospc-{k}")
                shutil.copytree(base, folder)
                failed = run(np, save_command(layout, folder),
                             strace("fsync,fdatasync", f"error=ENOSPC:when={k}"))
                if failed.returncode == 0:
                    break
                failed_at += 1
                ok, detail = resumes(np, layout, folder, reference)
                if "No space left on device" not in failed.stderr or not ok:
                    failures.append(f"fsync {k} failing:\n{failed.stderr}\n{detail}")
            check(f"{name}: each of the {failed_at} fsyncs of a save failing with ENOSPC is an "
                  "error, and the folder resumes", failed_at >= FAMILIES[1][2] and not failures,
                  "\n".join(failures))

        # a disk that fills up while the step is written: a tmpfs with
        # room for the previous step and a part of the new one, so that
        # each of its large files and then its last page fail in turn
        step_pages = pages(os.path.join(base, "step-2"))
        failures = []
        for spare in (8, step_pages // 2, step_pages - 1):
            mount = os.path.join(tmp, f"disk-{spare}")
            os.mkdir(mount)
            inside = subprocess.run(
                [*UNSHARE, sys.executable, __file__,
                 HP_TRAIN, "--full-disk", f"{(step_pages + spare) * PAGE // 1024}k", mount, base,
                 str(np), ",".join(reference), *layout],
                capture_output=True, text=True, timeout=300, check=False)
            if inside.stdout.strip() != "ok":
                failures.append(f"{spare} pages to spare:\n{inside.stdout}{inside.stderr}")
        check(f"{name}: a disk that fills up during a save is one error, and the folder resumes",
              not failures, "\n".join(failures))


report()
