/* hp-parallel-dims.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-config-field.h"
#include "hp-error.h"
#include "hp-init.h"
#include "hp-parallel-dims.h"

/**
 * HpParallelDims:
 *
 * The degree of each kind of parallelism of a job, and the device
 * meshes that follow from them (the `ParallelDims` of torchtitan):
 *
 * - [property@Hp.ParallelDims:dp-replicate]: data parallelism with replicated
 *   parameters (DDP, or the replicate dim of HSDP);
 * - [property@Hp.ParallelDims:dp-shard]: data parallelism with sharded parameters
 *   (FSDP), -1 to take whatever ranks the other dims leave;
 * - [property@Hp.ParallelDims:cp]: context parallelism;
 * - [property@Hp.ParallelDims:tp]: tensor parallelism;
 * - [property@Hp.ParallelDims:pp]: pipeline parallelism;
 * - [property@Hp.ParallelDims:ep]: expert parallelism.
 *
 * It is a configuration whose fields are these six properties, so it
 * prints, copies and reads from JSON like any [class@Hp.Config]; it builds no
 * object (it has no owner type).
 *
 * The degrees follow torchtitan's rules. The product `dp_replicate *
 * dp_shard * cp * tp * pp` is the world size. Expert parallelism adds
 * no ranks of its own: it borrows them, as torchtitan does when the
 * experts are tensor-parallel over the same ranks as the dense layers
 * (its `etp == tp` case, the only one here). The expert-parallel group
 * of a rank is made of all of cp and a part of dp_shard, so @ep must be
 * a multiple of @cp and divide `dp_shard * cp`.
 * [method@Hp.ParallelDims.resolve] checks all of this against a world size
 * and fills in [property@Hp.ParallelDims:dp-shard]; [method@Hp.Config.validate]
 * checks what needs no world size (also for dims nested in a job
 * configuration): dp_shard is not 0, ep is a multiple of cp and, when
 * dp_shard is given, divides `dp_shard * cp`.
 *
 * Two meshes lay out the same world ranks:
 *
 * - [method@Hp.ParallelDims.build_mesh], the mesh of the dense layers, has
 *   the dims `dp_replicate`, `dp_shard`, `cp`, `tp` and `pp`, in that
 *   order, each only if its degree is above 1 (a single `dp_shard` dim
 *   spanning the world if none is). [property@Hp.ParallelDims:ep] is not one of its
 *   dims, since expert parallelism reuses the ranks of dp_shard and cp.
 * - [method@Hp.ParallelDims.build_expert_mesh], the mesh of the expert
 *   layers, has the dims `dp_replicate`, `efsdp` (`dp_shard * cp / ep`,
 *   the sharded data parallelism left to the experts), `ep`, `tp` and
 *   `pp`, again only those above 1 (a single `efsdp` dim spanning the
 *   world if none is). It splits the ranks of dp_shard and cp of the
 *   dense mesh, taken together, into efsdp and ep: the group of a rank
 *   in the `ep` dim holds consecutive dp_shard coordinates with all of
 *   their cp coordinates.
 *
 * |[<!-- language="C" -->
 * // 8 ranks: 2-way tensor parallel, the rest FSDP
 * g_autoptr(HpParallelDims) dims = g_object_new (HP_TYPE_PARALLEL_DIMS, "tp", 2, NULL);
 * g_autoptr(HpDeviceMesh) mesh = hp_parallel_dims_build_mesh (dims, &error);
 * // mesh: dp_shard 4, tp 2
 * ]|
 *
 * Since: 1.0
 */

enum {
  DIM_DP_REPLICATE,
  DIM_DP_SHARD,
  DIM_CP,
  DIM_TP,
  DIM_PP,
  DIM_EP,
  N_DIMS
};

/* names as torchtitan and the mesh use them */
static const gchar * const dim_names[N_DIMS] = {
  "dp_replicate", "dp_shard", "cp", "tp", "pp", "ep",
};

struct _HpParallelDims
{
  HpConfig parent_instance;

  gint dp_replicate;
  gint dp_shard;
  gint cp;
  gint tp;
  gint pp;
  gint ep;
};

G_DEFINE_FINAL_TYPE (HpParallelDims, hp_parallel_dims, HP_TYPE_CONFIG)

/**
 * HpParallelDims:dp-replicate:
 *
 * The degree of replicated data parallelism (DDP, or the replicate dim
 * of HSDP).
 *
 * Since: 1.0
 */
