#!/usr/bin/python3
# bench/bench-numpy.py: what the copies between numpy and hp-protocols cost
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A measurement, not a test: it always exits 0. From the source tree,
# after meson compile -C build:
#
#   GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/hp-protocols \
#     /usr/bin/python3 bench/bench-numpy.py
#
# The Python override moves values between numpy and tensors through
# public API only, and that copies: Hp.Tensor.from_numpy() is
# array.tobytes() then GLib.Bytes.new() (two copies), tensor.numpy() is
# GLib.Bytes.get_data() (one copy, into a Python bytes object) viewed by
# numpy.frombuffer(). For float64 arrays of 1 KiB to 64 MiB it times both
# directions against numpy.copy() of the same array (a copy into a new
# array, as the bridge makes), and counts the page faults of a call: a
# fresh buffer of a few MiB is new memory from the kernel, and on some
# machines its page faults cost more than the copy (numpy asks for huge
# pages for its own large arrays; Python's bytes objects and GLib's
# buffers come from malloc). Each figure is the median of 7 runs, each
# repeating the operation for about 0.2 s. For 64 MiB, where the fixed
# cost of a call no longer counts and no buffer fits in a cache, the
# targets follow from the number of copies: from_numpy() within 2.5
# times numpy.copy(), numpy() within 1.5 times. Run it again with
# MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=1073741824 to
# see the copies without the page faults (glibc then keeps freed memory
# for the next buffer).

import os
import resource
import statistics
import sys
import time

import gi
import gi.overrides

HERE = os.path.dirname(os.path.realpath(__file__))
OVERRIDES = os.path.join(HERE, os.pardir, "introspection", "overrides")
if os.path.exists(os.path.join(OVERRIDES, "Hp.py")):    # uninstalled: this tree's override
    gi.overrides.__path__.insert(0, OVERRIDES)
gi.require_version("Hp", "1.0")
from gi.repository import Hp  # noqa: E402

import numpy as np  # noqa: E402

SIZES = [1 << 10, 16 << 10, 256 << 10, 4 << 20, 64 << 20]
RUNS = 7
TARGETS = {"from_numpy": 2.5, "numpy": 1.5}


def measure(func):
    """The median over RUNS runs of the time of one call of func, and the
    page faults of one call"""
    func()
    calls, start = 0, time.perf_counter()
    while time.perf_counter() - start < 0.02:
        func()
        calls += 1
    repeat = max(1, int(calls * 10))
    times, faults = [], resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(RUNS):
        start = time.perf_counter()
        for _ in range(repeat):
            func()
        times.append((time.perf_counter() - start) / repeat)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / (RUNS * repeat)
    return statistics.median(times), faults


def shown(nbytes):
    return "%d KiB" % (nbytes >> 10) if nbytes < 1 << 20 else "%d MiB" % (nbytes >> 20)


def main():
    print("float64 arrays; time of one call (page faults of one call)")
    print("%-7s %19s %19s %19s" % ("size", "numpy.copy", "Tensor.from_numpy",
                                   "tensor.numpy()"))
    for nbytes in SIZES:
        array = np.random.default_rng(0).standard_normal(nbytes // 8)
        tensor = Hp.Tensor.from_numpy(array)
        assert np.array_equal(tensor.numpy(), array)
        figures = [measure(lambda: np.copy(array)), measure(lambda: Hp.Tensor.from_numpy(array)),
                   measure(tensor.numpy)]
        print("%-7s" % shown(nbytes) + "".join(" %10.1f us (%5.0f)" % (seconds * 1e6, faults)
                                               for seconds, faults in figures))
        if nbytes == SIZES[-1]:
            copy = figures[0][0]
            for name, (seconds, _) in (("from_numpy", figures[1]), ("numpy", figures[2])):
                print("  %s %s: %.2f x numpy.copy, %.2f GB/s (target <= %.1f x): %s" % (
                    name, shown(nbytes), seconds / copy, nbytes / seconds / 1e9, TARGETS[name],
                    "PASS" if seconds / copy <= TARGETS[name] else "FAIL"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
