// test-tensor.js: smoke test of HpTensor from gjs (ESM), TAP output
//
// SPDX-License-Identifier: LGPL-2.1-or-later

import GLib from 'gi://GLib';
import Hp from 'gi://Hp?version=1.0';
import System from 'system';

let count = 0;
let failed = 0;

function check(name, condition) {
    count++;
    if (!condition)
        failed++;
    print(`${condition ? 'ok' : 'not ok'} ${count} ${name}`);
}

function close(a, b) {
    return a.length === b.length && a.every((v, i) => Math.abs(v - b[i]) <= 1e-12 * Math.max(1, Math.abs(b[i])));
}

const a = Hp.Tensor.new_from_data(Hp.DType.FLOAT64, [1, 2, 3, 4, 5, 6], [2, 3]);
const b = Hp.Tensor.new_from_data(Hp.DType.FLOAT64, [10, 20, 30], [3]);
check('broadcast add', close(a.add(b).to_float64_array(), [11, 22, 33, 14, 25, 36]));
check('shape', JSON.stringify(a.get_shape()) === '[2,3]');

const w = Hp.Tensor.new_from_data(Hp.DType.FLOAT64, [1, 0, -1, 2, 1, 0], [2, 3]);
w.requires_grad = true;
const y = a.linear(w, null);
check('linear', close(y.to_float64_array(), [-2, 4, -2, 13]));

const loss = y.sum_all();
loss.backward(null);
check('backward', close(w.get_grad().to_float64_array(), [5, 7, 9, 5, 7, 9]));

try {
    a.add(Hp.Tensor.new_zeros(Hp.DType.FLOAT64, [4]));
    check('shape error raised', false);
} catch (e) {
    check('shape error raised', e.matches(Hp.error_quark(), Hp.Error.SHAPE));
}

check('to_string', a.to_string().startsWith('tensor([[1., 2., 3.]'));
check('GLib bytes', a.get_bytes().get_size() === 48 && GLib.Bytes !== undefined);

print(`1..${count}`);
System.exit(failed > 0 ? 1 : 0);
