/* test-module.vala: a Linear built from its configuration in Vala, its
 * JSON round trip and signals, its tensor-parallel forward against an
 * unparallelized copy, and a module written in Vala whose forward runs
 * its registered callable; runs alone and under mpirun (every rank runs
 * every test)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

static bool all_close (double[] got, double[] want, double tolerance) {
    if (got.length != want.length)
        return false;
    for (int i = 0; i < got.length; i++) {
        if (Math.fabs (got[i] - want[i]) > tolerance * double.max (1.0, Math.fabs (want[i])))
            return false;
    }
    return true;
}

static Hp.LinearConfig linear_config () throws Error {
    var config = new Hp.LinearConfig (6, 4);
    config.bias = true;
    config.dtype = Hp.DType.FLOAT64;
    config.param_init = new Hp.ParamInit.from_string ("weight=normal(std=0.5); bias=uniform(a=-1, b=1)");
    return config;
}

static void test_build_and_json () {
    try {
        var config = linear_config ();
        int built = 0;
        config.built.connect ((instance) => {
            if (instance is Hp.Linear)
                built++;
        });
        var linear = config.build () as Hp.Linear;
        assert (linear != null);
        assert (built == 1);
        assert (linear.get_parameter ("weight").get_shape ().length == 2);
        assert (((Hp.LinearConfig) linear.config).equal (config));

        var text = config.to_json (false);
        var parser = new Json.Parser ();
        parser.load_from_data (text);
        var fields = parser.get_root ().get_object ();
        assert (fields.get_int_member ("in-features") == 6);
        assert (fields.get_string_member ("dtype") == "float64");
        var back = Hp.Config.from_json (typeof (Hp.LinearConfig), text);
        assert (back is Hp.LinearConfig);
        assert (back.equal (config));
        assert (((Hp.LinearConfig) back).out_features == 4);
    } catch (Error e) {
        error ("unexpected error: %s", e.message);
    }
}

static void test_accessors () {
    // the typed accessors made of the field table agree with the properties
    var config = new Hp.GQAttentionConfig ();
    config.set_dim (8);
    config.set_n_heads (2);
    config.set_n_kv_heads (1);
    var query = new Hp.LinearConfig (8, 8);
    config.set_wq (query);
    assert (config.dim == 8 && config.get_n_heads () == 2 && config.n_kv_heads == 1);
    assert (config.get_wq () == query && config.wq == query);
    config.set_wq (null);
    assert (config.get_wq () == null);
}

static void test_json_error () {
    try {
        Hp.Config.from_json (typeof (Hp.LinearConfig), "{\"in_features\": 0}");
        assert_not_reached ();
    } catch (Hp.Error.CONFIG e) {
        assert ("out of range" in e.message);
    } catch (Error e) {
        error ("wrong error: %s", e.message);
    }
}

static void test_parallel_forward () {
    try {
        int world = Hp.get_world_size ();
        var config = linear_config ();
        var reference = config.build () as Hp.Module;
        var parallel_config = (Hp.LinearConfig) config.copy ();
        parallel_config.sharding_config = Hp.sharding_colwise_with_bias ();
        var parallel = parallel_config.build () as Hp.Module;

        int forwards = 0;
        int parallelized = 0;
        parallel.forward_pre.connect ((args) => {
            if (args.length == 1)
                forwards++;
        });
        parallel.parallelized.connect ((mesh) => {
            if (mesh.get_size () == world)
                parallelized++;
        });
        var mesh = new Hp.DeviceMesh ({ world }, { "tp" });
        assert (parallel.parallelize (mesh));
        assert (parallelized == 1);
        var weight = parallel.get_parameter ("weight") as Hp.DTensor;
        assert (weight != null);
        assert (Hp.placements_to_string (weight.get_placements ()) == "(S(0))");

        assert (reference.init_states (3));
        assert (parallel.init_states (3));
        assert (all_close (weight.full_tensor ().to_float64_array (),
                           reference.get_parameter ("weight").to_float64_array (), 0));

        var data = new double[18];
        for (int i = 0; i < 18; i++)
            data[i] = ((i * 7) % 11 - 5) / 4.0;
        var x = new Hp.Tensor.from_data (Hp.DType.FLOAT64, data, { 3, 6 });
        var expected = reference.call1 (x);
        var args = new GenericArray<Hp.Tensor?> ();
        args.add (x);
        var outputs = parallel.call (args);
        assert (forwards == 1);
        assert (outputs.length == 1);
        var y = outputs[0] as Hp.DTensor;
        assert (y != null);
        assert (Hp.placements_to_string (y.get_placements ()) == "(S(1))");
        assert (all_close (y.full_tensor ().to_float64_array (), expected.to_float64_array (), 1e-12));
        assert (parallel.parameters ().length == 2);
    } catch (Error e) {
        error ("unexpected error: %s", e.message);
    }
}

/* A module whose forward is its registered callable: run_callable takes
 * the forward arguments and its outputs are the forward's */