/**
 * HpParallelDims:dp-shard:
 *
 * The degree of sharded data parallelism (FSDP), or -1 to use every
 * rank the other dims leave (see [method@Hp.ParallelDims.resolve]). 0
 * is not a degree: validation rejects it.
 *
 * Since: 1.0
 */
/**
 * HpParallelDims:cp:
 *
 * The degree of context parallelism.
 *
 * Since: 1.0
 */
/**
 * HpParallelDims:tp:
 *
 * The degree of tensor parallelism.
 *
 * Since: 1.0
 */
/**
 * HpParallelDims:pp:
 *
 * The degree of pipeline parallelism.
 *
 * Since: 1.0
 */
/**
 * HpParallelDims:ep:
 *
 * The degree of expert parallelism. It borrows the ranks of cp and
 * part of dp_shard instead of adding ranks: a multiple of
 * [property@Hp.ParallelDims:cp] that divides `dp_shard * cp`.
 *
 * Since: 1.0
 */
static const HpConfigField parallel_dims_fields[] = {
  HP_CONFIG_FIELD_INT (HpParallelDims, dp_replicate, "dp-replicate",
                       "Replicated data-parallel degree (DDP)", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpParallelDims, dp_shard, "dp-shard",
                       "Sharded data-parallel degree (FSDP; -1: the ranks left)", -1, G_MAXINT, -1),
  HP_CONFIG_FIELD_INT (HpParallelDims, cp, "cp", "Context-parallel degree", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpParallelDims, tp, "tp", "Tensor-parallel degree", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpParallelDims, pp, "pp", "Pipeline-parallel degree", 1, G_MAXINT, 1),
  HP_CONFIG_FIELD_INT (HpParallelDims, ep, "ep", "Expert-parallel degree", 1, G_MAXINT, 1),
};

/* The degrees of @self by DIM_ index */
static void
degrees_of (HpParallelDims *self,
            gint            degrees[N_DIMS])
{
  degrees[DIM_DP_REPLICATE] = self->dp_replicate;
  degrees[DIM_DP_SHARD] = self->dp_shard;
  degrees[DIM_CP] = self->cp;
  degrees[DIM_TP] = self->tp;
  degrees[DIM_PP] = self->pp;
  degrees[DIM_EP] = self->ep;
}

/* The rules that need no world size: dp_shard is a degree or -1, and
 * ep borrows all of cp and, once dp_shard is a degree, part of it (as
 * torchtitan, with etp == tp) */
static gboolean
check_degrees (const gint  *degrees,
               GError     **error)
{
  gint64 dp_shard_cp;

  if (degrees[DIM_DP_SHARD] == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpParallelDims: dp_shard is 0; give a degree of at least 1, "
                   "or -1 for the ranks the other dims leave");
      return FALSE;
    }
  if (degrees[DIM_EP] > 1 && degrees[DIM_EP] % degrees[DIM_CP] != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpParallelDims: ep (%d) is not a multiple of cp (%d): expert "
                   "parallelism borrows all of cp and part of dp_shard",
                   degrees[DIM_EP], degrees[DIM_CP]);
      return FALSE;
    }
  if (degrees[DIM_DP_SHARD] < 1)
    return TRUE;

  dp_shard_cp = (gint64) degrees[DIM_DP_SHARD] * degrees[DIM_CP];
  if (dp_shard_cp % degrees[DIM_EP] != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                   "HpParallelDims: ep (%d) does not divide dp_shard (%d) * cp (%d) = %"
                   G_GINT64_FORMAT ": expert parallelism borrows all of cp and part of dp_shard",
                   degrees[DIM_EP], degrees[DIM_DP_SHARD], degrees[DIM_CP], dp_shard_cp);
      return FALSE;
    }
  return TRUE;
}

static gboolean
hp_parallel_dims_validate (HpConfig  *config,
                           GError   **error)
{
  gint degrees[N_DIMS];

  if (!HP_CONFIG_CLASS (hp_parallel_dims_parent_class)->validate (config, error))
    return FALSE;

  degrees_of (HP_PARALLEL_DIMS (config), degrees);
  return check_degrees (degrees, error);
}

static void
hp_parallel_dims_class_init (HpParallelDimsClass *klass)
{
  HP_CONFIG_CLASS (klass)->validate = hp_parallel_dims_validate;
  hp_config_class_install_fields (HP_CONFIG_CLASS (klass), parallel_dims_fields,
                                  G_N_ELEMENTS (parallel_dims_fields));
}

static void
hp_parallel_dims_init (HpParallelDims *self)
{
}

