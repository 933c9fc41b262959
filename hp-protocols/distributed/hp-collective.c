/* hp-collective.c: agreement before a collective, a deadline on each
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-collective-private.h"
#include "hp-debug-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtype.h"
#include "hp-error.h"
#include "hp-mpi-private.h"
#include "hp-partial.h"
#include "hp-replicate.h"
#include "hp-shard.h"
#include "hp-tensor.h"
#include "hp-tensor-private.h"

#define MAX_MESH_NDIM 16
#define CALLER_SIZE 32
#define DEFAULT_TIMEOUT_SECONDS 600.0
#define SPIN_USECONDS 2000

/* Gathered as bytes: every rank runs the same build */
typedef struct
{
  gint64 op;
  gint64 mesh_dim;
  gint64 dtype;
  gint64 ndim;
  gint64 shape[HP_TENSOR_MAX_NDIM];
  gint64 n_placements;
  gint64 placements[MAX_MESH_NDIM];
  gint64 target;
  gchar caller[CALLER_SIZE];
  gchar issuer[CALLER_SIZE];
} Signature;

static const gchar * const op_names[] = {
  [HP_COLLECTIVE_ALLGATHER] = "MPI_Allgather",
  [HP_COLLECTIVE_ALLGATHERV] = "MPI_Allgatherv",
  [HP_COLLECTIVE_ALLREDUCE] = "MPI_Allreduce",
  [HP_COLLECTIVE_ALLTOALLV] = "MPI_Alltoallv",
  [HP_COLLECTIVE_BCAST] = "MPI_Bcast",
  [HP_COLLECTIVE_REDUCE_SCATTER] = "MPI_Reduce_scatter",
  [HP_COLLECTIVE_SCATTERV] = "MPI_Scatterv",
  [HP_COLLECTIVE_COMM_DUP] = "MPI_Comm_dup",
  [HP_COLLECTIVE_COMM_SPLIT] = "MPI_Comm_split",
  [HP_COLLECTIVE_SEND] = "MPI_Isend",
  [HP_COLLECTIVE_RECV] = "MPI_Irecv",
};

/* Placement codes: the kind in the low 4 bits, its argument above */
enum { NO_PLACEMENT, CODE_REPLICATE, CODE_SHARD, CODE_PARTIAL, CODE_OTHER };
#define SHARD_DIM_BIAS 1024

/* Requests given up after a timeout: MPI may still write into their
 * buffers, so those stay allocated (and reachable) for good */
static GPtrArray *abandoned;
G_LOCK_DEFINE_STATIC (abandoned);

/* The op whose dispatch is communicating, per thread */
static GPrivate issuer_key;

static gint64
encode_placement (HpPlacement *placement)
{
  if (placement == NULL)
    return NO_PLACEMENT;
  if (hp_placement_is_replicate (placement))
    return CODE_REPLICATE;
  if (hp_placement_is_shard (placement))
    return CODE_SHARD | ((gint64) (hp_shard_get_dim (HP_SHARD (placement)) + SHARD_DIM_BIAS) << 4);
  if (hp_placement_is_partial (placement))
    return CODE_PARTIAL | ((gint64) hp_partial_get_reduce_op (HP_PARTIAL (placement)) << 4);
  return CODE_OTHER;
}

static HpPlacement *
decode_placement (gint64 code)
{
  switch (code & 0xf)
    {
    case CODE_REPLICATE:
      return hp_replicate_new ();
    case CODE_SHARD:
      return hp_shard_new ((gint) ((code >> 4) - SHARD_DIM_BIAS));
    case CODE_PARTIAL:
      return hp_partial_new ((HpReduceOp) (code >> 4));
    default:
      return NULL;
    }
}

static gchar *
placement_code_to_string (gint64 code)
{
  g_autoptr(HpPlacement) placement = decode_placement (code);

  return placement != NULL ? hp_placement_to_string (placement) : g_strdup ("?");
}