public class ValaTestSoftmaxConfig : Hp.ModuleConfig {
    static construct {
        Hp.Config.register_owner (typeof (ValaTestSoftmaxConfig), typeof (ValaTestSoftmax));
    }
}

public class ValaTestSoftmax : Hp.Module {
    public int calls = 0;

    public override bool setup () throws Error {
        base.setup ();
        register_callable ("inner", (module, args) => {
            ((ValaTestSoftmax) module).calls++;
            var outputs = new GenericArray<Hp.Tensor?> ();
            outputs.add (args[0].softmax (-1));
            return outputs;
        });
        return true;
    }

    public override GenericArray<Hp.Tensor?> forward (GenericArray<Hp.Tensor?> args) throws Error {
        return run_callable ("inner", args);
    }
}

static void test_run_callable () {
    try {
        var module = (ValaTestSoftmax) new ValaTestSoftmaxConfig ().build ();
        var x = new Hp.Tensor.from_data (Hp.DType.FLOAT64, { 0.0, Math.log (3.0) }, { 1, 2 });
        var args = new GenericArray<Hp.Tensor?> ();
        args.add (x);
        var outputs = module.call (args);
        assert (module.calls == 1);
        assert (outputs.length == 1);
        assert (all_close (outputs[0].to_float64_array (), { 0.25, 0.75 }, 1e-15));
        outputs = module.run_callable ("inner", args);
        assert (module.calls == 2);
        assert (all_close (outputs[0].to_float64_array (), { 0.25, 0.75 }, 1e-15));
    } catch (Error e) {
        error ("unexpected error: %s", e.message);
    }
}

static void test_parallelize_twice () {
    try {
        var parallel_config = linear_config ();
        parallel_config.sharding_config = Hp.sharding_colwise ();
        var parallel = parallel_config.build () as Hp.Module;
        var mesh = new Hp.DeviceMesh ({ Hp.get_world_size () }, { "tp" });
        parallel.parallelize (mesh);
        parallel.parallelize (mesh);
        assert_not_reached ();
    } catch (Hp.Error.STATE e) {
        assert ("already been parallelized" in e.message);
    } catch (Error e) {
        error ("wrong error: %s", e.message);
    }
}

public static int main (string[] args) {
    Test.init (ref args);
    try {
        Hp.init ();
    } catch (Error e) {
        error ("hp_init: %s", e.message);
    }
    Test.add_func ("/vala/module/accessors", test_accessors);
    Test.add_func ("/vala/module/build-and-json", test_build_and_json);
    Test.add_func ("/vala/module/json-error", test_json_error);
    Test.add_func ("/vala/module/parallel-forward", test_parallel_forward);
    Test.add_func ("/vala/module/parallelize-twice", test_parallelize_twice);
    Test.add_func ("/vala/module/run-callable", test_run_callable);
    return Test.run ();
}
