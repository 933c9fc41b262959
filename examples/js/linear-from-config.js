// linear-from-config.js: a linear layer made from its configuration,
// in gjs
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Fills a Hp.LinearConfig (its fields are GObject properties), writes
// it as JSON and reads it back, builds the layer, initialises it from
// a seed and runs it; the output must equal x W^T + b.
//
//   GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/hp-protocols \
//     gjs -m examples/js/linear-from-config.js

import Hp from 'gi://Hp?version=1.0';
import System from 'system';

const config = Hp.LinearConfig.new(4, 2);
config.bias = true;
config.dtype = Hp.DType.FLOAT64;
config.param_init = Hp.ParamInit.new_from_string('weight=normal(std=0.5); bias=uniform(a=-0.1, b=0.1)');

// JSON round trip: every field is written, reading is strict
const json = config.to_json(true);
print(json);
const readBack = Hp.Config.new_from_json(Hp.LinearConfig.$gtype, json);
if (!readBack.equal(config))
    throw new Error('the JSON round trip changed the configuration');

// a field set by its path, as a command line would (--set out-features=3)
readBack.set_path_from_string('out-features', '3');
print(`out-features = ${readBack.get_path_as_string('out-features')}`);

const linear = readBack.build();
linear.init_states(42);

const x = Hp.Tensor.new_from_data(Hp.DType.FLOAT64, [1, 2, 3, 4, -1, 0, 1, 0.5], [2, 4]);
const y = linear.call1(x);
print(`y = ${y.to_string()}`);

// the same by hand: y[i][o] = b[o] + sum_k x[i][k] W[o][k]
const xv = x.to_float64_array();
const wv = linear.get_parameter('weight').to_float64_array();
const bv = linear.get_parameter('bias').to_float64_array();
const yv = y.to_float64_array();
let ok = JSON.stringify(y.get_shape()) === '[2,3]';
for (let i = 0; i < 2; i++) {
    for (let o = 0; o < 3; o++) {
        let expected = bv[o];
        for (let k = 0; k < 4; k++)
            expected += xv[i * 4 + k] * wv[o * 4 + k];
        ok = ok && Math.abs(yv[i * 3 + o] - expected) <= 1e-12;
    }
}
if (!ok) {
    printerr('linear-from-config.js: the output is not x W^T + b');
    System.exit(1);
}