static void
fill_signature (Signature              *sig,
                const HpCollectiveCall *call)
{
  const gchar *issuer = g_private_get (&issuer_key);

  memset (sig, 0, sizeof *sig);
  sig->op = call->op;
  sig->mesh_dim = call->mesh_dim;
  sig->dtype = call->dtype;
  sig->ndim = call->shape != NULL ? (gint64) MIN (call->ndim, HP_TENSOR_MAX_NDIM) : -1;
  for (gint64 k = 0; k < sig->ndim; k++)
    sig->shape[k] = call->shape[k];
  sig->n_placements = call->placements != NULL
    ? (gint64) MIN (call->placements->len, MAX_MESH_NDIM) : -1;
  for (gint64 d = 0; d < sig->n_placements; d++)
    sig->placements[d] = encode_placement (g_ptr_array_index (call->placements, d));
  sig->target = encode_placement (call->target);
  g_strlcpy (sig->caller, call->caller != NULL ? call->caller : "", CALLER_SIZE);
  /* the dispatch's own collectives already name the op as the caller */
  if (issuer != NULL && g_strcmp0 (issuer, call->caller) != 0)
    g_strlcpy (sig->issuer, issuer, CALLER_SIZE);
}

typedef enum
{
  FIELD_OPERATION,
  FIELD_MESH_DIM,
  FIELD_DTYPE,
  FIELD_SHAPE,
  FIELD_PLACEMENTS,
  FIELD_TARGET,
  N_FIELDS
} Field;

static const gchar * const field_names[N_FIELDS] = {
  [FIELD_OPERATION] = "operation",
  [FIELD_MESH_DIM] = "mesh dim",
  [FIELD_DTYPE] = "dtype",
  [FIELD_SHAPE] = "shape",
  [FIELD_PLACEMENTS] = "placements",
  [FIELD_TARGET] = "target placement",
};

static gchar *
format_field (const Signature *sig,
              Field            field)
{
  switch (field)
    {
    case FIELD_OPERATION:
      {
        const gchar *name = sig->op >= 0 && sig->op < (gint64) G_N_ELEMENTS (op_names)
          ? op_names[sig->op] : "?";

        GString *s = g_string_new (name);

        if (sig->caller[0] != '\0')
          g_string_append_printf (s, " in %.*s", CALLER_SIZE, sig->caller);
        if (sig->issuer[0] != '\0')
          g_string_append_printf (s, " for %.*s", CALLER_SIZE, sig->issuer);
        return g_string_free (s, FALSE);
      }

    case FIELD_MESH_DIM:
      return sig->mesh_dim < 0 ? g_strdup ("all") : g_strdup_printf ("%" G_GINT64_FORMAT, sig->mesh_dim);

    case FIELD_DTYPE:
      return sig->dtype < 0 ? g_strdup ("none")
                            : g_strdup (hp_dtype_to_string ((HpDType) sig->dtype));

    case FIELD_SHAPE:
      return sig->ndim < 0 ? g_strdup ("none") : _hp_shape_to_string (sig->shape, (guint) sig->ndim);

    case FIELD_PLACEMENTS:
      {
        GString *s;

        if (sig->n_placements < 0)
          return g_strdup ("none");
        s = g_string_new ("(");
        for (gint64 d = 0; d < sig->n_placements; d++)
          {
            g_autofree gchar *one = placement_code_to_string (sig->placements[d]);

            g_string_append_printf (s, "%s%s", d > 0 ? ", " : "", one);
          }
        g_string_append_c (s, ')');
        return g_string_free (s, FALSE);
      }

    case FIELD_TARGET:
      return sig->target == NO_PLACEMENT ? g_strdup ("none") : placement_code_to_string (sig->target);

    case N_FIELDS:
    default:
      g_assert_not_reached ();
    }
}

