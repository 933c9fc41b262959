/* test-parallel-dims.c: parallel dims, their resolution against a world
 * size and the meshes they build
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun on 1, 2, 3, 4 and 8 ranks. Resolution is
 * checked against world sizes written in the cases; the meshes are
 * built for the settings that fit the world the test runs in, on every
 * rank.
 */

#include "hp-test-utils.h"

static gint world_size;
static gint world_rank;

static HpParallelDims *
dims_new (gint dp_replicate,
          gint dp_shard,
          gint cp,
          gint tp,
          gint pp,
          gint ep)
{
  return g_object_new (HP_TYPE_PARALLEL_DIMS,
                       "dp-replicate", dp_replicate, "dp-shard", dp_shard,
                       "cp", cp, "tp", tp, "pp", pp, "ep", ep, NULL);
}

static void
assert_degrees (HpParallelDims *dims,
                gint            dp_replicate,
                gint            dp_shard,
                gint            cp,
                gint            tp,
                gint            pp,
                gint            ep)
{
  g_assert_cmpint (hp_parallel_dims_get_dp_replicate (dims), ==, dp_replicate);
  g_assert_cmpint (hp_parallel_dims_get_dp_shard (dims), ==, dp_shard);
  g_assert_cmpint (hp_parallel_dims_get_cp (dims), ==, cp);
  g_assert_cmpint (hp_parallel_dims_get_tp (dims), ==, tp);
  g_assert_cmpint (hp_parallel_dims_get_pp (dims), ==, pp);
  g_assert_cmpint (hp_parallel_dims_get_ep (dims), ==, ep);
}

static void
test_defaults (void)
{
  g_autoptr(HpParallelDims) dims = hp_parallel_dims_new ();
  gint dp_replicate, dp_shard, cp, tp, pp, ep;
  guint n_notify = 0;

  assert_degrees (dims, 1, -1, 1, 1, 1, 1);
  g_object_get (dims, "dp-replicate", &dp_replicate, "dp-shard", &dp_shard, "cp", &cp,
                "tp", &tp, "pp", &pp, "ep", &ep, NULL);
  g_assert_cmpint (dp_replicate, ==, 1);
  g_assert_cmpint (dp_shard, ==, -1);
  g_assert_cmpint (cp, ==, 1);
  g_assert_cmpint (tp, ==, 1);
  g_assert_cmpint (pp, ==, 1);
  g_assert_cmpint (ep, ==, 1);
  g_assert_true (HP_IS_CONFIG (dims));

  /* not resolved: no world size yet */
  g_assert_cmpint (hp_parallel_dims_get_world_size (dims), ==, -1);
  g_assert_cmpint (hp_parallel_dims_get_non_data_parallel_size (dims), ==, 1);
  g_assert_false (hp_parallel_dims_get_dp_shard_enabled (dims));
  g_assert_false (hp_parallel_dims_get_dp_enabled (dims));

  hp_test_count_signal (dims, "notify", &n_notify);
  g_object_set (dims, "tp", 1, "dp-shard", -1, NULL);
  g_assert_cmpuint (n_notify, ==, 0);
  g_object_set (dims, "tp", 2, "dp-shard", 4, "ep", 2, NULL);
  g_assert_cmpuint (n_notify, ==, 3);
  assert_degrees (dims, 1, 4, 1, 2, 1, 2);
  g_assert_cmpint (hp_parallel_dims_get_world_size (dims), ==, 8);

  /* a dp_shard of 0 is no size */
  g_object_set (dims, "dp-shard", 0, NULL);
  g_assert_cmpint (hp_parallel_dims_get_world_size (dims), ==, -1);
}

typedef struct
{
  gint world;
  gint dp_replicate, dp_shard, cp, tp, pp, ep;
  gint resolved_dp_shard;
  const gchar *error;
} ResolveCase;

