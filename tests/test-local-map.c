/* test-local-map.c: local_map against the same computation on whole
 * tensors on one rank
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi); every rank runs every
 * assertion. The data are small integers in float64, so results and
 * gradients are compared exactly. Expected shards are cut here with the
 * torch.chunk formula, independently of the library.
 */

#include <string.h>

#include "hp-test-utils.h"

static gint world_size;
static gint world_rank;

static HpDeviceMesh *
dp_tp_mesh (const gint *shape)
{
  return hp_test_mesh (shape, 2, (const gchar * const[]) { "dp", "tp", NULL });
}

/* The 2-d meshes this world size allows, as dp x tp */
static GArray *
meshes_2d (void)
{
  GArray *out = g_array_new (FALSE, FALSE, sizeof (gint) * 2);
  gint shapes[3][2] = { { 1, world_size }, { world_size, 1 }, { 2, world_size / 2 } };

  g_array_append_vals (out, shapes, world_size % 2 == 0 && world_size > 2 ? 3 : 2);
  return out;
}

static HpTensor *
whole_tensor (const gint64 *shape,
              guint         ndim,
              gint          salt)
{
  gint64 n = 1;
  g_autofree gdouble *data = NULL;

  for (guint k = 0; k < ndim; k++)
    n *= shape[k];
  data = g_new (gdouble, MAX (n, 1));
  for (gint64 i = 0; i < n; i++)
    data[i] = (gdouble) ((i * 37 + salt * 11) % 13 - 6);
  return hp_test_tensor (HP_DTYPE_FLOAT64, data, n, shape, ndim);
}

static GPtrArray *
placements (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *out = hp_placements_new_from_string (text, &error);

  g_assert_no_error (error);
  return out;
}

/* A list of named placements; a NULL text gives a NULL entry */
static GPtrArray *
named_list (guint n,
            ...)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (hp_test_unref_nullable);
  va_list ap;

  va_start (ap, n);
  for (guint i = 0; i < n; i++)
    {
      const gchar *text = va_arg (ap, const gchar *);

      g_ptr_array_add (out, text != NULL ? hp_test_named (text) : NULL);
    }
  va_end (ap);
  return out;
}

/* A list of tensors (references taken), NULL entries allowed */
static GPtrArray *
tensor_list (guint n,
             ...)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (hp_test_unref_nullable);
  va_list ap;

  va_start (ap, n);
  for (guint i = 0; i < n; i++)
    {
      gpointer tensor = va_arg (ap, gpointer);

      g_ptr_array_add (out, tensor != NULL ? g_object_ref (tensor) : NULL);
    }
  va_end (ap);
  return out;
}

static HpDTensor *
distribute (HpTensor     *whole,
            HpDeviceMesh *mesh,
            const gchar  *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) p = placements (text);
  HpDTensor *out = hp_dtensor_distribute (whole, mesh, p, -1, &error);

  g_assert_no_error (error);
  return out;
}

static HpTensor *
rows (HpTensor *whole,
      gint64    offset,
      gint64    length)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out = hp_tensor_narrow (whole, 0, offset, length, &error);

  g_assert_no_error (error);
  return out;
}

/* What a test's function checks and does */
typedef struct
{
  guint calls;
  /* expected shapes of the first n_checked arguments (2-d) */
  gint64 shapes[3][2];
  guint n_checked;
  /* for give(): the outputs to return */
  GPtrArray *outputs;
  /* for fail(): the rank that fails, or -1 for all */
  gint fail_rank;
  guint destroyed;
} Probe;

static void
probe_clear (Probe *probe)
{
  g_clear_pointer (&probe->outputs, g_ptr_array_unref);
}

static void
check_args (Probe     *probe,
            GPtrArray *args)
{
  probe->calls++;
  for (guint i = 0; i < args->len; i++)
    g_assert_true (g_ptr_array_index (args, i) == NULL ||
                   !HP_IS_DTENSOR (g_ptr_array_index (args, i)));
  for (guint i = 0; i < probe->n_checked; i++)
    hp_test_assert_shape (g_ptr_array_index (args, i), probe->shapes[i], 2);
}

static GPtrArray *
f_matmul (GPtrArray  *args,
          gpointer    user_data,
          GError    **error)
{
  check_args (user_data, args);
  return hp_test_one_output (hp_tensor_matmul (g_ptr_array_index (args, 0), g_ptr_array_index (args, 1),
                                       error));
}

static GPtrArray *
f_mul (GPtrArray  *args,
       gpointer    user_data,
       GError    **error)
{
  check_args (user_data, args);
  return hp_test_one_output (hp_tensor_mul (g_ptr_array_index (args, 0), g_ptr_array_index (args, 1),
                                    error));
}

static GPtrArray *
f_scale (GPtrArray  *args,
         gpointer    user_data,
         GError    **error)
{
  check_args (user_data, args);
  return hp_test_one_output (hp_tensor_scale (g_ptr_array_index (args, 0), 3.0, error));
}

/* The first row of the local tensor, if it has one */
static GPtrArray *
f_first_row (GPtrArray  *args,
             gpointer    user_data,
             GError    **error)
{
  HpTensor *x = g_ptr_array_index (args, 0);

  check_args (user_data, args);
  return hp_test_one_output (hp_tensor_narrow (x, 0, 0, MIN (1, hp_tensor_get_shape (x, NULL)[0]), error));
}

