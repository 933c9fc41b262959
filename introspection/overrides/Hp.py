# Hp.py: the PyGObject override of the Hp namespace, over public API only
#
# SPDX-License-Identifier: LGPL-2.1-or-later

"""torchtitan's idioms for hp-protocols (docs/configs.md has the details)::

    class MLP(Hp.Module):
        class Config(Hp.ModuleConfig):
            dim: int = Hp.field(8, minimum=1, blurb="width")
            w1: Hp.LinearConfig = Hp.field(default_factory=lambda: Hp.LinearConfig(
                in_features=8, out_features=32))

        def do_setup(self):     # runs once, however the module is made
            super().do_setup()
            self.w1 = self.config.w1.build()    # a child

        def forward(self, x, mask=None):
            return self.w1(x)

    y = MLP.Config().build()(x)
"""

import contextlib
import difflib
import functools
import inspect
import json
import os
import re
import sys
import types
import typing

from gi.module import get_introspection_module
from gi.overrides import override
from gi.repository import GLib, GObject

Hp = get_introspection_module("Hp")
__all__ = ["field", "Config", "Configurable", "Module", "StateDict", "Tensor", "DTensor", "LocalMap",
           "resolve_placements", "no_grad"]
_MISSING = object()
_GTYPES = {bool: GObject.TYPE_BOOLEAN, int: GObject.TYPE_INT, float: GObject.TYPE_DOUBLE,
           str: GObject.TYPE_STRING, list: GObject.TYPE_STRV}


def _is_user(cls):
    """Whether cls (or the class of a namespace's module) was written in
    Python rather than made from the typelib or here"""
    return not getattr(cls, "__module__", cls).startswith(("gi.repository.", "gi.overrides."))


def _name(cls):
    return cls.__qualname__ if _is_user(cls) else "Hp." + cls.__name__


def _value(value, gtype=None):
    """value for a GValue argument, which the library converts and checks
    as for every language: PyGObject guesses the GValue's type but for
    None (of gtype; without one, 'not given'), integers (any 64 bits) and
    lists (of strings)"""
    if value is None:
        return None if gtype is None else GObject.Value(gtype, None)
    if isinstance(value, int) and not isinstance(value, (bool, GObject.GEnum, GObject.GFlags)):
        return GObject.Value(GObject.TYPE_INT64 if value < 1 << 63 else GObject.TYPE_UINT64, value)
    return GObject.Value(GObject.TYPE_STRV, value) if isinstance(value, list) else value


def field(default=_MISSING, *, default_factory=None, minimum=None, maximum=None, blurb=None):
    """A config field's default (or a function making it), range and
    description, as ``dataclasses.field()``: ``n: int = Hp.field(4, minimum=1)``"""
    return types.SimpleNamespace(default=default, default_factory=default_factory,
                                 minimum=minimum, maximum=maximum, blurb=blurb)


class _ChainUp:
    """Sits between the first Python class of a line and its C parent:
    ``super().do_setup()`` reaches C (PyGObject calls a C virtual function
    only as ``Parent.do_setup(self)``), and the properties Python classes
    own (the fields the library keeps) read as fields."""

    def _c_parent(self):
        return next(b for b in type(self).__mro__ if b.__module__.startswith("gi.repository."))

    def do_setup(self):
        return self._c_parent().do_setup(self)

    def do_validate(self):
        return self._c_parent().do_validate(self)

    def do_get_property(self, pspec):
        return Hp.Config.get_value(self, pspec.name)


