/* linear-from-config.c: a linear layer made from its configuration
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Fills a HpLinearConfig (fields are GObject properties), writes it as
 * JSON, reads the JSON back into an equal configuration, changes a
 * field by its path as a command line would (--set out-features=3),
 * builds the layer, initialises it from a seed and runs it on a small
 * batch; the output is checked against x W^T + b computed by hand.
 * Run: ./build/examples/hp-linear-from-config
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <hp-protocols/hp-protocols.h>

/* y = x W^T + b, one element at a time, for the check */
static gboolean
check_output (HpTensor *x,
              HpTensor *weight,
              HpTensor *bias,
              HpTensor *y)
{
  guint ndim;
  const gint64 *x_shape = hp_tensor_get_shape (x, &ndim);
  const gint64 *w_shape = hp_tensor_get_shape (weight, &ndim);
  gsize n;
  g_autofree gdouble *xv = hp_tensor_to_float64_array (x, &n);
  g_autofree gdouble *wv = hp_tensor_to_float64_array (weight, &n);
  g_autofree gdouble *bv = hp_tensor_to_float64_array (bias, &n);
  g_autofree gdouble *yv = hp_tensor_to_float64_array (y, &n);
  gint64 batch = x_shape[0], in = x_shape[1], out = w_shape[0];

  for (gint64 i = 0; i < batch; i++)
    for (gint64 o = 0; o < out; o++)
      {
        gdouble expected = bv[o];

        for (gint64 k = 0; k < in; k++)
          expected += xv[i * in + k] * wv[o * in + k];
        if (fabs (yv[i * out + o] - expected) > 1e-12)
          return FALSE;
      }
  return TRUE;
}

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpLinearConfig) config = hp_linear_config_new (4, 2);
  g_autoptr(HpParamInit) param_init = NULL;
  g_autofree gchar *json = NULL;
  g_autoptr(HpConfig) read_back = NULL;
  g_autofree gchar *out_features = NULL;
  g_autoptr(HpModule) linear = NULL;
  g_autoptr(HpTensor) x = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autofree gchar *text = NULL;

  /* the fields of a configuration are its properties */
  g_object_set (config, "bias", TRUE, "dtype", HP_DTYPE_FLOAT64, NULL);
  param_init = hp_param_init_new_from_string ("weight=normal(std=0.5); bias=uniform(a=-0.1, b=0.1)",
                                              &error);
  if (param_init == NULL)
    goto fail;
  hp_module_config_set_param_init (HP_MODULE_CONFIG (config), param_init);

  /* JSON round trip: every field is written, and reading is strict */
  json = hp_config_to_json (HP_CONFIG (config), TRUE);
  printf ("%s\n", json);
  read_back = hp_config_new_from_json (HP_TYPE_LINEAR_CONFIG, json, &error);
  if (read_back == NULL)
    goto fail;
  if (!hp_config_equal (read_back, HP_CONFIG (config)))
    {
      fprintf (stderr, "linear-from-config: the JSON round trip changed the configuration\n");
      return EXIT_FAILURE;
    }

  /* a field set by its path from text, as hp-train's --set does */
  if (!hp_config_set_path_from_string (read_back, "out-features", "3", &error))
    goto fail;
  out_features = hp_config_get_path_as_string (read_back, "out-features", &error);
  if (out_features == NULL)
    goto fail;
  printf ("out-features = %s\n", out_features);

  /* build, initialise, run */
  linear = HP_MODULE (hp_config_build (read_back, &error));
  if (linear == NULL || !hp_module_init_states (linear, 42, &error))
    goto fail;

  x = hp_tensor_new_from_data (HP_DTYPE_FLOAT64,
                               (const gdouble[]) { 1, 2, 3, 4, -1, 0, 1, 0.5 }, 8,
                               (const gint64[]) { 2, 4 }, 2, &error);
  if (x == NULL || (y = hp_module_call1 (linear, x, &error)) == NULL)
    goto fail;

  text = hp_tensor_to_string (y);
  printf ("y = %s\n", text);
  if (!check_output (x, hp_module_get_parameter (linear, "weight"),
                     hp_module_get_parameter (linear, "bias"), y))
    {
      fprintf (stderr, "linear-from-config: the output is not x W^T + b\n");
      return EXIT_FAILURE;
    }
  return EXIT_SUCCESS;

fail:
  fprintf (stderr, "linear-from-config: %s\n", error->message);
  return EXIT_FAILURE;
}