static GPtrArray *
f_column_sums (GPtrArray  *args,
               gpointer    user_data,
               GError    **error)
{
  check_args (user_data, args);
  return hp_test_one_output (hp_tensor_sum (g_ptr_array_index (args, 0), 0, FALSE, error));
}

/* Returns the probe's outputs */
static GPtrArray *
f_give (GPtrArray  *args,
        gpointer    user_data,
        GError    **error)
{
  Probe *probe = user_data;
  GPtrArray *out = g_ptr_array_new_with_free_func (hp_test_unref_nullable);

  check_args (probe, args);
  for (guint j = 0; j < probe->outputs->len; j++)
    {
      gpointer tensor = g_ptr_array_index (probe->outputs, j);

      g_ptr_array_add (out, tensor != NULL ? g_object_ref (tensor) : NULL);
    }
  return out;
}

static GPtrArray *
f_fail (GPtrArray  *args,
        gpointer    user_data,
        GError    **error)
{
  Probe *probe = user_data;

  check_args (probe, args);
  if (probe->fail_rank == -1 || probe->fail_rank == world_rank)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE, "f: no good on rank %d", world_rank);
      return NULL;
    }
  return hp_test_one_output (hp_tensor_scale (g_ptr_array_index (args, 0), 2.0, error));
}

static GPtrArray *
f_null (GPtrArray  *args,
        gpointer    user_data,
        GError    **error)
{
  check_args (user_data, args);
  return NULL;
}

static void
probe_destroyed (gpointer user_data)
{
  Probe *probe = user_data;

  probe->destroyed++;
}

static HpLocalMap *
map_new (HpLocalMapFunc  func,
         Probe          *probe,
         GPtrArray      *out_placements,
         GPtrArray      *in_placements,
         GPtrArray      *in_grad_placements,
         HpDeviceMesh   *mesh,
         gboolean        redistribute_inputs)
{
  return hp_local_map_new (func, out_placements, in_placements, in_grad_placements, mesh,
                           redistribute_inputs, probe, probe_destroyed);
}

static GPtrArray *
call_ok (HpLocalMap *map,
         GPtrArray  *args,
         guint       n_outputs)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *outputs = hp_local_map_call (map, args, &error);

  g_assert_no_error (error);
  g_assert_nonnull (outputs);
  g_assert_cmpuint (outputs->len, ==, n_outputs);
  return outputs;
}

/* The seed's test_local_map: f(x S(0), y R) -> S(0) sees local tensors
 * and equals f on the whole tensors */
static void
test_seed (void)
{
  static const gint64 x_shape[] = { 7, 4 }, y_shape[] = { 4, 3 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor (x_shape, 2, 1);
  g_autoptr(HpTensor) y = whole_tensor (y_shape, 2, 2);
  g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0)");
  g_autoptr(HpDTensor) dy = distribute (y, mesh, "R");
  g_autoptr(GPtrArray) out_p = named_list (1, "tp:S(0)");
  g_autoptr(GPtrArray) in_p = named_list (2, "tp:S(0)", "tp:R");
  g_autoptr(GPtrArray) args = tensor_list (2, dx, dy);
  g_autoptr(HpLocalMap) map = NULL;
  g_autoptr(GPtrArray) outputs = NULL;
  g_autoptr(HpTensor) whole_out = NULL;
  g_autoptr(HpTensor) expected = hp_tensor_matmul (x, y, &error);
  g_autoptr(HpTensor) local = NULL;
  g_autoptr(HpTensor) expected_local = NULL;
  g_autoptr(HpDeviceMesh) mesh_prop = NULL;
  gboolean redistribute_prop;
  gint64 offset, length;
  HpTensor *out;
  Probe probe = { 0 };

  g_assert_no_error (error);
  hp_test_chunk (7, world_size, world_rank, &offset, &length);
  probe.n_checked = 2;
  probe.shapes[0][0] = length;
  probe.shapes[0][1] = 4;
  probe.shapes[1][0] = 4;
  probe.shapes[1][1] = 3;

  map = map_new (f_matmul, &probe, out_p, in_p, NULL, mesh, TRUE);
  g_object_get (map, "mesh", &mesh_prop, "redistribute-inputs", &redistribute_prop, NULL);
  g_assert_true (mesh_prop == mesh);
  g_assert_true (hp_local_map_get_mesh (map) == mesh);
  g_assert_true (redistribute_prop);
  g_assert_true (hp_local_map_get_redistribute_inputs (map));

  /* the map keeps copies: changing the caller's entries changes nothing */
  {
    g_autoptr(HpPlacement) r = hp_replicate_new ();

    hp_named_placement_set (g_ptr_array_index (out_p, 0), "tp", r);
  }

  outputs = call_ok (map, args, 1);
  g_assert_cmpuint (probe.calls, ==, 1);
  out = g_ptr_array_index (outputs, 0);
  hp_test_assert_placements (out, "(S(0))");
  hp_test_assert_shape (out, (gint64[]) { 7, 3 }, 2);
  local = hp_dtensor_get_local (HP_DTENSOR (out));
  expected_local = rows (expected, offset, length);
  hp_test_assert_close (local, expected_local, 0, 0);
  whole_out = hp_test_full_tensor (out);
  hp_test_assert_close (whole_out, expected, 0, 0);

  g_clear_object (&map);
  g_assert_cmpuint (probe.destroyed, ==, 1);
}