class _Meta(type(GObject.Object)):
    """Names, fields, virtual functions and owners of Python classes"""

    def __new__(mcs, name, bases, namespace, **kwargs):
        if _is_user(namespace["__module__"]) and not any(_is_user(base) for base in bases):
            bases = (_ChainUp,) + bases
        return super().__new__(mcs, name, bases, namespace, **kwargs)

    def __init__(cls, name, bases, namespace, **kwargs):
        if not _is_user(cls):
            super().__init__(name, bases, namespace, **kwargs)
            return
        # before PyGObject registers the type and its virtual functions
        if "__gtype_name__" not in namespace:
            cls.__gtype_name__ = cls._type_name()
        fields = cls._take_fields() if issubclass(cls, Hp.Config) else []
        for vfunc in ("do_setup", "do_validate"):
            if vfunc in namespace:
                setattr(cls, vfunc, _Meta._returning_true(vfunc[3:], namespace[vfunc]))
        forward = namespace.get("forward") if issubclass(cls, Hp.Module) else None
        if forward is not None and "do_forward" not in namespace:
            def do_forward(self, args):
                outputs = forward(self, *args)
                return list(outputs) if isinstance(outputs, (tuple, list)) else [outputs]
            cls.do_forward = do_forward
        super().__init__(name, bases, namespace, **kwargs)
        for arguments in fields:
            Hp.Config.type_add_field(cls, *arguments)
        config = namespace.get("Config")
        if isinstance(config, type) and issubclass(config, Hp.Config):
            Hp.Config.register_owner(config.__gtype__, cls.__gtype__)
        if forward is not None:
            Hp.Module.type_set_forward_arg_names(cls, [
                p.name for p in list(inspect.signature(forward).parameters.values())[1:]
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)])

    def _type_name(cls):
        """module+Qualified+Name (-v2... for a class defined again), the
        module of the script run as __main__ as it is imported: its file
        with its packages (none in an interactive session)"""
        module, main = cls.__module__, sys.modules.get("__main__")
        if module == "__main__" and getattr(main, "__spec__", None) is not None:  # python -m
            module = main.__spec__.name
        elif module == "__main__":
            module = ""
            if getattr(main, "__file__", None) is not None:
                path, module = os.path.split(os.path.splitext(os.path.realpath(main.__file__))[0])
                while os.path.exists(os.path.join(path, "__init__.py")):
                    path, package = os.path.split(path)
                    module = package + "." + module
        parts = [part for part in cls.__qualname__.split(".") if part != "<locals>"]
        if module:
            parts.insert(0, module.replace(".", "-"))
        base = name = re.sub(r"[^A-Za-z0-9_+-]", "_", "+".join(parts))
        for serial in range(2, 1 << 16):
            try:
                GObject.type_from_name(name)
            except RuntimeError:
                break
            name = "%s-v%d" % (base, serial)
        return name

    def _take_fields(cls):
        """The type_add_field arguments of the fields a config class
        declares, in order; the declarations leave the class"""
        declared = [(name, kind, cls.__dict__.get(name, _MISSING)) for name, kind in
                    inspect.get_annotations(cls, eval_str=True).items()
                    if typing.ClassVar not in (kind, typing.get_origin(kind))]
        declared += [(name, prop.type, field(prop.default, minimum=prop.minimum,
                                             maximum=prop.maximum, blurb=prop.blurb))
                     for name, prop in cls.__dict__.items() if isinstance(prop, GObject.Property)]
        fields = []
        for name, kind, declaration in declared:
            if name in cls.__dict__:
                delattr(cls, name)
            if not isinstance(declaration, types.SimpleNamespace):
                declaration = field(declaration)
            gtype = kind if isinstance(kind, GObject.GType) else _GTYPES.get(
                typing.get_origin(kind) or kind) or kind.__gtype__
            default = declaration.default_factory() if declaration.default_factory \
                else declaration.default
            if default is _MISSING:     # a configuration (list) type: an instance, else zero
                default = kind() if isinstance(kind, type) and not gtype.is_abstract() and (
                    gtype.is_a(Hp.Config.__gtype__) or gtype.is_a(Hp.ConfigList.__gtype__)) \
                    else None
            fields.append((name, gtype, _value(default), _value(declaration.minimum),
                           _value(declaration.maximum), declaration.blurb or None))
        return fields

    @staticmethod
    def _returning_true(name, method):
        """do_setup or do_validate returning True, as C expects; a non-GLib
        exception becomes Hp.Error.CONFIG"""
        def vfunc(self):
            try:
                method(self)
            except GLib.Error:
                raise
            except Exception as error:  # pylint: disable=broad-except
                raise GLib.Error.new_literal(Hp.error_quark(), "%s.%s() raised %s: %s" % (
                    type(self).__qualname__, name, type(error).__name__, error),
                    int(Hp.Error.CONFIG)) from error
            return True
        vfunc.__name__, vfunc.__doc__ = method.__name__, method.__doc__
        return vfunc