static void
test_resolve (void)
{
  static const ResolveCase cases[] = {
    { 8, 1, -1, 1, 1, 1, 1, 8, NULL },
    { 8, 1, -1, 1, 2, 1, 1, 4, NULL },
    { 8, 2, -1, 1, 2, 1, 1, 2, NULL },
    { 8, 1, -1, 2, 2, 2, 1, 1, NULL },
    { 6, 1, -1, 1, 3, 1, 1, 2, NULL },
    { 1, 1, -1, 1, 1, 1, 1, 1, NULL },
    { 4, 1, 2, 1, 2, 1, 1, 2, NULL },
    { 3, 3, 1, 1, 1, 1, 1, 1, NULL },
    /* ep borrows dp_shard and cp */
    { 8, 1, -1, 1, 1, 1, 2, 8, NULL },
    { 8, 1, -1, 1, 1, 1, 8, 8, NULL },
    { 8, 1, -1, 2, 1, 1, 2, 4, NULL },
    { 8, 1, -1, 2, 1, 1, 4, 4, NULL },
    { 8, 1, -1, 2, 1, 1, 8, 4, NULL },
    { 8, 1, 2, 2, 2, 1, 4, 2, NULL },
    /* ep 1 needs nothing of cp */
    { 4, 1, -1, 2, 1, 1, 1, 2, NULL },
    /* errors */
    { 4, 1, 3, 1, 2, 1, 1, 0,
      "HpParallelDims: dp_replicate (1) * dp_shard (3) * cp (1) * tp (2) * pp (1) = 6 != world size 4" },
    { 8, 2, 2, 1, 1, 1, 1, 0,
      "HpParallelDims: dp_replicate (2) * dp_shard (2) * cp (1) * tp (1) * pp (1) = 4 != world size 8" },
    { 4, 1, 0, 1, 1, 1, 1, 0,
      "HpParallelDims: dp_shard is 0; give a degree of at least 1, or -1 for the ranks the "
      "other dims leave" },
    { 4, 1, -1, 1, 3, 1, 1, 0,
      "HpParallelDims: cannot fill dp_shard: dp_replicate (1) * cp (1) * tp (3) * pp (1) = 3 "
      "does not divide world size 4" },
    { 2, 1, -1, 2, 2, 1, 1, 0,
      "HpParallelDims: cannot fill dp_shard: dp_replicate (1) * cp (2) * tp (2) * pp (1) = 4 "
      "does not divide world size 2" },
    { 4, 65536, 1, 65536, 1, 1, 1, 0,
      "HpParallelDims: dp_replicate (65536) * dp_shard (1) * cp (65536) * tp (1) * pp (1) = "
      "more than 2147483647 != world size 4" },
    { 4, 65536, -1, 1, 65536, 1, 1, 0,
      "HpParallelDims: cannot fill dp_shard: dp_replicate (65536) * cp (1) * tp (65536) * "
      "pp (1) = more than 2147483647 does not divide world size 4" },
    { 4, 1, -1, 2, 1, 1, 3, 0,
      "HpParallelDims: ep (3) is not a multiple of cp (2): expert parallelism borrows all of "
      "cp and part of dp_shard" },
    { 8, 1, -1, 1, 2, 1, 8, 0,
      "HpParallelDims: ep (8) does not divide dp_shard (4) * cp (1) = 4: expert parallelism "
      "borrows all of cp and part of dp_shard" },
    { 8, 1, -1, 2, 1, 1, 6, 0,
      "HpParallelDims: ep (6) does not divide dp_shard (4) * cp (2) = 8" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const ResolveCase *c = &cases[i];
      g_autoptr(GError) error = NULL;
      g_autoptr(HpParallelDims) dims = dims_new (c->dp_replicate, c->dp_shard, c->cp, c->tp,
                                                 c->pp, c->ep);
      g_autoptr(HpParallelDims) resolved = hp_parallel_dims_resolve (dims, c->world, &error);

      g_test_message ("case %u: world %d", i, c->world);
      if (c->error != NULL)
        hp_test_assert_error (resolved, &error, HP_ERROR_CONFIG, c->error);
      else
        {
          g_assert_no_error (error);
          g_assert_true (resolved != dims);
          assert_degrees (resolved, c->dp_replicate, c->resolved_dp_shard, c->cp, c->tp, c->pp,
                          c->ep);
          g_assert_cmpint (hp_parallel_dims_get_world_size (resolved), ==, c->world);
        }
      /* the dims resolved are left as they were */
      assert_degrees (dims, c->dp_replicate, c->dp_shard, c->cp, c->tp, c->pp, c->ep);
    }
}

typedef struct
{
  gint dp_replicate, dp_shard, cp, tp, pp, ep;
  /* dp, dp_replicate, dp_shard, fsdp, cp, dp_cp, tp, pp, ep */
  const gchar *enabled;
  gint non_data_parallel_size;
} PredicateCase;

static void
test_predicates (void)
{
  static const PredicateCase cases[] = {
    { 1, 1, 1, 1, 1, 1, "---------", 1 },
    { 2, 2, 1, 2, 1, 1, "yyyy-yy--", 2 },
    { 1, 1, 2, 2, 2, 1, "---yyyyy-", 8 },
    { 2, 1, 1, 1, 1, 1, "yy---y---", 1 },
    { 1, 4, 1, 1, 1, 2, "y-yy-y--y", 1 },
    { 1, 1, 1, 1, 4, 1, "-------y-", 4 },
    /* not resolved: -1 is not a degree above 1 */
    { 1, -1, 1, 1, 1, 1, "---------", 1 },
    { 1, -1, 65536, 65536, 1, 1, "---yyyy--", -1 },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const PredicateCase *c = &cases[i];
      g_autoptr(HpParallelDims) dims = dims_new (c->dp_replicate, c->dp_shard, c->cp, c->tp,
                                                 c->pp, c->ep);
      gchar enabled[10];

      enabled[0] = hp_parallel_dims_get_dp_enabled (dims) ? 'y' : '-';
      enabled[1] = hp_parallel_dims_get_dp_replicate_enabled (dims) ? 'y' : '-';
      enabled[2] = hp_parallel_dims_get_dp_shard_enabled (dims) ? 'y' : '-';
      enabled[3] = hp_parallel_dims_get_fsdp_enabled (dims) ? 'y' : '-';
      enabled[4] = hp_parallel_dims_get_cp_enabled (dims) ? 'y' : '-';
      enabled[5] = hp_parallel_dims_get_dp_cp_enabled (dims) ? 'y' : '-';
      enabled[6] = hp_parallel_dims_get_tp_enabled (dims) ? 'y' : '-';
      enabled[7] = hp_parallel_dims_get_pp_enabled (dims) ? 'y' : '-';
      enabled[8] = hp_parallel_dims_get_ep_enabled (dims) ? 'y' : '-';
      enabled[9] = '\0';
      g_test_message ("case %u", i);
      g_assert_cmpstr (enabled, ==, c->enabled);
      g_assert_cmpint (hp_parallel_dims_get_non_data_parallel_size (dims), ==,
                       c->non_data_parallel_size);
    }
}

static void
test_config (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) dims = dims_new (2, -1, 1, 4, 1, 2);
  g_autoptr(HpConfig) copy = hp_config_copy (HP_CONFIG (dims));
  g_autoptr(HpConfig) read = NULL;
  g_autofree gchar *json = NULL;

  g_assert_true (HP_IS_PARALLEL_DIMS (copy));
  g_assert_true (hp_config_equal (copy, HP_CONFIG (dims)));
  assert_degrees (HP_PARALLEL_DIMS (copy), 2, -1, 1, 4, 1, 2);

  json = hp_config_to_json (HP_CONFIG (dims), FALSE);
  read = hp_config_new_from_json (HP_TYPE_PARALLEL_DIMS, json, &error);
  g_assert_no_error (error);
  g_assert_true (hp_config_equal (read, HP_CONFIG (dims)));

  /* the dims build nothing */
  hp_test_assert_error (hp_config_build (HP_CONFIG (dims), &error), &error,
                        HP_ERROR_NOT_SUPPORTED, "HpParallelDims has no owner class");
}

