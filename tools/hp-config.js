// hp-config.js: hp-config on configuration classes defined in JavaScript
//
// SPDX-License-Identifier: LGPL-2.1-or-later
//
// gjs -m hp-config.js [--import FILE]... COMMAND ...
//
// The commands are those of hp-config (Hp.ConfigTool, in the library),
// with the same output and exit statuses; --import FILE (repeatable,
// before or after the command) imports an ES module first, whose
// configuration classes (GObject.registerClass subclasses of Hp.Config,
// named Gjs_ClassName unless they give a GTypeName) are then types like
// the others:
//
//   gjs -m hp-config.js --import ./models.js show Gjs_LinearConfig
//   gjs -m hp-config.js --import ./models.js new Gjs_LinearConfig -o linear.json
//
// --require NAMESPACE-VERSION loads the types of another introspected
// library, as for hp-config.

import GIRepository from 'gi://GIRepository?version=2.0';
import Gio from 'gi://Gio';
import GLib from 'gi://GLib';
import GObject from 'gi://GObject';
import Hp from 'gi://Hp?version=1.0';
import System from 'system';

const DESCRIPTION = `\
The configuration types are those of the Hp library, of the libraries loaded with
--require (their typelibs are looked for in GI_TYPELIB_PATH and in the system
typelib directory) and of the JavaScript modules imported with --import (a file
name, relative to the current directory, or a URI).
`;

// The options whose value is the next argument, as GOption reads them
const VALUED = new Set(['--set', '-s', '--output', '-o', '--require', '-r', '--import', '-i']);

// The values of --import in the command line, as the tool will read them.
// ES modules are imported asynchronously and the load function of the
// tool is called synchronously, so the modules are imported before the
// tool runs; the load function checks that they are those it got.
function importValues(args) {
    const values = [];
    for (let i = 0; i < args.length && args[i] !== '--'; i++) {
        if (args[i].startsWith('--import='))
            values.push(args[i].slice('--import='.length));
        else if ((args[i] === '--import' || args[i] === '-i') && i + 1 < args.length)
            values.push(args[++i]);
        else if (VALUED.has(args[i]))
            i++;
    }
    return values;
}

function error(code, message) {
    return new GLib.Error(Hp.error_quark(), code, message);
}

// The value of --import -> the error of its import, or null
const imported = new Map();

async function importModules(values) {
    for (const value of values) {
        try {
            // eslint-disable-next-line no-await-in-loop
            await import(Gio.File.new_for_commandline_arg(value).get_uri());
            imported.set(value, null);
        } catch (e) {
            imported.set(value, `--import ${value}: ${e.name}: ${e.message}`);
        }
    }
}

// The load function of --import: the modules were imported before
function checkImports(tool, values) {
    for (const value of values) {
        if (!imported.has(value))
            throw error(Hp.Error.INVALID_ARGUMENT, `--import ${value}: not imported before the command ran`);
        if (imported.get(value) !== null)
            throw error(Hp.Error.INVALID_ARGUMENT, imported.get(value));
    }
    return true;
}

function derivesFromConfig(info) {
    while (info !== null) {
        if (GIRepository.registered_type_info_get_type_name(info) === 'HpConfig')
            return true;
        info = GIRepository.object_info_get_parent(info);
        // a parent whose namespace is not loaded comes back unresolved
        if (info !== null && info.get_type() !== GIRepository.InfoType.OBJECT)
            info = null;
    }
    return false;
}

// The load function of --require: loads each NAMESPACE-VERSION and
// registers the configuration types of every loaded namespace (as
// hp-config does: getting the GType of an object info runs its get_type
// function)
function requireNamespaces(tool, values) {
    const split = values.map(value => {
        const dash = value.indexOf('-');
        if (dash <= 0 || dash === value.length - 1) {
            throw new GLib.Error(GLib.option_error_quark(), GLib.OptionError.BAD_VALUE,
                `--require: expected NAMESPACE-VERSION such as Hp-1.0, got '${value}'`);
        }
        return [value, value.slice(0, dash), value.slice(dash + 1)];
    });
    const repository = GIRepository.Repository.get_default();
    for (const [value, namespace, version] of split) {
        try {
            repository.require(namespace, version, 0);
        } catch (e) {
            // gjs cannot wrap the GITypelib that require() gives once it
            // has loaded it
            if (!repository.is_registered(namespace, version))
                throw error(Hp.Error.NOT_SUPPORTED, `--require ${value}: ${e.message}`);
        }
    }
    for (const namespace of repository.get_loaded_namespaces()) {
        for (let i = 0; i < repository.get_n_infos(namespace); i++) {
            const info = repository.get_info(namespace, i);
            if (info.get_type() !== GIRepository.InfoType.OBJECT || !derivesFromConfig(info))
                continue;
            if (GIRepository.registered_type_info_get_g_type(info) === GObject.TYPE_NONE) {
                const library = repository.get_shared_library(namespace) ?? 'its library';
                throw error(Hp.Error.NOT_SUPPORTED,
                    `${namespace}.${info.get_name()}: the type cannot be registered (does ${library} load?)`);
            }
        }
    }
    return true;
}

const tool = new Hp.ConfigTool({description: DESCRIPTION});
tool.add_load_option('import', 'i'.charCodeAt(0),
    'Import the JavaScript module FILE for its configuration classes (repeatable)', 'FILE',
    checkImports);
tool.add_load_option('require', 'r'.charCodeAt(0),
    'Load the typelib of another library for its configuration types (repeatable)',
    'NAMESPACE-VERSION', requireNamespaces);
await importModules(importValues(ARGV));
System.exit(tool.run(ARGV));
