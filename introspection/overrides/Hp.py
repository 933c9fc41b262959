# Hp.py: the PyGObject override of the Hp namespace, over public API only
#
# SPDX-License-Identifier: LGPL-2.1-or-later

"""torchtitan's idioms for hp-protocols: configs declared like dataclasses,
callable modules, numpy exchange (docs/configs.md)"""

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
__all__ = ["field", "Config", "Configurable", "Module", "StateDict", "Tensor", "no_grad"]
_MISSING = object()
_GTYPES = {bool: GObject.TYPE_BOOLEAN, int: GObject.TYPE_INT, float: GObject.TYPE_DOUBLE,
           str: GObject.TYPE_STRING, list: GObject.TYPE_STRV}


def _is_user(cls):
    return not getattr(cls, "__module__", cls).startswith(("gi.repository.", "gi.overrides."))


def _name(cls):
    return cls.__qualname__ if _is_user(cls) else "Hp." + cls.__name__


def _value(value, gtype=None):
    # where PyGObject would guess the GValue's type: None, integers, lists
    if value is None:
        return None if gtype is None else GObject.Value(gtype, None)
    if isinstance(value, int) and not isinstance(value, (bool, GObject.GEnum, GObject.GFlags)):
        return GObject.Value(GObject.TYPE_INT64 if value < 1 << 63 else GObject.TYPE_UINT64, value)
    return GObject.Value(GObject.TYPE_STRV, value) if isinstance(value, list) else value


def field(default=_MISSING, *, default_factory=None, minimum=None, maximum=None, blurb=None):
    """A config field's default, range and blurb: ``n: int = Hp.field(4, minimum=1)``"""
    return types.SimpleNamespace(default=default, default_factory=default_factory,
                                 minimum=minimum, maximum=maximum, blurb=blurb)


class _ChainUp:
    """Before the C parent: ``super().do_setup()`` reaches C, fields read as fields"""
    def _c_parent(self):
        return next(b for b in type(self).__mro__ if b.__module__.startswith("gi.repository."))

    def do_setup(self):
        return self._c_parent().do_setup(self)

    def do_validate(self):
        return self._c_parent().do_validate(self)

    def do_get_property(self, pspec):
        return Hp.Config.get_value(self, pspec.name)


def _returning_true(name, method):
    @functools.wraps(method)
    def vfunc(self):    # True as C expects, errors as GLib.Error
        try:
            method(self)
        except GLib.Error:
            raise
        except Exception as error:  # pylint: disable=broad-except
            message = f"{type(self).__qualname__}.{name}() raised {type(error).__name__}: {error}"
            raise GLib.Error.new_literal(Hp.error_quark(), message, int(Hp.Error.CONFIG)) from error
        return True
    return vfunc


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
        fields = list(cls._take_fields()) if issubclass(cls, Hp.Config) else []
        for vfunc in ("do_setup", "do_validate"):
            if vfunc in namespace:
                setattr(cls, vfunc, _returning_true(vfunc[3:], namespace[vfunc]))
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
        # module+Qualified+Name (-v2... if taken), a script's module as it is imported
        module, main = cls.__module__, sys.modules["__main__"]
        if module == "__main__":
            module = getattr(main.__spec__, "name", "")     # python -m
            path = getattr(main, "__file__", None)
            if not module and path:     # its file with its packages; none if interactive
                path, module = os.path.split(os.path.splitext(os.path.realpath(path))[0])
                while os.path.exists(os.path.join(path, "__init__.py")):
                    path, package = os.path.split(path)
                    module = package + "." + module
        parts = [module.replace(".", "-")] + cls.__qualname__.replace(".<locals>", "").split(".")
        base = name = re.sub(r"[^A-Za-z0-9_+-]", "_", "+".join(part for part in parts if part))
        for serial in range(2, 1 << 16):
            try:
                GObject.type_from_name(name)
            except RuntimeError:
                break
            name = f"{base}-v{serial}"
        return name

    def _take_fields(cls):
        # the type_add_field arguments of the fields declared, which leave the class
        declared = [(name, kind, cls.__dict__.get(name, _MISSING)) for name, kind in
                    inspect.get_annotations(cls, eval_str=True).items()
                    if typing.ClassVar not in (kind, typing.get_origin(kind))]
        declared += [(name, p.type, field(p.default, minimum=p.minimum, maximum=p.maximum,
                                          blurb=p.blurb))
                     for name, p in cls.__dict__.items() if isinstance(p, GObject.Property)]
        for name, kind, spec in declared:
            if name in cls.__dict__:
                delattr(cls, name)
            spec = spec if isinstance(spec, types.SimpleNamespace) else field(spec)
            gtype = kind if isinstance(kind, GObject.GType) else _GTYPES.get(
                typing.get_origin(kind) or kind) or kind.__gtype__
            default = spec.default_factory() if spec.default_factory else spec.default
            if default is _MISSING:     # a configuration (list) type: an instance, else zero
                default = kind() if isinstance(kind, type) and not gtype.is_abstract() and \
                    issubclass(kind, (Hp.Config, Hp.ConfigList)) else None
            yield (name, gtype, _value(default), _value(spec.minimum), _value(spec.maximum),
                   spec.blurb or None)


