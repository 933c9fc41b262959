/* linear-from-config.vala: a linear layer made from its configuration,
 * in Vala, against the hp-protocols-1.0 VAPI
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Fills a Hp.LinearConfig (its fields are GObject properties), writes
 * it as JSON and reads it back, builds the layer, initialises it from a
 * seed and runs it; the output must equal x W^T + b.
 *
 *   valac --pkg hp-protocols-1.0 linear-from-config.vala
 */

int main () {
    try {
        var config = new Hp.LinearConfig (4, 2);
        config.bias = true;
        config.dtype = Hp.DType.FLOAT64;
        config.param_init = new Hp.ParamInit.from_string ("weight=normal(std=0.5); bias=uniform(a=-0.1, b=0.1)");

        /* JSON round trip: every field is written, reading is strict */
        var json = config.to_json (true);
        print ("%s\n", json);
        var read_back = Hp.Config.from_json (typeof (Hp.LinearConfig), json);
        if (!read_back.equal (config)) {
            printerr ("linear-from-config: the JSON round trip changed the configuration\n");
            return 1;
        }

        /* a field set by its path, as a command line would (--set out-features=3) */
        read_back.set_path_from_string ("out-features", "3");
        print ("out-features = %s\n", read_back.get_path_as_string ("out-features"));

        var linear = (Hp.Linear) read_back.build ();
        linear.init_states (42);

        var x = new Hp.Tensor.from_data (Hp.DType.FLOAT64, { 1, 2, 3, 4, -1, 0, 1, 0.5 }, { 2, 4 });
        var y = linear.call1 (x);
        print ("y = %s\n", y.to_string ());

        /* the same by hand: y[i, o] = b[o] + sum_k x[i, k] W[o, k] */
        var xv = x.to_float64_array ();
        var wv = linear.get_parameter ("weight").to_float64_array ();
        var bv = linear.get_parameter ("bias").to_float64_array ();
        var yv = y.to_float64_array ();
        if (yv.length != 6) {
            printerr ("linear-from-config: expected 2 x 3 outputs, got %d\n", yv.length);
            return 1;
        }
        for (int i = 0; i < 2; i++) {
            for (int o = 0; o < 3; o++) {
                double expected = bv[o];
                for (int k = 0; k < 4; k++)
                    expected += xv[i * 4 + k] * wv[o * 4 + k];
                if (Math.fabs (yv[i * 3 + o] - expected) > 1e-12) {
                    printerr ("linear-from-config: the output is not x W^T + b\n");
                    return 1;
                }
            }
        }
    } catch (Error e) {
        printerr ("linear-from-config: %s\n", e.message);
        return 1;
    }
    return 0;
}
