# crosslang_model.py: the model of the cross-language test, in Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The classes of crosslang-model.c written in Python against the
# introspected API alone: fields declared with Hp.Config.type_add_field
# (the library keeps their values; do_get_property reads them back with
# Hp.Config.get_value, since PyGObject hands get_property of a property
# owned by a Python class straight to do_get_property), owners named with
# Hp.Config.register_owner, do_setup returning True, do_forward, forward
# argument names set with Hp.Module.type_set_forward_arg_names. The
# fields of each class are listed once, in its FIELDS, so that moving to
# the override's Config sugar changes only declare_fields().
#
#   crosslang_model.py DOCUMENT OUTPUT LAYOUT

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))

from hptest import GLib, GObject, Hp  # noqa: E402  pylint: disable=wrong-import-position


def declare_fields(config_class, fields):
    """Declares the fields of config_class, in order: (name, type,
    default, minimum, maximum, blurb) tuples. The type of a nested
    configuration is its class, and so is its default: each new
    configuration gets its own instance of it."""
    for name, value_type, default, minimum, maximum, blurb in fields:
        gtype = value_type.__gtype__ if isinstance(value_type, type) else value_type

        def value(python_value, gtype=gtype):
            if python_value is None:
                return None
            if isinstance(python_value, type):
                python_value = python_value()
            return GObject.Value(gtype, python_value)
        Hp.Config.type_add_field(config_class, name, gtype, value(default), value(minimum),
                                 value(maximum), blurb)


class FieldsConfig(Hp.ModuleConfig):
    """Reads the fields the library keeps"""
    __gtype_name__ = "PyXlFieldsConfig"

    def do_get_property(self, pspec):  # pylint: disable=arguments-differ
        return Hp.Config.get_value(self, pspec.name)


def field(config, path):
    return Hp.Config.get_value(config, path)


def child(module, name, config):
    """Builds the child name of module from the nested configuration config"""
    module.add_child(name, Hp.Config.build(config))


# Linear: y = x W^T + b, W of shape [out-features, in-features]

class LinearConfig(FieldsConfig):
    __gtype_name__ = "PyXlLinearConfig"
    FIELDS = [
        ("in-features", GObject.TYPE_INT, 1, 1, GLib.MAXINT32, "Input features"),
        ("out-features", GObject.TYPE_INT, 1, 1, GLib.MAXINT32, "Output features"),
        ("bias", GObject.TYPE_BOOLEAN, False, None, None, "Whether there is a bias"),
    ]


class Linear(Hp.Module):
    __gtype_name__ = "PyXlLinear"

    def do_setup(self):
        Hp.Module.do_setup(self)
        config = self.get_config()
        self.register_parameter("weight", Hp.Tensor.new_zeros(
            Hp.DType.FLOAT64, [field(config, "out-features"), field(config, "in-features")]))
        if field(config, "bias"):
            self.register_parameter("bias", Hp.Tensor.new_zeros(
                Hp.DType.FLOAT64, [field(config, "out-features")]))
        return True

    def do_forward(self, args):
        return [args[0].linear(self.get_parameter("weight"), self.get_parameter("bias"))]


# MLP: w2 (act (w1 x))

class MLPConfig(FieldsConfig):
    __gtype_name__ = "PyXlMLPConfig"
    FIELDS = [
        ("activation", GObject.TYPE_STRING, "silu", None, None, "silu or gelu"),
        ("w1", LinearConfig, LinearConfig, None, None, "The first layer (column-wise)"),
        ("w2", LinearConfig, LinearConfig, None, None, "The second layer (row-wise)"),
    ]

    def do_validate(self):
        Hp.ModuleConfig.do_validate(self)
        activation = field(self, "activation")
        if activation not in ("silu", "gelu"):
            raise GLib.Error.new_literal(Hp.error_quark(), "unknown activation '%s'" % activation,
                                         int(Hp.Error.CONFIG))
        return True


class MLP(Hp.Module):
    __gtype_name__ = "PyXlMLP"

    def do_setup(self):
        Hp.Module.do_setup(self)
        config = self.get_config()
        self.activation = field(config, "activation")
        child(self, "w1", field(config, "w1"))
        child(self, "w2", field(config, "w2"))
        return True

    def do_forward(self, args):
        hidden = self.get_child("w1").call1(args[0])
        activated = hidden.gelu() if self.activation == "gelu" else hidden.silu()
        return [self.get_child("w2").call1(activated)]


