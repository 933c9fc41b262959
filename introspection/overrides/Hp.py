# Hp.py: the PyGObject override of the Hp namespace
#
# SPDX-License-Identifier: LGPL-2.1-or-later

"""Python idioms for hp-protocols.

Configurations and configurable classes are written as in torchtitan::

    class Linear(Hp.Module):
        class Config(Hp.ModuleConfig):
            in_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)
            out_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)

        def setup(self):
            config = self.config
            weight = Hp.Tensor.new_zeros(Hp.DType.FLOAT64,
                                         [config.out_features, config.in_features])
            self.register_parameter("weight", weight)

        def do_forward(self, args):
            return [args[0].linear(self.get_parameter("weight"), None)]

    linear = Linear.Config(in_features=3).build()

A ``Config`` class nested in a subclass of :class:`Configurable` (such as
``Hp.Module``) names that subclass as the class it builds. The override
uses GObject machinery only: importing it initialises no MPI.
"""

import json
import re

# what PyGObject's class set-up calls for each do_* method
from gi._gi import hook_up_vfunc_implementation
from gi.module import get_introspection_module
from gi.overrides import override
from gi.repository import Gio, GLib, GObject

Hp = get_introspection_module("Hp")

__all__ = []

# GObjectClass.constructed, which PyGObject does not offer as do_constructed
_CONSTRUCTED = next(vfunc for vfunc in GObject.Object.__info__.get_vfuncs()
                    if vfunc.get_name() == "constructed")


def _is_binding_module(module):
    return module.startswith(("gi.repository.", "gi.overrides."))


def _is_user_class(cls):
    """Whether cls was written in Python, rather than made from the
    typelib or in an override."""
    return not _is_binding_module(cls.__module__)


def _unique_type_name(name, namespace):
    """The GType name of a Python class: its module and qualified name
    (``models+Linear+Config`` for ``Linear.Config`` in ``models``), made
    unique with ``-v2``, ``-v3``... as PyGObject does.

    PyGObject's own default uses the bare class name, so that every
    nested ``Config`` of a module would be ``models+Config``,
    ``models+Config-v2``... in the order of definition, and the ``"@type"``
    of a configuration in JSON would depend on that order.
    """
    base = re.sub(r"[^A-Za-z0-9_+-]", "+",
                  "%s.%s" % (namespace["__module__"], namespace.get("__qualname__", name)))
    unique, serial = base, 1
    while True:
        try:
            GObject.type_from_name(unique)
        except RuntimeError:
            return unique
        serial += 1
        unique = "%s-v%d" % (base, serial)


