# Hp.py: the PyGObject override of the Hp namespace
#
# SPDX-License-Identifier: LGPL-2.1-or-later

"""Python idioms for hp-protocols.

Configurations and configurable classes are written as in torchtitan::

    class Linear(Hp.Module):
        class Config(Hp.ModuleConfig):
            in_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)
            out_features = GObject.Property(type=int, default=4, minimum=1, maximum=1 << 20)

        def do_setup(self):
            super().do_setup()
            config = self.config
            weight = Hp.Tensor.new_zeros(Hp.DType.FLOAT64,
                                         [config.out_features, config.in_features])
            self.register_parameter("weight", weight)

        def do_forward(self, args):
            return [args[0].linear(self.get_parameter("weight"), None)]

    linear = Linear.Config(in_features=3).build()

A ``Config`` class nested in a subclass of :class:`Configurable` (such as
``Hp.Module``) names that subclass as the class it builds.

Tensors trade memory with numpy (:meth:`Tensor.from_numpy`,
:meth:`Tensor.numpy`) without copying; wherever a list of placements is
expected, a string will do (``"S(0), R"``, ``["S(0)", "R"]``), and a
named placement may be written ``"tp:S(0)"``; ``with Hp.no_grad():``
turns autograd off for a block. Tensors, placements, meshes and
configurations have readable ``repr()``.

Importing the override initialises no MPI; numpy, and the few GLib C
functions the numpy bridge calls through ctypes, are loaded the first
time a tensor meets an array.
"""

import contextlib
import ctypes
import json
import re
import sys

from gi.module import get_introspection_module
from gi.overrides import override
from gi.repository import Gio, GLib, GObject

Hp = get_introspection_module("Hp")

__all__ = []

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
    if isinstance(value, GObject.GEnum):
        # Hp.DType.FLOAT32 rather than <enum HP_DTYPE_FLOAT32 of type Hp.DType>
        return "%s.%s.%s" % (type(value).__module__.rsplit(".", 1)[-1], type(value).__name__,
                              value.value_nick.upper().replace("-", "_"))
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


def _vfunc_returning_true(name, method):
    """A do_setup or do_validate that returns True when method returns,
    and raises what it raised as a GLib.Error (any other exception as
    Hp.Error.CONFIG), as the C virtual function expects."""
    def vfunc(self):
        try:
            method(self)
        except GLib.Error:
            raise
        except Exception as error:  # pylint: disable=broad-except
            raise GLib.Error.new_literal(
                Hp.error_quark(), "%s.%s() raised %s: %s" % (
                    type(self).__qualname__, name, type(error).__name__, error),
                int(Hp.Error.CONFIG)) from error
        return True
    vfunc.__name__ = method.__name__
    vfunc.__doc__ = method.__doc__
    return vfunc


def _nearest_binding_class(cls):
    """The nearest class of cls's line made from the typelib (or an
    override), whose virtual functions are C ones."""
    return next(base for base in cls.__mro__
                if hasattr(base, "__gtype__") and not _is_user_class(base))


class _ChainUp:
    """Sits between the first Python class of a line and its C parent,
    so that ``super().do_setup()`` reaches the C implementation (PyGObject
    calls a C virtual function as ``Parent.do_setup(self)``)."""

    def do_setup(self):
        return _nearest_binding_class(type(self)).do_setup(self)


class _ConfigurableMeta(_NamedMeta):
    """Wraps a class's do_setup as the C virtual function expects, and
    registers a nested ``Config`` class as built by its enclosing class."""

    def __new__(mcls, name, bases, namespace, **kwargs):
        if not _is_binding_module(namespace.get("__module__", "")) and \
                not any(_is_user_class(base) for base in bases):
            bases = (_ChainUp,) + bases
        if "do_setup" in namespace:
            namespace = dict(namespace,
                             do_setup=_vfunc_returning_true("setup", namespace["do_setup"]))
        return super().__new__(mcls, name, bases, namespace, **kwargs)

    def __init__(cls, name, bases, namespace, **kwargs):
        super().__init__(name, bases, namespace)
        config = namespace.get("Config")
        if isinstance(config, type) and issubclass(config, Hp.Config):
            Hp.Config.register_owner(config.__gtype__, cls.__gtype__)