/* "ranks 0-2, 5" */
static void
append_ranks (GString *s,
              GArray  *ranks)
{
  g_string_append (s, ranks->len > 1 ? "ranks " : "rank ");
  for (guint i = 0; i < ranks->len;)
    {
      gint first = g_array_index (ranks, gint, i);
      guint j = i;

      while (j + 1 < ranks->len && g_array_index (ranks, gint, j + 1) == g_array_index (ranks, gint, j) + 1)
        j++;
      if (i > 0)
        g_string_append (s, ", ");
      if (j > i)
        g_string_append_printf (s, "%d-%d", first, g_array_index (ranks, gint, j));
      else
        g_string_append_printf (s, "%d", first);
      i = j + 1;
    }
}

/* Appends "shape: [4, 8] on ranks 0, 2; [4, 6] on rank 1" when the ranks
 * do not all have the same value of @field */
static gboolean
describe_difference (GString         *s,
                     const Signature *all,
                     gint             size,
                     Field            field)
{
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func (g_free);
  g_autoptr(GPtrArray) holders = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);

  for (gint r = 0; r < size; r++)
    {
      g_autofree gchar *value = format_field (&all[r], field);
      guint at;

      for (at = 0; at < values->len; at++)
        if (g_str_equal (g_ptr_array_index (values, at), value))
          break;
      if (at == values->len)
        {
          g_ptr_array_add (values, g_steal_pointer (&value));
          g_ptr_array_add (holders, g_array_new (FALSE, FALSE, sizeof (gint)));
        }
      g_array_append_val (g_ptr_array_index (holders, at), r);
    }

  if (values->len == 1)
    return FALSE;

  g_string_append_printf (s, "%s%s: ", s->len > 0 ? "; " : "", field_names[field]);
  for (guint i = 0; i < values->len; i++)
    {
      g_string_append_printf (s, "%s%s on ", i > 0 ? ", " : "", (gchar *) g_ptr_array_index (values, i));
      append_ranks (s, g_ptr_array_index (holders, i));
    }
  return TRUE;
}

/* HP_COLLECTIVE_TIMEOUT, read at each collective so that a program (or
 * a test) may change it as it goes; 0 waits for ever */
static gdouble
timeout_seconds (void)
{
  const gchar *text = g_getenv ("HP_COLLECTIVE_TIMEOUT");
  gchar *end = NULL;
  gdouble seconds;

  if (text == NULL)
    return DEFAULT_TIMEOUT_SECONDS;
  seconds = g_ascii_strtod (text, &end);
  return end != text && *end == '\0' && seconds >= 0 ? seconds : DEFAULT_TIMEOUT_SECONDS;
}

static void
abandon (gpointer buffers)
{
  if (buffers == NULL)
    return;
  G_LOCK (abandoned);
  if (abandoned == NULL)
    abandoned = g_ptr_array_new ();
  g_ptr_array_add (abandoned, buffers);
  G_UNLOCK (abandoned);
}

/* A collective given up on still refers to the communicator of @mesh
 * (or of one of its dims): freed, MPI would use a dead handle at its
 * next progress, as late as MPI_Finalize() */
static void
abandon_mesh (HpDeviceMesh *mesh)
{
  if (mesh != NULL)
    abandon (g_object_ref (mesh));
}

/* How messages name the communicator: @mesh, or @comm_name without one.
 * Made only for an error, so that agreeing costs no formatting. */
static gchar *
describe_comm (HpDeviceMesh *mesh,
               const gchar  *comm_name)
{
  return mesh != NULL ? hp_device_mesh_to_string (mesh) : g_strdup (comm_name);
}

typedef enum { WAIT_DONE, WAIT_FAILED, WAIT_TIMED_OUT } WaitResult;

/* Waits for @request for at most the timeout, polling so that a rank
 * that never comes cannot hold this one forever */
