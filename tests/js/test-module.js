// test-module.js: a Linear built from its configuration in gjs (ESM),
// its JSON round trip and signals, and its tensor-parallel forward
// against an unparallelized copy; runs alone and under mpirun. Rank 0
// prints TAP; failures on other ranks go to stderr, and every rank exits
// non-zero on a failure.
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import Hp from 'gi://Hp?version=1.0';
import System from 'system';

Hp.init();
const rank = Hp.get_world_rank();
const world = Hp.get_world_size();

let count = 0;
let failed = 0;

function check(name, condition) {
    count++;
    if (!condition)
        failed++;
    if (rank === 0)
        print(`${condition ? 'ok' : 'not ok'} ${count} ${name}`);
    else if (!condition)
        printerr(`rank ${rank}: not ok ${count} ${name}`);
}

function close(a, b, tolerance) {
    return a.length === b.length &&
        a.every((v, i) => Math.abs(v - b[i]) <= tolerance * Math.max(1, Math.abs(b[i])));
}

function throwsHp(code, func) {
    try {
        func();
    } catch (e) {
        return e.matches(Hp.error_quark(), code);
    }
    return false;
}

// HpLinearConfig -> hp_config_build()
const config = new Hp.LinearConfig({
    in_features: 6,
    out_features: 4,
    bias: true,
    dtype: Hp.DType.FLOAT64,
    param_init: Hp.ParamInit.new_from_string('weight=normal(std=0.5); bias=uniform(a=-1, b=1)'),
});
let built = 0;
config.connect('built', (_config, instance) => {
    if (instance instanceof Hp.Linear)
        built++;
});
const reference = config.build();
check('config.build() makes an HpLinear', reference instanceof Hp.Linear);
check('"built" emitted once', built === 1);
check('the module keeps a copy of the config',
    reference.config !== config && reference.config.equal(config));

// the typed accessors made of the field table agree with the properties
const sized = new Hp.GQAttentionConfig({dim: 8, n_heads: 2});
sized.set_n_kv_heads(1);
const query = new Hp.LinearConfig({in_features: 8, out_features: 8});
sized.set_wq(query);
check('typed accessors', sized.get_dim() === 8 && sized.n_kv_heads === 1 &&
    sized.get_wq() === query && sized.wq === query);
sized.set_wq(null);
check('a nullable object setter', sized.get_wq() === null);

// JSON round trip
const text = config.to_json(false);
const fields = JSON.parse(text);
check('JSON fields', fields['in-features'] === 6 && fields['out-features'] === 4 && fields.bias === true &&
    fields.dtype === 'float64' && fields['param-init'].bias === 'uniform(a=-1, b=1)');
const back = Hp.Config.new_from_json(Hp.LinearConfig.$gtype, text);
check('JSON reads back an equal config', back instanceof Hp.LinearConfig && back.equal(config));
check('JSON rejects an unknown field',
    throwsHp(Hp.Error.CONFIG,
        () => Hp.Config.new_from_json(Hp.LinearConfig.$gtype, '{"in_features": 6, "gain": 2}')));

// the same layer, column-parallel over a mesh of every rank
const parallelConfig = config.copy();
parallelConfig.sharding_config = Hp.sharding_colwise_with_bias();
const parallel = parallelConfig.build();
check('a second "built" on the copy only', built === 1);
let forwards = 0;
let parallelized = 0;
parallel.connect('forward-pre', (_module, args) => {
    if (args.length === 1)
        forwards++;
});
parallel.connect('parallelized', (_module, mesh) => {
    if (mesh.get_size() === world)
        parallelized++;
});
const mesh = Hp.DeviceMesh.new([world], ['tp']);
check('parallelize', parallel.parallelize(mesh));
check('"parallelized" emitted once', parallelized === 1);
check('parallelize twice is an error', throwsHp(Hp.Error.STATE, () => parallel.parallelize(mesh)));
const weight = parallel.get_parameter('weight');
check('the weight is a DTensor sharded by rows',
    weight instanceof Hp.DTensor && Hp.placements_to_string(weight.get_placements()) === '(S(0))');

check('init_states', reference.init_states(3) && parallel.init_states(3));
check('same weights', close(weight.full_tensor().to_float64_array(),
    reference.get_parameter('weight').to_float64_array(), 0));

const data = Array.from({length: 18}, (_, i) => ((i * 7) % 11 - 5) / 4);
const x = Hp.Tensor.new_from_data(Hp.DType.FLOAT64, data, [3, 6]);
const expected = reference.call1(x);
const y = parallel.call1(x);
check('"forward-pre" emitted once', forwards === 1);
check('the output is sharded by columns',
    y instanceof Hp.DTensor && Hp.placements_to_string(y.get_placements()) === '(S(1))');
check('output shape', JSON.stringify(y.get_shape()) === '[3,4]');
check('parallel forward equals one rank',
    close(y.full_tensor().to_float64_array(), expected.to_float64_array(), 1e-12));

print(`${rank === 0 ? '' : '# '}1..${count}`);
System.exit(failed > 0 ? 1 : 0);
