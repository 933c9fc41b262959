# installed.py: Python against an installed hp-protocols, found through
# GI_TYPELIB_PATH, LD_LIBRARY_PATH and PYTHONPATH only
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Usage: installed.py ROOT. Checks that the typelib, the override and
# the library come from under ROOT (the temporary installation), then
# uses the override's idioms: a module with a nested Config whose fields
# are annotations, built, called, and its configuration through JSON and
# back.

import sys

import gi

gi.require_version("Hp", "1.0")
gi.require_version("GIRepository", "2.0")
from gi.repository import GIRepository, Hp  # noqa: E402

ROOT = sys.argv[1]


def loaded_library():
    with open("/proc/self/maps", encoding="utf-8") as maps:
        for line in maps:
            path = line[line.find("/"):].strip() if "/" in line else ""
            if "/libhp-protocols-1.0.so" in path:
                return path
    return None


class Scaled(Hp.Module):
    """A linear layer whose output is scaled"""

    class Config(Hp.ModuleConfig):
        linear: Hp.LinearConfig
        factor: float = 2.0

    def do_setup(self):
        super().do_setup()
        self.linear = self.config.linear.build()

    def forward(self, x):
        return self.linear(x).scale(self.config.factor)


def main():
    override = sys.modules["gi.overrides.Hp"].__file__
    typelib = GIRepository.Repository.get_default().get_typelib_path("Hp")
    for what, path in (("override", override), ("typelib", typelib), ("library", loaded_library())):
        if path is None or not path.startswith(ROOT):
            print("installed.py: the %s is %s, not under %s" % (what, path, ROOT))
            return 1

    config = Scaled.Config(linear=Hp.LinearConfig.new(3, 4), factor=0.5)
    back = Scaled.Config.from_dict(config.to_dict())
    if not back.equal(config):
        print("installed.py: the JSON round trip changed the configuration")
        return 1
    Hp.init()
    module = back.build()
    module.init_states(5)
    y = module(Hp.Tensor.new_ones(Hp.DType.FLOAT32, [2, 3]))
    expected = module.linear(Hp.Tensor.new_ones(Hp.DType.FLOAT32, [2, 3])).scale(0.5)
    if "__main__" in type(config).__gtype__.name:
        print("installed.py: the type name %s names __main__" % type(config).__gtype__.name)
        return 1
    if y.get_shape() != [2, 4] or not y.allclose(expected, 0.0, 0.0):
        print("installed.py: wrong output", y.to_string())
        return 1
    print("installed.py: Hp from %s, override %s" % (typelib, override))
    return 0


if __name__ == "__main__":
    sys.exit(main())
