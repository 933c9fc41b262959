# test_no_mpi_on_import.py: importing the Hp namespace and making
# configurations and modules written in Python communicate nothing: MPI
# starts only with Hp.init() or a device mesh
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import mpi4py

mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
from mpi4py import MPI  # noqa: E402

import unittest  # noqa: E402

from hptest import Hp, from_numpy, to_numpy  # noqa: E402


class Scale(Hp.Module):
    class Config(Hp.ModuleConfig):
        size: int = Hp.field(2, minimum=1, maximum=64)

    def do_setup(self):
        super().do_setup()
        self.register_parameter("weight", Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [self.config.size]))

    def forward(self, x):
        return x.mul(self.weight)


class NoMpiTest(unittest.TestCase):
    def test_import_configs_and_modules(self):
        self.assertFalse(MPI.Is_initialized())
        config = Scale.Config(size=3, param_init=Hp.ParamInit.new_from_string("weight=ones"))
        self.assertEqual(Scale.Config.from_dict(config.to_dict()).size, 3)
        scale = config.build()
        scale.init_states(1)
        self.assertEqual(list(to_numpy(scale(from_numpy([1.0, 2.0, 3.0])))), [1.0, 2.0, 3.0])
        self.assertFalse(MPI.Is_initialized())

        # the probe sees MPI once something starts it
        Hp.init()
        self.assertTrue(MPI.Is_initialized())


if __name__ == "__main__":
    unittest.main(verbosity=2)
