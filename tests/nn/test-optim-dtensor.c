/* test-optim-dtensor.c: optimizers and gradient clipping on DTensor
 * parameters
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Runs alone and under mpirun (suite mpi). A small two-layer network
 * and two elementwise terms are trained twice on every rank: once with
 * plain tensors (the one-rank computation) and once with DTensor
 * parameters laid out as tensor-parallel layers (Shard(0), Shard(1),
 * Replicate, on a 1-D mesh and on 2-D meshes, with uneven and nested
 * shards), their gradients coming from a real backward pass through the
 * DTensor ops. After every step the full tensor of each parameter, of
 * each gradient and of each optimizer state must equal its plain twin
 * (1e-12), and gradient clipping must find the same norm, identical on
 * every rank, and scale the gradients the same way.
 */

#include <math.h>
#include <mpi.h>
#include <string.h>

#include "hp-test-utils.h"

static gint world_size;

enum {
  W1, B1, W2, B2, G, E, N_PARAMS
};

enum {
  X, XS, N_INPUTS
};

static const gchar * const param_names[N_PARAMS] = { "w1", "b1", "w2", "b2", "g", "e" };

static const gint64 param_shapes[N_PARAMS][2] = {
  { 7, 4 }, { 7, 0 }, { 5, 7 }, { 5, 0 }, { 4, 0 }, { 6, 0 },
};

static const gint64 input_shape[2] = { 6, 4 };

/* A layout: mesh shape and names, and one placement list per parameter
 * and input ("S(0),R" gives one placement per mesh dim) */
typedef struct
{
  gint shape[2];
  guint ndim;
  const gchar *params[N_PARAMS];
  const gchar *inputs[N_INPUTS];
} Layout;

static HpDeviceMesh *
make_mesh (const Layout *layout)
{
  g_autoptr(GError) error = NULL;
  const gchar *names_1d[] = { "tp", NULL };
  const gchar *names_2d[] = { "dp", "tp", NULL };
  HpDeviceMesh *mesh = hp_device_mesh_new (layout->shape, layout->ndim,
                                           layout->ndim == 2 ? names_2d : names_1d, &error);

  g_assert_no_error (error);
  return mesh;
}

static GPtrArray *
parse_placements (const gchar *text)
{
  g_auto(GStrv) parts = g_strsplit (text, ",", -1);
  GPtrArray *out = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; parts[i] != NULL; i++)
    {
      g_autoptr(GError) error = NULL;
      HpPlacement *p = hp_placement_new_from_string (parts[i], &error);

      g_assert_no_error (error);
      g_ptr_array_add (out, p);
    }
  return out;
}

static HpDTensor *
distribute (HpTensor     *whole,
            HpDeviceMesh *mesh,
            const gchar  *placements_text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = parse_placements (placements_text);
  HpDTensor *dt = hp_dtensor_distribute (whole, mesh, placements, -1, &error);

  g_assert_no_error (error);
  return dt;
}

/* Both twins of each parameter: the plain tensors and the DTensors,
 * with the same starting values and separate buffers */
typedef struct
{
  GPtrArray *plain;
  GPtrArray *dist;
  HpTensor *inputs[N_INPUTS];
  HpTensor *dist_inputs[N_INPUTS];
} Twins;

static void
twins_init (Twins        *twins,
            const Layout *layout,
            HpDeviceMesh *mesh)
{
  twins->plain = g_ptr_array_new_with_free_func (g_object_unref);
  twins->dist = g_ptr_array_new_with_free_func (g_object_unref);

  for (guint i = 0; i < N_PARAMS; i++)
    {
      guint ndim = param_shapes[i][1] > 0 ? 2 : 1;
      HpTensor *plain = hp_test_randn (HP_DTYPE_FLOAT64, param_shapes[i], ndim, 100 + i, TRUE);
      g_autoptr(HpTensor) source = hp_test_randn (HP_DTYPE_FLOAT64, param_shapes[i], ndim, 100 + i, FALSE);
      HpDTensor *dist = distribute (source, mesh, layout->params[i]);

      hp_tensor_set_requires_grad (HP_TENSOR (dist), TRUE);
      g_ptr_array_add (twins->plain, plain);
      g_ptr_array_add (twins->dist, dist);
    }

  for (guint i = 0; i < N_INPUTS; i++)
    {
      twins->inputs[i] = hp_test_randn (HP_DTYPE_FLOAT64, input_shape, 2, 200 + i, FALSE);
      twins->dist_inputs[i] = HP_TENSOR (distribute (twins->inputs[i], mesh, layout->inputs[i]));
    }
}

