/* crosslang-model.vala: the model of the cross-language test, in Vala
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The classes of crosslang-model.c written in Vala: config fields as
 * native properties (nested configurations with a new default instance
 * each), override setup, forward and validate, forward argument names
 * set in static construct blocks.
 *
 *   crosslang-model-vala DOCUMENT OUTPUT LAYOUT
 */

namespace ValaXl {

/* the one output @tensor */
static GenericArray<Hp.Tensor?> single_output (Hp.Tensor tensor) {
    var outputs = new GenericArray<Hp.Tensor?> ();
    outputs.add (tensor);
    return outputs;
}

static void build_child (Hp.Module module, string name, Hp.Config config) throws Error {
    module.add_child (name, (Hp.Module) config.build ());
}

/* Linear: y = x W^T + b, W of shape [out-features, in-features] */

public class LinearConfig : Hp.ModuleConfig {
    [Description (blurb = "Input features")]
    public int in_features { get; set; default = 1; }
    [Description (blurb = "Output features")]
    public int out_features { get; set; default = 1; }
    [Description (blurb = "Whether there is a bias")]
    public bool bias { get; set; default = false; }

    static construct {
        Hp.Config.register_owner (typeof (LinearConfig), typeof (Linear));
    }
}

public class Linear : Hp.Module {
    static construct {
        Hp.Module.type_set_forward_arg_names (typeof (Linear), { "x" });
    }

    public override bool setup () throws Error {
        base.setup ();
        var config = (LinearConfig) this.config;
        register_parameter ("weight", new Hp.Tensor.zeros (Hp.DType.FLOAT64,
                                                          { config.out_features, config.in_features }));
        if (config.bias)
            register_parameter ("bias", new Hp.Tensor.zeros (Hp.DType.FLOAT64, { config.out_features }));
        return true;
    }

    public override GenericArray<Hp.Tensor?> forward (GenericArray<Hp.Tensor?> args) throws Error {
        return single_output (args[0].linear (get_parameter ("weight"), get_parameter ("bias")));
    }
}

/* MLP: w2 (act (w1 x)) */

public class MLPConfig : Hp.ModuleConfig {
    [Description (blurb = "silu or gelu")]
    public string activation { get; set; default = "silu"; }
    [Description (blurb = "The first layer (column-wise)")]
    public LinearConfig w1 { get; set; default = new LinearConfig (); }
    [Description (blurb = "The second layer (row-wise)")]
    public LinearConfig w2 { get; set; default = new LinearConfig (); }

    static construct {
        Hp.Config.register_owner (typeof (MLPConfig), typeof (MLP));
    }

    public override bool validate () throws Error {
        base.validate ();
        if (activation != "silu" && activation != "gelu")
            throw new Hp.Error.CONFIG ("unknown activation '%s'", activation);
        return true;
    }
}

public class MLP : Hp.Module {
    private bool gelu;

    static construct {
        Hp.Module.type_set_forward_arg_names (typeof (MLP), { "x" });
    }

    public override bool setup () throws Error {
        base.setup ();
        var config = (MLPConfig) this.config;
        gelu = config.activation == "gelu";
        build_child (this, "w1", config.w1);
        build_child (this, "w2", config.w2);
        return true;
    }

    public override GenericArray<Hp.Tensor?> forward (GenericArray<Hp.Tensor?> args) throws Error {
        var hidden = get_child ("w1").call1 (args[0]);
        var activated = gelu ? hidden.gelu () : hidden.silu ();
        return single_output (get_child ("w2").call1 (activated));
    }
}

/* Attention: wo (inner_attention (heads (wq x), heads (wk x), heads (wv x))) */

public class AttentionConfig : Hp.ModuleConfig {
    [Description (blurb = "Attention heads")]
    public int n_heads { get; set; default = 1; }
    [Description (blurb = "Whether a query sees only earlier keys")]
    public bool causal { get; set; default = true; }
    [Description (blurb = "The query projection")]
    public LinearConfig wq { get; set; default = new LinearConfig (); }
    [Description (blurb = "The key projection")]
    public LinearConfig wk { get; set; default = new LinearConfig (); }
    [Description (blurb = "The value projection")]
    public LinearConfig wv { get; set; default = new LinearConfig (); }
    [Description (blurb = "The output projection")]
    public LinearConfig wo { get; set; default = new LinearConfig (); }