class _NamedMeta(type(GObject.Object)):
    """Names the GTypes of Python classes after their qualified names."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        if not _is_binding_module(namespace.get("__module__", "")) \
                and "__gtype_name__" not in namespace:
            namespace = dict(namespace, __gtype_name__=_unique_type_name(name, namespace))
        return super().__new__(mcls, name, bases, namespace, **kwargs)


def _properties(gtype):
    """The properties of the class gtype by name."""
    if gtype == GObject.TYPE_INVALID:
        return {}
    return {pspec.name: pspec for pspec in GObject.list_properties(gtype)}


def _value(pspec, value):
    """A GObject.Value holding value, for a property described by pspec
    (None when there is no such property).

    Numbers go in 64-bit integer or double values, strings in string
    values and objects in values of their own type, so that the library
    checks ranges and types and reports them as it does for every
    language.
    """
    if isinstance(value, (GObject.GEnum, GObject.GFlags)):
        return GObject.Value(value.__gtype__, value)
    if isinstance(value, bool):
        return GObject.Value(GObject.TYPE_BOOLEAN, value)
    if isinstance(value, int):
        return GObject.Value(GObject.TYPE_INT64 if value < 1 << 63 else GObject.TYPE_UINT64, value)
    if isinstance(value, float):
        return GObject.Value(GObject.TYPE_DOUBLE, value)
    if isinstance(value, str):
        return GObject.Value(GObject.TYPE_STRING, value)
    if isinstance(value, GObject.Object):
        return GObject.Value(value.__gtype__, value)
    if pspec is not None:
        try:
            return GObject.Value(pspec.value_type, value)
        except (TypeError, ValueError):
            pass
    return GObject.Value(GObject.TYPE_PYOBJECT, value)


def _names_and_values(gtype, properties):
    """The names and GObject.Values of keyword arguments that set
    properties of the class gtype."""
    pspecs = _properties(gtype)
    names = list(properties)
    return names, [_value(pspecs.get(name.replace("_", "-")), properties[name]) for name in names]


def _repr_value(value):
    if isinstance(value, Hp.ConfigList):
        return "[%s]" % ", ".join(repr(value.peek(i)) for i in range(value.get_length()))
    return repr(value)


class Config(Hp.Config, metaclass=_NamedMeta):
    """A configuration, whose fields are GObject properties.

    Fields are attributes, ``_`` standing for ``-`` in their names, for C
    classes too (``config.param_init``). ``Config(**fields)`` and
    assignments check the values as :meth:`replace` does and raise
    ``GLib.Error`` (``Hp.Error.CONFIG``) for an unknown field, a value out
    of range or of a wrong type, where GObject alone would only warn.

    Fields declared in Python come, within their class, in name order in
    ``list_fields()``, JSON and ``traverse()``: PyGObject installs every
    Python property with the same id, and the library orders fields by id.
    """

    def __init__(self, **fields):
        super().__init__()
        if fields:
            checked = self.replace(**fields)
            for name in fields:
                self.set_property(name, checked.get_property(name))

    def _field(self, name):
        """The name of the field that the attribute name stands for, or None."""
        if name.startswith("_"):
            return None
        canonical = name.replace("_", "-")
        return next((pspec.name for pspec in self.list_fields() if pspec.name == canonical), None)

    def __getattr__(self, name):
        # reached for the fields of C classes, which have no descriptor
        field = self._field(name)
        if field is None:
            raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))
        return self.get_property(field)

    def __setattr__(self, name, value):
        field = self._field(name)
        if field is None:
            super().__setattr__(name, value)
        else:
            self.set_property(field, self.replace(**{name: value}).get_property(field))

    def build(self, **runtime_properties):
        """Builds an instance of the owner class, as torchtitan's
        ``Config.build(**kwargs)``: the keyword arguments set construct
        properties of the owner that are not fields of the configuration."""
        if not runtime_properties:
            return Hp.Config.build(self)
        names, values = _names_and_values(self.get_owner_type(), runtime_properties)
        return self.build_with_properties(names, values)

    def replace(self, **changes):
        """A shallow copy with some fields changed, as
        ``dataclasses.replace()``; self is not changed."""
        names, values = _names_and_values(self.__gtype__, changes)
        return Hp.Config.replace(self, names, values)

    def to_dict(self):
        """The JSON form of ``to_json()`` as dicts, lists and plain values,
        ready for ``json.dumps()``: nested configurations carry their type
        in ``"@type"``, lists of configurations are lists."""
        return json.loads(self.to_json(False))

    @classmethod
    def from_dict(cls, data):
        """Reads, as strictly as ``new_from_json()``, a configuration of this
        class, or of the subclass that ``data["@type"]`` names, from the
        form ``to_dict()`` gives."""
        return Hp.Config.new_from_json(cls.__gtype__, json.dumps(data))

    def __repr__(self):
        cls = type(self)
        if _is_user_class(cls):
            name = cls.__qualname__
        else:
            name = "%s.%s" % (cls.__module__.rsplit(".", 1)[-1], cls.__name__)
        fields = ", ".join("%s=%s" % (pspec.name.replace("-", "_"),
                                      _repr_value(self.get_property(pspec.name)))
                           for pspec in self.list_fields())
        return "%s(%s)" % (name, fields)


Config = override(Config)
__all__.append("Config")


def _starts_line(bases, module):
    """Whether a class being defined is the first one written in Python on
    its line of configurable classes."""
    return not _is_binding_module(module) and not any(
        _is_user_class(base) for base in bases if issubclass(base, Hp.Configurable))


def _take_setup_error(self):
    """The exception setup() raised while self was being made, once."""
    return self.__dict__.pop("_hp_setup_error", None)


def _init(self, cancellable):
    """Gio.Initable.init of the configurable classes written in Python:
    raises what setup() raised, so that hp_config_build() fails with it."""
    error = _take_setup_error(self)
    if error is None:
        return True
    if isinstance(error, GLib.Error):
        raise error
    raise GLib.Error.new_literal(Hp.error_quark(),
                                 "%s.setup() raised %s: %s" % (type(self).__qualname__,
                                                               type(error).__name__, error),
                                 int(Hp.Error.CONFIG))


class _ConfigurableMeta(_NamedMeta):
    """Gives the first Python class of each line of configurable classes
    the ``constructed`` hook that calls ``setup()`` and Gio.Initable, and
    registers a nested ``Config`` class as built by its enclosing class."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        # a module's forward is the C virtual function "compute" (a vfunc
        # called "forward" would take the annotations of hp_module_forward(),
        # whose array must not be freed twice); Python writes do_forward
        if "do_forward" in namespace and "do_compute" not in namespace:
            namespace = dict(namespace, do_compute=namespace["do_forward"])
        # likewise "forward_arg_names", which would otherwise take the
        # transfer of hp_module_get_forward_arg_names()
        if "do_get_forward_arg_names" in namespace and "do_forward_arg_names" not in namespace:
            namespace = dict(namespace, do_forward_arg_names=namespace["do_get_forward_arg_names"])
        if _starts_line(bases, namespace.get("__module__", "")) \
                and not any(issubclass(base, Gio.Initable) for base in bases):
            bases += (Gio.Initable,)
            namespace = dict(namespace, do_init=namespace.get("do_init", _init))
        return super().__new__(mcls, name, bases, namespace, **kwargs)

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace)
        if _starts_line(bases, cls.__module__):
            parent = cls.__gtype__.parent

            def constructed(self):
                _CONSTRUCTED(parent, self)
                try:
                    self.setup()
                except Exception as error:  # pylint: disable=broad-except
                    self._hp_setup_error = error

            hook_up_vfunc_implementation(_CONSTRUCTED, cls.__gtype__, constructed)
        config = namespace.get("Config")
        if isinstance(config, type) and issubclass(config, Hp.Config):
            Hp.Config.register_owner(config.__gtype__, cls.__gtype__)


