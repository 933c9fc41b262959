# toolmodels.py: configuration classes defined in Python, for the Python
# route of the tools suite (python3 -m hp_config --import toolmodels)
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Tool.Config (toolmodels+Tool+Config) is the twin of the C class
# HpToolTestConfig (hp-tool-test-config.c): the same fields, defaults,
# ranges, descriptions and checks, so that every command gives the same
# output for both, but for the type name. Rig.Config nests a Python
# configuration and a list. The fields are declared with
# Hp.Config.type_add_field and read back with Hp.Config.get_value, the
# public way of any binding, whatever sugar the override adds.

import gi

gi.require_version("Hp", "1.0")
from gi.repository import GLib, GObject, Hp  # noqa: E402


def _value(gtype, value):
    return None if value is None else GObject.Value(gtype, value)


def add_field(cls, name, gtype, default=None, minimum=None, maximum=None, blurb=None):
    Hp.Config.type_add_field(cls.__gtype__, name, gtype, _value(gtype, default),
                             _value(gtype, minimum), _value(gtype, maximum), blurb)


class _Fields:
    """A config class whose fields the library keeps"""

    def do_get_property(self, pspec):
        return Hp.Config.get_value(self, pspec.name)


class Tool:
    class Config(_Fields, Hp.Config):
        def do_validate(self):
            Hp.Config.do_validate(self)
            product = Hp.Config.get_value(self, "size") * Hp.Config.get_value(self, "scale")
            if product > 50:
                raise GLib.Error.new_literal(Hp.error_quark(),
                                             "size * scale is %g, more than 50" % product,
                                             int(Hp.Error.CONFIG))
            return True


add_field(Tool.Config, "size", GObject.TYPE_INT, 3, 1, 100, "Number of widgets")
add_field(Tool.Config, "scale", GObject.TYPE_DOUBLE, 0.5, 0.0, 1.0, "Widget scale")
add_field(Tool.Config, "label", GObject.TYPE_STRING, "toy", blurb="Widget label")
add_field(Tool.Config, "linear", Hp.LinearConfig.__gtype__, blurb="Widget projection")


class Rig:
    class Config(_Fields, Hp.Config):
        pass


add_field(Rig.Config, "tool", Tool.Config.__gtype__, Tool.Config(), blurb="The tool on the rig")
add_field(Rig.Config, "spares", Hp.ConfigList.__gtype__, blurb="Spare tools")
add_field(Rig.Config, "count", GObject.TYPE_UINT, 2, maximum=8, blurb="Number of rigs")