static WaitResult
wait_bounded (MPI_Request  *request,
              gdouble      *limit,
              GError      **error)
{
  gint64 start, now;

  *limit = timeout_seconds ();
  if (*limit == 0)
    return _hp_mpi_check (MPI_Wait (request, MPI_STATUS_IGNORE), "MPI_Wait", error)
      ? WAIT_DONE : WAIT_FAILED;

  start = g_get_monotonic_time ();
  for (;;)
    {
      int done = 0;

      if (!_hp_mpi_check (MPI_Test (request, &done, MPI_STATUS_IGNORE), "MPI_Test", error))
        return WAIT_FAILED;
      if (done)
        return WAIT_DONE;
      now = g_get_monotonic_time ();
      if (now - start > *limit * G_USEC_PER_SEC)
        return WAIT_TIMED_OUT;
      /* every rank's polls move the collective on, so a rank never
       * sleeps between them; it spins as MPI's blocking calls do while
       * the others are likely on their way, and then lets other
       * processes (ranks oversubscribing the cores) run between polls:
       * yielding at once hands the core away on a busy machine for a
       * whole time slice, many times the collective */
      if (now - start > SPIN_USECONDS)
        g_thread_yield ();
    }
}

static void
set_timeout_error (GError          **error,
                   HpDeviceMesh     *mesh,
                   const gchar      *comm_name,
                   const Signature  *sig,
                   gdouble           limit)
{
  g_autofree gchar *name = describe_comm (mesh, comm_name);
  g_autofree gchar *what = format_field (sig, FIELD_OPERATION);

  g_set_error (error, HP_ERROR, HP_ERROR_MPI,
               "collective timeout on %s: waited %g s for the other ranks to reach %s; "
               "a rank skipped it, failed before it or is stuck (HP_COLLECTIVE_TIMEOUT); "
               "the communicator cannot be used afterwards",
               name, limit, what);
}

/* 64-bit FNV-1a: signatures are zeroed before they are filled */
static guint64
digest (const Signature *sig)
{
  const guint8 *bytes = (const guint8 *) sig;
  guint64 h = G_GUINT64_CONSTANT (14695981039346656037);

  for (gsize i = 0; i < sizeof *sig; i++)
    h = (h ^ bytes[i]) * G_GUINT64_CONSTANT (1099511628211);
  return h;
}

/* Without HP_DEBUG=collectives: one all-reduce of two numbers, the
 * largest and the negated smallest digest, which agree only when every
 * rank's digest is the same. @sig is abandoned on a failure. */
static gboolean
digests_agree (MPI_Comm       comm,
               HpDeviceMesh  *mesh,
               const gchar   *comm_name,
               Signature     *sig,
               gboolean      *same,
               GError       **error)
{
  gint64 *both = g_new (gint64, 2);
  gint64 mine = (gint64) (digest (sig) >> 1);
  MPI_Request request;
  gdouble limit;

  both[0] = mine;
  both[1] = -mine;
  if (!_hp_mpi_check (MPI_Iallreduce (MPI_IN_PLACE, both, 2, MPI_INT64_T, MPI_MAX, comm, &request),
                      "MPI_Iallreduce", error))
    {
      g_free (both);
      return FALSE;
    }
  switch (wait_bounded (&request, &limit, error))
    {
    case WAIT_DONE:
      *same = both[0] == -both[1];
      g_free (both);
      return TRUE;
    case WAIT_TIMED_OUT:
      set_timeout_error (error, mesh, comm_name, sig, limit);
      G_GNUC_FALLTHROUGH;
    case WAIT_FAILED:
    default:
      abandon (both);
      abandon_mesh (mesh);
      return FALSE;
    }
}

/* The agreement over @comm; messages name @mesh if given, else
 * @comm_name */