class Configurable(Hp.Configurable, metaclass=_ConfigurableMeta):
    """An object built from a configuration.

    A subclass makes its parameters, children and other state from
    ``self.config`` in ``do_setup(self)``, the ``setup`` virtual function
    of every language, which runs once, however the object is made:
    ``config.build()``, ``Linear(config=...)`` from Python, or
    ``hp_config_build()`` from C. It chains up with
    ``super().do_setup()``; an exception it raises is the error of the
    build.
    """

    def __init__(self, **properties):
        super().__init__(**properties)
        # made from Python: set up now. When C makes the object,
        # PyGObject calls __init__ before any property is set (there is
        # no configuration yet) and the builder initialises it later.
        if self.get_config() is not None:
            self.init(None)

    @property
    def config(self):
        """The configuration the object was built from."""
        return self.get_config()


Configurable = override(Configurable)
__all__.append("Configurable")


# Tensors and numpy
#
# GLib.Bytes offers Python no way to wrap memory it does not copy, nor to
# read its data without copying, so the buffers are handed over through
# the GLib C API (ctypes): PyGObject hashes a boxed value (GLib.Bytes,
# GObject.Value) to the address of the C structure it wraps.

_numpy_module = None


def _np():
    """numpy, imported on first use so that importing Hp does not need it."""
    global _numpy_module  # pylint: disable=global-statement
    if _numpy_module is None:
        import numpy  # pylint: disable=import-outside-toplevel
        _numpy_module = numpy
    return _numpy_module


class _GLibC:
    """The few C functions the numpy bridge calls."""

    def __init__(self):
        glib = ctypes.CDLL("libglib-2.0.so.0")
        gobject = ctypes.CDLL("libgobject-2.0.so.0")
        self.bytes_new_with_free_func = glib.g_bytes_new_with_free_func
        self.bytes_new_with_free_func.restype = ctypes.c_void_p
        self.bytes_new_with_free_func.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                                  ctypes.c_void_p, ctypes.c_void_p]
        self.bytes_get_data = glib.g_bytes_get_data
        self.bytes_get_data.restype = ctypes.c_void_p
        self.bytes_get_data.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        self.value_take_boxed = gobject.g_value_take_boxed
        self.value_take_boxed.restype = None
        self.value_take_boxed.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        self.release = self._pygobject_destroy_notify()

    @staticmethod
    def _pygobject_destroy_notify():
        """PyGObject's GDestroyNotify that drops a reference to a Python
        object, taking the GIL (GLib may release a buffer while another
        call into C holds none). It runs no Python code, so it neither
        sees nor disturbs an exception a Python callback left pending.
        It is a field of the C API table PyGObject exports to extension
        modules (pygobject.h); the two fields around it are checked."""
        get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
        get_pointer.restype = ctypes.c_void_p
        get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
        table = (ctypes.c_void_p * 8).from_address(
            get_pointer(sys.modules["gi._gi"]._PyGObject_API, b"gobject._PyGObject_API"))
        lookup_class = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(table[2])
        type_from_object = ctypes.PYFUNCTYPE(ctypes.c_size_t, ctypes.py_object)(table[7])
        if lookup_class(type_from_object(GObject.Object)) != id(GObject.Object):
            raise RuntimeError("this PyGObject's C API table is not laid out as pygobject.h says")
        return table[6]

    def bytes_over(self, array):
        """A GLib.Bytes over the memory of the contiguous array, which it
        keeps alive until GLib releases the last reference."""
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(array))
        address = self.bytes_new_with_free_func(array.ctypes.data, array.nbytes,
                                                self.release, id(array))
        value = GObject.Value(GLib.Bytes.__gtype__)
        self.value_take_boxed(hash(value), address)
        return value.get_boxed()

    def memory_of(self, gbytes):
        """A read-only memoryview of the data of gbytes, which keeps gbytes
        alive."""
        size = ctypes.c_size_t()
        address = self.bytes_get_data(hash(gbytes), ctypes.byref(size))
        if size.value == 0:
            return memoryview(b"")
        view = (ctypes.c_char * size.value).from_address(address)
        view.owner = gbytes
        return memoryview(view).toreadonly()


