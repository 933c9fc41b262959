/* hp-test-utils.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <glib/gstdio.h>

#include "hp-test-utils.h"

static gint64
_hp_test_numel (const gint64 *shape,
                guint         ndim)
{
  gint64 n = 1;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  return n;
}

void
hp_test_init (int    *argc,
              char ***argv)
{
  const gchar *rank = g_getenv ("OMPI_COMM_WORLD_RANK");

  g_test_init (argc, argv, NULL);
  if (rank != NULL && atoi (rank) != 0 && freopen ("/dev/null", "w", stdout) == NULL)
    g_error ("cannot silence rank %s", rank);
}

void
hp_test_init_world (int    *argc,
                    char ***argv)
{
  g_autoptr(GError) error = NULL;

  hp_test_init (argc, argv);
  hp_init (&error);
  g_assert_no_error (error);
}

void
hp_test_remove_tree (const gchar *path)
{
  if (g_file_test (path, G_FILE_TEST_IS_DIR))
    {
      g_autoptr(GDir) dir = g_dir_open (path, 0, NULL);
      const gchar *name;

      while (dir != NULL && (name = g_dir_read_name (dir)) != NULL)
        {
          g_autofree gchar *child = g_build_filename (path, name, NULL);

          hp_test_remove_tree (child);
        }
    }
  g_remove (path);
}

HpTensor *
hp_test_tensor (HpDType        dtype,
                const gdouble *data,
                gsize          n_data,
                const gint64  *shape,
                guint          ndim)
{
  g_autoptr(GError) error = NULL;
  HpTensor *t = hp_tensor_new_from_data (dtype, data, n_data, shape, ndim, &error);

  g_assert_no_error (error);
  return t;
}

HpTensor *
hp_test_tensor_ids (const gint64 *ids,
                    gsize         n_ids,
                    const gint64 *shape,
                    guint         ndim)
{
  g_autoptr(GError) error = NULL;
  HpTensor *t = hp_tensor_new_from_int64_data (ids, n_ids, shape, ndim, &error);

  g_assert_no_error (error);
  return t;
}

HpTensor *
hp_test_randn (HpDType       dtype,
               const gint64 *shape,
               guint         ndim,
               guint64       seed,
               gboolean      requires_grad)
{
  HpTensor *t = hp_tensor_new_randn (dtype, shape, ndim, seed);

  hp_tensor_set_requires_grad (t, requires_grad);
  return t;
}

void
hp_test_assert_shape (HpTensor     *tensor,
                      const gint64 *shape,
                      guint         ndim)
{
  guint actual_ndim;
  const gint64 *actual = hp_tensor_get_shape (tensor, &actual_ndim);

  g_assert_cmpuint (actual_ndim, ==, ndim);
  for (guint i = 0; i < ndim; i++)
    g_assert_cmpint (actual[i], ==, shape[i]);
}

void
hp_test_assert_values (HpTensor      *tensor,
                       const gdouble *expected,
                       gsize          n_expected,
                       const gint64  *shape,
                       guint          ndim,
                       gdouble        rtol,
                       gdouble        atol)
{
  g_autoptr(HpTensor) want = hp_test_tensor (HP_DTYPE_FLOAT64, expected, n_expected, shape, ndim);

  hp_test_assert_close (tensor, want, rtol, atol);
}

void
hp_test_assert_close (HpTensor *tensor,
                      HpTensor *expected,
                      gdouble   rtol,
                      gdouble   atol)
{
  g_assert_nonnull (tensor);
  if (!hp_tensor_allclose (tensor, expected, rtol, atol))
    {
      g_autofree gchar *got = hp_tensor_to_string (tensor);
      g_autofree gchar *want = hp_tensor_to_string (expected);
      g_autofree gchar *msg = g_strdup_printf ("tensors differ:\n got  %s\n want %s", got, want);

      g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
    }
}

void
hp_test_assert_identical (HpTensor *tensor,
                          HpTensor *expected)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (expected, &ndim);
  g_autofree gdouble *a = NULL;
  g_autofree gdouble *b = NULL;
  gsize n;

  hp_test_assert_shape (tensor, shape, ndim);
  a = hp_tensor_to_float64_array (tensor, &n);
  b = hp_tensor_to_float64_array (expected, &n);
  g_assert_true (memcmp (a, b, n * sizeof (gdouble)) == 0);
}

void
hp_test_chunk (gint64  size,
               gint    n,
               gint    index,
               gint64 *offset,
               gint64 *length)
{
  gint64 piece = (size + n - 1) / n;

  *offset = MIN (piece * index, size);
  *length = MIN (*offset + piece, size) - *offset;
}

gdouble *
hp_test_region_values (HpTensor     *t,
                       const gint64 *offsets,
                       const gint64 *lengths,
                       gsize        *n_out)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (t, &ndim);
  gsize n;
  g_autofree gdouble *all = hp_tensor_to_float64_array (t, &n);
  gint64 count = 1, index[HP_TENSOR_MAX_NDIM] = { 0 };
  gdouble *out;

  for (guint k = 0; k < ndim; k++)
    count *= lengths[k];
  out = g_new (gdouble, MAX (count, 1));
  for (gint64 i = 0; i < count; i++)
    {
      gint64 flat = 0;

      for (guint k = 0; k < ndim; k++)
        flat = flat * shape[k] + offsets[k] + index[k];
      out[i] = all[flat];
      for (guint k = ndim; k-- > 0;)
        {
          if (++index[k] < lengths[k])
            break;
          index[k] = 0;
        }
    }
  *n_out = count;
  return out;
}

HpDeviceMesh *
hp_test_mesh (const gint          *shape,
              guint                ndim,
              const gchar * const *names)
{
  g_autoptr(GError) error = NULL;
  HpDeviceMesh *mesh = hp_device_mesh_new (shape, ndim, names, &error);

  g_assert_no_error (error);
  return mesh;
}

HpDeviceMesh *
hp_test_tp_mesh (void)
{
  return hp_test_mesh ((gint[]) { hp_get_world_size () }, 1,
                       (const gchar * const[]) { "tp", NULL });
}

GPtrArray *
hp_test_placements (const gchar * const *texts,
                    guint                n)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < n; i++)
    {
      g_autoptr(GError) error = NULL;
      HpPlacement *p = hp_placement_new_from_string (texts[i], &error);

      g_assert_no_error (error);
      g_ptr_array_add (out, p);
    }
  return out;
}

HpNamedPlacement *
hp_test_named (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  HpNamedPlacement *named = hp_named_placement_new_from_string (text, &error);

  g_assert_no_error (error);
  return named;
}

void
hp_test_assert_placements (HpTensor    *tensor,
                           const gchar *expected)
{
  g_autofree gchar *text = NULL;

  g_assert_true (HP_IS_DTENSOR (tensor));
  text = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (tensor)));
  g_assert_cmpstr (text, ==, expected);
}

HpTensor *
hp_test_full_tensor (HpTensor *tensor)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out;

  g_assert_true (HP_IS_DTENSOR (tensor));
  out = hp_dtensor_full_tensor (HP_DTENSOR (tensor), &error);
  g_assert_no_error (error);
  return out;
}

GPtrArray *
hp_test_one_output (HpTensor *out)
{
  GPtrArray *outputs;

  if (out == NULL)
    return NULL;
  outputs = g_ptr_array_new_with_free_func (hp_test_unref_nullable);
  g_ptr_array_add (outputs, out);
  return outputs;
}

void
hp_test_unref_nullable (gpointer object)
{
  if (object != NULL)
    g_object_unref (object);
}

static void
count (guint *counter)
{
  (*counter)++;
}

gulong
hp_test_count_signal (gpointer     instance,
                      const gchar *signal,
                      guint       *counter)
{
  /* swapped: the counter comes first, whatever the signal passes */
  return g_signal_connect_swapped (instance, signal, G_CALLBACK (count), counter);
}

