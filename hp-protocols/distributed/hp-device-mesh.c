/* hp-device-mesh.c: an N-d grid of MPI ranks with named dims
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh.h"
#include "hp-device-mesh-mpi.h"
#include "hp-error.h"
#include "hp-init.h"
#include "hp-mpi-private.h"

/**
 * HpDeviceMesh:
 *
 * An N-d grid of MPI ranks with optional dim names, the layout that
 * [class@Hp.DTensor] placements refer to.
 *
 * A mesh of shape `[2, 4]` over eight ranks puts rank `r` at the
 * row-major coordinate `(r / 4, r % 4)`. Every mesh dim has its own
 * communicator that holds the ranks differing only in their coordinate
 * on that dim, ordered by it, so a rank's group rank in the communicator
 * of dim `d` is its coordinate on `d` ([method@Hp.DeviceMesh.get_local_rank]).
 *
 * [method@Hp.DeviceMesh.slice] picks some dims by name, like `mesh["dp", "tp"]`
 * in PyTorch, and returns the sub-mesh that holds this rank; it shares
 * the dim communicators of its parent.
 *
 * Making and slicing meshes are collective: every rank of the
 * communicator must make the same calls with the same arguments, in the
 * same order. Argument errors are found before any communication, so
 * when every rank passes the same arguments they all fail together.
 * Releasing the last reference to a mesh frees its communicators
 * (`MPI_Comm_free()`), which every rank should do in the same order too.
 *
 * C programs reach the communicators, and can build a mesh over a
 * communicator of their own, through `<hp-protocols/hp-mpi.h>`.
 *
 * Use [ctor@Hp.DeviceMesh.new]: a mesh made by [ctor@GObject.Object.new] alone is a
 * placeholder of shape `[1]` on rank 0 that has no communicators.
 *
 * Since: 1.0
 */

#define MESH_MAX_NDIM 16

/* A communicator shared by a mesh and its slices; the last reference
 * frees it. */
typedef struct
{
  MPI_Comm comm;
} MeshComm;

struct _HpDeviceMesh
{
  GObject parent_instance;

  guint ndim;
  gint shape[MESH_MAX_NDIM];
  gint coordinate[MESH_MAX_NDIM];
  gint size;
  /* rank in the base communicator: the row-major index of coordinate */
  gint rank;
  /* NULL, or ndim names and a NULL */
  gchar **dim_names;
  /* the grid, as ranks of the communicator the root mesh was made over */
  gint *ranks;

  MeshComm *comm;
  MeshComm *dim_comms[MESH_MAX_NDIM];
};