# Attention: wo (inner_attention (heads (wq x), heads (wk x), heads (wv x)))

class AttentionConfig(FieldsConfig):
    __gtype_name__ = "PyXlAttentionConfig"
    FIELDS = [
        ("n-heads", GObject.TYPE_INT, 1, 1, GLib.MAXINT32, "Attention heads"),
        ("causal", GObject.TYPE_BOOLEAN, True, None, None, "Whether a query sees only earlier keys"),
        ("wq", LinearConfig, LinearConfig, None, None, "The query projection"),
        ("wk", LinearConfig, LinearConfig, None, None, "The key projection"),
        ("wv", LinearConfig, LinearConfig, None, None, "The value projection"),
        ("wo", LinearConfig, LinearConfig, None, None, "The output projection"),
    ]


def split_heads(x, n_heads):
    """[B, S, H * D] -> [B, H, S, D]"""
    b, s, width = x.get_shape()
    return x.reshape([b, s, n_heads, width // n_heads]).transpose(1, 2)


def merge_heads(x):
    """[B, H, S, D] -> [B, S, H * D]"""
    swapped = x.transpose(1, 2)
    b, s, h, d = swapped.get_shape()
    return swapped.reshape([b, s, h * d])


class Attention(Hp.Module):
    __gtype_name__ = "PyXlAttention"

    def do_setup(self):
        Hp.Module.do_setup(self)
        config = self.get_config()
        self.n_heads = field(config, "n-heads")
        self.causal = field(config, "causal")
        # what inner_attention was last given
        self.seen_heads = 0
        self.seen_dtensor = False
        if field(config, "wq.out-features") % self.n_heads != 0:
            raise GLib.Error.new_literal(Hp.error_quark(), "%d heads do not divide %d features" % (
                self.n_heads, field(config, "wq.out-features")), int(Hp.Error.CONFIG))
        # the override hands the method the module: no reference cycle
        self.register_callable("inner_attention", self.inner_attention)
        for name in ("wq", "wk", "wv", "wo"):
            child(self, name, field(config, name))
        return True

    def inner_attention(self, args):
        """q, k, v [B, H, S, D] to the attention output, on whichever
        heads it is given"""
        q, k, v = args
        self.seen_heads = q.get_shape()[1]
        self.seen_dtensor = isinstance(q, Hp.DTensor)
        return [q.scaled_dot_product_attention(k, v, None, self.causal, 0.0)]

    def do_forward(self, args):
        x = args[0]
        heads = [split_heads(self.get_child(name).call1(x), self.n_heads) for name in ("wq", "wk", "wv")]
        attended, = self.run_callable("inner_attention", heads)
        return [self.get_child("wo").call1(merge_heads(attended))]


# Model: h = x + attention (x); h = h + mlp (h); loss = mean ((head (h) - target)^2)

class ModelConfig(FieldsConfig):
    __gtype_name__ = "PyXlModelConfig"
    FIELDS = [
        ("attention", AttentionConfig, AttentionConfig, None, None, "The attention block"),
        ("mlp", MLPConfig, MLPConfig, None, None, "The MLP"),
        ("head", LinearConfig, LinearConfig, None, None, "The output layer"),
    ]


class Model(Hp.Module):
    __gtype_name__ = "PyXlModel"

    def do_setup(self):
        Hp.Module.do_setup(self)
        config = self.get_config()
        for name in ("attention", "mlp", "head"):
            child(self, name, field(config, name))
        return True

    def do_forward(self, args):
        x, target = args
        h = x.add(self.get_child("attention").call1(x))
        h = h.add(self.get_child("mlp").call1(h))
        diff = self.get_child("head").call1(h).sub(target)
        return [diff.mul(diff).mean_all()]


for config_class, module_class, arg_names in [(LinearConfig, Linear, ["x"]),
                                              (MLPConfig, MLP, ["x"]),
                                              (AttentionConfig, Attention, ["x"]),
                                              (ModelConfig, Model, ["x", "target"])]:
    declare_fields(config_class, config_class.FIELDS)
    Hp.Config.register_owner(config_class, module_class)
    Hp.Module.type_set_forward_arg_names(module_class, arg_names)


# The training step, the same in every language

def batch_tensor(target, first, rows, seq_len, width):
    """x[b, s, d] or target[b, s, c] of batch rows [first, first + rows)"""
    data = [((b * 3 + s * 2 + d * 5) % 7 - 3) / 2.0 if target else ((b * 7 + s * 5 + d * 3) % 11 - 5) / 4.0
            for b in range(first, first + rows) for s in range(seq_len) for d in range(width)]
    return Hp.Tensor.new_from_data(Hp.DType.FLOAT64, data, [rows, seq_len, width])


def full(tensor):
    return tensor.full_tensor() if isinstance(tensor, Hp.DTensor) else tensor


def placements(tensor):
    return Hp.placements_to_string(tensor.get_placements()) if isinstance(tensor, Hp.DTensor) else "plain"


def values(kind, name, tensor):
    return "%s %s %s\n" % (kind, name, " ".join("%.17g" % v for v in full(tensor).to_float64_array()))


def main(document_path, output_path, layout):
    Hp.init()
    with open(document_path, encoding="utf-8") as document_file:
        document = json.load(document_file)
    model_config = Hp.Config.new_from_json(ModelConfig, json.dumps(document["model"]))
    optimizer_config = Hp.Config.new_from_json(Hp.OptimizerConfig, json.dumps(document["optimizer"]))
    model = Hp.Config.build(model_config)

    world = Hp.get_world_size()
    tp_mesh = dp_mesh = None
    if layout == "tp":
        tp_mesh = Hp.DeviceMesh.new([world], ["tp"])
    elif layout == "dp,tp":
        mesh = Hp.DeviceMesh.new([2, world // 2], ["dp", "tp"])
        tp_mesh = mesh.slice(["tp"])
        dp_mesh = mesh.slice(["dp"])
    elif layout != "none":
        raise ValueError("unknown layout '%s'" % layout)
    if tp_mesh is not None:
        model.parallelize(tp_mesh)
    model.init_states(document["seed"])

    batch, seq_len = document["batch"], document["seq-len"]
    rows, first = batch, 0
    if dp_mesh is not None:
        rows = batch // dp_mesh.get_size()
        first = rows * dp_mesh.get_local_rank(0)
    x = batch_tensor(False, first, rows, seq_len, field(model_config, "attention.wq.in-features"))
    target = batch_tensor(True, first, rows, seq_len, field(model_config, "head.out-features"))

    parameters = model.parameters()
    optimizer = optimizer_config.build_optimizer(parameters)
    loss, = model.call([x, target])
    loss.backward(None)
    loss_value = full(loss).item()
    if dp_mesh is not None:
        Hp.data_parallel_average_gradients(parameters, dp_mesh)
        _, loss_value = Hp.data_parallel_average_scalar(dp_mesh, loss_value)
    optimizer.step()

    attention = model.get_child("attention")
    lines = ["config %s\n" % model.get_config().to_json(False),
             "loss %.17g\n" % loss_value,
             "mapped %d\n" % model.callable_is_local_mapped("attention.inner_attention"),
             "callable-heads %d\n" % attention.seen_heads,
             "callable-dtensor %d\n" % attention.seen_dtensor]
    named = model.named_parameters()
    for i in range(named.get_size()):
        name, parameter = named.get_name(i), named.get_tensor(i)
        lines.append("placement %s %s %s\n" % (name, placements(parameter), placements(parameter.get_grad())))
        lines.append(values("param", name, parameter))
        lines.append(values("grad", name, parameter.get_grad()))
    if Hp.get_world_rank() == 0:
        with open(output_path, "w", encoding="utf-8") as output:
            output.writelines(lines)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: crosslang_model.py DOCUMENT OUTPUT none|tp|dp,tp")
    try:
        main(*sys.argv[1:])
    except (GLib.Error, ValueError) as error:
        sys.exit("rank %d: %s" % (Hp.get_world_rank(), error.message if isinstance(error, GLib.Error) else error))