/**
 * hp_parallel_dims_new:
 *
 * Creates parallel dims with the defaults: no parallelism but sharded
 * data parallelism over the whole world ([property@Hp.ParallelDims:dp-shard] -1,
 * every other degree 1).
 *
 * Returns: (transfer full): a new [class@Hp.ParallelDims]
 *
 * Since: 1.0
 */
HpParallelDims *
hp_parallel_dims_new (void)
{
  return g_object_new (HP_TYPE_PARALLEL_DIMS, NULL);
}

/* The product of the degrees of @dims (bit i for dim i), or -1 if it
 * exceeds G_MAXINT, which no world size does. With @text, also writes
 * the product out as `dp_replicate (1) * cp (2) = 2`. */
static gint
product (const gint  *degrees,
         guint        dims,
         GString     *text)
{
  gint64 value = 1;

  for (guint i = 0; i < N_DIMS; i++)
    {
      if (!(dims & (1u << i)))
        continue;
      if (text != NULL)
        g_string_append_printf (text, "%s%s (%d)", text->len > 0 ? " * " : "",
                                dim_names[i], degrees[i]);
      if (value > 0)
        {
          value *= degrees[i];
          if (value > G_MAXINT)
            value = -1;
        }
    }

  if (text != NULL)
    {
      if (value > 0)
        g_string_append_printf (text, " = %" G_GINT64_FORMAT, value);
      else
        g_string_append_printf (text, " = more than %d", G_MAXINT);
    }
  return (gint) value;
}

#define BIT(dim) (1u << (dim))
#define DENSE_DIMS (BIT (DIM_DP_REPLICATE) | BIT (DIM_DP_SHARD) | BIT (DIM_CP) | \
                    BIT (DIM_TP) | BIT (DIM_PP))

/**
 * hp_parallel_dims_resolve:
 * @self: a [class@Hp.ParallelDims]
 * @world_size: the number of ranks, at least 1
 * @error: return location for a [struct@GLib.Error]
 *
 * Checks the degrees against a world of @world_size ranks and fills in
 * [property@Hp.ParallelDims:dp-shard] when it is -1: @world_size
 * divided by `dp_replicate * cp * tp * pp`. The rules, those of
 * torchtitan:
 *
 * - `dp_replicate * dp_shard * cp * tp * pp` equals @world_size;
 * - [property@Hp.ParallelDims:ep] is a multiple of
 *   [property@Hp.ParallelDims:cp] and divides `dp_shard * cp` (expert
 *   parallelism borrows all of cp and a part of dp_shard).
 *
 * The rules that need no world size come first: they are those of
 * [method@Hp.Config.validate], which checks them for a @self that
 * gives dp_shard.
 *
 * @self is left as it was.
 *
 * Returns: (transfer full): new parallel dims with
 *   [property@Hp.ParallelDims:dp-shard] at least 1 and the other
 *   degrees of @self, or %NULL with [HP_ERROR_CONFIG][error@Hp.Error] and the numbers
 *   involved, for example `HpParallelDims: dp_replicate (1) * dp_shard
 *   (3) * cp (1) * tp (2) * pp (1) = 6 != world size 4`, if
 *   [property@Hp.ParallelDims:dp-shard] is 0, the other dims do not
 *   divide @world_size, the product is not @world_size or
 *   [property@Hp.ParallelDims:ep] does not fit
 *
 * Since: 1.0
 */
HpParallelDims *
hp_parallel_dims_resolve (HpParallelDims  *self,
                          gint             world_size,
                          GError         **error)
{
  HpParallelDims *resolved;
  gint degrees[N_DIMS];

  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), NULL);
  g_return_val_if_fail (world_size >= 1, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  degrees_of (self, degrees);
  if (!check_degrees (degrees, error))
    return NULL;

  if (degrees[DIM_DP_SHARD] == -1)
    {
      g_autoptr(GString) text = g_string_new (NULL);
      gint others = product (degrees, DENSE_DIMS & ~BIT (DIM_DP_SHARD), text);

      if (others < 0 || world_size % others != 0)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "HpParallelDims: cannot fill dp_shard: %s does not divide world size %d",
                       text->str, world_size);
          return NULL;
        }
      degrees[DIM_DP_SHARD] = world_size / others;
      /* ep against the dp_shard it now has */
      if (!check_degrees (degrees, error))
        return NULL;
    }
  else
    {
      g_autoptr(GString) text = g_string_new (NULL);

      if (product (degrees, DENSE_DIMS, text) != world_size)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_CONFIG,
                       "HpParallelDims: %s != world size %d", text->str, world_size);
          return NULL;
        }
    }

  resolved = HP_PARALLEL_DIMS (hp_config_copy (HP_CONFIG (self)));
  g_object_set (resolved, "dp-shard", degrees[DIM_DP_SHARD], NULL);
  return resolved;
}