G_DEFINE_FINAL_TYPE (HpDeviceMesh, hp_device_mesh, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_NDIM,
  PROP_SIZE,
  PROP_DIM_NAMES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static MeshComm *
mesh_comm_new (MPI_Comm comm)
{
  MeshComm *self = g_atomic_rc_box_new0 (MeshComm);

  self->comm = comm;
  return self;
}

static MeshComm *
mesh_comm_ref (MeshComm *self)
{
  return g_atomic_rc_box_acquire (self);
}

static void
mesh_comm_free_comm (gpointer data)
{
  MeshComm *self = data;
  int initialized = 0;
  int finalized = 0;

  /* a mesh may outlive MPI_Finalize(); its handles are dead then */
  MPI_Initialized (&initialized);
  MPI_Finalized (&finalized);
  if (initialized && !finalized)
    MPI_Comm_free (&self->comm);
}

static void
mesh_comm_unref (MeshComm *self)
{
  g_atomic_rc_box_release_full (self, mesh_comm_free_comm);
}

/* Row-major index of @coordinate over the dims in @dims (bit i for dim i),
 * as if the other dims were not there. */
static gint
linear_index (const gint *shape,
              const gint *coordinate,
              guint       ndim,
              guint32     dims)
{
  gint index = 0;

  for (guint i = 0; i < ndim; i++)
    if (dims & (1u << i))
      index = index * shape[i] + coordinate[i];

  return index;
}

static void
unravel_index (gint        index,
               const gint *shape,
               guint       ndim,
               gint       *coordinate)
{
  for (guint i = ndim; i-- > 0;)
    {
      coordinate[i] = index % shape[i];
      index /= shape[i];
    }
}

static guint32
all_dims (guint ndim)
{
  return (guint32) ((1u << ndim) - 1);
}

static gchar *
format_shape (const gint *shape,
              guint       ndim)
{
  GString *s = g_string_new ("[");

  for (guint i = 0; i < ndim; i++)
    g_string_append_printf (s, i > 0 ? ", %d" : "%d", shape[i]);
  g_string_append_c (s, ']');

  return g_string_free (s, FALSE);
}

static gchar *
format_names (const gchar * const *names)
{
  return g_strjoinv (", ", (gchar **) names);
}

static void
hp_device_mesh_finalize (GObject *object)
{
  HpDeviceMesh *self = HP_DEVICE_MESH (object);

  g_clear_pointer (&self->dim_names, g_strfreev);
  g_clear_pointer (&self->ranks, g_free);
  g_clear_pointer (&self->comm, mesh_comm_unref);
  for (guint i = 0; i < MESH_MAX_NDIM; i++)
    g_clear_pointer (&self->dim_comms[i], mesh_comm_unref);

  G_OBJECT_CLASS (hp_device_mesh_parent_class)->finalize (object);
}

static void
hp_device_mesh_get_property (GObject    *object,
                             guint       prop_id,
                             GValue     *value,
                             GParamSpec *pspec)
{
  HpDeviceMesh *self = HP_DEVICE_MESH (object);

  switch (prop_id)
    {
    case PROP_NDIM:
      g_value_set_uint (value, self->ndim);
      break;

    case PROP_SIZE:
      g_value_set_int (value, self->size);
      break;

    case PROP_DIM_NAMES:
      g_value_set_boxed (value, self->dim_names);
      break;

    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_device_mesh_class_init (HpDeviceMeshClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_device_mesh_finalize;
  object_class->get_property = hp_device_mesh_get_property;

  /**
   * HpDeviceMesh:ndim:
   *
   * The number of mesh dims, from 1 to 16.
   *
   * Since: 1.0
   */
  properties[PROP_NDIM] =
    g_param_spec_uint ("ndim", NULL, NULL,
                       1, MESH_MAX_NDIM, 1,
                       (G_PARAM_READABLE |
                        G_PARAM_STATIC_STRINGS));

  /**
   * HpDeviceMesh:size:
   *
   * The number of ranks in the mesh, the product of its shape.
   *
   * Since: 1.0
   */
  properties[PROP_SIZE] =
    g_param_spec_int ("size", NULL, NULL,
                      1, G_MAXINT, 1,
                      (G_PARAM_READABLE |
                       G_PARAM_STATIC_STRINGS));

  /**
   * HpDeviceMesh:dim-names:
   *
   * The name of each mesh dim, or %NULL if the mesh has no names.
   *
   * Since: 1.0
   */
  properties[PROP_DIM_NAMES] =
    g_param_spec_boxed ("dim-names", NULL, NULL,
                        G_TYPE_STRV,
                        (G_PARAM_READABLE |
                         G_PARAM_STATIC_STRINGS));

  g_object_class_install_properties (object_class, N_PROPS, properties);
}

/* g_object_new() alone gives a mesh of shape [1] on rank 0 with no
 * communicators; the constructors fill in the rest. */
static void
hp_device_mesh_init (HpDeviceMesh *self)
{
  self->ndim = 1;
  self->shape[0] = 1;
  self->size = 1;
  self->ranks = g_new0 (gint, 1);
}

static gboolean
check_shape (const gint  *shape,
             guint        ndim,
             GError     **error)
{
  g_autofree gchar *shape_str = NULL;

  if (ndim < 1 || ndim > MESH_MAX_NDIM)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "mesh needs from 1 to %d dims, got %u",
                   MESH_MAX_NDIM, ndim);
      return FALSE;
    }

  for (guint i = 0; i < ndim; i++)
    if (shape[i] < 1)
      {
        shape_str = format_shape (shape, ndim);
        g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                     "mesh shape %s has size %d on dim %u, sizes must be at least 1",
                     shape_str, shape[i], i);
        return FALSE;
      }

  return TRUE;
}