@override
class Config(Hp.Config, metaclass=_Meta):
    """Fields are attributes (``_`` for ``-``), checked as the library
    checks them (``GLib.Error``); an unknown one raises AttributeError
    naming the closest field, as a slotted dataclass would."""

    def __init__(self, **fields):
        super().__init__()
        for name, value in fields.items():
            setattr(self, name, value)

    def _pspec(self, name):
        return next((p for p in self.list_fields() if p.name == name.replace("_", "-")), None)

    def _no_field(self, name):
        close = difflib.get_close_matches(
            name, [pspec.name.replace("-", "_") for pspec in self.list_fields()], 1)
        return AttributeError("%s has no field '%s'%s" % (
            _name(type(self)), name, " (did you mean '%s'?)" % close[0] if close else ""))

    def __getattr__(self, name):
        if name.startswith("_") or self._pspec(name) is None:
            raise self._no_field(name)
        return Hp.Config.get_value(self, name)

    def __setattr__(self, name, value):
        pspec = self._pspec(name)
        if pspec is not None:
            Hp.Config.set_value(self, name, _value(value, pspec.value_type))
        elif hasattr(getattr(type(self), name, None), "__set__"):     # a Python property
            super().__setattr__(name, value)
        else:
            raise self._no_field(name)

    @staticmethod
    def _values(gtype, properties):
        pspecs = {pspec.name: pspec.value_type for pspec in (
            GObject.list_properties(gtype) if gtype != GObject.TYPE_INVALID else ())}
        return list(properties), [_value(value, pspecs.get(name.replace("_", "-")))
                                  for name, value in properties.items()]

    def build(self, **runtime_properties):
        """Builds the owner class; keyword arguments set its properties that
        are not fields, as torchtitan's ``Config.build(**kwargs)``."""
        return self.build_with_properties(*self._values(self.get_owner_type(), runtime_properties))

    def replace(self, **changes):
        """A shallow copy with some fields changed, as ``dataclasses.replace()``."""
        return Hp.Config.replace(self, *self._values(self.__gtype__, changes))

    def to_dict(self):
        """The JSON form as dicts, lists and plain values."""
        return json.loads(self.to_json(False))

    @classmethod
    def from_dict(cls, data):
        """Reads, as strictly as ``new_from_json()``, what ``to_dict()`` gives."""
        return Hp.Config.new_from_json(cls.__gtype__, json.dumps(data))

    def __repr__(self):
        def shown(value):   # Hp.DType.FLOAT32, [Linear.Config(...), ...]
            if isinstance(value, Hp.ConfigList):
                return repr(list(value))
            return "Hp.%s.%s" % (type(value).__name__, value.value_nick.upper().replace(
                "-", "_")) if isinstance(value, GObject.GEnum) else repr(value)
        return "%s(%s)" % (_name(type(self)), ", ".join("%s=%s" % (
            p.name.replace("-", "_"), shown(Hp.Config.get_value(self, p.name)))
            for p in self.list_fields()))


@override
class Configurable(Hp.Configurable, metaclass=_Meta):
    """Built from a configuration; ``do_setup(self)`` makes its state from
    ``self.config`` once, after ``super().do_setup()``."""

    def __init__(self, **properties):
        super().__init__(**properties)
        if self.get_config() is not None:   # else made by C, which sets it up
            self.init(None)

    config = property(Hp.Configurable.get_config)


