# test_coverage.py: every class, function, method and constant of the Hp
# namespace (from the typelib, through GIRepository) and every name the
# override adds is used by at least one Python test
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The rules, on the text of the other tests/python/test_*.py files:
#   class, interface, enum:        "Hp.Name" appears in some file
#   function, constructor, static: "Hp.Name.method(" ("Hp.function(") appears
#   instance method:               ".method(" appears in a file that names
#                                  the class ("Hp.Name") or a subclass
#   constant:                      "Hp.NAME" appears
# Not counted: class structures (their methods are for C class_init
# functions; Python uses the override's nested Config and do_* methods),
# callback types (Python passes functions) and virtual functions (Python
# implements them as do_*). Every symbol is listed on stderr with the files
# that use it, and a new one fails until a test uses it.

import gi
import glob
import os
import re
import sys
import unittest

from hptest import Hp

gi.require_version("GIRepository", "2.0")
from gi.repository import GIRepository  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# Symbols of the io/ layer (safetensors), which its own tests cover
LEFT_TO_IO = re.compile(r"^(Safetensors|safetensors_)")


def test_sources():
    sources = {}
    for path in sorted(glob.glob(os.path.join(HERE, "test_*.py"))):
        if os.path.basename(path) != os.path.basename(__file__):
            with open(path, encoding="utf-8") as source:
                sources[os.path.basename(path)] = source.read()
    return sources


class Symbol:
    """One name to find: what it is, the pattern that uses it, and the
    classes whose mention makes a file count (instance methods)."""

    def __init__(self, name, kind, pattern, classes=None):
        self.name = name
        self.kind = kind
        self.pattern = re.compile(pattern)
        self.classes = classes

    def files(self, sources):
        found = []
        for filename, text in sources.items():
            if self.classes is not None and not any(
                    re.search(r"\bHp\.%s\b" % re.escape(cls), text) for cls in self.classes):
                continue
            if self.pattern.search(text):
                found.append(filename)
        return found


def _methods(info, kind):
    if kind == "interface":
        return [GIRepository.interface_info_get_method(info, i)
                for i in range(GIRepository.interface_info_get_n_methods(info))]
    if kind == "object":
        return [GIRepository.object_info_get_method(info, i)
                for i in range(GIRepository.object_info_get_n_methods(info))]
    if kind == "struct":
        return [GIRepository.struct_info_get_method(info, i)
                for i in range(GIRepository.struct_info_get_n_methods(info))]
    return [GIRepository.enum_info_get_method(info, i)
            for i in range(GIRepository.enum_info_get_n_methods(info))]


def _subclasses(repository):
    """The names of the Hp classes and interfaces below each one, itself
    included."""
    below = {}
    for i in range(repository.get_n_infos("Hp")):
        info = repository.get_info("Hp", i)
        kind = info.get_type().value_nick
        if kind not in ("object", "interface"):
            continue
        gtype = getattr(Hp, info.get_name()).__gtype__
        for j in range(repository.get_n_infos("Hp")):
            other = repository.get_info("Hp", j)
            if other.get_type().value_nick in ("object", "interface") \
                    and getattr(Hp, other.get_name()).__gtype__.is_a(gtype):
                below.setdefault(info.get_name(), []).append(other.get_name())
    return below


def _method_symbol(owner, method, classes):
    name = method.get_name()
    flags = GIRepository.function_info_get_flags(method)
    if flags & GIRepository.FunctionInfoFlags.IS_METHOD:
        return Symbol("%s.%s" % (owner, name), "method", r"\.%s\(" % re.escape(name), classes)
    kind = "constructor" if flags & GIRepository.FunctionInfoFlags.IS_CONSTRUCTOR else "static"
    return Symbol("%s.%s" % (owner, name), kind,
                  r"\bHp\.%s\.%s\(" % (re.escape(owner), re.escape(name)))