gint
hp_test_get_int (gpointer     object,
                 const gchar *name)
{
  gint value;

  g_object_get (object, name, &value, NULL);
  return value;
}

guint
hp_test_get_uint (gpointer     object,
                  const gchar *name)
{
  guint value;

  g_object_get (object, name, &value, NULL);
  return value;
}

gdouble
hp_test_get_double (gpointer     object,
                    const gchar *name)
{
  gdouble value;

  g_object_get (object, name, &value, NULL);
  return value;
}

gboolean
hp_test_get_boolean (gpointer     object,
                     const gchar *name)
{
  gboolean value;

  g_object_get (object, name, &value, NULL);
  return value;
}

gpointer
hp_test_get_object (gpointer     object,
                    const gchar *name)
{
  GObject *value;

  g_object_get (object, name, &value, NULL);
  if (value != NULL)
    g_object_unref (value);
  return value;
}

void
hp_test_assert_path (HpConfig    *config,
                     const gchar *path,
                     const gchar *expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree gchar *text = hp_config_get_path_as_string (config, path, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (text, ==, expected);
}

void
hp_test_set_path (HpConfig    *config,
                  const gchar *path,
                  const gchar *value)
{
  g_autoptr(GError) error = NULL;
  gboolean ok = hp_config_set_path_from_string (config, path, value, &error);

  g_assert_no_error (error);
  g_assert_true (ok);
}

void
hp_test_assert_error (gpointer      result,
                      GError      **error,
                      gint          code,
                      const gchar  *message_part)
{
  g_assert_null (result);
  g_assert_error (*error, HP_ERROR, code);
  if (message_part != NULL && strstr ((*error)->message, message_part) == NULL)
    {
      g_autofree gchar *msg = g_strdup_printf ("error message '%s' lacks '%s'",
                                               (*error)->message, message_part);
      g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
    }
  g_clear_error (error);
}

/* sum (out * weights) in double precision */
static gdouble
contract (HpTensor *out,
          HpTensor *weights)
{
  gsize n_out, n_w;
  g_autofree gdouble *o = hp_tensor_to_float64_array (out, &n_out);
  g_autofree gdouble *w = hp_tensor_to_float64_array (weights, &n_w);
  gdouble total = 0.0;

  g_assert_cmpuint (n_out, ==, n_w);
  for (gsize i = 0; i < n_out; i++)
    total += o[i] * w[i];
  return total;
}

static gdouble
evaluate (HpTestFunc  func,
          gpointer    user_data,
          HpTensor  **inputs,
          HpTensor   *weights)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) out = NULL;
  gboolean was = hp_grad_mode_is_enabled ();

  hp_grad_mode_set_enabled (FALSE);
  out = func (inputs, user_data, &error);
  hp_grad_mode_set_enabled (was);
  g_assert_no_error (error);

  return contract (out, weights);
}