/* Makes a mesh over the world with the @n dims of @sizes above 1, or
 * one dim called @fallback spanning the world if none is. */
static HpDeviceMesh *
mesh_from_dims (const gint           *sizes,
                const gchar * const  *names,
                guint                 n,
                const gchar          *fallback,
                gint                  world_size,
                GError              **error)
{
  gint shape[N_DIMS];
  const gchar *kept_names[N_DIMS + 1];
  guint ndim = 0;

  for (guint i = 0; i < n; i++)
    if (sizes[i] > 1)
      {
        shape[ndim] = sizes[i];
        kept_names[ndim] = names[i];
        ndim++;
      }
  if (ndim == 0)
    {
      shape[0] = world_size;
      kept_names[0] = fallback;
      ndim = 1;
    }
  kept_names[ndim] = NULL;

  return hp_device_mesh_new (shape, ndim, kept_names, error);
}

/**
 * hp_parallel_dims_build_mesh:
 * @self: a [class@Hp.ParallelDims]
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the mesh of the dense layers over the MPI world
 * (`MPI_COMM_WORLD`, started with [func@Hp.init] if needed), after resolving
 * @self against the world size ([method@Hp.ParallelDims.resolve]). Its dims
 * are `dp_replicate`, `dp_shard`, `cp`, `tp` and `pp` in that order,
 * named so, each only when its degree is above 1; when none is, the
 * mesh has the single dim `dp_shard` spanning the world. Expert
 * parallelism borrows ranks of dp_shard and cp and has no dim here
 * (see [method@Hp.ParallelDims.build_expert_mesh]).
 *
 * This is collective, like [ctor@Hp.DeviceMesh.new]: every rank calls it
 * with the same degrees.
 *
 * Returns: (transfer full): a new mesh, or %NULL with @error set:
 *   [HP_ERROR_CONFIG][error@Hp.Error] if the degrees do not fit the world (see
 *   [method@Hp.ParallelDims.resolve]), or the error of [ctor@Hp.DeviceMesh.new]
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_parallel_dims_build_mesh (HpParallelDims  *self,
                             GError         **error)
{
  g_autoptr(HpParallelDims) resolved = NULL;
  gint world_size;
  gint sizes[5];
  static const gchar * const names[] = { "dp_replicate", "dp_shard", "cp", "tp", "pp" };

  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  world_size = hp_get_world_size ();
  resolved = hp_parallel_dims_resolve (self, world_size, error);
  if (resolved == NULL)
    return NULL;

  sizes[0] = resolved->dp_replicate;
  sizes[1] = resolved->dp_shard;
  sizes[2] = resolved->cp;
  sizes[3] = resolved->tp;
  sizes[4] = resolved->pp;
  return mesh_from_dims (sizes, names, G_N_ELEMENTS (names), "dp_shard", world_size, error);
}

/**
 * hp_parallel_dims_build_expert_mesh:
 * @self: a [class@Hp.ParallelDims]
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the mesh of the expert layers over the MPI world, after
 * resolving @self against the world size. Its dims are `dp_replicate`,
 * `efsdp` (`dp_shard * cp / ep`), `ep`, `tp` and `pp` in that order,
 * each only when its size is above 1; when none is, the mesh has the
 * single dim `efsdp` spanning the world.
 *
 * It holds the world ranks of the mesh of [method@Hp.ParallelDims.build_mesh]
 * with the dp_shard and cp dims, taken together in that order, split
 * into efsdp and ep instead: the rank at coordinate `s` on dp_shard and
 * `c` on cp there is at `(s * cp + c) / ep` on efsdp and
 * `(s * cp + c) % ep` on ep here, and at the same coordinates on the
 * other dims.
 *
 * This is collective, like [ctor@Hp.DeviceMesh.new].
 *
 * Returns: (transfer full): a new mesh, or %NULL with @error set:
 *   [HP_ERROR_CONFIG][error@Hp.Error] if the degrees do not fit the world (see
 *   [method@Hp.ParallelDims.resolve]), or the error of [ctor@Hp.DeviceMesh.new]
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_parallel_dims_build_expert_mesh (HpParallelDims  *self,
                                    GError         **error)
{
  g_autoptr(HpParallelDims) resolved = NULL;
  gint world_size;
  gint sizes[5];
  static const gchar * const names[] = { "dp_replicate", "efsdp", "ep", "tp", "pp" };

  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  world_size = hp_get_world_size ();
  resolved = hp_parallel_dims_resolve (self, world_size, error);
  if (resolved == NULL)
    return NULL;

  sizes[0] = resolved->dp_replicate;
  sizes[1] = resolved->dp_shard * resolved->cp / resolved->ep;
  sizes[2] = resolved->ep;
  sizes[3] = resolved->tp;
  sizes[4] = resolved->pp;
  return mesh_from_dims (sizes, names, G_N_ELEMENTS (names), "efsdp", world_size, error);
}

/**
 * hp_parallel_dims_get_world_size:
 * @self: a [class@Hp.ParallelDims]
 *
 * Gets the number of ranks the degrees span, `dp_replicate * dp_shard
 * * cp * tp * pp` (expert parallelism adds none).
 *
 * Returns: the world size, or -1 if [property@Hp.ParallelDims:dp-shard] is not a
 *   degree yet (-1 or 0; see [method@Hp.ParallelDims.resolve]) or the product
 *   exceeds %G_MAXINT
 *
 * Since: 1.0
 */
