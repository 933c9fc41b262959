// crosslang-model.js: the model of the cross-language test, in gjs
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// The classes of crosslang-model.c written as GObject.registerClass
// subclasses: config fields as Properties (nested configurations get a
// new default instance in the constructor), vfunc_setup returning true,
// vfunc_forward, vfunc_validate, forward argument names set with
// Hp.Module.type_set_forward_arg_names.
//
//   gjs -m crosslang-model.js DOCUMENT OUTPUT LAYOUT

import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Hp from 'gi://Hp?version=1.0';
import System from 'system';

const RW = GObject.ParamFlags.READWRITE;
const MAXINT = GLib.MAXINT32;

function intField(name, blurb, minimum, maximum, value) {
    return GObject.ParamSpec.int(name, '', blurb, RW, minimum, maximum, value);
}

function boolField(name, blurb, value) {
    return GObject.ParamSpec.boolean(name, '', blurb, RW, value);
}

function configField(name, blurb, configClass) {
    return GObject.ParamSpec.object(name, '', blurb, RW, configClass.$gtype);
}

// A configuration whose nested configurations each get a new default
// instance, as the default types of a C field table give them
function withDefaults(config, defaults) {
    for (const [name, configClass] of Object.entries(defaults)) {
        if (config[name] === null)
            config[name] = new configClass();
    }
}

function buildChild(module, name, config) {
    module.add_child(name, config.build());
}

// Linear: y = x W^T + b, W of shape [out-features, in-features]

const LinearConfig = GObject.registerClass({
    GTypeName: 'JsXlLinearConfig',
    Properties: {
        'in-features': intField('in-features', 'Input features', 1, MAXINT, 1),
        'out-features': intField('out-features', 'Output features', 1, MAXINT, 1),
        'bias': boolField('bias', 'Whether there is a bias', false),
    },
}, class LinearConfig extends Hp.ModuleConfig {});

const Linear = GObject.registerClass({
    GTypeName: 'JsXlLinear',
}, class Linear extends Hp.Module {
    vfunc_setup() {
        super.vfunc_setup();
        const config = this.config;
        this.register_parameter('weight',
            Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [config.out_features, config.in_features]));
        if (config.bias)
            this.register_parameter('bias', Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [config.out_features]));
        return true;
    }

    vfunc_forward(args) {
        return [args[0].linear(this.get_parameter('weight'), this.get_parameter('bias'))];
    }
});

// MLP: w2 (act (w1 x))

const MLPConfig = GObject.registerClass({
    GTypeName: 'JsXlMLPConfig',
    Properties: {
        'activation': GObject.ParamSpec.string('activation', '', 'silu or gelu', RW, 'silu'),
        'w1': configField('w1', 'The first layer (column-wise)', LinearConfig),
        'w2': configField('w2', 'The second layer (row-wise)', LinearConfig),
    },
}, class MLPConfig extends Hp.ModuleConfig {
    constructor(properties = {}) {
        super(properties);
        withDefaults(this, {w1: LinearConfig, w2: LinearConfig});
    }

    vfunc_validate() {
        super.vfunc_validate();
        if (this.activation !== 'silu' && this.activation !== 'gelu')
            throw new GLib.Error(Hp.error_quark(), Hp.Error.CONFIG, `unknown activation '${this.activation}'`);
        return true;
    }
});

const MLP = GObject.registerClass({
    GTypeName: 'JsXlMLP',
}, class MLP extends Hp.Module {
    vfunc_setup() {
        super.vfunc_setup();
        const config = this.config;
        this._activation = config.activation;
        buildChild(this, 'w1', config.w1);
        buildChild(this, 'w2', config.w2);
        return true;
    }

    vfunc_forward(args) {
        const hidden = this.get_child('w1').call1(args[0]);
        const activated = this._activation === 'gelu' ? hidden.gelu() : hidden.silu();
        return [this.get_child('w2').call1(activated)];
    }
});

// Attention: wo (inner_attention (heads (wq x), heads (wk x), heads (wv x)))