/* A shard's global size is the sum of the local sizes, whatever the
 * sizes; nested sharding of one dim on two mesh dims included */
static void
test_uneven (void)
{
  static const gint64 shape[] = { 5, 3 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor (shape, 2, 3);
  g_autoptr(HpTensor) tripled = hp_tensor_scale (x, 3.0, &error);
  g_autoptr(GArray) meshes = meshes_2d ();
  gint64 offset, length;

  g_assert_no_error (error);
  hp_test_chunk (5, world_size, world_rank, &offset, &length);

  /* 5 rows over n ranks: 3+2, 2+2+1, 2+2+1+0, 1+1+1+1+1+0+0+0 */
  {
    g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0)");
    g_autoptr(GPtrArray) out_p = named_list (1, "tp:S(0)");
    g_autoptr(GPtrArray) in_p = named_list (1, "tp:S(0)");
    g_autoptr(GPtrArray) args = tensor_list (1, dx);
    Probe probe = { .n_checked = 1, .shapes = { { length, 3 } } };
    g_autoptr(HpLocalMap) map = map_new (f_scale, &probe, out_p, in_p, NULL, mesh, FALSE);
    g_autoptr(GPtrArray) outputs = call_ok (map, args, 1);
    g_autoptr(HpTensor) whole_out = hp_test_full_tensor (g_ptr_array_index (outputs, 0));

    hp_test_assert_shape (g_ptr_array_index (outputs, 0), shape, 2);
    hp_test_assert_close (whole_out, tripled, 0, 0);
  }

  /* outputs of other sizes than the inputs: one row per non-empty shard */
  {
    g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0)");
    g_autoptr(GPtrArray) out_p = named_list (1, "tp:S(0)");
    g_autoptr(GPtrArray) in_p = named_list (1, "tp:S(0)");
    g_autoptr(GPtrArray) args = tensor_list (1, dx);
    g_autoptr(GPtrArray) pieces = g_ptr_array_new_with_free_func (g_object_unref);
    Probe probe = { 0 };
    g_autoptr(HpLocalMap) map = map_new (f_first_row, &probe, out_p, in_p, NULL, mesh, FALSE);
    g_autoptr(GPtrArray) outputs = call_ok (map, args, 1);
    g_autoptr(HpTensor) whole_out = hp_test_full_tensor (g_ptr_array_index (outputs, 0));
    g_autoptr(HpTensor) expected = NULL;

    for (gint r = 0; r < world_size; r++)
      {
        gint64 o, l;

        hp_test_chunk (5, world_size, r, &o, &l);
        if (l > 0)
          g_ptr_array_add (pieces, rows (x, o, 1));
      }
    expected = hp_tensor_cat (pieces, 0, &error);
    g_assert_no_error (error);
    hp_test_assert_close (whole_out, expected, 0, 0);
  }

  /* two mesh dims: the same tensor dim on both, or one dim each */
  for (guint m = 0; m < meshes->len; m++)
    {
      const gint *ms = &g_array_index (meshes, gint, 2 * m);
      g_autoptr(HpDeviceMesh) mesh2 = dp_tp_mesh (ms);
      static const gchar * const layouts[][2] = {
        { "S(0), S(0)", "dp:S(0), tp:S(0)" },
        { "S(0), S(1)", "tp:S(1), dp:S(0)" },
        { "S(1), R", "dp:S(-1)" },
      };

      for (guint l = 0; l < G_N_ELEMENTS (layouts); l++)
        {
          g_autoptr(HpDTensor) dx = distribute (x, mesh2, layouts[l][0]);
          g_autoptr(GPtrArray) out_p = named_list (1, layouts[l][1]);
          g_autoptr(GPtrArray) in_p = named_list (1, layouts[l][1]);
          g_autoptr(GPtrArray) args = tensor_list (1, dx);
          Probe probe = { 0 };
          g_autoptr(HpLocalMap) map = map_new (f_scale, &probe, out_p, in_p, NULL, mesh2, FALSE);
          g_autoptr(GPtrArray) outputs = call_ok (map, args, 1);
          HpTensor *out = g_ptr_array_index (outputs, 0);
          g_autoptr(HpTensor) whole_out = hp_test_full_tensor (out);
          g_autofree gchar *want = g_strdup_printf ("(%s)", layouts[l][0]);
          g_autoptr(HpTensor) mine = hp_dtensor_get_local (HP_DTENSOR (out));
          g_autoptr(HpTensor) given = hp_dtensor_get_local (dx);

          hp_test_assert_placements (out, want);
          hp_test_assert_shape (out, shape, 2);
          hp_test_assert_shape (mine, hp_tensor_get_shape (given, NULL), 2);
          hp_test_assert_close (whole_out, tripled, 0, 0);
        }
    }
}

/* No DTensor argument: the outputs come back as func made them; plain
 * tensors and NULL pass through even next to DTensors */