gint
hp_parallel_dims_get_world_size (HpParallelDims *self)
{
  gint degrees[N_DIMS];

  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), -1);

  if (self->dp_shard < 1)
    return -1;
  degrees_of (self, degrees);
  return product (degrees, DENSE_DIMS, NULL);
}

/**
 * hp_parallel_dims_get_non_data_parallel_size:
 * @self: a [class@Hp.ParallelDims]
 *
 * Gets the number of ranks that share one data-parallel slice of a
 * batch, `cp * tp * pp`.
 *
 * Returns: the size, or -1 if it exceeds %G_MAXINT
 *
 * Since: 1.0
 */
gint
hp_parallel_dims_get_non_data_parallel_size (HpParallelDims *self)
{
  gint degrees[N_DIMS];

  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), -1);

  degrees_of (self, degrees);
  return product (degrees, BIT (DIM_CP) | BIT (DIM_TP) | BIT (DIM_PP), NULL);
}

/**
 * hp_parallel_dims_get_dp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Tells whether there is data parallelism of either kind. Like the
 * other predicates it reads the degrees as they are: resolve @self
 * first, as a [property@Hp.ParallelDims:dp-shard] of -1 counts as not enabled.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:dp-replicate] or
 *   [property@Hp.ParallelDims:dp-shard] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_dp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->dp_replicate > 1 || self->dp_shard > 1;
}

/**
 * hp_parallel_dims_get_dp_replicate_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether dp_replicate is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:dp-replicate] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_dp_replicate_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->dp_replicate > 1;
}

/**
 * hp_parallel_dims_get_dp_shard_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether dp_shard is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:dp-shard] is above 1 (not when it
 *   is -1: resolve first)
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_dp_shard_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->dp_shard > 1;
}

/**
 * hp_parallel_dims_get_fsdp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Tells whether parameters are sharded over data-parallel ranks: over
 * dp_shard, or over cp, whose ranks also shard the parameters FSDP-style
 * as in torchtitan.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:dp-shard] or [property@Hp.ParallelDims:cp] is
 *   above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_fsdp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->dp_shard > 1 || self->cp > 1;
}

/**
 * hp_parallel_dims_get_cp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether cp is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:cp] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_cp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->cp > 1;
}

/**
 * hp_parallel_dims_get_dp_cp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Tells whether a batch is split over ranks, by data or by context
 * parallelism.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:dp-replicate],
 *   [property@Hp.ParallelDims:dp-shard] or [property@Hp.ParallelDims:cp] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_dp_cp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return hp_parallel_dims_get_dp_enabled (self) || self->cp > 1;
}

/**
 * hp_parallel_dims_get_tp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether tp is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:tp] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_tp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->tp > 1;
}

/**
 * hp_parallel_dims_get_pp_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether pp is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:pp] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_pp_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->pp > 1;
}

/**
 * hp_parallel_dims_get_ep_enabled:
 * @self: a [class@Hp.ParallelDims]
 *
 * Whether ep is used, that is, its degree is above 1.
 *
 * Returns: %TRUE if [property@Hp.ParallelDims:ep] is above 1
 *
 * Since: 1.0
 */
gboolean
hp_parallel_dims_get_ep_enabled (HpParallelDims *self)
{
  g_return_val_if_fail (HP_IS_PARALLEL_DIMS (self), FALSE);

  return self->ep > 1;
}

#include "hp-parallel-dims-fields.c"