static void
twins_clear (Twins *twins)
{
  g_ptr_array_unref (twins->plain);
  g_ptr_array_unref (twins->dist);
  for (guint i = 0; i < N_INPUTS; i++)
    {
      g_object_unref (twins->inputs[i]);
      g_object_unref (twins->dist_inputs[i]);
    }
}

/* loss = sum (y * y) + sum (silu (xs * g)) + sum (silu (e) * e) with
 * y = linear (silu (linear (x, w1, b1)), w2, b2); then backward */
static void
forward_backward (GPtrArray  *params,
                  HpTensor  **inputs)
{
  g_autoptr(GError) error = NULL;
  HpTensor **p = (HpTensor **) params->pdata;
  g_autoptr(HpTensor) h = hp_tensor_linear (inputs[X], p[W1], p[B1], &error);
  g_autoptr(HpTensor) a = hp_tensor_silu (h, &error);
  g_autoptr(HpTensor) y = hp_tensor_linear (a, p[W2], p[B2], &error);
  g_autoptr(HpTensor) yy = hp_tensor_mul (y, y, &error);
  g_autoptr(HpTensor) loss1 = hp_tensor_sum_all (yy, &error);
  g_autoptr(HpTensor) u = hp_tensor_mul (inputs[XS], p[G], &error);
  g_autoptr(HpTensor) su = hp_tensor_silu (u, &error);
  g_autoptr(HpTensor) loss2 = hp_tensor_sum_all (su, &error);
  g_autoptr(HpTensor) se = hp_tensor_silu (p[E], &error);
  g_autoptr(HpTensor) see = hp_tensor_mul (se, p[E], &error);
  g_autoptr(HpTensor) loss3 = hp_tensor_sum_all (see, &error);
  g_autoptr(HpTensor) loss12 = hp_tensor_add (loss1, loss2, &error);
  g_autoptr(HpTensor) loss = hp_tensor_add (loss12, loss3, &error);

  g_assert_no_error (error);
  g_assert_true (hp_tensor_backward (loss, NULL, &error));
  g_assert_no_error (error);
}

static HpTensor *
full (HpTensor *t)
{
  g_autoptr(GError) error = NULL;
  HpTensor *out;

  g_assert_true (HP_IS_DTENSOR (t));
  out = hp_dtensor_full_tensor (HP_DTENSOR (t), &error);
  g_assert_no_error (error);
  return out;
}

static void
assert_twins (HpTensor    *dist,
              HpTensor    *plain,
              const gchar *what)
{
  g_autoptr(HpTensor) whole = full (dist);

  if (!hp_tensor_allclose (whole, plain, 1e-12, 1e-12))
    g_test_message ("%s differs", what);
  hp_test_assert_close (whole, plain, 1e-12, 1e-12);
}

static void
assert_grads (Twins *twins)
{
  for (guint i = 0; i < N_PARAMS; i++)
    {
      HpTensor *dist = g_ptr_array_index (twins->dist, i);
      HpTensor *grad = hp_tensor_get_grad (dist);

      /* the gradient rule gives every gradient its parameter's layout */
      g_assert_nonnull (grad);
      g_assert_true (HP_IS_DTENSOR (grad));
      g_assert_cmpuint (hp_dtensor_get_placements (HP_DTENSOR (grad))->len, ==,
                        hp_dtensor_get_placements (HP_DTENSOR (dist))->len);
      for (guint d = 0; d < hp_dtensor_get_placements (HP_DTENSOR (grad))->len; d++)
        g_assert_true (hp_placement_equal (g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (grad)), d),
                                           g_ptr_array_index (hp_dtensor_get_placements (HP_DTENSOR (dist)), d)));
      assert_twins (grad, hp_tensor_get_grad (g_ptr_array_index (twins->plain, i)), param_names[i]);
    }
}