_glib_c = None


def _c():
    global _glib_c  # pylint: disable=global-statement
    if _glib_c is None:
        _glib_c = _GLibC()
    return _glib_c


def _dtypes():
    """The numpy dtypes of the Hp dtypes, in the host's byte order."""
    np = _np()
    return {Hp.DType.FLOAT32: np.dtype(np.float32), Hp.DType.FLOAT64: np.dtype(np.float64),
            Hp.DType.INT64: np.dtype(np.int64)}


class Tensor(Hp.Tensor):
    """A dense, immutable, row-major tensor on the CPU; see also
    :meth:`from_numpy` and :meth:`numpy`."""

    @staticmethod
    def from_numpy(array):
        """A tensor holding the values of ``array`` (a numpy array or
        anything ``numpy.asarray()`` takes) of dtype float32, float64 or
        int64, with its shape.

        No copy is made when ``array`` is writable, C-contiguous, aligned
        and in the host's byte order: the tensor then shares the array's
        memory, as ``torch.from_numpy()`` does, and keeps the array alive
        as long as it (or any tensor or GLib.Bytes sharing its buffer)
        lives. The sharing goes both ways: ops never write to their
        inputs, and autograd keeps the tensors it needs for backward, so
        do not write to the array afterwards (pass ``array.copy()`` if you
        will); an optimizer step, which updates parameters in place,
        writes the new values into the array. Other arrays (read-only
        ones included) are copied once, in C order. Other dtypes raise
        ``TypeError``: convert them with ``array.astype()``.
        """
        np = _np()
        array = np.asarray(array)
        dtype = next((hp for hp, dt in _dtypes().items() if dt == array.dtype.newbyteorder("=")),
                     None)
        if dtype is None:
            raise TypeError("Hp.Tensor.from_numpy: unsupported dtype %s (float32, float64 or "
                            "int64 are)" % array.dtype)
        if not (array.flags.writeable and array.flags.c_contiguous and array.flags.aligned
                and array.dtype.isnative):
            array = np.array(array, dtype=_dtypes()[dtype], order="C")
        return Hp.Tensor.new_from_bytes(_c().bytes_over(array), dtype, list(array.shape))

    def numpy(self):
        """A read-only numpy array of the tensor's values, with its shape
        and dtype (float32, float64 or int64).

        No copy is made: the array views the tensor's buffer and keeps it
        alive; ``numpy.shares_memory()`` is true for two arrays of one
        tensor, and for the array a tensor was made from with
        :meth:`from_numpy`. Ops never change a tensor's values, but an
        optimizer step updates a parameter in place, and its arrays show
        the new values: take ``.copy()`` to keep the old ones, or to
        write.
        A DTensor has no buffer of its own: take ``get_local().numpy()``
        (this rank's part) or ``full_tensor().numpy()`` (collective).
        """
        if isinstance(self, Hp.DTensor):
            raise TypeError("Hp.DTensor.numpy: a DTensor has no values of its own; use "
                            "get_local().numpy() for this rank's part or full_tensor().numpy() "
                            "for the whole tensor")
        np = _np()
        return np.frombuffer(_c().memory_of(self.get_bytes()),
                             dtype=_dtypes()[self.get_dtype()]).reshape(self.get_shape())

    def __repr__(self):
        # the library's torch-style text, which already abbreviates large
        # tensors like numpy, with the shape before the dtype
        text = self.to_string()
        head, dtype = text.rsplit(", dtype=", 1)
        head = re.sub(r", size=\[[0-9, ]*\]$", "", head)
        return "%s, shape=%s, dtype=%s" % (head, _shape_string(self.get_shape()), dtype)