static gboolean
check_dim_names (const gint           *shape,
                 guint                 ndim,
                 const gchar * const  *dim_names,
                 GError              **error)
{
  guint n_names;

  if (dim_names == NULL)
    return TRUE;

  n_names = g_strv_length ((gchar **) dim_names);
  if (n_names != ndim)
    {
      g_autofree gchar *shape_str = format_shape (shape, ndim);
      g_autofree gchar *names_str = format_names (dim_names);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "mesh shape %s needs %u dim %s, got %u: (%s)",
                   shape_str, ndim, ndim == 1 ? "name" : "names",
                   n_names, names_str);
      return FALSE;
    }

  for (guint i = 0; i < ndim; i++)
    {
      if (dim_names[i][0] == '\0')
        {
          g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                       "mesh dim name %u is empty", i);
          return FALSE;
        }

      for (guint j = 0; j < i; j++)
        if (g_str_equal (dim_names[i], dim_names[j]))
          {
            g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                         "mesh dim name '%s' is used twice (dims %u and %u)",
                         dim_names[i], j, i);
            return FALSE;
          }
    }

  return TRUE;
}

static gboolean
check_comm_size (const gint  *shape,
                 guint        ndim,
                 int          comm_size,
                 GError     **error)
{
  g_autofree gchar *shape_str = NULL;
  gint64 product = 1;

  /* saturate above G_MAXINT: no communicator is that large */
  for (guint i = 0; i < ndim; i++)
    product = MIN (product * shape[i], (gint64) G_MAXINT + 1);

  if (product == comm_size)
    return TRUE;

  shape_str = format_shape (shape, ndim);
  if (product > G_MAXINT)
    g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                 "mesh shape %s needs more than %d ranks, but the communicator has %d",
                 shape_str, G_MAXINT, comm_size);
  else
    g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                 "mesh shape %s needs %" G_GINT64_FORMAT " ranks, but the communicator has %d",
                 shape_str, product, comm_size);
  return FALSE;
}

/* Makes @comm (owned by the caller until then) report errors, and wraps
 * it; frees it on failure. */
static MeshComm *
adopt_comm (MPI_Comm      comm,
            GError      **error)
{
  MeshComm *mesh_comm = mesh_comm_new (comm);

  if (!_hp_mpi_check (MPI_Comm_set_errhandler (comm, MPI_ERRORS_RETURN),
                      "MPI_Comm_set_errhandler", error))
    {
      mesh_comm_unref (mesh_comm);
      return NULL;
    }

  return mesh_comm;
}