/* validate checks the rules that need no world size, the messages of
 * resolve */
static void
test_validate (void)
{
  static const struct
  {
    gint dp_replicate, dp_shard, cp, tp, pp, ep;
    const gchar *error;
  } cases[] = {
    { 1, -1, 1, 1, 1, 1, NULL },
    /* dp_shard not known yet: ep against it waits for resolve */
    { 1, -1, 1, 1, 1, 8, NULL },
    { 2, 4, 2, 2, 1, 8, NULL },
    /* the product against a world size waits for resolve */
    { 65536, 1, 65536, 1, 1, 1, NULL },
    { 1, 0, 1, 1, 1, 1,
      "HpParallelDims: dp_shard is 0; give a degree of at least 1, or -1 for the ranks the "
      "other dims leave" },
    { 1, -1, 2, 1, 1, 3,
      "HpParallelDims: ep (3) is not a multiple of cp (2): expert parallelism borrows all of "
      "cp and part of dp_shard" },
    { 1, 4, 1, 2, 1, 8,
      "HpParallelDims: ep (8) does not divide dp_shard (4) * cp (1) = 4: expert parallelism "
      "borrows all of cp and part of dp_shard" },
    /* no overflow in dp_shard * cp */
    { 1, 65536, 65536, 1, 1, 3,
      "HpParallelDims: ep (3) is not a multiple of cp (65536)" },
    { 1, 65536, 65536, 1, 1, 131072 * 3,
      "HpParallelDims: ep (393216) does not divide dp_shard (65536) * cp (65536) = 4294967296" },
    { 1, 65535, 65536, 1, 1, 131072,
      "HpParallelDims: ep (131072) does not divide dp_shard (65535) * cp (65536) = 4294901760" },
  };

  for (guint i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(HpParallelDims) dims = dims_new (cases[i].dp_replicate, cases[i].dp_shard,
                                                 cases[i].cp, cases[i].tp, cases[i].pp,
                                                 cases[i].ep);
      gboolean valid = hp_config_validate (HP_CONFIG (dims), &error);

      g_test_message ("case %u", i);
      if (cases[i].error == NULL)
        {
          g_assert_no_error (error);
          g_assert_true (valid);
        }
      else
        hp_test_assert_error (GINT_TO_POINTER (valid), &error, HP_ERROR_CONFIG, cases[i].error);
    }
}