    static construct {
        Hp.Config.register_owner (typeof (AttentionConfig), typeof (Attention));
    }
}

/* [B, S, H * D] -> [B, H, S, D] */
static Hp.Tensor split_heads (Hp.Tensor x, int n_heads) throws Error {
    var shape = x.get_shape ();
    return x.reshape ({ shape[0], shape[1], n_heads, shape[2] / n_heads }).transpose (1, 2);
}

/* [B, H, S, D] -> [B, S, H * D] */
static Hp.Tensor merge_heads (Hp.Tensor x) throws Error {
    var swapped = x.transpose (1, 2);
    var shape = swapped.get_shape ();
    return swapped.reshape ({ shape[0], shape[1], shape[2] * shape[3] });
}

public class Attention : Hp.Module {
    private int n_heads;
    private bool causal;
    /* what inner_attention was last given */
    public int64 seen_heads = 0;
    public bool seen_dtensor = false;

    static construct {
        Hp.Module.type_set_forward_arg_names (typeof (Attention), { "x" });
    }

    public override bool setup () throws Error {
        base.setup ();
        var config = (AttentionConfig) this.config;
        n_heads = config.n_heads;
        if (config.wq.out_features % n_heads != 0)
            throw new Hp.Error.CONFIG ("%d heads do not divide %d features", n_heads, config.wq.out_features);
        causal = config.causal;
        /* the callable is given the module: a delegate that captured
         * this would keep the module alive through the module */
        register_callable ("inner_attention", (module, args) => ((Attention) module).inner_attention (args));
        build_child (this, "wq", config.wq);
        build_child (this, "wk", config.wk);
        build_child (this, "wv", config.wv);
        build_child (this, "wo", config.wo);
        return true;
    }

    /* q, k, v [B, H, S, D] to the attention output, on whichever heads
     * it is given */
    private GenericArray<Hp.Tensor?> inner_attention (GenericArray<Hp.Tensor?> args) throws Error {
        seen_heads = args[0].get_shape ()[1];
        seen_dtensor = args[0] is Hp.DTensor;
        return single_output (args[0].scaled_dot_product_attention (args[1], args[2], null, causal, 0.0));
    }

    public override GenericArray<Hp.Tensor?> forward (GenericArray<Hp.Tensor?> args) throws Error {
        var heads = new GenericArray<Hp.Tensor?> ();
        foreach (var name in new string[] { "wq", "wk", "wv" })
            heads.add (split_heads (get_child (name).call1 (args[0]), n_heads));
        var attended = run_callable ("inner_attention", heads);
        return single_output (get_child ("wo").call1 (merge_heads (attended[0])));
    }
}

/* Model: h = x + attention (x); h = h + mlp (h); loss = mean ((head (h) - target)^2) */

public class ModelConfig : Hp.ModuleConfig {
    [Description (blurb = "The attention block")]
    public AttentionConfig attention { get; set; default = new AttentionConfig (); }
    [Description (blurb = "The MLP")]
    public MLPConfig mlp { get; set; default = new MLPConfig (); }
    [Description (blurb = "The output layer")]
    public LinearConfig head { get; set; default = new LinearConfig (); }

    static construct {
        Hp.Config.register_owner (typeof (ModelConfig), typeof (Model));
    }
}

public class Model : Hp.Module {
    static construct {
        Hp.Module.type_set_forward_arg_names (typeof (Model), { "x", "target" });
    }

    public override bool setup () throws Error {
        base.setup ();
        var config = (ModelConfig) this.config;
        build_child (this, "attention", config.attention);
        build_child (this, "mlp", config.mlp);
        build_child (this, "head", config.head);
        return true;
    }