/**
 * hp_device_mesh_new_for_comm:
 * @comm: an intracommunicator, not `MPI_COMM_NULL`
 * @shape: (array length=ndim): the size of each mesh dim
 * @ndim: the number of mesh dims, from 1 to 16
 * @dim_names: (array zero-terminated=1) (nullable): %NULL, or one unique,
 *   non-empty name per mesh dim
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a mesh over the ranks of @comm: the rank of @comm with index `r`
 * sits at the row-major coordinate `r` of the grid, so
 * [method@Hp.DeviceMesh.get_ranks] of the new mesh lists `0` to `size - 1`,
 * ranks of @comm.
 *
 * The mesh works on a duplicate of @comm (`MPI_Comm_dup()`), so its
 * communication never mixes with the application's on @comm, and it
 * splits that duplicate into one communicator per mesh dim. All of them
 * return MPI errors instead of aborting. @comm itself is not kept.
 *
 * Starts MPI with [func@Hp.init] if needed (so `MPI_COMM_WORLD` may be passed
 * before that). This is collective over @comm: every rank must call it
 * with the same arguments.
 *
 * Returns: (transfer full): a new mesh, or %NULL with @error set:
 *   [HP_ERROR_MESH][error@Hp.Error] if the shape does not fit the size of @comm, a size is
 *   below 1, @ndim is out of range or the dim names are malformed,
 *   [HP_ERROR_MPI][error@Hp.Error] if MPI fails
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_device_mesh_new_for_comm (MPI_Comm             comm,
                             const gint          *shape,
                             guint                ndim,
                             const gchar * const *dim_names,
                             GError             **error)
{
  g_autoptr(HpDeviceMesh) self = NULL;
  MPI_Comm base = MPI_COMM_NULL;
  int comm_size = 0;
  int rank = 0;
  /* one agreement on the shape covers the duplicate and the splits */
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_COMM_DUP, "hp_device_mesh_new");
  gint64 shape64[MESH_MAX_NDIM];

  g_return_val_if_fail (comm != MPI_COMM_NULL, NULL);
  g_return_val_if_fail (shape != NULL || ndim == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (!hp_init (error))
    return NULL;

  /* everything that depends only on the arguments and the size of @comm
   * is checked before the first collective call */
  if (!check_shape (shape, ndim, error) ||
      !check_dim_names (shape, ndim, dim_names, error))
    return NULL;

  if (!_hp_mpi_check (MPI_Comm_size (comm, &comm_size), "MPI_Comm_size", error) ||
      !check_comm_size (shape, ndim, comm_size, error))
    return NULL;

  for (guint d = 0; d < ndim; d++)
    shape64[d] = shape[d];
  call.shape = shape64;
  call.ndim = ndim;
  if (!_hp_collective_agree_comm (comm, "the communicator of a new mesh", &call, error) ||
      !_hp_mpi_check (MPI_Comm_dup (comm, &base), "MPI_Comm_dup", error))
    return NULL;

  self = g_object_new (HP_TYPE_DEVICE_MESH, NULL);
  self->comm = adopt_comm (base, error);
  if (self->comm == NULL ||
      !_hp_mpi_check (MPI_Comm_rank (base, &rank), "MPI_Comm_rank", error))
    return NULL;

  self->ndim = ndim;
  memcpy (self->shape, shape, ndim * sizeof (gint));
  self->size = comm_size;
  self->rank = rank;
  unravel_index (rank, self->shape, ndim, self->coordinate);
  self->dim_names = g_strdupv ((gchar **) dim_names);
  self->ranks = g_renew (gint, self->ranks, comm_size);
  for (gint i = 0; i < comm_size; i++)
    self->ranks[i] = i;

  for (guint d = 0; d < ndim; d++)
    {
      MPI_Comm dim_comm = MPI_COMM_NULL;
      int color = linear_index (self->shape, self->coordinate, ndim,
                                all_dims (ndim) & ~(1u << d));

      if (!_hp_mpi_check (MPI_Comm_split (base, color, self->coordinate[d], &dim_comm),
                          "MPI_Comm_split", error))
        return NULL;

      self->dim_comms[d] = adopt_comm (dim_comm, error);
      if (self->dim_comms[d] == NULL)
        return NULL;
    }

  return g_steal_pointer (&self);
}