/* Asserts that @mesh has the dims of @expected ("dp_shard:4,tp:2"), that
 * this rank sits at the row-major coordinate of its world rank, and
 * that the mesh spans the world. */
static void
assert_mesh (HpDeviceMesh *mesh,
             const gchar  *expected)
{
  g_auto(GStrv) dims = g_strsplit (expected, ",", -1);
  const gchar * const *names;
  const gint *shape;
  const gint *coordinate;
  guint ndim;
  gint index = 0;

  g_assert_nonnull (mesh);
  names = hp_device_mesh_get_dim_names (mesh);
  shape = hp_device_mesh_get_shape (mesh, &ndim);
  g_assert_cmpuint (ndim, ==, g_strv_length (dims));
  for (guint d = 0; d < ndim; d++)
    {
      g_autofree gchar *dim = g_strdup_printf ("%s:%d", names[d], shape[d]);

      g_assert_cmpstr (dim, ==, dims[d]);
    }
  g_assert_null (names[ndim]);
  g_assert_cmpint (hp_device_mesh_get_size (mesh), ==, world_size);
  g_assert_cmpint (hp_device_mesh_get_rank (mesh), ==, world_rank);

  coordinate = hp_device_mesh_get_coordinate (mesh, &ndim);
  for (guint d = 0; d < ndim; d++)
    index = index * shape[d] + coordinate[d];
  g_assert_cmpint (index, ==, world_rank);
}

static gchar *
expect (const gchar *first,
        ...)
{
  GString *out = g_string_new (NULL);
  va_list args;

  va_start (args, first);
  for (const gchar *name = first; name != NULL; name = va_arg (args, const gchar *))
    {
      gint size = va_arg (args, gint);

      if (size > 1)
        g_string_append_printf (out, "%s%s:%d", out->len > 0 ? "," : "", name, size);
    }
  va_end (args);
  return g_string_free (out, FALSE);
}

/* The meshes @dims builds, as "name:size,..." (NULL: not built): the
 * dense one and the expert one */
static void
check_build (HpParallelDims *dims,
             const gchar    *expected,
             const gchar    *expected_expert)
{
  g_autoptr(GError) error = NULL;

  if (expected != NULL)
    {
      g_autoptr(HpDeviceMesh) mesh = hp_parallel_dims_build_mesh (dims, &error);

      g_assert_no_error (error);
      g_test_message ("mesh %s", expected);
      assert_mesh (mesh, expected);
    }
  if (expected_expert != NULL)
    {
      g_autoptr(HpDeviceMesh) mesh = hp_parallel_dims_build_expert_mesh (dims, &error);

      g_assert_no_error (error);
      g_test_message ("expert mesh %s", expected_expert);
      assert_mesh (mesh, expected_expert);
    }
}

