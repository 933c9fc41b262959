# tp-mlp.py: a module written in Python, with a nested configuration,
# built and laid out for tensor parallelism
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# MLP holds two linear layers; its Config nests their configurations.
# The parallel model gives w1 the column-wise layout and w2 the
# row-wise one, so the hidden activation stays sharded and one
# all-reduce makes the output whole. Every rank also builds the model
# without sharding, what one rank computes, and the output and the
# gradients must agree. Run it on any number of ranks:
#
#   mpirun -np 2 python3 examples/python/tp-mlp.py
#
# (from the build tree through run-uninstalled.py; see docs/getting-started.md)

import sys

import gi

gi.require_version("Hp", "1.0")
from gi.repository import Hp  # noqa: E402


class MLP(Hp.Module):
    """w2(gelu(w1(x)))"""

    class Config(Hp.ModuleConfig):
        # fields in declaration order; each new configuration gets its own
        # copy of the default
        w1: Hp.LinearConfig = Hp.field(default_factory=lambda: Hp.LinearConfig.new(8, 32))
        w2: Hp.LinearConfig = Hp.field(default_factory=lambda: Hp.LinearConfig.new(32, 8))

    def do_setup(self):
        super().do_setup()
        # runs once the module is made, however it is made; the children
        # are built from the nested configurations
        self.w1 = self.config.w1.build()
        self.w2 = self.config.w2.build()

    def forward(self, x):
        return self.w2(self.w1(x).gelu())


def linear(in_features, out_features):
    config = Hp.LinearConfig.new(in_features, out_features)
    # fields are attributes; this one sets the weight's initialiser
    config.param_init = Hp.ParamInit.new_from_string("weight=normal(std=0.3)")
    return config


def whole(tensor):
    return tensor.full_tensor() if isinstance(tensor, Hp.DTensor) else tensor


def run(model, x):
    """The whole output; the gradients from the sum of the output"""
    y = model(x)
    y.sum_all().backward(None)
    return whole(y)


def main():
    Hp.init()
    rank = Hp.get_world_rank()
    mesh = Hp.DeviceMesh.new([Hp.get_world_size()], ["tp"])

    config = MLP.Config(w1=linear(8, 32), w2=linear(32, 8))
    # replace() makes changed copies; the nested configurations of
    # `config` are left as they are
    parallel_config = config.replace(
        w1=config.w1.replace(sharding_config=Hp.sharding_colwise()),
        w2=config.w2.replace(sharding_config=Hp.sharding_rowwise(False)))

    # a configuration goes through JSON and comes back equal
    assert MLP.Config.from_dict(parallel_config.to_dict()).equal(parallel_config)

    reference = config.build()
    parallel = parallel_config.build()
    parallel.parallelize(mesh)
    reference.init_states(11)
    parallel.init_states(11)

    weight = parallel.w1.weight
    if rank == 0:
        print("w1:", parallel_config.w1.sharding_config.to_string())
        print("w2:", parallel_config.w2.sharding_config.to_string())
        print(weight.visualize())

    x = Hp.Tensor.new_randn(Hp.DType.FLOAT32, [4, 8], 3)
    y_reference = run(reference, x)
    y = run(parallel, x)
    ok = y.allclose(y_reference, 1e-5, 1e-6)
    references = dict(reference.named_parameters())
    for name, weight in parallel.named_parameters():
        grad = whole(weight.get_grad())
        ok = ok and grad.allclose(references[name].get_grad(), 1e-5, 1e-6)

    if rank == 0:
        print("y =", y.to_string())
        print("same as one rank:", ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