/**
 * hp_device_mesh_new:
 * @shape: (array length=ndim): the size of each mesh dim
 * @ndim: the number of mesh dims, from 1 to 16
 * @dim_names: (array zero-terminated=1) (nullable): %NULL, or one unique,
 *   non-empty name per mesh dim
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes a mesh over all ranks of the MPI world (`MPI_COMM_WORLD`),
 * starting MPI with [func@Hp.init] if needed. The product of @shape must be
 * the world size; world rank `r` sits at the row-major coordinate `r` of
 * the grid.
 *
 * |[<!-- language="C" -->
 * // 8 ranks: 2-way data parallel times 4-way tensor parallel
 * const gint shape[] = { 2, 4 };
 * const gchar * const names[] = { "dp", "tp", NULL };
 * g_autoptr(HpDeviceMesh) mesh = hp_device_mesh_new (shape, 2, names, &error);
 * ]|
 *
 * This is collective: every rank must call it with the same arguments.
 * See `hp_device_mesh_new_for_comm()` for the communicators it makes.
 *
 * Returns: (transfer full): a new mesh, or %NULL with @error set:
 *   [HP_ERROR_MESH][error@Hp.Error] if the shape does not fit the world, a size is below 1,
 *   @ndim is out of range or the dim names are malformed, [HP_ERROR_MPI][error@Hp.Error] if
 *   MPI fails or has been finalized
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_device_mesh_new (const gint          *shape,
                    guint                ndim,
                    const gchar * const *dim_names,
                    GError             **error)
{
  g_return_val_if_fail (shape != NULL || ndim == 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  return hp_device_mesh_new_for_comm (MPI_COMM_WORLD, shape, ndim, dim_names, error);
}

/**
 * hp_device_mesh_get_ndim:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Gets the number of mesh dims.
 *
 * Returns: the number of dims, at least 1
 *
 * Since: 1.0
 */
guint
hp_device_mesh_get_ndim (HpDeviceMesh *self)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), 0);

  return self->ndim;
}

/**
 * hp_device_mesh_get_shape:
 * @self: a [class@Hp.DeviceMesh]
 * @ndim: (out) (optional): return location for the number of dims
 *
 * Gets the size of each mesh dim.
 *
 * Returns: (array length=ndim) (transfer none): the shape, owned by @self
 *
 * Since: 1.0
 */
const gint *
hp_device_mesh_get_shape (HpDeviceMesh *self,
                          guint        *ndim)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);

  if (ndim != NULL)
    *ndim = self->ndim;
  return self->shape;
}

/**
 * hp_device_mesh_get_size:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Gets the number of ranks in the mesh, the product of its shape.
 *
 * Returns: the number of ranks
 *
 * Since: 1.0
 */
gint
hp_device_mesh_get_size (HpDeviceMesh *self)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), 0);

  return self->size;
}

/**
 * hp_device_mesh_get_dim_names:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Gets the name of each mesh dim.
 *
 * Returns: (array zero-terminated=1) (transfer none) (nullable): the
 *   names, owned by @self, or %NULL if the mesh has no dim names
 *
 * Since: 1.0
 */
const gchar * const *
hp_device_mesh_get_dim_names (HpDeviceMesh *self)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);

  return (const gchar * const *) self->dim_names;
}

/**
 * hp_device_mesh_get_dim_index:
 * @self: a [class@Hp.DeviceMesh]
 * @name: a dim name
 * @error: return location for a [struct@GLib.Error]
 *
 * Looks up the mesh dim called @name.
 *
 * Returns: the index of the dim, or -1 with @error set ([HP_ERROR_MESH][error@Hp.Error]) if
 *   the mesh has no dim of that name, which is always the case for a mesh
 *   without dim names
 *
 * Since: 1.0
 */
gint
hp_device_mesh_get_dim_index (HpDeviceMesh  *self,
                              const gchar   *name,
                              GError       **error)
{
  g_autofree gchar *names_str = NULL;

  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), -1);
  g_return_val_if_fail (name != NULL, -1);
  g_return_val_if_fail (error == NULL || *error == NULL, -1);

  if (self->dim_names == NULL)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "mesh has no dim '%s' (the mesh has no dim names)", name);
      return -1;
    }

  for (guint i = 0; i < self->ndim; i++)
    if (g_str_equal (self->dim_names[i], name))
      return (gint) i;

  names_str = format_names ((const gchar * const *) self->dim_names);
  g_set_error (error, HP_ERROR, HP_ERROR_MESH,
               "mesh has no dim '%s' (dims: %s)", name, names_str);
  return -1;
}

/**
 * hp_device_mesh_get_local_rank:
 * @self: a [class@Hp.DeviceMesh]
 * @dim: a mesh dim, below [method@Hp.DeviceMesh.get_ndim]
 *
 * Gets the coordinate of this rank on @dim, which is also its rank in
 * the communicator of that dim.
 *
 * Returns: the coordinate, from 0 to the size of @dim minus 1
 *
 * Since: 1.0
 */
