# hptest.py: the Hp namespace for the Python tests, with the PyGObject
# override of this source tree
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# PyGObject loads gi.overrides.Hp from the first gi/overrides directory
# that has it; the directory of the installed PyGObject comes first, so a
# copy of Hp.py installed there would shadow the one under test. Putting
# introspection/overrides first makes the tests use this tree's file.

import os

import gi
import gi.overrides

OVERRIDES_DIR = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir,
                                              "introspection", "overrides"))
gi.overrides.__path__.insert(0, OVERRIDES_DIR)

gi.require_version("Hp", "1.0")
from gi.repository import GLib, GObject, Hp  # noqa: E402

__all__ = ["OVERRIDES_DIR", "GLib", "GObject", "Hp", "from_numpy", "to_numpy", "assert_error"]


def from_numpy(array):
    """A float64 tensor holding array (a list, or an array of any dtype)."""
    # imported here: the programs that need no numpy start faster
    import numpy as np  # pylint: disable=import-outside-toplevel
    return Hp.Tensor.from_numpy(np.asarray(array, dtype=np.float64))


def to_numpy(tensor):
    """The values of a plain tensor (a DTensor's local or full tensor)."""
    return tensor.numpy()


def assert_error(test, code, message, func, *args, **kwargs):
    """Checks that func raises GLib.Error in the Hp domain with code and
    exactly message."""
    with test.assertRaises(GLib.Error) as caught:
        func(*args, **kwargs)
    test.assertEqual(caught.exception.domain, GLib.quark_to_string(Hp.error_quark()))
    test.assertEqual(caught.exception.code, int(code))
    test.assertEqual(caught.exception.message, message)