static void
test_pass_through (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor ((gint64[]) { 2, 3 }, 2, 4);
  g_autoptr(HpTensor) made = hp_tensor_new_ones (HP_DTYPE_FLOAT64, (gint64[]) { 2 }, 1);
  g_autoptr(GPtrArray) out_p = named_list (2, "tp:S(0)", NULL);
  g_autoptr(GPtrArray) in_p = named_list (2, "tp:S(0)", NULL);
  g_autoptr(GPtrArray) args = tensor_list (2, x, NULL);
  Probe probe = { .n_checked = 1, .shapes = { { 2, 3 } } };
  g_autoptr(HpLocalMap) map = NULL;
  g_autoptr(GPtrArray) outputs = NULL;

  probe.outputs = tensor_list (2, made, NULL);
  map = map_new (f_give, &probe, out_p, in_p, NULL, mesh, FALSE);
  outputs = call_ok (map, args, 2);
  g_assert_true (g_ptr_array_index (outputs, 0) == made);
  g_assert_null (g_ptr_array_index (outputs, 1));
  g_assert_cmpuint (probe.calls, ==, 1);
  probe_clear (&probe);

  /* a DTensor x with a plain w: the plain one is passed as is */
  {
    static const gint64 shape[] = { 6, 2 };
    g_autoptr(HpTensor) whole = whole_tensor (shape, 2, 5);
    g_autoptr(HpTensor) w = whole_tensor ((gint64[]) { 2 }, 1, 6);
    g_autoptr(HpDTensor) dx = distribute (whole, mesh, "S(0)");
    g_autoptr(GPtrArray) out2 = named_list (1, "tp:S(0)");
    g_autoptr(GPtrArray) in2 = named_list (2, "tp:S(0)", NULL);
    g_autoptr(GPtrArray) args2 = tensor_list (2, dx, w);
    Probe probe2 = { 0 };
    g_autoptr(HpLocalMap) map2 = map_new (f_mul, &probe2, out2, in2, NULL, mesh, FALSE);
    g_autoptr(GPtrArray) outputs2 = call_ok (map2, args2, 1);
    g_autoptr(HpTensor) whole_out = hp_test_full_tensor (g_ptr_array_index (outputs2, 0));
    g_autoptr(HpTensor) expected = hp_tensor_mul (whole, w, &error);

    g_assert_no_error (error);
    hp_test_assert_close (whole_out, expected, 0, 0);
  }
}

/* redistribute_inputs: an S(1) argument goes to S(0) or is refused */
static void
test_redistribute (void)
{
  static const gint64 shape[] = { 6, 4 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor (shape, 2, 7);
  g_autoptr(HpTensor) tripled = hp_tensor_scale (x, 3.0, &error);
  g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(1)");
  g_autoptr(GPtrArray) out_p = named_list (1, "tp:S(0)");
  g_autoptr(GPtrArray) in_p = named_list (1, "tp:S(0)");
  g_autoptr(GPtrArray) args = tensor_list (1, dx);
  gint64 offset, length, col_offset, cols;
  Probe probe = { .n_checked = 1 };

  hp_test_chunk (6, world_size, world_rank, &offset, &length);
  hp_test_chunk (4, world_size, world_rank, &col_offset, &cols);
  probe.shapes[0][0] = length;
  probe.shapes[0][1] = 4;

  {
    g_autoptr(HpLocalMap) map = map_new (f_scale, &probe, out_p, in_p, NULL, mesh, TRUE);
    g_autoptr(GPtrArray) outputs = call_ok (map, args, 1);
    g_autoptr(HpTensor) whole_out = hp_test_full_tensor (g_ptr_array_index (outputs, 0));

    hp_test_assert_placements (g_ptr_array_index (outputs, 0), "(S(0))");
    hp_test_assert_close (whole_out, tripled, 0, 0);
    g_assert_cmpuint (probe.calls, ==, 1);
  }

  {
    g_autoptr(HpLocalMap) map = map_new (f_scale, &probe, out_p, in_p, NULL, mesh, FALSE);

    g_assert_false (hp_local_map_get_redistribute_inputs (map));
    hp_test_assert_error (hp_local_map_call (map, args, &error), &error, HP_ERROR_PLACEMENT,
                          "local_map: argument 0 has placements (S(1)), but in_placements "
                          "expects (S(0))");
    g_assert_cmpuint (probe.calls, ==, 1);
  }

  /* S(-1) is S(1) for a 2-d argument: nothing to redistribute */
  {
    g_autoptr(GPtrArray) last = named_list (1, "tp:S(-1)");
    g_autoptr(HpLocalMap) map = NULL;
    g_autoptr(GPtrArray) outputs = NULL;
    g_autoptr(HpTensor) whole_out = NULL;

    probe.shapes[0][0] = 6;
    probe.shapes[0][1] = cols;
    map = map_new (f_scale, &probe, last, last, NULL, mesh, FALSE);
    outputs = call_ok (map, args, 1);
    hp_test_assert_placements (g_ptr_array_index (outputs, 0), "(S(1))");
    whole_out = hp_test_full_tensor (g_ptr_array_index (outputs, 0));
    hp_test_assert_close (whole_out, tripled, 0, 0);
  }
}

/* Partial outputs keep their local shape as the global one */
static void
test_partial_output (void)
{
  static const gint64 shape[] = { 6, 2 };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor (shape, 2, 8);
  g_autoptr(HpTensor) expected = hp_tensor_sum (x, 0, FALSE, &error);
  g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0)");
  g_autoptr(GPtrArray) out_p = named_list (1, "tp:P(sum)");
  g_autoptr(GPtrArray) in_p = named_list (1, "tp:S(0)");
  g_autoptr(GPtrArray) args = tensor_list (1, dx);
  Probe probe = { 0 };
  g_autoptr(HpLocalMap) map = map_new (f_column_sums, &probe, out_p, in_p, NULL, mesh, FALSE);
  g_autoptr(GPtrArray) outputs = call_ok (map, args, 1);
  g_autoptr(HpTensor) whole_out = hp_test_full_tensor (g_ptr_array_index (outputs, 0));

  g_assert_no_error (error);
  hp_test_assert_placements (g_ptr_array_index (outputs, 0), "(P(sum))");
  hp_test_assert_shape (g_ptr_array_index (outputs, 0), (gint64[]) { 2 }, 1);
  hp_test_assert_close (whole_out, expected, 0, 0);
}