def symbols():
    """Every symbol to find, and the ones deliberately not counted, by
    name with the reason."""
    repository = GIRepository.Repository.get_default()
    below = _subclasses(repository)
    wanted, skipped = [], {}
    for i in range(repository.get_n_infos("Hp")):
        info = repository.get_info("Hp", i)
        name = info.get_name()
        kind = info.get_type().value_nick
        if LEFT_TO_IO.match(name):
            skipped[name] = "io/ layer"
        elif kind in ("object", "interface", "enum", "flags"):
            wanted.append(Symbol(name, kind, r"\bHp\.%s\b" % re.escape(name)))
            for method in _methods(info, "enum" if kind == "flags" else kind):
                wanted.append(_method_symbol(name, method, below.get(name)))
        elif kind == "struct" and GIRepository.struct_info_is_gtype_struct(info):
            for method in _methods(info, kind):
                skipped["%s.%s" % (name, method.get_name())] = "class structure (C class_init)"
        elif kind == "struct":
            wanted.append(Symbol(name, kind, r"\bHp\.%s\b" % re.escape(name)))
            for method in _methods(info, kind):
                wanted.append(_method_symbol(name, method, None))
        elif kind == "function":
            wanted.append(Symbol(name, kind, r"\bHp\.%s\(" % re.escape(name)))
        elif kind == "constant":
            wanted.append(Symbol(name, kind, r"\bHp\.%s\b" % re.escape(name)))
        elif kind == "callback":
            skipped[name] = "callback type (Python passes a function)"
        else:
            raise AssertionError("Hp.%s is a %s, which this check does not know" % (name, kind))

    # what the override adds: functions, and the methods of its classes
    # that the typelib does not have
    override = sys.modules["gi.overrides.Hp"]
    for name in override.__all__:
        value = getattr(override, name)
        if not isinstance(value, type):
            if not any(symbol.name == name for symbol in wanted):
                wanted.append(Symbol(name, "override function", r"\bHp\.%s\(" % re.escape(name)))
            continue
        info = repository.find_by_name("Hp", name)
        known = {method.get_name() for method in _methods(info, info.get_type().value_nick)}
        for attribute, member in vars(value).items():
            if attribute.startswith("_") or attribute in known or not callable(
                    member.__func__ if isinstance(member, (staticmethod, classmethod)) else member):
                continue
            if isinstance(member, (staticmethod, classmethod)):
                wanted.append(Symbol("%s.%s" % (name, attribute), "override static",
                                     r"\bHp\.%s\.%s\(" % (re.escape(name), re.escape(attribute))))
            else:
                wanted.append(Symbol("%s.%s" % (name, attribute), "override method",
                                     r"\.%s\(" % re.escape(attribute), below.get(name, [name])))
    return wanted, skipped


class CoverageTest(unittest.TestCase):
    def test_every_symbol_is_used(self):
        sources = test_sources()
        self.assertGreater(len(sources), 3)
        wanted, skipped = symbols()
        # the namespace is all there: spot checks of each kind
        names = {symbol.name for symbol in wanted}
        for name in ("Tensor", "Tensor.matmul", "Tensor.new_zeros", "DTensor.distribute",
                     "Decoder", "AdamWConfig", "clip_grad_norm", "TENSOR_MAX_NDIM", "DType",
                     "StateDictAdapter.to_hf", "Tensor.from_numpy", "Tensor.numpy", "no_grad"):
            self.assertIn(name, names)
        missing = []
        for symbol in wanted:
            files = symbol.files(sources)
            print("%-8s %-45s %s" % ("ok" if files else "MISSING", "Hp." + symbol.name,
                                     ", ".join(files) or "(%s)" % symbol.kind), file=sys.stderr)
            if not files:
                missing.append("Hp.%s (%s)" % (symbol.name, symbol.kind))
        for name, reason in sorted(skipped.items()):
            print("%-8s %-45s (%s)" % ("skipped", "Hp." + name, reason), file=sys.stderr)
        print("%d symbols, %d used by the tests, %d not counted" % (
            len(wanted), len(wanted) - len(missing), len(skipped)), file=sys.stderr)
        self.assertEqual(missing, [], "no Python test uses these")


if __name__ == "__main__":
    unittest.main(verbosity=2)
