/* test-tensor.vala: smoke test of HpTensor from Vala, against the VAPI
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

static bool all_close (double[] got, double[] want) {
    if (got.length != want.length)
        return false;
    for (int i = 0; i < got.length; i++) {
        if (Math.fabs (got[i] - want[i]) > 1e-12 * double.max (1.0, Math.fabs (want[i])))
            return false;
    }
    return true;
}

static void test_ops () {
    try {
        var a = new Hp.Tensor.from_data (Hp.DType.FLOAT64, { 1, 2, 3, 4, 5, 6 }, { 2, 3 });
        var b = new Hp.Tensor.from_data (Hp.DType.FLOAT64, { 10, 20, 30 }, { 3 });
        assert (all_close (a.add (b).to_float64_array (), { 11, 22, 33, 14, 25, 36 }));
        assert (a.get_shape ().length == 2);

        var w = new Hp.Tensor.from_data (Hp.DType.FLOAT64, { 1, 0, -1, 2, 1, 0 }, { 2, 3 });
        w.requires_grad = true;
        var loss = a.linear (w, null).sum_all ();
        loss.backward (null);
        assert (all_close (w.get_grad ().to_float64_array (), { 5, 7, 9, 5, 7, 9 }));
    } catch (Error e) {
        error ("unexpected error: %s", e.message);
    }
}

static void test_error () {
    var a = new Hp.Tensor.zeros (Hp.DType.FLOAT32, { 2, 3 });
    try {
        a.add (new Hp.Tensor.zeros (Hp.DType.FLOAT32, { 4 }));
        assert_not_reached ();
    } catch (Hp.Error.SHAPE e) {
        assert ("[2, 3]" in e.message);
    } catch (Error e) {
        error ("wrong error: %s", e.message);
    }
}

public static int main (string[] args) {
    Test.init (ref args);
    Test.add_func ("/vala/tensor/ops", test_ops);
    Test.add_func ("/vala/tensor/error", test_error);
    return Test.run ();
}