/* Every error on every rank, the function not called when the error is
 * known before */
static void
test_errors (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpDeviceMesh) unnamed = hp_test_mesh ((gint[]) { world_size }, 1, NULL);
  g_autoptr(HpDeviceMesh) other = dp_tp_mesh ((gint[]) { 1, world_size });
  g_autoptr(HpTensor) x = whole_tensor ((gint64[]) { 4, 2 }, 2, 9);
  g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0)");
  g_autoptr(HpDTensor) rx = distribute (x, mesh, "R");
  g_autoptr(HpDTensor) dx_other = distribute (x, other, "R, S(0)");
  g_autoptr(GPtrArray) s0 = named_list (1, "tp:S(0)");
  g_autoptr(GPtrArray) r1 = named_list (1, "tp:R");
  g_autoptr(GPtrArray) s0_s0 = named_list (2, "tp:S(0)", "tp:S(0)");
  g_autoptr(GPtrArray) s0_null = named_list (2, "tp:S(0)", NULL);
  g_autoptr(GPtrArray) null1 = named_list (1, NULL);
  g_autoptr(GPtrArray) args = tensor_list (1, dx);
  g_autoptr(GPtrArray) args_r = tensor_list (1, rx);
  g_autoptr(GPtrArray) args2 = tensor_list (2, dx, dx);
  g_autoptr(GPtrArray) args_null = tensor_list (1, NULL);
  g_autoptr(GPtrArray) args_other = tensor_list (1, dx_other);
  g_autoptr(HpTensor) local = hp_dtensor_get_local (dx);
  g_autoptr(HpTensor) local_twice = hp_tensor_scale (local, 2.0, &error);
  Probe probe = { 0 };