gint
hp_device_mesh_get_local_rank (HpDeviceMesh *self,
                               guint         dim)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), -1);
  g_return_val_if_fail (dim < self->ndim, -1);

  return self->coordinate[dim];
}

/**
 * hp_device_mesh_get_coordinate:
 * @self: a [class@Hp.DeviceMesh]
 * @ndim: (out) (optional): return location for the number of dims
 *
 * Gets the position of this rank in the grid, one index per mesh dim.
 *
 * Returns: (array length=ndim) (transfer none): the coordinate, owned by
 *   @self
 *
 * Since: 1.0
 */
const gint *
hp_device_mesh_get_coordinate (HpDeviceMesh *self,
                               guint        *ndim)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);

  if (ndim != NULL)
    *ndim = self->ndim;
  return self->coordinate;
}

/**
 * hp_device_mesh_get_rank:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Gets the rank of this process within the mesh: the row-major index of
 * its coordinate, which is its rank in the communicator of the mesh.
 *
 * Returns: the rank, from 0 to [method@Hp.DeviceMesh.get_size] minus 1
 *
 * Since: 1.0
 */
gint
hp_device_mesh_get_rank (HpDeviceMesh *self)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), -1);

  return self->rank;
}

/**
 * hp_device_mesh_get_ranks:
 * @self: a [class@Hp.DeviceMesh]
 * @n_ranks: (out) (optional): return location for the number of ranks
 *
 * Gets the grid: the rank at each position, in row-major order. Ranks
 * are those of the communicator the root mesh was made over (world ranks
 * for [ctor@Hp.DeviceMesh.new]), also in slices: a slice of a `[2, 2]` world
 * mesh along its second dim lists `0, 1` on world ranks 0 and 1, and
 * `2, 3` on world ranks 2 and 3.
 *
 * Returns: (array length=n_ranks) (transfer none): the ranks, owned by
 *   @self
 *
 * Since: 1.0
 */
const gint *
hp_device_mesh_get_ranks (HpDeviceMesh *self,
                          gsize        *n_ranks)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);

  if (n_ranks != NULL)
    *n_ranks = (gsize) self->size;
  return self->ranks;
}

/**
 * hp_device_mesh_slice:
 * @self: a [class@Hp.DeviceMesh]
 * @names: (array zero-terminated=1): the names of the dims to keep, at
 *   least one, in the order of the mesh's dims
 * @error: return location for a [struct@GLib.Error]
 *
 * Gets the sub-mesh over the dims @names that holds this rank, like
 * `mesh["dp", "tp"]` in PyTorch: the other dims keep this rank's
 * coordinate. On a `[2, 4]` mesh named `dp`, `tp`, slicing `tp` gives the
 * four ranks of this rank's tensor-parallel group.
 *
 * The slice shares the communicators of its dims with @self. Its own
 * communicator (`hp_device_mesh_get_comm()`) is the dim's communicator for
 * one dim, the one of @self for all dims, and a new split of the
 * communicator of @self otherwise. The call is collective over @self:
 * every rank of @self must slice it with the same names.
 *
 * Returns: (transfer full): the sub-mesh, or %NULL with @error set:
 *   [HP_ERROR_MESH][error@Hp.Error] if @names is empty, names a dim @self does not have,
 *   repeats a name or is not in the dim order of @self, [HP_ERROR_MPI][error@Hp.Error] if
 *   MPI fails
 *
 * Since: 1.0
 */
