# run-uninstalled.py: runs a Python program against an uninstalled
# hp-protocols, with the PyGObject override of this source tree
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
#   GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/hp-protocols \
#     python3 examples/python/run-uninstalled.py examples/python/tp-mlp.py
#
# An installed hp-protocols needs none of this: `meson install` puts
# Hp.py in gi/overrides where PyGObject finds it. Uninstalled, the
# override is introspection/overrides/Hp.py, which this puts first on
# PyGObject's search path (as tests/python/hptest.py does) before
# running the program as __main__.

import os
import runpy
import sys

import gi.overrides

HERE = os.path.dirname(os.path.realpath(__file__))
gi.overrides.__path__.insert(0, os.path.join(HERE, os.pardir, os.pardir, "introspection", "overrides"))

if len(sys.argv) < 2:
    sys.exit("usage: run-uninstalled.py PROGRAM.py [ARGUMENTS...]")
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