const AttentionConfig = GObject.registerClass({
    GTypeName: 'JsXlAttentionConfig',
    Properties: {
        'n-heads': intField('n-heads', 'Attention heads', 1, MAXINT, 1),
        'causal': boolField('causal', 'Whether a query sees only earlier keys', true),
        'wq': configField('wq', 'The query projection', LinearConfig),
        'wk': configField('wk', 'The key projection', LinearConfig),
        'wv': configField('wv', 'The value projection', LinearConfig),
        'wo': configField('wo', 'The output projection', LinearConfig),
    },
}, class AttentionConfig extends Hp.ModuleConfig {
    constructor(properties = {}) {
        super(properties);
        withDefaults(this, {wq: LinearConfig, wk: LinearConfig, wv: LinearConfig, wo: LinearConfig});
    }
});

// [B, S, H * D] -> [B, H, S, D]
function splitHeads(x, nHeads) {
    const [b, s, width] = x.get_shape();
    return x.reshape([b, s, nHeads, width / nHeads]).transpose(1, 2);
}

// [B, H, S, D] -> [B, S, H * D]
function mergeHeads(x) {
    const swapped = x.transpose(1, 2);
    const [b, s, h, d] = swapped.get_shape();
    return swapped.reshape([b, s, h * d]);
}

const Attention = GObject.registerClass({
    GTypeName: 'JsXlAttention',
}, class Attention extends Hp.Module {
    vfunc_setup() {
        super.vfunc_setup();
        const config = this.config;
        this._nHeads = config.n_heads;
        if (config.wq.out_features % this._nHeads !== 0) {
            throw new GLib.Error(Hp.error_quark(), Hp.Error.CONFIG,
                `${this._nHeads} heads do not divide ${config.wq.out_features} features`);
        }
        this._causal = config.causal;
        // what _innerAttention was last given
        this._seenHeads = 0;
        this._seenDTensor = false;
        this.register_callable('inner_attention', (module, args) => module._innerAttention(args));
        for (const name of ['wq', 'wk', 'wv', 'wo'])
            buildChild(this, name, config[name]);
        return true;
    }

    // q, k, v [B, H, S, D] to the attention output, on whichever heads
    // it is given
    _innerAttention([q, k, v]) {
        this._seenHeads = q.get_shape()[1];
        this._seenDTensor = q instanceof Hp.DTensor;
        return [q.scaled_dot_product_attention(k, v, null, this._causal, 0.0)];
    }

    vfunc_forward(args) {
        const x = args[0];
        const heads = ['wq', 'wk', 'wv'].map(name => splitHeads(this.get_child(name).call1(x), this._nHeads));
        const [attended] = this.run_callable('inner_attention', heads);
        return [this.get_child('wo').call1(mergeHeads(attended))];
    }
});

// Model: h = x + attention (x); h = h + mlp (h); loss = mean ((head (h) - target)^2)

const ModelConfig = GObject.registerClass({
    GTypeName: 'JsXlModelConfig',
    Properties: {
        'attention': configField('attention', 'The attention block', AttentionConfig),
        'mlp': configField('mlp', 'The MLP', MLPConfig),
        'head': configField('head', 'The output layer', LinearConfig),
    },
}, class ModelConfig extends Hp.ModuleConfig {
    constructor(properties = {}) {
        super(properties);
        withDefaults(this, {attention: AttentionConfig, mlp: MLPConfig, head: LinearConfig});
    }
});

const Model = GObject.registerClass({
    GTypeName: 'JsXlModel',
}, class Model extends Hp.Module {
    vfunc_setup() {
        super.vfunc_setup();
        for (const name of ['attention', 'mlp', 'head'])
            buildChild(this, name, this.config[name]);
        return true;
    }

    vfunc_forward([x, target]) {
        let h = x.add(this.get_child('attention').call1(x));
        h = h.add(this.get_child('mlp').call1(h));
        const diff = this.get_child('head').call1(h).sub(target);
        return [diff.mul(diff).mean_all()];
    }
});

for (const [configClass, moduleClass, argNames] of [[LinearConfig, Linear, ['x']],
    [MLPConfig, MLP, ['x']],
    [AttentionConfig, Attention, ['x']],
    [ModelConfig, Model, ['x', 'target']]]) {
    Hp.Config.register_owner(configClass.$gtype, moduleClass.$gtype);
    Hp.Module.type_set_forward_arg_names(moduleClass.$gtype, argNames);
}

// The training step, the same in every language