    public override GenericArray<Hp.Tensor?> forward (GenericArray<Hp.Tensor?> args) throws Error {
        var x = args[0];
        var h = x.add (get_child ("attention").call1 (x));
        h = h.add (get_child ("mlp").call1 (h));
        var diff = get_child ("head").call1 (h).sub (args[1]);
        return single_output (diff.mul (diff).mean_all ());
    }
}

/* The training step, the same in every language */

/* x[b, s, d] or target[b, s, c] of batch rows [first, first + rows) */
static Hp.Tensor batch_tensor (bool target, int64 first, int64 rows, int64 seq_len, int64 width) throws Error {
    var data = new double[rows * seq_len * width];
    int i = 0;
    for (int64 b = first; b < first + rows; b++)
        for (int64 s = 0; s < seq_len; s++)
            for (int64 d = 0; d < width; d++)
                data[i++] = target ? ((b * 3 + s * 2 + d * 5) % 7 - 3) / 2.0
                                   : ((b * 7 + s * 5 + d * 3) % 11 - 5) / 4.0;
    return new Hp.Tensor.from_data (Hp.DType.FLOAT64, data, { rows, seq_len, width });
}

static Hp.Tensor full (Hp.Tensor tensor) throws Error {
    var dtensor = tensor as Hp.DTensor;
    return dtensor != null ? dtensor.full_tensor () : tensor;
}

static string placements (Hp.Tensor tensor) {
    var dtensor = tensor as Hp.DTensor;
    return dtensor != null ? Hp.placements_to_string (dtensor.get_placements ()) : "plain";
}

static void append_values (StringBuilder text, string kind, string name, Hp.Tensor tensor) throws Error {
    text.append_printf ("%s %s", kind, name);
    foreach (var v in full (tensor).to_float64_array ())
        text.append_printf (" %.17g", v);
    text.append_c ('\n');
}

static int config_int (Hp.Config config, string path) throws Error {
    Value value;
    config.get_value (path, out value);
    return value.get_int ();
}

static void run (string document_path, string output_path, string layout) throws Error {
    Hp.init ();
    var parser = new Json.Parser ();
    parser.load_from_file (document_path);
    var document = parser.get_root ().get_object ();
    var model_config = Hp.Config.from_json_node (typeof (ModelConfig), document.get_member ("model"));
    var optimizer_config = (Hp.OptimizerConfig) Hp.Config.from_json_node (typeof (Hp.OptimizerConfig),
                                                                         document.get_member ("optimizer"));
    var model = (Hp.Module) model_config.build ();

    int world = Hp.get_world_size ();
    Hp.DeviceMesh? tp_mesh = null;
    Hp.DeviceMesh? dp_mesh = null;
    if (layout == "tp") {
        tp_mesh = new Hp.DeviceMesh ({ world }, { "tp" });
    } else if (layout == "dp,tp") {
        var mesh = new Hp.DeviceMesh ({ 2, world / 2 }, { "dp", "tp" });
        tp_mesh = mesh.slice ({ "tp" });
        dp_mesh = mesh.slice ({ "dp" });
    } else if (layout != "none") {
        throw new Hp.Error.INVALID_ARGUMENT ("unknown layout '%s'", layout);
    }
    if (tp_mesh != null)
        model.parallelize (tp_mesh);
    model.init_states (document.get_int_member ("seed"));

    int64 batch = document.get_int_member ("batch");
    int64 seq_len = document.get_int_member ("seq-len");
    int64 rows = batch;
    int64 first = 0;
    if (dp_mesh != null) {
        rows = batch / dp_mesh.get_size ();
        first = rows * dp_mesh.get_local_rank (0);
    }
    var args = new GenericArray<Hp.Tensor?> ();
    args.add (batch_tensor (false, first, rows, seq_len, config_int (model_config, "attention.wq.in-features")));
    args.add (batch_tensor (true, first, rows, seq_len, config_int (model_config, "head.out-features")));

    var parameters = model.parameters ();
    var optimizer = optimizer_config.build_optimizer (parameters);
    var loss = model.call (args)[0];
    loss.backward (null);
    double loss_value = full (loss).item ();
    if (dp_mesh != null) {
        Hp.data_parallel_average_gradients (parameters, dp_mesh);
        Hp.data_parallel_average_scalar (dp_mesh, ref loss_value);
    }
    optimizer.step ();

    var text = new StringBuilder ();
    text.append_printf ("config %s\n", model.config.to_json (false));
    text.append_printf ("loss %.17g\n", loss_value);
    var attention = (Attention) model.get_child ("attention");
    text.append_printf ("mapped %d\ncallable-heads %" + int64.FORMAT + "\ncallable-dtensor %d\n",
                        (int) model.callable_is_local_mapped ("attention.inner_attention"),
                        attention.seen_heads, (int) attention.seen_dtensor);
    var named = model.named_parameters ();
    for (uint i = 0; i < named.get_size (); i++) {
        var parameter = named.get_tensor (i);
        text.append_printf ("placement %s %s %s\n", named.get_name (i), placements (parameter),
                            placements (parameter.get_grad ()));
        append_values (text, "param", named.get_name (i), parameter);
        append_values (text, "grad", named.get_name (i), parameter.get_grad ());
    }
    if (Hp.get_world_rank () == 0)
        FileUtils.set_contents (output_path, text.str);
}

}

public static int main (string[] args) {
    if (args.length != 4) {
        printerr ("usage: %s DOCUMENT OUTPUT none|tp|dp,tp\n", args[0]);
        return 2;
    }
    try {
        ValaXl.run (args[1], args[2], args[3]);
    } catch (Error e) {
        printerr ("rank %d: %s\n", Hp.get_world_rank (), e.message);
        return 1;
    }
    return 0;
}