@override
class Config(Hp.Config, metaclass=_Meta):
    """Fields are attributes, checked by the library; AttributeError names the closest"""
    def __init__(self, **fields):
        super().__init__()
        for name, value in fields.items():
            setattr(self, name, value)

    def _field(self, name):
        pspecs = {pspec.name.replace("-", "_"): pspec for pspec in self.list_fields()}
        if name in pspecs:
            return pspecs[name]
        close = difflib.get_close_matches(name, pspecs, 1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise AttributeError(f"{_name(type(self))} has no field '{name}'{hint}")

    def __getattr__(self, name):
        self._field(name)       # AttributeError unless a field
        return Hp.Config.get_value(self, name)

    def __setattr__(self, name, value):
        if hasattr(getattr(type(self), name, None), "__set__"):     # a Python property
            super().__setattr__(name, value)
        else:
            Hp.Config.set_value(self, name, _value(value, self._field(name).value_type))

    @staticmethod
    def _values(gtype, properties):
        pspecs = {} if gtype == GObject.TYPE_INVALID else {
            pspec.name: pspec.value_type for pspec in GObject.list_properties(gtype)}
        return list(properties), [_value(value, pspecs.get(name.replace("_", "-")))
                                  for name, value in properties.items()]

    def build(self, **runtime_properties):
        """Builds the owner class, keywords setting its non-field properties"""
        return self.build_with_properties(*self._values(self.get_owner_type(), runtime_properties))

    def replace(self, **changes):
        """A shallow copy with some fields changed, as ``dataclasses.replace()``"""
        return Hp.Config.replace(self, *self._values(self.__gtype__, changes))

    def to_dict(self):
        return json.loads(self.to_json(False))

    @classmethod
    def from_dict(cls, data):
        return Hp.Config.new_from_json(cls.__gtype__, json.dumps(data))

    def __repr__(self):
        def shown(value):   # Hp.DType.FLOAT32, [Linear.Config(...), ...]
            if isinstance(value, GObject.GEnum):
                return f"Hp.{type(value).__name__}.{value.value_nick.upper().replace('-', '_')}"
            return repr(list(value) if isinstance(value, Hp.ConfigList) else value)
        return "%s(%s)" % (_name(type(self)), ", ".join(
            f"{p.name.replace('-', '_')}={shown(Hp.Config.get_value(self, p.name))}"
            for p in self.list_fields()))


@override
class Configurable(Hp.Configurable, metaclass=_Meta):
    """Built from ``self.config``, which ``do_setup(self)`` reads once"""
    config = property(Hp.Configurable.get_config)

    def __init__(self, **properties):
        super().__init__(**properties)
        if self.get_config() is not None:   # else made by C, which sets it up
            self.init(None)


@functools.lru_cache(maxsize=None)
def _signature(names):
    return inspect.Signature([inspect.Parameter(
        name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None) for name in names])


@override
class Module(Hp.Module):
    """Callable by forward argument name; children, parameters, buffers are attributes"""
    def __call__(self, *args, **kwargs):
        arguments = _signature(tuple(self.get_forward_arg_names())).bind(*args, **kwargs)
        arguments.apply_defaults()
        outputs = Hp.Module.call(self, list(arguments.args))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def register_callable(self, name, func):
        """A method of this module is given the module, so as not to keep it"""
        if inspect.ismethod(func) and func.__self__ is self:
            Hp.Module.register_callable(self, name, func.__func__)
        else:
            Hp.Module.register_callable(self, name, lambda module, args: func(args))

    def _state(self, name):
        return None if name.startswith("_") else next((found for get in (
            self.get_child, self.get_parameter, self.get_buffer) for found in [get(name)]
            if found is not None), None)

    def __getattr__(self, name):
        found = self._state(name)
        if found is None:
            raise AttributeError(f"{_name(type(self))} has no child, parameter or buffer '{name}'")
        return found

    def __setattr__(self, name, value):
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
            kind = ("child", "module") if isinstance(state, Hp.Module) else ("state", "tensor")
            raise TypeError("%s.%s is a %s: assign a %s" % (_name(type(self)), name, *kind))


@override
class StateDict(Hp.StateDict):
    """Iterates as ``(name, tensor)``; ``sd["weight"]``, ``in``, ``len()``"""
    __len__, __contains__ = Hp.StateDict.get_size, Hp.StateDict.contains

    def __iter__(self):
        return ((self.get_name(i), self.get_tensor(i)) for i in range(self.get_size()))

    def __getitem__(self, name):
        if not self.contains(name):
            raise KeyError(name)
        return self.lookup(name)


@override
class Tensor(Hp.Tensor):
    """Copied to and from numpy: GLib.Bytes cannot share memory (bench/bench-numpy.py)"""
    @staticmethod
    def from_numpy(array):
        """A tensor of a copy of ``numpy.asarray(array)``: float32, float64, int64"""
        import numpy  # pylint: disable=import-outside-toplevel
        array = numpy.asarray(array)
        if array.dtype.name not in ("float32", "float64", "int64"):
            raise TypeError(f"Hp.Tensor.from_numpy: unsupported dtype {array.dtype} (float32, "
                            "float64 or int64 are)")
        data = GLib.Bytes.new(array.astype(array.dtype.name, copy=False).tobytes())
        return Hp.Tensor.new_from_bytes(data, getattr(Hp.DType, array.dtype.name.upper()),
                                        list(array.shape))

    def numpy(self):
        """A read-only numpy array of a copy of the values"""
        if isinstance(self, Hp.DTensor):
            raise TypeError("Hp.DTensor.numpy: use get_local().numpy() or full_tensor().numpy()")
        import numpy  # pylint: disable=import-outside-toplevel
        return numpy.frombuffer(self.get_bytes().get_data(), Hp.dtype_to_string(
            self.get_dtype())).reshape(self.get_shape())


def _repr(self):
    text, name = self.to_string(), type(self).__name__     # tensor(...), ParamInit('...')
    return text if text.lower().startswith(name.lower() + "(") else f"{name}({text!r})"


# Every class with a to_string() shows it (set on the class: subclasses come later)
for _class in [getattr(Hp, name) for name in dir(Hp)]:
    if isinstance(_class, type(GObject.Object)) and hasattr(_class, "to_string"):
        _class.__repr__ = _repr


@contextlib.contextmanager
def no_grad():
    """Turns grad mode off for a block or a function, as ``torch.no_grad()``"""
    previous = Hp.grad_mode_is_enabled()
    Hp.grad_mode_set_enabled(False)
    try:
        yield
    finally:
        Hp.grad_mode_set_enabled(previous)