static void
assert_params (Twins *twins)
{
  for (guint i = 0; i < N_PARAMS; i++)
    assert_twins (g_ptr_array_index (twins->dist, i), g_ptr_array_index (twins->plain, i),
                  param_names[i]);
}

/* Every rank got the very same value */
static void
assert_same_on_every_rank (gdouble value)
{
  g_autofree gdouble *all = g_new (gdouble, world_size);

  g_assert_cmpint (MPI_Allgather (&value, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD), ==,
                   MPI_SUCCESS);
  for (gint r = 0; r < world_size; r++)
    g_assert_true (memcmp (&all[r], &value, sizeof value) == 0);
}

static void
check_states (HpOptimizer *dist_opt,
              HpOptimizer *plain_opt)
{
  g_autoptr(HpStateDict) dist = hp_optimizer_get_state (dist_opt);
  g_autoptr(HpStateDict) plain = hp_optimizer_get_state (plain_opt);
  guint n = hp_state_dict_get_size (plain);

  g_assert_cmpuint (n, >, 0);
  g_assert_cmpuint (hp_state_dict_get_size (dist), ==, n);
  for (guint i = 0; i < n; i++)
    {
      const gchar *name = hp_state_dict_get_name (plain, i);
      HpTensor *state = hp_state_dict_get_tensor (dist, i);

      g_assert_cmpstr (hp_state_dict_get_name (dist, i), ==, name);
      if (g_str_has_suffix (name, ".step"))
        hp_test_assert_close (state, hp_state_dict_get_tensor (plain, i), 0, 0);
      else
        assert_twins (state, hp_state_dict_get_tensor (plain, i), name);
    }
}

static void
check_training (const Layout      *layout,
                HpOptimizerConfig *config,
                gboolean           clip)
{
  g_autoptr(HpDeviceMesh) mesh = make_mesh (layout);
  g_autoptr(HpOptimizer) plain_opt = NULL;
  g_autoptr(HpOptimizer) dist_opt = NULL;
  g_autoptr(GError) error = NULL;
  Twins twins;

  if (layout->ndim == 2)
    g_test_message ("%s on mesh %d x %d%s", G_OBJECT_TYPE_NAME (config), layout->shape[0],
                    layout->shape[1], clip ? ", clipped" : "");
  else
    g_test_message ("%s on mesh %d%s", G_OBJECT_TYPE_NAME (config), layout->shape[0],
                    clip ? ", clipped" : "");

  twins_init (&twins, layout, mesh);
  plain_opt = hp_optimizer_config_build_optimizer (config, twins.plain, &error);
  g_assert_no_error (error);
  dist_opt = hp_optimizer_config_build_optimizer (config, twins.dist, &error);
  g_assert_no_error (error);

  for (guint step = 0; step < 4; step++)
    {
      hp_optimizer_zero_grad (plain_opt);
      hp_optimizer_zero_grad (dist_opt);
      forward_backward (twins.plain, twins.inputs);
      forward_backward (twins.dist, twins.dist_inputs);
      assert_grads (&twins);

      if (clip)
        {
          gdouble plain_norm = hp_clip_grad_norm (twins.plain, 0.5, 2.0, &error);
          gdouble dist_norm = hp_clip_grad_norm (twins.dist, 0.5, 2.0, &error);

          g_assert_no_error (error);
          g_assert_cmpfloat (plain_norm, >, 0.5);
          g_assert_cmpfloat_with_epsilon (dist_norm / plain_norm, 1.0, 1e-12);
          assert_same_on_every_rank (dist_norm);
          assert_grads (&twins);
        }

      g_assert_true (hp_optimizer_step (plain_opt, &error));
      g_assert_true (hp_optimizer_step (dist_opt, &error));
      g_assert_no_error (error);
      assert_params (&twins);
    }

  check_states (dist_opt, plain_opt);
  twins_clear (&twins);
}