#define EXPECT_ERROR(func, out, in, grad, m, redistribute, call_args, code, message, called) \
  G_STMT_START {                                                                  \
    g_autoptr(HpLocalMap) map_ = map_new (func, &probe, out, in, grad, m, redistribute); \
    guint calls_ = probe.calls;                                                   \
    hp_test_assert_error (hp_local_map_call (map_, call_args, &error), &error, code, message); \
    g_assert_cmpuint (probe.calls - calls_, ==, called);                          \
  } G_STMT_END

  /* counts of arguments and entries */
  EXPECT_ERROR (f_scale, s0, s0_s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: 1 arguments given, but in_placements has 2 entries", 0);
  EXPECT_ERROR (f_scale, s0, s0, s0_s0, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: 1 arguments given, but in_grad_placements has 2 entries", 0);

  /* meshes */
  EXPECT_ERROR (f_scale, s0, s0, NULL, unnamed, FALSE, args, HP_ERROR_MESH,
                "local_map: the mesh has no dim names", 0);
  EXPECT_ERROR (f_scale, r1, r1, NULL, mesh, TRUE, args_other, HP_ERROR_MESH,
                "local_map: argument 0 lives on DeviceMesh(", 0);

  /* entries that do not resolve or fit */
  {
    g_autoptr(GPtrArray) ep = named_list (1, "ep:S(0)");
    g_autoptr(GPtrArray) s5 = named_list (1, "tp:S(5)");
    g_autoptr(GPtrArray) partial = named_list (1, "tp:P(sum)");

    EXPECT_ERROR (f_scale, s0, ep, NULL, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "local_map: in_placements[0]: NamedPlacement has axes not in mesh: {ep}", 0);
    EXPECT_ERROR (f_scale, ep, s0, NULL, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "local_map: out_placements[0]: NamedPlacement has axes not in mesh: {ep}", 0);
    EXPECT_ERROR (f_scale, s0, s0, ep, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "local_map: in_grad_placements[0]: NamedPlacement has axes not in mesh", 0);
    EXPECT_ERROR (f_scale, s0, s5, NULL, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "local_map: argument 0: placement S(5) of (S(5)) is out of range for a tensor "
                  "of 2 dims", 0);
    EXPECT_ERROR (f_scale, s0, partial, NULL, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "a redistribution cannot make Partial placements", 0);
    EXPECT_ERROR (f_scale, s5, s0, NULL, mesh, TRUE, args, HP_ERROR_PLACEMENT,
                  "local_map: output 0: placement S(5) of (S(5)) is out of range", 1);
  }

  /* DTensor and NULL arguments against NULL and non-NULL entries */
  EXPECT_ERROR (f_scale, s0, null1, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: argument 0 is an HpDTensor, but in_placements[0] is NULL", 0);
  EXPECT_ERROR (f_scale, s0, s0, NULL, mesh, FALSE, args_null, HP_ERROR_PLACEMENT,
                "local_map: argument 0 is NULL (not a tensor), but in_placements[0] is (S(0))", 0);

  /* in_grad entries that do not fit the argument */
  {
    g_autoptr(GPtrArray) s1 = named_list (1, "tp:S(1)");
    g_autoptr(GPtrArray) psum = named_list (1, "tp:P(sum)");
    g_autoptr(GPtrArray) pmax = named_list (1, "tp:P(max)");

    EXPECT_ERROR (f_scale, s0, s0, s1, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                  "local_map: in_grad_placements[0] has S(1) on mesh dim 0, where argument 0 "
                  "is passed as S(0)", 0);
    EXPECT_ERROR (f_scale, s0, s0, psum, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                  "in_grad_placements[0] has P(sum) on mesh dim 0, where argument 0 is passed "
                  "as S(0)", 0);
    EXPECT_ERROR (f_scale, s0, r1, pmax, mesh, FALSE, args_r, HP_ERROR_NOT_SUPPORTED,
                  "in_grad_placements[0] has P(max) on mesh dim 0; only P(sum)", 0);
  }

  /* outputs that do not fit out_placements, with and without a sharded
   * output (an exchange of shapes, or none) */
  probe.outputs = tensor_list (2, local_twice, local_twice);
  EXPECT_ERROR (f_give, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: func returned 2 outputs, but out_placements has 1 entries", 1);
  EXPECT_ERROR (f_give, r1, s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: func returned 2 outputs, but out_placements has 1 entries", 1);
  probe_clear (&probe);
  probe.outputs = tensor_list (1, dx);
  EXPECT_ERROR (f_give, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: output 0 is already an HpDTensor", 1);
  probe_clear (&probe);
  probe.outputs = tensor_list (2, local_twice, NULL);
  EXPECT_ERROR (f_give, s0_s0, s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: output 1 is NULL, but out_placements[1] is (S(0))", 1);
  probe_clear (&probe);
  probe.outputs = tensor_list (2, local_twice, local_twice);
  EXPECT_ERROR (f_give, s0_null, s0, NULL, mesh, FALSE, args, HP_ERROR_PLACEMENT,
                "local_map: output 1 is a tensor, but out_placements[1] is NULL", 1);
  probe_clear (&probe);

  /* the function's own error, and no error at all */
  probe.fail_rank = -1;
  EXPECT_ERROR (f_fail, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_SHAPE, "f: no good on rank", 1);
  EXPECT_ERROR (f_null, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_INVALID_ARGUMENT,
                "local_map: func returned NULL without setting an error", 1);
  {
    g_autoptr(GPtrArray) plain = tensor_list (1, x);

    EXPECT_ERROR (f_fail, s0, s0, NULL, mesh, FALSE, plain, HP_ERROR_SHAPE,
                  "f: no good on rank", 1);
  }

  if (world_size > 1)
    {
      /* a failure on one rank reaches the others, which would wait */
      probe.fail_rank = 0;
      if (world_rank == 0)
        EXPECT_ERROR (f_fail, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_SHAPE,
                      "f: no good on rank 0", 1);
      else
        EXPECT_ERROR (f_fail, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_MPI,
                      "local_map: func or its outputs failed on rank 0", 1);

      /* local shapes that are no torch.chunk layout: rank r has r+1 rows */
      {
        g_autoptr(HpTensor) mine = hp_tensor_new_zeros (HP_DTYPE_FLOAT64,
                                                        (gint64[]) { world_rank + 1, 2 }, 2);

        probe.outputs = tensor_list (1, mine);
        EXPECT_ERROR (f_give, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_SHAPE,
                      "local_map: output 0: the local shapes do not form one tensor with "
                      "placements (S(0)) (rank 0 holds [1, 2], but its part of", 1);
        probe_clear (&probe);
      }

      /* ranks that disagree on the dtype */
      {
        g_autoptr(HpTensor) mine = hp_tensor_new_zeros (world_rank == 0 ? HP_DTYPE_FLOAT32
                                                                        : HP_DTYPE_FLOAT64,
                                                        (gint64[]) { 1, 2 }, 2);

        probe.outputs = tensor_list (1, mine);
        EXPECT_ERROR (f_give, s0, s0, NULL, mesh, FALSE, args, HP_ERROR_SHAPE,
                      "local_map: output 0: the ranks disagree on its dtype or number of dims", 1);
        probe_clear (&probe);
      }
    }

#undef EXPECT_ERROR

  g_assert_no_error (error);

  /* the arguments are as they were */
  hp_test_assert_placements (HP_TENSOR (dx), "(S(0))");
  hp_test_assert_placements (HP_TENSOR (rx), "(R)");
  {
    g_autoptr(HpTensor) dx_full = hp_test_full_tensor (HP_TENSOR (dx));
    g_autoptr(HpTensor) rx_full = hp_test_full_tensor (HP_TENSOR (rx));
    g_autoptr(HpTensor) expected = whole_tensor ((gint64[]) { 4, 2 }, 2, 9);

    hp_test_assert_identical (dx_full, expected);
    hp_test_assert_identical (rx_full, expected);
    hp_test_assert_identical (x, expected);
  }
}

/* loss = sum (weights * hp_test_full_tensor (out)) and its backward */
static void
backward_weighted (HpTensor *out,
                   HpTensor *weights)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) whole = hp_test_full_tensor (out);
  g_autoptr(HpTensor) weighted = hp_tensor_mul (whole, weights, &error);
  g_autoptr(HpTensor) loss = hp_tensor_sum_all (weighted, &error);

  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
}

/* The single-rank gradients of sum (weights * (x @ y)) */
static void
reference_grads (HpTensor  *x,
                 HpTensor  *y,
                 HpTensor  *weights,
                 HpTensor **gx,
                 HpTensor **gy)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) px = hp_tensor_detach (x);
  g_autoptr(HpTensor) py = hp_tensor_detach (y);
  g_autoptr(HpTensor) out = NULL;
  g_autoptr(HpTensor) weighted = NULL;
  g_autoptr(HpTensor) loss = NULL;

  hp_tensor_set_requires_grad (px, TRUE);
  hp_tensor_set_requires_grad (py, TRUE);
  out = hp_tensor_matmul (px, py, &error);
  weighted = hp_tensor_mul (out, weights, &error);
  loss = hp_tensor_sum_all (weighted, &error);
  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
  *gx = g_object_ref (hp_tensor_get_grad (px));
  *gy = g_object_ref (hp_tensor_get_grad (py));
}

/* The seed's test_local_map_grad: x S(0) and a Replicate weight y in
 * f = x @ y -> S(0) */
static void
test_grad (void)
{
  static const gint64 x_shape[] = { 7, 4 }, y_shape[] = { 4, 3 }, out_shape[] = { 7, 3 };
  const gchar *y_grads[] = { NULL, "tp:P(sum)", "tp:R" };
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = hp_test_tp_mesh ();
  g_autoptr(HpTensor) x = whole_tensor (x_shape, 2, 10);
  g_autoptr(HpTensor) y = whole_tensor (y_shape, 2, 11);
  g_autoptr(HpTensor) weights = whole_tensor (out_shape, 2, 12);
  g_autoptr(HpTensor) gx = NULL;
  g_autoptr(HpTensor) gy = NULL;
  g_autoptr(GPtrArray) out_p = named_list (1, "tp:S(0)");
  gint64 offset, length;

  hp_test_chunk (7, world_size, world_rank, &offset, &length);
  reference_grads (x, y, weights, &gx, &gy);

  for (guint c = 0; c < G_N_ELEMENTS (y_grads); c++)
    for (guint given = 0; given < 2; given++)
      {
        /* x arrives as S(0), or as S(1) and is redistributed */
        g_autoptr(HpDTensor) dx = distribute (x, mesh, given == 0 ? "S(0)" : "S(1)");
        g_autoptr(HpDTensor) dy = distribute (y, mesh, "R");
        g_autoptr(GPtrArray) in_p = named_list (2, "tp:S(0)", "tp:R");
        g_autoptr(GPtrArray) grad_p = y_grads[c] != NULL ? named_list (2, NULL, y_grads[c]) : NULL;
        g_autoptr(GPtrArray) args = tensor_list (2, dx, dy);
        Probe probe = { 0 };
        g_autoptr(HpLocalMap) map = map_new (f_matmul, &probe, out_p, in_p, grad_p, mesh, TRUE);
        g_autoptr(GPtrArray) outputs = NULL;
        g_autoptr(HpTensor) x_grad = NULL;
        HpTensor *y_grad;
        g_autoptr(HpTensor) y_grad_local = NULL;

        hp_tensor_set_requires_grad (HP_TENSOR (dx), TRUE);
        hp_tensor_set_requires_grad (HP_TENSOR (dy), TRUE);
        outputs = call_ok (map, args, 1);
        g_assert_true (hp_tensor_get_requires_grad (g_ptr_array_index (outputs, 0)));
        backward_weighted (g_ptr_array_index (outputs, 0), weights);

        hp_test_assert_placements (hp_tensor_get_grad (HP_TENSOR (dx)), given == 0 ? "(S(0))" : "(S(1))");
        x_grad = hp_test_full_tensor (hp_tensor_get_grad (HP_TENSOR (dx)));
        hp_test_assert_close (x_grad, gx, 0, 0);

        y_grad = hp_tensor_get_grad (HP_TENSOR (dy));
        hp_test_assert_placements (y_grad, "(R)");
        y_grad_local = hp_dtensor_get_local (HP_DTENSOR (y_grad));
        if (y_grads[c] == NULL || strcmp (y_grads[c], "tp:P(sum)") == 0)
          hp_test_assert_close (y_grad_local, gy, 0, 0);
        else
          {
            /* unreduced: this rank's own contribution x_r^T @ w_r */
            g_autoptr(HpTensor) x_rows = rows (x, offset, length);
            g_autoptr(HpTensor) w_rows = rows (weights, offset, length);
            g_autoptr(HpTensor) xt = hp_tensor_transpose (x_rows, 0, 1, &error);
            g_autoptr(HpTensor) mine = hp_tensor_matmul (xt, w_rows, &error);

            g_assert_no_error (error);
            hp_test_assert_close (y_grad_local, mine, 0, 0);
          }
      }

  /* the default rule does not sum where every output is Replicate: each
   * rank then computed the same thing */
  {
    g_autoptr(HpDTensor) dy = distribute (y, mesh, "R");
    g_autoptr(GPtrArray) r1 = named_list (1, "tp:R");
    g_autoptr(GPtrArray) args = tensor_list (1, dy);
    g_autoptr(HpTensor) w = whole_tensor (y_shape, 2, 13);
    g_autoptr(HpTensor) expected = hp_tensor_scale (w, 3.0, &error);
    Probe probe = { 0 };
    g_autoptr(HpLocalMap) map = map_new (f_scale, &probe, r1, r1, NULL, mesh, FALSE);
    g_autoptr(GPtrArray) outputs = NULL;
    g_autoptr(HpTensor) grad = NULL;

    g_assert_no_error (error);
    hp_tensor_set_requires_grad (HP_TENSOR (dy), TRUE);
    outputs = call_ok (map, args, 1);
    backward_weighted (g_ptr_array_index (outputs, 0), w);
    grad = hp_dtensor_get_local (HP_DTENSOR (hp_tensor_get_grad (HP_TENSOR (dy))));
    hp_test_assert_close (grad, expected, 0, 0);
  }
}

/* On two mesh dims: x sharded on dp and Replicate on tp, y Replicate:
 * the default rule (no in_grad_placements, or an empty list) sums y's
 * gradient over dp only, as the explicit entries do */
static void
test_grad_2d (void)
{
  static const gint64 x_shape[] = { 5, 4 }, y_shape[] = { 4, 2 }, out_shape[] = { 5, 2 };
  g_autoptr(HpTensor) x = whole_tensor (x_shape, 2, 14);
  g_autoptr(HpTensor) y = whole_tensor (y_shape, 2, 15);
  g_autoptr(HpTensor) weights = whole_tensor (out_shape, 2, 16);
  g_autoptr(HpTensor) gx = NULL;
  g_autoptr(HpTensor) gy = NULL;
  g_autoptr(GArray) meshes = meshes_2d ();

  reference_grads (x, y, weights, &gx, &gy);

  for (guint m = 0; m < meshes->len; m++)
    for (guint variant = 0; variant < 3; variant++)
      {
        g_autoptr(HpDeviceMesh) mesh = dp_tp_mesh (&g_array_index (meshes, gint, 2 * m));
        g_autoptr(HpDTensor) dx = distribute (x, mesh, "S(0), R");
        g_autoptr(HpDTensor) dy = distribute (y, mesh, "R, R");
        g_autoptr(GPtrArray) out_p = named_list (1, "dp:S(0)");
        g_autoptr(GPtrArray) in_p = named_list (2, "dp:S(0)", "");
        g_autoptr(GPtrArray) grad_p = variant == 0 ? NULL
                                      : variant == 1 ? named_list (0)
                                      : named_list (2, "dp:S(0)", "dp:P(sum), tp:R");
        g_autoptr(GPtrArray) args = tensor_list (2, dx, dy);
        Probe probe = { 0 };
        g_autoptr(HpLocalMap) map = map_new (f_matmul, &probe, out_p, in_p, grad_p, mesh, FALSE);
        g_autoptr(GPtrArray) outputs = NULL;
        g_autoptr(HpTensor) x_grad = NULL;
        g_autoptr(HpTensor) y_grad = NULL;

        hp_tensor_set_requires_grad (HP_TENSOR (dx), TRUE);
        hp_tensor_set_requires_grad (HP_TENSOR (dy), TRUE);
        outputs = call_ok (map, args, 1);
        hp_test_assert_placements (g_ptr_array_index (outputs, 0), "(S(0), R)");
        backward_weighted (g_ptr_array_index (outputs, 0), weights);

        hp_test_assert_placements (hp_tensor_get_grad (HP_TENSOR (dx)), "(S(0), R)");
        x_grad = hp_test_full_tensor (hp_tensor_get_grad (HP_TENSOR (dx)));
        hp_test_assert_close (x_grad, gx, 0, 0);
        hp_test_assert_placements (hp_tensor_get_grad (HP_TENSOR (dy)), "(R, R)");
        y_grad = hp_dtensor_get_local (HP_DTENSOR (hp_tensor_get_grad (HP_TENSOR (dy))));
        hp_test_assert_close (y_grad, gy, 0, 0);
      }
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init_world (&argc, &argv);
  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/local-map/seed", test_seed);
  g_test_add_func ("/local-map/uneven", test_uneven);
  g_test_add_func ("/local-map/pass-through", test_pass_through);
  g_test_add_func ("/local-map/redistribute", test_redistribute);
  g_test_add_func ("/local-map/partial-output", test_partial_output);
  g_test_add_func ("/local-map/errors", test_errors);
  g_test_add_func ("/local-map/grad", test_grad);
  g_test_add_func ("/local-map/grad-2d", test_grad_2d);

  return g_test_run ();
}
