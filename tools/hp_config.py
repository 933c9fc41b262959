# hp_config.py: hp-config on configuration classes defined in Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later

"""``python3 -m hp_config``: the ``hp-config`` commands on configuration
classes defined in Python.

The commands are those of ``hp-config`` (``Hp.ConfigTool``, in the
library), with the same output and exit statuses; ``--import MODULE``
(repeatable, before or after the command) imports a Python module first,
whose configuration classes are then types like the others::

    python3 -m hp_config --import models types
    python3 -m hp_config --import models show models+Linear+Config
    python3 -m hp_config --import models new models+Linear+Config --set bias=true -o linear.json
    python3 -m hp_config --import models validate linear.json

A Python configuration class's type name is its module and qualified
name (``models+Linear+Config`` for ``Linear.Config`` in ``models``), so
the module has to be importable: found on ``sys.path`` (the current
directory, then ``PYTHONPATH``), not a script run as ``__main__``.
``--require NAMESPACE-VERSION`` loads the types of another introspected
library, as for ``hp-config``.
"""

import importlib
import sys

import gi

try:
    gi.require_version("Hp", "1.0")
    gi.require_version("GIRepository", "2.0")
    from gi.repository import GIRepository, GLib, GObject, Hp
    LOAD_ERROR = None
except (ImportError, ValueError) as load_error:
    LOAD_ERROR = load_error

DESCRIPTION = """\
The configuration types are those of the Hp library, of the libraries loaded with
--require (their typelibs are looked for in GI_TYPELIB_PATH and in the system
typelib directory) and of the Python modules imported with --import (looked for on
sys.path: the current directory, then PYTHONPATH).
"""


def _error(code, message):
    return GLib.Error.new_literal(Hp.error_quark(), message, int(code))


def _flush():
    sys.stdout.flush()
    sys.stderr.flush()


def import_modules(tool, modules):
    """The load function of --import: imports each module."""
    try:
        for name in modules:
            try:
                importlib.import_module(name)
            except Exception as error:  # pylint: disable=broad-except
                raise _error(Hp.Error.INVALID_ARGUMENT, "--import %s: %s: %s" % (
                    name, type(error).__name__, error)) from error
    finally:
        # what the modules printed comes before the command's output
        _flush()
    return True


def _derives_from_config(info):
    while info is not None:
        if GIRepository.registered_type_info_get_type_name(info) == "HpConfig":
            return True
        info = GIRepository.object_info_get_parent(info)
        # a parent whose namespace is not loaded comes back unresolved
        if info is not None and info.get_type() != GIRepository.InfoType.OBJECT:
            info = None
    return False


def require_namespaces(tool, namespaces):
    """The load function of --require: loads each NAMESPACE-VERSION and
    registers the configuration types of every loaded namespace (as
    hp-config does: getting the GType of an object info runs its
    get_type function)."""
    for item in namespaces:
        namespace, _, version = item.partition("-")
        if not namespace or not version:
            raise GLib.Error.new_literal(
                GLib.option_error_quark(),
                "--require: expected NAMESPACE-VERSION such as Hp-1.0, got '%s'" % item,
                int(GLib.OptionError.BAD_VALUE))
    repository = GIRepository.Repository.get_default()
    for item in namespaces:
        namespace, _, version = item.partition("-")
        try:
            repository.require(namespace, version, GIRepository.RepositoryLoadFlags(0))
        except GLib.Error as error:
            raise _error(Hp.Error.NOT_SUPPORTED,
                         "--require %s: %s" % (item, error.message)) from error
    for namespace in repository.get_loaded_namespaces():
        for index in range(repository.get_n_infos(namespace)):
            info = repository.get_info(namespace, index)
            if info.get_type() != GIRepository.InfoType.OBJECT \
                    or not _derives_from_config(info):
                continue
            if GIRepository.registered_type_info_get_g_type(info) == GObject.TYPE_NONE:
                library = repository.get_shared_library(namespace)
                raise _error(Hp.Error.NOT_SUPPORTED,
                             "%s.%s: the type cannot be registered (does %s load?)" % (
                                 namespace, info.get_name(), library or "its library"))
    return True


def main(args=None):
    """Runs one command (args: the command line after the program name,
    sys.argv[1:] by default) and gives the exit status."""
    if LOAD_ERROR is not None:
        print("hp-config: cannot load the Hp-1.0 typelib (is GI_TYPELIB_PATH right?): %s"
              % LOAD_ERROR, file=sys.stderr)
        return 1

    tool = Hp.ConfigTool.new()
    tool.add_load_option("import", ord("i"),
                         "Import the Python module MODULE for its configuration classes (repeatable)",
                         "MODULE", import_modules)
    tool.add_load_option("require", ord("r"),
                         "Load the typelib of another library for its configuration types (repeatable)",
                         "NAMESPACE-VERSION", require_namespaces)
    tool.set_description(DESCRIPTION)
    _flush()
    try:
        return tool.run(sys.argv[1:] if args is None else args)
    finally:
        _flush()


if __name__ == "__main__":
    sys.exit(main())
