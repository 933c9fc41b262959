/* tp-linear.c: two linear layers laid out for tensor parallelism
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A column-wise layer (its weight split by output rows) feeds a
 * row-wise one (its weight split by input columns), the Megatron pair:
 * the hidden activation stays sharded between them and one all-reduce
 * makes the output whole. Every rank also builds the same two layers
 * without a sharding configuration, which is what one rank computes;
 * the program checks that the output and the weight gradients agree.
 * Run it on any number of ranks (16 hidden features give uneven shards
 * on 3):
 *
 *   mpirun -np 2 ./build/examples/hp-tp-linear
 */

#include <stdio.h>
#include <stdlib.h>

#include <hp-protocols/hp-protocols.h>

#define IN 8
#define HIDDEN 16
#define OUT 4

/* A two-layer HpSequential, with the sharding configurations given */
static HpModule *
make_model (HpShardingConfig  *first,
            HpShardingConfig  *second,
            GError           **error)
{
  g_autoptr(HpLinearConfig) w1 = hp_linear_config_new (IN, HIDDEN);
  g_autoptr(HpLinearConfig) w2 = hp_linear_config_new (HIDDEN, OUT);
  g_autoptr(HpParamInit) param_init = hp_param_init_new_from_string ("weight=normal(std=0.3)", error);
  g_autoptr(HpSequential) model = hp_sequential_new ();
  g_autoptr(GObject) layer1 = NULL;
  g_autoptr(GObject) layer2 = NULL;

  if (param_init == NULL)
    return NULL;
  hp_module_config_set_param_init (HP_MODULE_CONFIG (w1), param_init);
  hp_module_config_set_param_init (HP_MODULE_CONFIG (w2), param_init);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (w1), first);
  hp_module_config_set_sharding_config (HP_MODULE_CONFIG (w2), second);
  layer1 = hp_config_build (HP_CONFIG (w1), error);
  if (layer1 == NULL)
    return NULL;
  layer2 = hp_config_build (HP_CONFIG (w2), error);
  if (layer2 == NULL)
    return NULL;
  if (!hp_module_list_append (HP_MODULE_LIST (model), HP_MODULE (layer1), error) ||
      !hp_module_list_append (HP_MODULE_LIST (model), HP_MODULE (layer2), error))
    return NULL;
  return HP_MODULE (g_steal_pointer (&model));
}

/* The whole value of a tensor that may be a DTensor */
static HpTensor *
whole (HpTensor  *tensor,
       GError   **error)
{
  if (HP_IS_DTENSOR (tensor))
    return hp_dtensor_full_tensor (HP_DTENSOR (tensor), error);
  return g_object_ref (tensor);
}

/* Runs @model on @x, backward from the sum of the output; returns the
 * whole output */
static HpTensor *
run (HpModule  *model,
     HpTensor  *x,
     GError   **error)
{
  g_autoptr(HpTensor) y = hp_module_call1 (model, x, error);
  g_autoptr(HpTensor) total = NULL;

  if (y == NULL)
    return NULL;
  total = hp_tensor_sum_all (y, error);
  if (total == NULL || !hp_tensor_backward (total, NULL, error))
    return NULL;
  return whole (y, error);
}

static gboolean
same (const gchar  *what,
      HpTensor     *parallel,
      HpTensor     *reference,
      GError      **error)
{
  g_autoptr(HpTensor) full = whole (parallel, error);

  if (full == NULL)
    return FALSE;
  if (!hp_tensor_allclose (full, reference, 1e-5, 1e-6))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s differs from the one-rank result", what);
      return FALSE;
    }
  return TRUE;
}

int
main (void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autoptr(HpShardingConfig) colwise = hp_sharding_colwise ();
  g_autoptr(HpShardingConfig) rowwise = hp_sharding_rowwise (FALSE);
  g_autoptr(HpModule) reference = NULL;
  g_autoptr(HpModule) parallel = NULL;
  g_autoptr(HpTensor) x = hp_tensor_new_randn (HP_DTYPE_FLOAT32, (const gint64[]) { 5, IN }, 2, 7);
  g_autoptr(HpTensor) y_reference = NULL;
  g_autoptr(HpTensor) y_parallel = NULL;
  const gchar *parameters[] = { "0.weight", "1.weight" };
  gint rank;

  if (!hp_init (&error))
    goto fail;
  rank = hp_get_world_rank ();

  /* a 1-D mesh over every rank, its dim named "tp" as the styles expect */
  mesh = hp_device_mesh_new ((const gint[]) { hp_get_world_size () }, 1,
                             (const gchar *[]) { "tp", NULL }, &error);
  if (mesh == NULL)
    goto fail;

  reference = make_model (NULL, NULL, &error);
  if (reference == NULL)
    goto fail;
  parallel = make_model (colwise, rowwise, &error);
  if (parallel == NULL || !hp_module_parallelize (parallel, mesh, &error))
    goto fail;

  /* the same seed gives the same values: each rank draws its slice */
  if (!hp_module_init_states (reference, 1, &error) ||
      !hp_module_init_states (parallel, 1, &error))
    goto fail;

  if (rank == 0)
    {
      g_autofree gchar *layout =
        hp_dtensor_visualize (HP_DTENSOR (hp_module_get_parameter (parallel, "0.weight")));

      printf ("0.weight (column-wise): %s\n", layout);
    }

  y_reference = run (reference, x, &error);
  if (y_reference == NULL)
    goto fail;
  y_parallel = run (parallel, x, &error);
  if (y_parallel == NULL || !same ("the output", y_parallel, y_reference, &error))
    goto fail;
  for (guint i = 0; i < G_N_ELEMENTS (parameters); i++)
    {
      HpTensor *grad = hp_tensor_get_grad (hp_module_get_parameter (parallel, parameters[i]));
      HpTensor *grad_reference = hp_tensor_get_grad (hp_module_get_parameter (reference, parameters[i]));

      if (!same (parameters[i], grad, grad_reference, &error))
        goto fail;
    }

  if (rank == 0)
    {
      g_autofree gchar *text = hp_tensor_to_string (y_parallel);

      printf ("y = %s\nthe output and the gradients on %d ranks equal those on one\n",
              text, hp_get_world_size ());
    }
  return EXIT_SUCCESS;

fail:
  fprintf (stderr, "tp-linear: %s\n", error->message);
  return EXIT_FAILURE;
}