/* The norms over a mixed list: DTensor gradients of every layout and a
 * plain gradient, which counts once */
static void
check_norms (const Layout *layout)
{
  const gdouble norm_types[] = { 2.0, 1.0, 3.0, INFINITY };
  g_autoptr(HpDeviceMesh) mesh = make_mesh (layout);
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) extra = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 300, TRUE);
  g_autoptr(HpTensor) extra_grad = hp_test_randn (HP_DTYPE_FLOAT64, HP_TEST_SHAPE (3), 301, FALSE);
  Twins twins;

  twins_init (&twins, layout, mesh);
  g_ptr_array_add (twins.plain, g_object_ref (extra));
  g_ptr_array_add (twins.dist, g_object_ref (extra));
  hp_tensor_set_grad (extra, extra_grad);

  forward_backward (twins.plain, twins.inputs);
  forward_backward (twins.dist, twins.dist_inputs);

  for (guint k = 0; k < G_N_ELEMENTS (norm_types); k++)
    {
      /* a max_norm above the norm: measure only */
      gdouble plain_norm = hp_clip_grad_norm (twins.plain, 1e300, norm_types[k], &error);
      gdouble dist_norm = hp_clip_grad_norm (twins.dist, 1e300, norm_types[k], &error);

      g_assert_no_error (error);
      g_test_message ("norm %g: %.17g", norm_types[k], dist_norm);
      g_assert_cmpfloat_with_epsilon (dist_norm / plain_norm, 1.0, 1e-12);
      assert_same_on_every_rank (dist_norm);
    }

  twins_clear (&twins);
}

static GPtrArray *
layouts (void)
{
  GPtrArray *out = g_ptr_array_new_with_free_func (g_free);
  Layout *one = g_new0 (Layout, 1);

  /* tensor parallel: colwise w1, b1, rowwise w2, replicated b2 and g,
   * sharded e; inputs replicated and batch-sharded */
  *one = (Layout) {
    { world_size, 0 }, 1,
    { "S(0)", "S(0)", "S(1)", "R", "R", "S(0)" },
    { "R", "S(0)" },
  };
  g_ptr_array_add (out, one);

  /* 2-D: data parallel over dp (batch-sharded inputs, replicated
   * weights), tensor parallel over tp, e sharded on both (nested) */
  if (world_size % 2 == 0 && world_size >= 4)
    {
      Layout *two = g_new0 (Layout, 1);

      *two = (Layout) {
        { 2, world_size / 2 }, 2,
        { "R,S(0)", "R,S(0)", "R,S(1)", "R,R", "R,R", "S(0),S(0)" },
        { "S(0),R", "S(0),S(0)" },
      };
      g_ptr_array_add (out, two);
    }

  /* 2-D with a dim of size 1, on any number of ranks */
  {
    Layout *flat = g_new0 (Layout, 1);

    *flat = (Layout) {
      { 1, world_size }, 2,
      { "S(0),S(0)", "R,S(0)", "S(1),S(1)", "R,R", "S(0),R", "R,S(0)" },
      { "S(0),R", "R,S(0)" },
    };
    g_ptr_array_add (out, flat);
  }
  return out;
}

static void
test_sgd (void)
{
  g_autoptr(GPtrArray) all = layouts ();
  g_autoptr(HpOptimizerConfig) momentum = g_object_new (HP_TYPE_SGD_CONFIG, "lr", 0.002, "momentum", 0.9,
                                                        "dampening", 0.1, "weight-decay", 0.01, NULL);
  g_autoptr(HpOptimizerConfig) nesterov = g_object_new (HP_TYPE_SGD_CONFIG, "lr", 0.001, "momentum", 0.8,
                                                        "nesterov", TRUE, NULL);

  for (guint i = 0; i < all->len; i++)
    {
      check_training (g_ptr_array_index (all, i), momentum, FALSE);
      check_training (g_ptr_array_index (all, i), nesterov, TRUE);
    }
}