static gboolean
agree (MPI_Comm                 comm,
       HpDeviceMesh            *mesh,
       const gchar             *comm_name,
       const HpCollectiveCall  *call,
       GError                 **error)
{
  int size = 1;
  Signature *buffers;
  Signature *mine, *all;
  MPI_Request request;
  gdouble limit;
  gboolean same = TRUE;
  g_autoptr(GString) differences = NULL;
  g_autofree gchar *name = NULL;
  g_autofree gchar *where = NULL;

  if (comm == MPI_COMM_NULL)
    return TRUE;

  if (!_hp_mpi_check (MPI_Comm_size (comm, &size), "MPI_Comm_size", error))
    return FALSE;
  if (size == 1)
    return TRUE;

  /* one block: this rank's signature, then everybody's */
  buffers = g_new (Signature, (gsize) size + 1);
  mine = buffers;
  all = buffers + 1;
  fill_signature (mine, call);

  /* by default only a digest; a difference in it (the same on every
   * rank) sends every rank on to the full gather, which says what differs */
  if (!(_hp_debug_flags () & HP_DEBUG_COLLECTIVES))
    {
      if (!digests_agree (comm, mesh, comm_name, mine, &same, error))
        {
          abandon (buffers);
          return FALSE;
        }
      if (same)
        {
          g_free (buffers);
          return TRUE;
        }
    }

  if (!_hp_mpi_check (MPI_Iallgather (mine, sizeof (Signature), MPI_BYTE,
                                      all, sizeof (Signature), MPI_BYTE, comm, &request),
                      "MPI_Iallgather", error))
    {
      g_free (buffers);
      return FALSE;
    }
  switch (wait_bounded (&request, &limit, error))
    {
    case WAIT_DONE:
      break;
    case WAIT_TIMED_OUT:
      set_timeout_error (error, mesh, comm_name, mine, limit);
      G_GNUC_FALLTHROUGH;
    case WAIT_FAILED:
    default:
      abandon (buffers);
      abandon_mesh (mesh);
      return FALSE;
    }

  /* signatures are zeroed before they are filled, so bytes compare */
  for (int r = 1; r < size && same; r++)
    same = memcmp (&all[r], &all[0], sizeof (Signature)) == 0;
  if (same)
    {
      g_free (buffers);
      return TRUE;
    }

  differences = g_string_new (NULL);
  for (Field field = 0; field < N_FIELDS; field++)
    describe_difference (differences, all, size, field);
  /* the collective is named once when every rank is at the same one */
  if (!g_str_has_prefix (differences->str, field_names[FIELD_OPERATION]))
    where = format_field (all, FIELD_OPERATION);
  g_free (buffers);

  name = describe_comm (mesh, comm_name);
  g_set_error (error, HP_ERROR, HP_ERROR_MPI,
               "collective mismatch on %s%s%s: the ranks differ in %s", name,
               where != NULL ? " at " : "", where != NULL ? where : "", differences->str);
  return FALSE;
}

/**
 * _hp_collective_agree_comm:
 * @comm: the communicator every rank of which makes the collective
 * @comm_name: how messages name @comm
 * @call: what this rank is about to do
 * @error: return location for a [struct@GLib.Error]
 *
 * Returns: %TRUE when HP_DEBUG=collectives is off or every rank of @comm
 *   is about to make the same collective; %FALSE with [HP_ERROR_MPI][error@Hp.Error], the
 *   same message on every rank, otherwise
 */
gboolean
_hp_collective_agree_comm (MPI_Comm                 comm,
                           const gchar             *comm_name,
                           const HpCollectiveCall  *call,
                           GError                 **error)
{
  return agree (comm, NULL, comm_name, call, error);
}

/**
 * _hp_collective_agree:
 * @mesh: the mesh every rank of which makes the collective
 * @call: what this rank is about to do
 * @error: return location for a [struct@GLib.Error]
 *
 * `_hp_collective_agree_comm()` over the communicator of the whole @mesh,
 * which messages name by [method@Hp.DeviceMesh.to_string].
 */
gboolean
_hp_collective_agree (HpDeviceMesh            *mesh,
                      const HpCollectiveCall  *call,
                      GError                 **error)
{
  return agree (hp_device_mesh_get_comm (mesh), mesh, NULL, call, error);
}