// x[b, s, d] or target[b, s, c] of batch rows [first, first + rows)
function batchTensor(target, first, rows, seqLen, width) {
    const data = [];
    for (let b = first; b < first + rows; b++) {
        for (let s = 0; s < seqLen; s++) {
            for (let d = 0; d < width; d++)
                data.push(target ? ((b * 3 + s * 2 + d * 5) % 7 - 3) / 2 : ((b * 7 + s * 5 + d * 3) % 11 - 5) / 4);
        }
    }
    return Hp.Tensor.new_from_data(Hp.DType.FLOAT64, data, [rows, seqLen, width]);
}

function full(tensor) {
    return tensor instanceof Hp.DTensor ? tensor.full_tensor() : tensor;
}

// 17 significant digits: reads back as the same double
function exact(value) {
    return value.toPrecision(17);
}

function placements(tensor) {
    return tensor instanceof Hp.DTensor ? Hp.placements_to_string(tensor.get_placements()) : 'plain';
}

function values(kind, name, tensor) {
    return `${kind} ${name} ${Array.from(full(tensor).to_float64_array(), exact).join(' ')}\n`;
}

function main([documentPath, outputPath, layout]) {
    Hp.init();
    const [, bytes] = GLib.file_get_contents(documentPath);
    const document = JSON.parse(new TextDecoder().decode(bytes));
    const modelConfig = Hp.Config.new_from_json(ModelConfig.$gtype, JSON.stringify(document.model));
    const optimizerConfig = Hp.Config.new_from_json(Hp.OptimizerConfig.$gtype, JSON.stringify(document.optimizer));
    const model = modelConfig.build();

    const world = Hp.get_world_size();
    let tpMesh = null;
    let dpMesh = null;
    if (layout === 'tp') {
        tpMesh = Hp.DeviceMesh.new([world], ['tp']);
    } else if (layout === 'dp,tp') {
        const mesh = Hp.DeviceMesh.new([2, world / 2], ['dp', 'tp']);
        tpMesh = mesh.slice(['tp']);
        dpMesh = mesh.slice(['dp']);
    } else if (layout !== 'none') {
        throw new Error(`unknown layout '${layout}'`);
    }
    if (tpMesh !== null)
        model.parallelize(tpMesh);
    model.init_states(document.seed);

    const batch = document.batch;
    const seqLen = document['seq-len'];
    let rows = batch;
    let first = 0;
    if (dpMesh !== null) {
        rows = batch / dpMesh.get_size();
        first = rows * dpMesh.get_local_rank(0);
    }
    const x = batchTensor(false, first, rows, seqLen, modelConfig.attention.wq.in_features);
    const target = batchTensor(true, first, rows, seqLen, modelConfig.head.out_features);

    const parameters = model.parameters();
    const optimizer = optimizerConfig.build_optimizer(parameters);
    const [loss] = model.call([x, target]);
    loss.backward(null);
    let lossValue = full(loss).item();
    if (dpMesh !== null) {
        Hp.data_parallel_average_gradients(parameters, dpMesh);
        [, lossValue] = Hp.data_parallel_average_scalar(dpMesh, lossValue);
    }
    optimizer.step();

    const attention = model.get_child('attention');
    let text = `config ${model.config.to_json(false)}\n`;
    text += `loss ${exact(lossValue)}\n`;
    text += `mapped ${model.callable_is_local_mapped('attention.inner_attention') ? 1 : 0}\n`;
    text += `callable-heads ${attention._seenHeads}\ncallable-dtensor ${attention._seenDTensor ? 1 : 0}\n`;
    const named = model.named_parameters();
    for (let i = 0; i < named.get_size(); i++) {
        const name = named.get_name(i);
        const parameter = named.get_tensor(i);
        text += `placement ${name} ${placements(parameter)} ${placements(parameter.get_grad())}\n`;
        text += values('param', name, parameter);
        text += values('grad', name, parameter.get_grad());
    }
    if (Hp.get_world_rank() === 0)
        GLib.file_set_contents(outputPath, text);
}

if (ARGV.length !== 3) {
    printerr('usage: gjs -m crosslang-model.js DOCUMENT OUTPUT none|tp|dp,tp');
    System.exit(2);
}
try {
    main(ARGV);
} catch (e) {
    printerr(`rank ${Hp.get_world_rank()}: ${e.message}`);
    System.exit(1);
}