static void
test_adamw (void)
{
  g_autoptr(GPtrArray) all = layouts ();
  g_autoptr(HpOptimizerConfig) adamw = g_object_new (HP_TYPE_ADAMW_CONFIG, "lr", 0.01,
                                                     "weight-decay", 0.1, NULL);

  for (guint i = 0; i < all->len; i++)
    {
      check_training (g_ptr_array_index (all, i), adamw, FALSE);
      check_training (g_ptr_array_index (all, i), adamw, TRUE);
    }
}

/* Two steps, the states saved as whole tensors, a new optimizer
 * loading them, two more steps: the same parameters as four steps of
 * one optimizer */
static void
check_resume (const Layout      *layout,
              HpOptimizerConfig *config)
{
  g_autoptr(HpDeviceMesh) mesh = make_mesh (layout);
  g_autoptr(HpOptimizer) plain_opt = NULL;
  g_autoptr(HpOptimizer) dist_opt = NULL;
  g_autoptr(HpOptimizer) resumed = NULL;
  g_autoptr(HpStateDict) states = NULL;
  g_autoptr(HpStateDict) saved = hp_state_dict_new ();
  g_autoptr(GError) error = NULL;
  Twins twins;

  twins_init (&twins, layout, mesh);
  plain_opt = hp_optimizer_config_build_optimizer (config, twins.plain, &error);
  dist_opt = hp_optimizer_config_build_optimizer (config, twins.dist, &error);
  g_assert_no_error (error);

  for (guint step = 0; step < 4; step++)
    {
      HpOptimizer *opt = dist_opt;

      if (step == 2)
        {
          states = hp_optimizer_get_state (dist_opt);
          for (guint i = 0; i < hp_state_dict_get_size (states); i++)
            {
              HpTensor *state = hp_state_dict_get_tensor (states, i);
              g_autoptr(HpTensor) whole = HP_IS_DTENSOR (state) ? full (state)
                                                                : g_object_ref (state);

              hp_state_dict_insert (saved, hp_state_dict_get_name (states, i), whole);
            }
          resumed = hp_optimizer_config_build_optimizer (config, twins.dist, &error);
          g_assert_true (hp_optimizer_load_state (resumed, saved,
                                                  hp_optimizer_get_step_count (dist_opt), &error));
          g_assert_no_error (error);
          g_assert_cmpuint (hp_optimizer_get_step_count (resumed), ==, 2);
        }
      if (resumed != NULL)
        opt = resumed;

      hp_optimizer_zero_grad (plain_opt);
      hp_optimizer_zero_grad (opt);
      forward_backward (twins.plain, twins.inputs);
      forward_backward (twins.dist, twins.dist_inputs);
      g_assert_true (hp_optimizer_step (plain_opt, &error));
      g_assert_true (hp_optimizer_step (opt, &error));
      g_assert_no_error (error);
    }
  assert_params (&twins);
  check_states (resumed, plain_opt);

  /* bad states: the optimizer is unchanged */
  {
    const gchar *state_name = hp_state_dict_lookup (saved, "2.exp_avg") != NULL ? "2.exp_avg"
                                                                               : "2.momentum_buffer";
    g_autoptr(HpStateDict) before = hp_optimizer_get_state (resumed);
    g_autoptr(HpStateDict) before_whole = hp_state_dict_new ();
    g_autoptr(HpStateDict) after = NULL;
    g_autoptr(HpStateDict) unknown = hp_state_dict_new ();
    g_autoptr(HpStateDict) unlike = hp_state_dict_new ();
    g_autoptr(HpStateDict) wrong_shape = hp_state_dict_new ();
    g_autoptr(HpDTensor) replicated = distribute (hp_state_dict_lookup (saved, state_name), mesh,
                                                  layout->ndim == 2 ? "R,R" : "R");
    g_autoptr(HpTensor) ones = hp_tensor_new_ones (HP_DTYPE_FLOAT64, (const gint64[]) { 1, 1, 1 }, 3);
    g_autofree gchar *message = NULL;

    for (guint i = 0; i < hp_state_dict_get_size (before); i++)
      {
        HpTensor *state = hp_state_dict_get_tensor (before, i);
        g_autoptr(HpTensor) whole = HP_IS_DTENSOR (state) ? full (state)
                                                          : hp_tensor_detach (state);
        g_autoptr(HpTensor) copy = hp_tensor_scale (whole, 1.0, &error);

        g_assert_no_error (error);
        hp_state_dict_insert (before_whole, hp_state_dict_get_name (before, i), copy);
      }

    hp_state_dict_insert (unknown, "99.exp_avg", hp_state_dict_get_tensor (saved, 0));
    hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_load_state (resumed, unknown, 0, &error)),
                          &error, HP_ERROR_INVALID_ARGUMENT, "no optimizer state '99.exp_avg'");
    hp_state_dict_insert (unlike, state_name, HP_TENSOR (replicated));
    message = g_strdup_printf ("state '%s' is a DTensor laid out unlike its parameter", state_name);
    hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_load_state (resumed, unlike, 0, &error)),
                          &error, HP_ERROR_PLACEMENT, message);
    g_free (message);
    hp_state_dict_insert (wrong_shape, state_name, ones);
    message = g_strdup_printf ("state '%s' is float64 [1, 1, 1], but parameter 2 is float64", state_name);
    hp_test_assert_error (GINT_TO_POINTER (hp_optimizer_load_state (resumed, wrong_shape, 0, &error)),
                          &error, HP_ERROR_SHAPE, message);

    g_assert_cmpuint (hp_optimizer_get_step_count (resumed), ==, 4);
    after = hp_optimizer_get_state (resumed);
    g_assert_cmpuint (hp_state_dict_get_size (after), ==, hp_state_dict_get_size (before));
    for (guint i = 0; i < hp_state_dict_get_size (after); i++)
      {
        HpTensor *state = hp_state_dict_get_tensor (after, i);
        g_autoptr(HpTensor) whole = HP_IS_DTENSOR (state) ? full (state)
                                                          : hp_tensor_detach (state);

        g_assert_true (state == hp_state_dict_get_tensor (before, i));
        hp_test_assert_identical (whole, hp_state_dict_lookup (before_whole,
                                                               hp_state_dict_get_name (after, i)));
      }
  }
  twins_clear (&twins);
}