def _shape_string(shape):
    return "[%s]" % ", ".join(str(size) for size in shape)


Tensor = override(Tensor)
__all__.append("Tensor")


# Placements written as strings

def _placement(placement):
    if isinstance(placement, str):
        return Hp.Placement.new_from_string(placement)
    return placement


def _placement_list(placements):
    """A list of Hp.Placement from a list of placements or strings, or a
    string listing them (``"S(0), R"``)."""
    if isinstance(placements, str):
        return Hp.placements_new_from_string(placements)
    return [_placement(placement) for placement in placements]


def _named(named):
    if isinstance(named, str):
        return Hp.NamedPlacement.new_from_string(named)
    return named


def _named_list(placements):
    """A list of named placements (or None entries) from one named
    placement or string, or a list of them (None stays None)."""
    if placements is None:
        return None
    if isinstance(placements, (str, Hp.NamedPlacement)):
        placements = [placements]
    return [_named(named) for named in placements]


class Placement(Hp.Placement):
    """How a tensor is laid out along one mesh dim: ``Shard(0)``,
    ``Replicate()`` or ``Partial(sum)``."""

    def __repr__(self):
        if self.is_shard():
            return "Shard(%d)" % self.get_dim()
        if self.is_partial():
            return "Partial(%s)" % Hp.reduce_op_to_string(self.get_reduce_op())
        return "Replicate()"


Placement = override(Placement)
__all__.append("Placement")


class DTensor(Hp.DTensor):
    """A tensor laid out over a device mesh. Placements may be given as
    strings: ``"S(0), R"`` or ``["S(0)", "R"]``."""

    @staticmethod
    def distribute(tensor, mesh, placements, src_data_rank=0):
        """Lays tensor out over mesh, from the rank at coordinate
        src_data_rank (-1: every rank cuts its part from its own tensor,
        without communication); see hp_dtensor_distribute()."""
        return Hp.DTensor.distribute(tensor, mesh, _placement_list(placements), src_data_rank)

    @staticmethod
    def new_from_local(local, mesh, placements, shape=None, run_check=False):
        """Wraps each rank's local tensor; see hp_dtensor_new_from_local()."""
        return Hp.DTensor.new_from_local(local, mesh, _placement_list(placements), shape,
                                         run_check)

    def redistribute(self, placements):
        """The same tensor with other placements; see
        hp_dtensor_redistribute()."""
        return Hp.DTensor.redistribute(self, _placement_list(placements))

    def __repr__(self):
        # from the layout alone: no communication
        text = "DTensor(shape=%s, dtype=%s, placements=%s, mesh=%s, local_shape=%s" % (
            _shape_string(self.get_shape()), Hp.dtype_to_string(self.get_dtype()),
            Hp.placements_to_string(self.get_placements()), self.get_mesh().to_string(),
            _shape_string(self.get_local().get_shape()))
        if self.get_requires_grad():
            text += ", requires_grad=True"
        return text + ")"


DTensor = override(DTensor)
__all__.append("DTensor")


class DeviceMesh(Hp.DeviceMesh):
    """An N-d grid of MPI ranks with named dims."""

    def __repr__(self):
        return self.to_string()


DeviceMesh = override(DeviceMesh)
__all__.append("DeviceMesh")


class NamedPlacement(Hp.NamedPlacement):
    """Placements by mesh axis name: ``"tp:S(0), dp:R"``. Where a
    placement is expected, a string will do."""

    def set(self, axis, placement):  # pylint: disable=arguments-differ
        Hp.NamedPlacement.set(self, axis, _placement(placement))

    def set_axis(self, axis, placement):
        Hp.NamedPlacement.set_axis(self, axis, _placement(placement))

    def __repr__(self):
        return "NamedPlacement(%r)" % self.to_string()