@override
class Module(Hp.Module):
    """Callable (``y = block(x)``, ``q, k = proj(x)``, keywords by forward
    argument name); children, parameters and buffers are attributes, and a
    module assigned to an attribute becomes a child."""

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def _signature(names):
        return inspect.Signature([inspect.Parameter(
            name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for name in names])

    def __call__(self, *args, **kwargs):
        arguments = self._signature(tuple(self.get_forward_arg_names())).bind(*args, **kwargs)
        arguments.apply_defaults()
        outputs = Hp.Module.call(self, list(arguments.args))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def register_callable(self, name, func):
        """func(args), or a method of this module, which is then given the
        module: the callable holds no reference to it (that would keep it
        alive for good)"""
        if inspect.ismethod(func) and func.__self__ is self:
            method = func.__func__
            Hp.Module.register_callable(self, name, lambda module, args: method(module, args))
        else:
            Hp.Module.register_callable(self, name, lambda module, args: func(args))

    def _state(self, name):
        return None if name.startswith("_") else next((found for get in (
            self.get_child, self.get_parameter, self.get_buffer) for found in [get(name)]
            if found is not None), None)

    def __getattr__(self, name):
        found = self._state(name)
        if found is None:
            raise AttributeError("%s has no child, parameter, buffer or attribute '%s'" % (
                _name(type(self)), name))
        return found

    def __setattr__(self, name, value):
        """A module becomes a child, a tensor replaces the parameter or
        buffer of that name; other values are plain attributes."""
        state = self._state(name)
        if isinstance(value, Hp.Module):
            self.add_child(name, value)
        elif state is None:
            super().__setattr__(name, value)
        elif isinstance(value, Hp.Tensor) and state is self.get_parameter(name):
            self.register_parameter(name, value)
        elif isinstance(value, Hp.Tensor) and state is self.get_buffer(name):
            self.register_buffer(name, value, self.buffer_is_persistent(name))
        else:
            raise TypeError("%s.%s is a %s: assign a %s" % (_name(type(self)), name, *(
                ("child", "module") if isinstance(state, Hp.Module) else ("state", "tensor"))))


@override
class StateDict(Hp.StateDict):
    """Iterates as ``(name, tensor)``; ``sd["weight"]``, ``in``, ``len()``."""

    def __iter__(self):
        return ((self.get_name(i), self.get_tensor(i)) for i in range(self.get_size()))

    def __getitem__(self, name):
        if not self.contains(name):
            raise KeyError(name)
        return self.lookup(name)

    __len__, __contains__ = Hp.StateDict.get_size, Hp.StateDict.contains


# GLib.Bytes can neither wrap memory it does not own nor show its data
# without a copy: numpy arrays are copied both ways (bench/bench-numpy.py)
_DTYPES = {Hp.DType.FLOAT32: "float32", Hp.DType.FLOAT64: "float64", Hp.DType.INT64: "int64"}


@override
class Tensor(Hp.Tensor):
    """A dense, immutable, row-major tensor on the CPU."""

    @staticmethod
    def from_numpy(array):
        """A tensor of a copy of ``array`` (or what ``numpy.asarray()``
        makes of it) of dtype float32, float64 or int64."""
        import numpy  # pylint: disable=import-outside-toplevel
        array = numpy.asarray(array)
        dtype = next((hp for hp, name in _DTYPES.items()
                      if array.dtype.newbyteorder("=") == numpy.dtype(name)), None)
        if dtype is None:
            raise TypeError("Hp.Tensor.from_numpy: unsupported dtype %s (float32, float64 or "
                            "int64 are)" % array.dtype)
        data = array.astype(_DTYPES[dtype], copy=False).tobytes()
        return Hp.Tensor.new_from_bytes(GLib.Bytes.new(data), dtype, list(array.shape))

    def numpy(self):
        """A read-only numpy array of a copy of the values (of a DTensor:
        of ``get_local()`` or ``full_tensor()``)."""
        if isinstance(self, Hp.DTensor):
            raise TypeError("Hp.DTensor.numpy: a DTensor has no values of its own; use "
                            "get_local().numpy() for this rank's part or full_tensor().numpy() "
                            "for the whole tensor")
        import numpy  # pylint: disable=import-outside-toplevel
        return numpy.frombuffer(self.get_bytes().get_data(),
                                _DTYPES[self.get_dtype()]).reshape(self.get_shape())

    def __repr__(self):
        head, dtype = self.to_string().rsplit(", dtype=", 1)
        return "%s, shape=%s, dtype=%s" % (re.sub(r", size=\[[0-9, ]*\]$", "", head),
                                           _shape(self.get_shape()), dtype)


def _shape(shape):
    return "[%s]" % ", ".join(str(size) for size in shape)


def _placement(placement):
    return Hp.Placement.new_from_string(placement) if isinstance(placement, str) else placement


def _placements(placements):
    if isinstance(placements, str):
        return Hp.placements_new_from_string(placements)
    return [_placement(placement) for placement in placements]


def _named(named):
    return Hp.NamedPlacement.new_from_string(named) if isinstance(named, str) else named


def _named_list(placements):
    if isinstance(placements, (str, Hp.NamedPlacement)):
        placements = [placements]
    return None if placements is None else [_named(named) for named in placements]


@override
class DTensor(Hp.DTensor):
    """A tensor laid out over a device mesh; placements may be strings."""

    @staticmethod
    def distribute(tensor, mesh, placements, src_data_rank=0):
        return Hp.DTensor.distribute(tensor, mesh, _placements(placements), src_data_rank)

    @staticmethod
    def new_from_local(local, mesh, placements, shape=None, run_check=False):
        return Hp.DTensor.new_from_local(local, mesh, _placements(placements), shape,
                                         run_check)

    def redistribute(self, placements):
        return Hp.DTensor.redistribute(self, _placements(placements))

    def __repr__(self):     # from the layout alone: no communication
        return "DTensor(shape=%s, dtype=%s, placements=%s, mesh=%s, local_shape=%s%s)" % (
            _shape(self.get_shape()), Hp.dtype_to_string(self.get_dtype()),
            Hp.placements_to_string(self.get_placements()), self.get_mesh().to_string(),
            _shape(self.get_local().get_shape()),
            ", requires_grad=True" if self.get_requires_grad() else "")


@override
class LocalMap(Hp.LocalMap):
    """A function run on the local parts of DTensors; placements may be
    strings (``"tp:S(0)"``), a single one a list of one."""

    @staticmethod
    def new(func, out_placements, in_placements, in_grad_placements, mesh, redistribute_inputs):
        return Hp.LocalMap.new(func, _named_list(out_placements), _named_list(in_placements),
                               _named_list(in_grad_placements), mesh, redistribute_inputs)


def _placement_repr(self):
    if self.is_shard():
        return "Shard(%d)" % self.get_dim()
    if self.is_partial():
        return "Partial(%s)" % Hp.reduce_op_to_string(self.get_reduce_op())
    return "Replicate()"


def _text_repr(form):
    return lambda self: form % self.to_string()


def _converting_last(method, convert):
    return lambda self, *args: method(self, *args[:-1], convert(args[-1]))


# Classes that only gain a repr, and setters whose last argument may be a
# string
for _base, _repr, _convert, _setters in (
        ("Placement", _placement_repr, None, ""),
        ("DeviceMesh", _text_repr("%s"), None, ""),
        ("ParamInit", _text_repr("ParamInit(%r)"), None, ""),
        ("Initializer", _text_repr("Initializer(%r)"), None, ""),
        ("NamedPlacement", _text_repr("NamedPlacement(%r)"), _placement, "set set_axis"),
        ("LocalMapConfig", None, _named_list,
         "set_in_placements set_out_placements set_in_grad_placements"),
        ("ShardingConfig", _text_repr("%s"), _named, "set_state_sharding set_in_src_sharding "
         "set_in_dst_sharding set_out_src_sharding set_out_dst_sharding")):
    _members = {name: _converting_last(getattr(getattr(Hp, _base), name), _convert)
                for name in _setters.split()}
    if _repr is not None:
        _members["__repr__"] = _repr
    globals()[_base] = override(type(_base, (getattr(Hp, _base),),
                                     dict(_members, __module__=__name__)))
    __all__.append(_base)


def resolve_placements(named, mesh_dim_names):
    """The placements of named (a string will do) in mesh dim order."""
    return Hp.resolve_placements(_named(named), mesh_dim_names)


@contextlib.contextmanager
def no_grad():
    """Turns grad mode off for a block (or a decorated function), as
    ``torch.no_grad()``; the previous mode comes back at the end."""
    previous = Hp.grad_mode_is_enabled()
    Hp.grad_mode_set_enabled(False)
    try:
        yield
    finally:
        Hp.grad_mode_set_enabled(previous)
