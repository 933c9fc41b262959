#!/usr/bin/env python3
# bench/fsdp_state.py: the bytes of parameters, gradients and AdamW state
# that each rank holds after a training step of the model in CONFIG, laid
# out as LAYOUT: "fsdp" (dp_shard over every rank), "dp" (replicas) or
# "one" (one rank). Run by run-fsdp.sh under mpirun; prints one line
# from rank 0 with the largest rank's figures, from the sizes of the
# tensors the library holds (not from RSS).
#
#   fsdp_state.py CONFIG LAYOUT
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import sys

import gi
import gi.overrides

# this tree's override (attribute access to children, config keywords)
gi.overrides.__path__.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             os.pardir, "introspection", "overrides"))
gi.require_version("Hp", "1.0")
from gi.repository import Hp  # noqa: E402

MIB = 1024.0 * 1024.0


def local(tensor):
    return tensor.get_local() if isinstance(tensor, Hp.DTensor) else tensor


def nbytes(tensor):
    tensor = local(tensor)
    return tensor.get_numel() * Hp.dtype_get_size(tensor.get_dtype())


def main():
    config_file, layout = sys.argv[1], sys.argv[2]
    Hp.init()
    world = Hp.get_world_size()
    with open(config_file, encoding="utf-8") as f:
        config = Hp.Config.new_from_json(Hp.DecoderConfig, f.read())
    dims = Hp.ParallelDims(dp_shard=1, tp=1).resolve(1)
    config.update_from_config(dims)
    model = config.build()
    model.init_weights(0)
    block_bytes = sum(nbytes(p) for p in model.layers[0].parameters())
    if layout == "fsdp":
        mesh = Hp.DeviceMesh.new([world], ["dp_shard"])
        for layer in model.layers:
            layer.fully_shard(mesh, True)
        model.fully_shard(mesh, True)
    else:
        mesh = Hp.DeviceMesh.new([world], ["dp_replicate"])
    optimizer = Hp.AdamWConfig(lr=1e-3).build_optimizer(model.parameters())
    rows = [[(r * 7 + s * 3) % 50 for s in range(64)] for r in range(2)]
    ids = Hp.Tensor.new_from_int64_data([t for row in rows for t in row], [2, 64])
    targets = Hp.Tensor.new_from_int64_data([(t + 1) % 50 for row in rows for t in row], [2, 64])
    loss = model(ids).cross_entropy(targets, -100)
    loss.backward(None)
    if layout == "dp":
        Hp.data_parallel_average_gradients(model.parameters(), mesh)
    optimizer.step()
    params = sum(nbytes(p) for p in model.parameters())
    grads = sum(nbytes(p.get_grad()) for p in model.parameters() if p.get_grad() is not None)
    state = optimizer.get_state()
    adam = sum(nbytes(state.get_tensor(i)) for i in range(state.get_size()))
    total = params + grads + adam
    ok, largest = Hp.data_parallel_average_scalar(mesh, float(total))  # equal on every rank but for uneven shards
    if Hp.get_world_rank() == 0:
        print(f"{layout:>4} on {world} rank(s): params {params / MIB:7.1f} + grads {grads / MIB:7.1f}"
              f" + AdamW {adam / MIB:7.1f} = {total / MIB:7.1f} MiB/rank (mean {largest / MIB:.1f});"
              f" one block's full params {block_bytes / MIB:.1f} MiB")


main()