NamedPlacement = override(NamedPlacement)
__all__.append("NamedPlacement")


def resolve_placements(named, mesh_dim_names):
    """The placements of named (a NamedPlacement, a string such as
    ``"tp:S(0)"``, or None) in the order of mesh_dim_names."""
    return Hp.resolve_placements(_named(named), mesh_dim_names)


__all__.append("resolve_placements")


class LocalMap(Hp.LocalMap):
    """A plain function run on the local parts of DTensors. Each entry of
    the placement lists is a NamedPlacement, a string (``"tp:S(0)"``) or
    None; a single one stands for a list of one."""

    @staticmethod
    def new(func, out_placements, in_placements, in_grad_placements, mesh,
            redistribute_inputs):
        return Hp.LocalMap.new(func, _named_list(out_placements), _named_list(in_placements),
                               _named_list(in_grad_placements), mesh, redistribute_inputs)


LocalMap = override(LocalMap)
__all__.append("LocalMap")


class LocalMapConfig(Hp.LocalMapConfig):
    """The local_map of a sharding config; its placement lists take
    strings as :class:`LocalMap` does."""

    def set_in_placements(self, placements):
        Hp.LocalMapConfig.set_in_placements(self, _named_list(placements))

    def set_out_placements(self, placements):
        Hp.LocalMapConfig.set_out_placements(self, _named_list(placements))

    def set_in_grad_placements(self, placements):
        Hp.LocalMapConfig.set_in_grad_placements(self, _named_list(placements))


LocalMapConfig = override(LocalMapConfig)
__all__.append("LocalMapConfig")


class ShardingConfig(Hp.ShardingConfig):
    """Named placements of a module's states, inputs and outputs; the
    setters take strings (``"tp:S(0)"``) for named placements."""

    def set_state_sharding(self, path, named):
        Hp.ShardingConfig.set_state_sharding(self, path, _named(named))

    def set_in_src_sharding(self, arg_name, named):
        Hp.ShardingConfig.set_in_src_sharding(self, arg_name, _named(named))

    def set_in_dst_sharding(self, arg_name, named):
        Hp.ShardingConfig.set_in_dst_sharding(self, arg_name, _named(named))

    def set_out_src_sharding(self, index, named):
        Hp.ShardingConfig.set_out_src_sharding(self, index, _named(named))

    def set_out_dst_sharding(self, index, named):
        Hp.ShardingConfig.set_out_dst_sharding(self, index, _named(named))

    def __repr__(self):
        return self.to_string()


ShardingConfig = override(ShardingConfig)
__all__.append("ShardingConfig")


class ParamInit(Hp.ParamInit):
    """Initialisers by parameter name: ``"weight=normal(std=0.02)"``."""

    def __repr__(self):
        return "ParamInit(%r)" % self.to_string()


ParamInit = override(ParamInit)
__all__.append("ParamInit")


class Initializer(Hp.Initializer):
    """How to fill a parameter: ``"normal(mean=0, std=0.02)"``."""

    def __repr__(self):
        return "Initializer(%r)" % self.to_string()


Initializer = override(Initializer)
__all__.append("Initializer")


@contextlib.contextmanager
def no_grad():
    """Turns grad mode off for a block, as ``torch.no_grad()``::

        with Hp.no_grad():
            y = x.mul(w)        # records no autograd node

    The previous mode comes back when the block ends, also by an
    exception; blocks nest. Works as a decorator too."""
    previous = Hp.grad_mode_is_enabled()
    Hp.grad_mode_set_enabled(False)
    try:
        yield
    finally:
        Hp.grad_mode_set_enabled(previous)


__all__.append("no_grad")