/**
 * _hp_collective_wait:
 * @request: the request of a non-blocking collective this rank started
 * @mesh: the mesh whose communicator it runs on, or one of its dims'
 * @op: the collective
 * @caller: the library function that makes it, short
 * @error: return location for a [struct@GLib.Error]
 *
 * Waits for @request until HP_COLLECTIVE_TIMEOUT. On a failure, MPI may
 * still read and write the collective's buffers: the caller gives each
 * to `_hp_collective_abandon()` instead of freeing it; @mesh, whose
 * communicators the request uses, is kept for good here.
 *
 * Returns: %TRUE when the collective completed; %FALSE with
 *   [HP_ERROR_MPI][error@Hp.Error], naming @op, @caller and the op being
 *   dispatched, otherwise
 */
gboolean
_hp_collective_wait (MPI_Request   *request,
                     HpDeviceMesh  *mesh,
                     HpCollective   op,
                     const gchar   *caller,
                     GError       **error)
{
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (op, caller);
  Signature sig;
  gdouble limit;

  switch (wait_bounded (request, &limit, error))
    {
    case WAIT_DONE:
      return TRUE;
    case WAIT_TIMED_OUT:
      fill_signature (&sig, &call);
      set_timeout_error (error, mesh, NULL, &sig, limit);
      G_GNUC_FALLTHROUGH;
    case WAIT_FAILED:
    default:
      abandon_mesh (mesh);
      return FALSE;
    }
}

/**
 * _hp_collective_abandon:
 * @block: (transfer full) (nullable): memory, or a reference to an
 *   object, that an unfinished collective may still use
 *
 * Keeps @block for the rest of the program.
 */
void
_hp_collective_abandon (gpointer block)
{
  if (block != NULL)
    abandon (block);
}

/**
 * _hp_collective_set_issuer:
 * @issuer: (nullable): the name of the op whose dispatch makes the next
 *   collectives on this thread, or %NULL
 *
 * Messages about those collectives name it ("MPI_Allgatherv in
 * redistribute for matmul") and ranks that dispatch different ops
 * disagree.
 *
 * Returns: (nullable): the issuer before, to restore
 */
const gchar *
_hp_collective_set_issuer (const gchar *issuer)
{
  const gchar *before = g_private_get (&issuer_key);

  g_private_set (&issuer_key, (gpointer) issuer);
  return before;
}

/**
 * _hp_collective_allreduce:
 * @mesh: the mesh that @comm belongs to
 * @comm: the communicator of @mesh or of one of its dims
 * @data: (inout): @n values of @type, replaced by their reduction
 * @n: how many
 * @type: their MPI datatype
 * @op: the reduction
 * @caller: the library function that makes it, short
 * @error: return location for a [struct@GLib.Error]
 *
 * An in-place all-reduce under the deadline, on a copy so that a
 * collective given up on never writes into @data (which may be on the
 * caller's stack) later. For small messages only.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MPI][error@Hp.Error] and
 *   @data unchanged
 */
gboolean
_hp_collective_allreduce (HpDeviceMesh  *mesh,
                          MPI_Comm       comm,
                          gpointer       data,
                          int            n,
                          MPI_Datatype   type,
                          MPI_Op         op,
                          const gchar   *caller,
                          GError       **error)
{
  int type_size = 0;
  gpointer copy;
  MPI_Request request;

  if (!_hp_mpi_check (MPI_Type_size (type, &type_size), "MPI_Type_size", error))
    return FALSE;
  copy = g_memdup2 (data, (gsize) n * (gsize) type_size);
  if (!_hp_mpi_check (MPI_Iallreduce (MPI_IN_PLACE, copy, n, type, op, comm, &request),
                      "MPI_Iallreduce", error))
    {
      g_free (copy);
      return FALSE;
    }
  if (!_hp_collective_wait (&request, mesh, HP_COLLECTIVE_ALLREDUCE, caller, error))
    {
      _hp_collective_abandon (copy);
      return FALSE;
    }
  memcpy (data, copy, (gsize) n * (gsize) type_size);
  g_free (copy);
  return TRUE;
}