class Configurable(Hp.Configurable, metaclass=_ConfigurableMeta):
    """An object built from a configuration.

    A subclass written in Python makes its parameters, children and other
    state from ``self.config`` in :meth:`setup`, which runs once the
    object is constructed, however it is made: ``Linear(config=...)`` or
    ``Linear()`` from Python, ``config.build()``, or ``hp_config_build()``
    from C (a container, another language).

    Why ``setup()`` rather than ``__init__``: when C constructs a class
    written in Python (``hp_config_build()`` calls ``g_object_new (owner,
    "config", copy, ...)``), PyGObject calls ``__init__`` without
    arguments from the instance init function, before any property is
    set, so ``self.config`` is not there yet; only when Python constructs
    the object does ``__init__`` get the properties. What both ways share
    is GObject's ``constructed``, which PyGObject does not offer as
    ``do_constructed``. This override hooks ``constructed`` on the first
    Python class of each line of configurable classes: the hook chains up
    to the C classes (which keep the configuration's param_init and
    sharding_config, or make a default configuration), then calls
    ``setup()``. Subclasses extend ``setup()`` with ``super().setup()``;
    an ``__init__`` must accept being called without arguments. (Making
    ``Config.build()`` call the Python class instead would leave out every
    build that C starts.)

    ``constructed`` cannot fail, so what ``setup()`` raises is kept and
    raised as soon as it can be: by ``__init__`` when Python makes the
    object, and by ``Gio.Initable.init``, which this override adds to the
    class, when ``hp_config_build()`` makes it, so that the build fails
    with a ``GLib.Error`` (a ``GLib.Error`` from ``setup()`` as it is, any
    other exception as ``Hp.Error.CONFIG``).
    """

    def __init__(self, **properties):
        super().__init__(**properties)
        error = _take_setup_error(self)
        if error is not None:
            raise error

    @property
    def config(self):
        """The configuration the object was built from."""
        return self.get_config()

    def setup(self):
        """Makes the object's state from ``self.config``; called once, right
        after construction. Does nothing here."""


Configurable = override(Configurable)
__all__.append("Configurable")