static void
test_build_mesh (void)
{
  gint w = world_size;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) defaults = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) all_tp = dims_new (1, -1, 1, w, 1, 1);
  g_autoptr(HpParallelDims) too_big = dims_new (1, -1, 1, w + 1, 1, 1);
  g_autoptr(HpParallelDims) too_wide = dims_new (1, 2 * w, 1, 1, 1, 1);
  g_autofree gchar *fill_error = NULL;
  g_autofree gchar *product_error = NULL;
  g_autofree gchar *fsdp_text = g_strdup_printf ("dp_shard:%d", w);
  g_autofree gchar *tp_text = g_strdup_printf ("tp:%d", w);

  /* no parallelism but FSDP: one dp_shard dim over the world, also on
   * one rank */
  check_build (defaults, fsdp_text, NULL);
  /* all tensor parallel; on one rank nothing is above 1 */
  check_build (all_tp, w > 1 ? tp_text : "dp_shard:1", NULL);

  if (w % 2 == 0)
    {
      g_autoptr(HpParallelDims) tp = dims_new (1, -1, 1, 2, 1, 1);
      g_autoptr(HpParallelDims) cp = dims_new (1, -1, 2, 1, 1, 1);
      g_autoptr(HpParallelDims) pp = dims_new (1, -1, 1, 1, 2, 1);
      g_autoptr(HpParallelDims) replicate = dims_new (w, 1, 1, 1, 1, 1);
      g_autofree gchar *half_tp = expect ("dp_shard", w / 2, "tp", 2, NULL);
      g_autofree gchar *cp_text = expect ("dp_shard", w / 2, "cp", 2, NULL);
      g_autofree gchar *pp_text = expect ("dp_shard", w / 2, "pp", 2, NULL);
      g_autofree gchar *replicate_text = expect ("dp_replicate", w, NULL);

      check_build (tp, half_tp, NULL);
      check_build (cp, cp_text, NULL);
      check_build (pp, pp_text, NULL);
      check_build (replicate, replicate_text, NULL);
    }
  if (w % 4 == 0)
    {
      g_autoptr(HpParallelDims) hsdp_tp = dims_new (2, -1, 1, 2, 1, 1);
      g_autofree gchar *hsdp_text = expect ("dp_replicate", 2, "dp_shard", w / 4, "tp", 2, NULL);

      check_build (hsdp_tp, hsdp_text, NULL);
    }
  if (w == 8)
    {
      g_autoptr(HpParallelDims) three = dims_new (2, 1, 2, 2, 1, 1);
      g_autoptr(HpParallelDims) shard_tp_pp = dims_new (1, 2, 1, 2, 2, 1);

      check_build (three, "dp_replicate:2,cp:2,tp:2", NULL);
      check_build (shard_tp_pp, "dp_shard:2,tp:2,pp:2", NULL);
    }
  if (w == 3)
    {
      g_autoptr(HpParallelDims) tp3 = dims_new (1, 1, 1, 3, 1, 1);

      check_build (tp3, "tp:3", NULL);
    }

  /* degrees that do not fit the world fail on every rank, before any
   * communication */
  fill_error = g_strdup_printf ("HpParallelDims: cannot fill dp_shard: dp_replicate (1) * cp (1) * "
                                "tp (%d) * pp (1) = %d does not divide world size %d",
                                w + 1, w + 1, w);
  hp_test_assert_error (hp_parallel_dims_build_mesh (too_big, &error), &error, HP_ERROR_CONFIG,
                        fill_error);
  product_error = g_strdup_printf ("HpParallelDims: dp_replicate (1) * dp_shard (%d) * cp (1) * "
                                   "tp (1) * pp (1) = %d != world size %d", 2 * w, 2 * w, w);
  hp_test_assert_error (hp_parallel_dims_build_mesh (too_wide, &error), &error, HP_ERROR_CONFIG,
                        product_error);
  hp_test_assert_error (hp_parallel_dims_build_expert_mesh (too_wide, &error), &error,
                        HP_ERROR_CONFIG, product_error);
  /* the dims are left as they were */
  assert_degrees (too_big, 1, -1, 1, w + 1, 1, 1);
  assert_degrees (too_wide, 1, 2 * w, 1, 1, 1, 1);
}

/* This rank's coordinate on the dim @name of @mesh */
static gint
local_rank (HpDeviceMesh *mesh,
            const gchar  *name)
{
  g_autoptr(GError) error = NULL;
  gint dim = hp_device_mesh_get_dim_index (mesh, name, &error);

  g_assert_no_error (error);
  return hp_device_mesh_get_local_rank (mesh, (guint) dim);
}

/* On a dense mesh with dp_shard and cp dims and the expert mesh with
 * efsdp and ep dims of the same dims, checks that this rank's
 * position in dp_shard x cp is its position in efsdp x ep */
static void
assert_borrowed (HpDeviceMesh *dense,
                 HpDeviceMesh *expert,
                 gint          cp,
                 gint          ep)
{
  gint s = local_rank (dense, "dp_shard");
  gint c = local_rank (dense, "cp");
  gint e = local_rank (expert, "efsdp");
  gint k = local_rank (expert, "ep");

  g_assert_cmpint ((s * cp + c) / ep, ==, e);
  g_assert_cmpint ((s * cp + c) % ep, ==, k);
}