static void
test_resume (void)
{
  g_autoptr(GPtrArray) all = layouts ();
  g_autoptr(HpOptimizerConfig) adamw = g_object_new (HP_TYPE_ADAMW_CONFIG, "lr", 0.01,
                                                     "weight-decay", 0.1, NULL);
  g_autoptr(HpOptimizerConfig) sgd = g_object_new (HP_TYPE_SGD_CONFIG, "lr", 0.05,
                                                   "momentum", 0.9, NULL);

  for (guint i = 0; i < all->len; i++)
    {
      check_resume (g_ptr_array_index (all, i), adamw);
      check_resume (g_ptr_array_index (all, i), sgd);
    }
}

static void
test_clip_norms (void)
{
  g_autoptr(GPtrArray) all = layouts ();

  for (guint i = 0; i < all->len; i++)
    check_norms (g_ptr_array_index (all, i));
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;

  hp_test_init (&argc, &argv);
  hp_init (&error);
  g_assert_no_error (error);
  world_size = hp_get_world_size ();

  g_test_add_func ("/optim-dtensor/sgd", test_sgd);
  g_test_add_func ("/optim-dtensor/adamw", test_adamw);
  g_test_add_func ("/optim-dtensor/clip-norms", test_clip_norms);
  g_test_add_func ("/optim-dtensor/resume", test_resume);

  return g_test_run ();
}
