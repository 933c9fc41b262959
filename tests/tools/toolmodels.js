// toolmodels.js: configuration classes defined in JavaScript, for the gjs
// route of the tools suite (gjs -m hp-config.js --import toolmodels.js)
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// ToolConfig (Gjs_ToolConfig) is the twin of the C class HpToolTestConfig
// (hp-tool-test-config.c) and of the Python class toolmodels+Tool+Config
// (toolmodels.py): the same fields, defaults, ranges, descriptions and
// checks. The fields are declared with Hp.Config.type_add_field and read
// with Hp.Config.get_value, the public way of any binding.

import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Hp from 'gi://Hp?version=1.0';

export const ToolConfig = GObject.registerClass(class ToolConfig extends Hp.Config {
    vfunc_validate() {
        // gjs gives the boolean that (skip) leaves out too
        const [, size] = this.get_value('size');
        const [, scale] = this.get_value('scale');
        if (size * scale > 50) {
            throw new GLib.Error(Hp.error_quark(), Hp.Error.CONFIG,
                `size * scale is ${size * scale}, more than 50`);
        }
        return true;
    }
});

Hp.Config.type_add_field(ToolConfig.$gtype, 'size', GObject.TYPE_INT, 3, 1, 100, 'Number of widgets');
Hp.Config.type_add_field(ToolConfig.$gtype, 'scale', GObject.TYPE_DOUBLE, 0.5, 0, 1, 'Widget scale');
Hp.Config.type_add_field(ToolConfig.$gtype, 'label', GObject.TYPE_STRING, 'toy', null, null,
    'Widget label');
Hp.Config.type_add_field(ToolConfig.$gtype, 'linear', Hp.LinearConfig.$gtype, null, null, null,
    'Widget projection');