void
hp_test_gradcheck (const gchar *name,
                   HpTestFunc   func,
                   gpointer     user_data,
                   HpTensor   **inputs,
                   guint        n_inputs)
{
  const gdouble step = 1e-6;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) weights = NULL;
  guint ndim;
  const gint64 *shape;
  gboolean checked = FALSE;

  for (guint i = 0; i < n_inputs; i++)
    if (inputs[i] != NULL)
      {
        if (hp_tensor_get_requires_grad (inputs[i]))
          g_assert_cmpint (hp_tensor_get_dtype (inputs[i]), ==, HP_DTYPE_FLOAT64);
        hp_tensor_zero_grad (inputs[i]);
      }

  out = func (inputs, user_data, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_get_requires_grad (out));

  shape = hp_tensor_get_shape (out, &ndim);
  weights = hp_tensor_new_uniform (HP_DTYPE_FLOAT64, shape, ndim, -1.0, 1.0, 4242);
  hp_tensor_backward (out, weights, &error);
  g_assert_no_error (error);

  for (guint i = 0; i < n_inputs; i++)
    {
      HpTensor *original = inputs[i];
      HpTensor *grad;
      gsize n, n_grad;
      g_autofree gdouble *values = NULL;
      g_autofree gdouble *analytic = NULL;
      guint in_ndim;
      const gint64 *in_shape;

      if (original == NULL || !hp_tensor_get_requires_grad (original))
        continue;

      grad = hp_tensor_get_grad (original);
      if (grad == NULL)
        {
          g_autofree gchar *msg = g_strdup_printf ("%s: input %u got no gradient", name, i);
          g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
        }

      in_shape = hp_tensor_get_shape (original, &in_ndim);
      hp_test_assert_shape (grad, in_shape, in_ndim);
      values = hp_tensor_to_float64_array (original, &n);
      analytic = hp_tensor_to_float64_array (grad, &n_grad);

      for (gsize j = 0; j < n; j++)
        {
          gdouble saved = values[j];
          gdouble f[2];
          gdouble numeric;

          for (int side = 0; side < 2; side++)
            {
              g_autoptr(HpTensor) perturbed = NULL;

              values[j] = saved + (side == 0 ? step : -step);
              perturbed = hp_test_tensor (HP_DTYPE_FLOAT64, values, n, in_shape, in_ndim);
              inputs[i] = perturbed;
              f[side] = evaluate (func, user_data, inputs, weights);
              inputs[i] = original;
            }
          values[j] = saved;

          numeric = (f[0] - f[1]) / (2.0 * step);
          if (!(fabs (analytic[j] - numeric) <= 1e-6 * fabs (numeric) + 1e-8))
            {
              g_autofree gchar *msg =
                g_strdup_printf ("%s: d/d input %u [%" G_GSIZE_FORMAT "]: analytic %.12g, "
                                 "numeric %.12g", name, i, j, analytic[j], numeric);
              g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
            }
        }
      checked = TRUE;
    }

  g_assert_true (checked);
}