HpDeviceMesh *
hp_device_mesh_slice (HpDeviceMesh         *self,
                      const gchar * const  *names,
                      GError              **error)
{
  g_autoptr(HpDeviceMesh) slice = NULL;
  guint kept[MESH_MAX_NDIM];
  guint32 kept_dims = 0;
  guint n_kept = 0;
  gint full[MESH_MAX_NDIM];

  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);
  g_return_val_if_fail (names != NULL, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (names[0] == NULL)
    {
      g_set_error_literal (error, HP_ERROR, HP_ERROR_MESH,
                           "slice needs at least one dim name");
      return NULL;
    }

  /* each dim can be kept once, so there are never more than ndim */
  for (guint i = 0; names[i] != NULL; i++)
    {
      gint dim = hp_device_mesh_get_dim_index (self, names[i], error);

      if (dim < 0)
        return NULL;
      if (kept_dims & (1u << dim))
        {
          g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                       "slice names repeat dim '%s'", names[i]);
          return NULL;
        }
      kept[n_kept++] = (guint) dim;
      kept_dims |= 1u << dim;
    }

  for (guint i = 1; i < n_kept; i++)
    if (kept[i] < kept[i - 1])
      {
        g_autofree gchar *dims_str = format_names ((const gchar * const *) self->dim_names);
        g_autofree gchar *names_str = format_names (names);

        g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                     "slice names must follow the mesh's dim order (%s), got (%s)",
                     dims_str, names_str);
        return NULL;
      }

  slice = g_object_new (HP_TYPE_DEVICE_MESH, NULL);
  slice->ndim = n_kept;
  slice->size = 1;
  slice->dim_names = g_new0 (gchar *, n_kept + 1);
  for (guint i = 0; i < n_kept; i++)
    {
      slice->shape[i] = self->shape[kept[i]];
      slice->coordinate[i] = self->coordinate[kept[i]];
      slice->size *= slice->shape[i];
      slice->dim_names[i] = g_strdup (self->dim_names[kept[i]]);
      slice->dim_comms[i] = mesh_comm_ref (self->dim_comms[kept[i]]);
    }
  slice->rank = linear_index (slice->shape, slice->coordinate, n_kept, all_dims (n_kept));

  /* walk the slice's grid with the other dims fixed at this rank's
   * coordinate, and read the ranks off the parent's grid */
  memcpy (full, self->coordinate, sizeof full);
  slice->ranks = g_renew (gint, slice->ranks, slice->size);
  for (gint j = 0; j < slice->size; j++)
    {
      gint sub[MESH_MAX_NDIM];

      unravel_index (j, slice->shape, n_kept, sub);
      for (guint i = 0; i < n_kept; i++)
        full[kept[i]] = sub[i];
      slice->ranks[j] = self->ranks[linear_index (self->shape, full, self->ndim,
                                                  all_dims (self->ndim))];
    }

  if (n_kept == self->ndim)
    slice->comm = mesh_comm_ref (self->comm);
  else if (n_kept == 1)
    slice->comm = mesh_comm_ref (self->dim_comms[kept[0]]);
  else
    {
      MPI_Comm comm = MPI_COMM_NULL;
      int color = linear_index (self->shape, self->coordinate, self->ndim,
                                all_dims (self->ndim) & ~kept_dims);
      /* the ranks agree on the dims they keep */
      HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_COMM_SPLIT, "slice");
      gint64 kept_shape[MESH_MAX_NDIM];

      for (guint i = 0; i < n_kept; i++)
        kept_shape[i] = kept[i];
      call.shape = kept_shape;
      call.ndim = n_kept;
      if (!_hp_collective_agree (self, &call, error) ||
          !_hp_mpi_check (MPI_Comm_split (self->comm->comm, color, slice->rank, &comm),
                          "MPI_Comm_split", error))
        return NULL;

      slice->comm = adopt_comm (comm, error);
      if (slice->comm == NULL)
        return NULL;
    }

  return g_steal_pointer (&slice);
}

static void
append_grid (GString    *s,
             const gint *shape,
             guint       ndim,
             const gint *ranks,
             gint        stride)
{
  gint inner = stride / shape[0];

  g_string_append_c (s, '[');
  for (gint i = 0; i < shape[0]; i++)
    {
      if (i > 0)
        g_string_append (s, ", ");
      if (ndim == 1)
        g_string_append_printf (s, "%d", ranks[i]);
      else
        append_grid (s, shape + 1, ndim - 1, ranks + i * inner, inner);
    }
  g_string_append_c (s, ']');
}