static void
test_build_expert_mesh (void)
{
  gint w = world_size;
  g_autoptr(GError) error = NULL;
  g_autoptr(HpParallelDims) defaults = hp_parallel_dims_new ();
  g_autoptr(HpParallelDims) too_many = dims_new (1, -1, 1, 1, 1, 2 * w);
  g_autofree gchar *text = g_strdup_printf ("efsdp:%d", w);
  g_autofree gchar *ep_error = NULL;

  check_build (defaults, NULL, text);

  if (w % 2 == 0)
    {
      g_autoptr(HpParallelDims) ep = dims_new (1, -1, 1, 1, 1, 2);
      g_autofree gchar *dense_text = g_strdup_printf ("dp_shard:%d", w);
      g_autofree gchar *expert_text = expect ("efsdp", w / 2, "ep", 2, NULL);

      /* ep adds no dim to the dense mesh */
      check_build (ep, dense_text, expert_text);
    }
  if (w % 4 == 0)
    {
      g_autoptr(HpParallelDims) cp_ep = dims_new (1, -1, 2, 1, 1, 2);
      g_autoptr(HpParallelDims) ep_tp = dims_new (1, -1, 1, 2, 1, 2);
      g_autoptr(HpDeviceMesh) dense = NULL;
      g_autoptr(HpDeviceMesh) expert = NULL;
      g_autofree gchar *dense_text = g_strdup_printf ("dp_shard:%d,cp:2", w / 2);
      g_autofree gchar *expert_text = g_strdup_printf ("efsdp:%d,ep:2", w / 2);
      g_autofree gchar *ep_tp_dense = g_strdup_printf ("dp_shard:%d,tp:2", w / 2);
      g_autofree gchar *ep_tp_expert = expect ("efsdp", w / 4, "ep", 2, "tp", 2, NULL);

      check_build (cp_ep, dense_text, expert_text);
      dense = hp_parallel_dims_build_mesh (cp_ep, &error);
      g_assert_no_error (error);
      expert = hp_parallel_dims_build_expert_mesh (cp_ep, &error);
      g_assert_no_error (error);
      assert_borrowed (dense, expert, 2, 2);

      check_build (ep_tp, ep_tp_dense, ep_tp_expert);
    }
  if (w == 8)
    {
      g_autoptr(HpParallelDims) wide_ep = dims_new (1, -1, 2, 1, 1, 4);
      g_autoptr(HpParallelDims) hsdp_ep = dims_new (2, -1, 1, 1, 1, 4);
      g_autoptr(HpDeviceMesh) dense = NULL;
      g_autoptr(HpDeviceMesh) expert = NULL;

      check_build (wide_ep, "dp_shard:4,cp:2", "efsdp:2,ep:4");
      dense = hp_parallel_dims_build_mesh (wide_ep, &error);
      g_assert_no_error (error);
      expert = hp_parallel_dims_build_expert_mesh (wide_ep, &error);
      g_assert_no_error (error);
      assert_borrowed (dense, expert, 2, 4);

      check_build (hsdp_ep, "dp_replicate:2,dp_shard:4", "dp_replicate:2,ep:4");
    }

  ep_error = g_strdup_printf ("HpParallelDims: ep (%d) does not divide dp_shard (%d) * cp (1) = %d",
                              2 * w, w, w);
  hp_test_assert_error (hp_parallel_dims_build_expert_mesh (too_many, &error), &error,
                        HP_ERROR_CONFIG, ep_error);
  hp_test_assert_error (hp_parallel_dims_build_mesh (too_many, &error), &error,
                        HP_ERROR_CONFIG, ep_error);
  assert_degrees (too_many, 1, -1, 1, 1, 1, 2 * w);
}

int
main (int   argc,
      char *argv[])
{
  hp_test_init (&argc, &argv);

  world_size = hp_get_world_size ();
  world_rank = hp_get_world_rank ();

  g_test_add_func ("/parallel-dims/defaults", test_defaults);
  g_test_add_func ("/parallel-dims/resolve", test_resolve);
  g_test_add_func ("/parallel-dims/predicates", test_predicates);
  g_test_add_func ("/parallel-dims/config", test_config);
  g_test_add_func ("/parallel-dims/validate", test_validate);
  g_test_add_func ("/parallel-dims/build-mesh", test_build_mesh);
  g_test_add_func ("/parallel-dims/build-expert-mesh", test_build_expert_mesh);

  return g_test_run ();
}