HpTensor *
hp_test_counting (HpDType        dtype,
                  const gint64  *shape,
                  guint          ndim)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) flat = hp_tensor_new_arange (dtype, _hp_test_numel (shape, ndim));
  HpTensor *out = hp_tensor_reshape (flat, shape, ndim, &error);

  g_assert_no_error (error);
  return out;
}

HpDTensor *
hp_test_local_dtensor (HpTensor     *local,
                       HpDeviceMesh *mesh,
                       const gchar  *placements)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) parsed = hp_placements_new_from_string (placements, &error);
  HpDTensor *out;

  g_assert_no_error (error);
  out = hp_dtensor_new_from_local (local, mesh, parsed, NULL, 0, FALSE, &error);
  g_assert_no_error (error);
  return out;
}

GError *
hp_test_redistribute_expecting_error (HpDTensor   *dt,
                                      const gchar *to)
{
  GError *error = NULL;
  g_autoptr(GPtrArray) placements = hp_placements_new_from_string (to, NULL);
  g_autoptr(HpDTensor) out = NULL;
  g_autoptr(HpTensor) local = hp_dtensor_get_local (dt);
  g_autoptr(HpTensor) local_after = NULL;
  gsize n_before, n_after;
  g_autofree gdouble *before = hp_tensor_to_float64_array (local, &n_before);
  g_autofree gdouble *after = NULL;
  g_autofree gchar *placements_before = hp_placements_to_string (hp_dtensor_get_placements (dt));
  g_autofree gchar *placements_after = NULL;

  out = hp_dtensor_redistribute (dt, placements, &error);
  if (hp_device_mesh_get_size (hp_dtensor_get_mesh (dt)) == 1)
    {
      g_assert_no_error (error);
      g_assert_nonnull (out);
      return NULL;
    }

  g_assert_null (out);
  g_assert_nonnull (error);
  local_after = hp_dtensor_get_local (dt);
  after = hp_tensor_to_float64_array (local_after, &n_after);
  g_assert_cmpmem (after, n_after * sizeof (gdouble), before, n_before * sizeof (gdouble));
  placements_after = hp_placements_to_string (hp_dtensor_get_placements (dt));
  g_assert_cmpstr (placements_after, ==, placements_before);
  return error;
}

gchar *
hp_test_other_ranks (void)
{
  gint size = hp_get_world_size ();

  return size == 2 ? g_strdup ("rank 1") : g_strdup_printf ("ranks 1-%d", size - 1);
}

HpModule *
hp_test_decoder_build (HpDecoderConfig *config,
                       HpParallelDims  *dims,
                       HpDeviceMesh    *tp_mesh)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GObject) model = NULL;

  g_assert_true (hp_base_model_config_update_from_config (HP_BASE_MODEL_CONFIG (config),
                                                          HP_CONFIG (dims), &error));
  g_assert_no_error (error);
  model = hp_config_build (HP_CONFIG (config), &error);
  g_assert_no_error (error);
  if (tp_mesh != NULL)
    g_assert_true (hp_module_parallelize (HP_MODULE (model), tp_mesh, &error));
  g_assert_true (hp_module_init_states (HP_MODULE (model), 7, &error));
  g_assert_no_error (error);
  return HP_MODULE (g_steal_pointer (&model));
}

void
hp_test_token_batch (gint       step,
                     gint       first,
                     gint       rows,
                     HpTensor **ids,
                     HpTensor **targets)
{
  g_autofree gint64 *a = g_new (gint64, rows * 6);
  g_autofree gint64 *b = g_new (gint64, rows * 6);

  for (gint r = 0; r < rows; r++)
    for (gint s = 0; s < 6; s++)
      {
        a[r * 6 + s] = ((first + r) * 7 + s * 3 + step) % 11;
        b[r * 6 + s] = ((first + r) * 5 + s * 4 + 1 + 2 * step) % 11;
      }
  *ids = hp_test_tensor_ids (a, rows * 6, HP_TEST_SHAPE (rows, 6));
  *targets = hp_test_tensor_ids (b, rows * 6, HP_TEST_SHAPE (rows, 6));
}