/**
 * hp_device_mesh_to_string:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Describes the mesh by its grid of ranks (see [method@Hp.DeviceMesh.get_ranks])
 * and its dim names, like `DeviceMesh([[0, 1], [2, 3]], dim_names=(dp, tp))`,
 * or `DeviceMesh([0, 1, 2, 3])` for a mesh without names.
 *
 * Returns: (transfer full): a new string
 *
 * Since: 1.0
 */
gchar *
hp_device_mesh_to_string (HpDeviceMesh *self)
{
  GString *s;

  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), NULL);

  s = g_string_new ("DeviceMesh(");
  append_grid (s, self->shape, self->ndim, self->ranks, self->size);
  if (self->dim_names != NULL)
    {
      g_autofree gchar *names_str = format_names ((const gchar * const *) self->dim_names);

      g_string_append_printf (s, ", dim_names=(%s)", names_str);
    }
  g_string_append_c (s, ')');

  return g_string_free (s, FALSE);
}

/**
 * hp_device_mesh_equal:
 * @self: a [class@Hp.DeviceMesh]
 * @other: another [class@Hp.DeviceMesh]
 *
 * Compares two meshes by shape, dim names and grid of ranks. Their
 * communicators do not count: two meshes made by the same call twice are
 * equal.
 *
 * Returns: %TRUE if both have the same shape, the same dim names (or
 *   both none) and the same ranks at every position
 *
 * Since: 1.0
 */
gboolean
hp_device_mesh_equal (HpDeviceMesh *self,
                      HpDeviceMesh *other)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), FALSE);
  g_return_val_if_fail (HP_IS_DEVICE_MESH (other), FALSE);

  if (self == other)
    return TRUE;

  if (self->ndim != other->ndim ||
      memcmp (self->shape, other->shape, self->ndim * sizeof (gint)) != 0)
    return FALSE;

  if ((self->dim_names == NULL) != (other->dim_names == NULL))
    return FALSE;
  if (self->dim_names != NULL &&
      !g_strv_equal ((const gchar * const *) self->dim_names,
                     (const gchar * const *) other->dim_names))
    return FALSE;

  return memcmp (self->ranks, other->ranks, (gsize) self->size * sizeof (gint)) == 0;
}

/**
 * hp_device_mesh_get_comm:
 * @self: a [class@Hp.DeviceMesh]
 *
 * Gets the communicator of the whole mesh, in which the rank of this
 * process is [method@Hp.DeviceMesh.get_rank]. It may be shared with other
 * meshes of the same tree; do not free it or change its attributes.
 *
 * Returns: (transfer none): the communicator, owned by @self, or
 *   `MPI_COMM_NULL` for a mesh made by [ctor@GObject.Object.new] alone
 *
 * Since: 1.0
 */
MPI_Comm
hp_device_mesh_get_comm (HpDeviceMesh *self)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), MPI_COMM_NULL);

  return self->comm != NULL ? self->comm->comm : MPI_COMM_NULL;
}

/**
 * hp_device_mesh_get_dim_comm:
 * @self: a [class@Hp.DeviceMesh]
 * @dim: a mesh dim, below [method@Hp.DeviceMesh.get_ndim]
 *
 * Gets the communicator of mesh dim @dim: the ranks whose coordinates
 * differ from this rank's only on @dim, ranked by their coordinate on
 * @dim. Slices share it with the mesh they come from; do not free it.
 *
 * Returns: (transfer none): the communicator, owned by @self, or
 *   `MPI_COMM_NULL` for a mesh made by [ctor@GObject.Object.new] alone
 *
 * Since: 1.0
 */
MPI_Comm
hp_device_mesh_get_dim_comm (HpDeviceMesh *self,
                             guint         dim)
{
  g_return_val_if_fail (HP_IS_DEVICE_MESH (self), MPI_COMM_NULL);
  g_return_val_if_fail (dim < self->ndim, MPI_COMM_NULL);

  return self->dim_comms[dim] != NULL ? self->dim_comms[dim]->comm : MPI_COMM_NULL;
}
