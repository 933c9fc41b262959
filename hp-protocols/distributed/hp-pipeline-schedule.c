/* hp-pipeline-schedule.c: GPipe and 1F1B over the pp dim of a mesh
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <math.h>
#include <string.h>

#include "hp-collective-private.h"
#include "hp-device-mesh-mpi.h"
#include "hp-dtensor-private.h"
#include "hp-distributed-enum-types.h"
#include "hp-error.h"
#include "hp-grad-mode.h"
#include "hp-mpi-private.h"
#include "hp-pipeline-schedule.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/**
 * HpPipelineSchedule:
 *
 * Runs one training step of pipeline parallelism on this rank's stage:
 * the batch is split into microbatches ([method@Hp.PipelineSchedule.split]),
 * and [method@Hp.PipelineSchedule.step] runs the stage's forward on each
 * (an [callback@Hp.PipelineStageFunc]) and its backward, in the order of
 * the [enum@Hp.PipelineScheduleKind], sending the activations to the
 * next stage and their gradients to the one before with MPI
 * point-to-point messages on one dim of a [class@Hp.DeviceMesh] (the
 * stage is the rank's coordinate on it). The last stage's loss of each
 * microbatch is scaled by 1 / microbatches before its backward, so the
 * gradients that accumulate over the microbatches, and the loss the
 * step returns, are those of the whole batch's mean.
 *
 * Each message is preceded by its dtype and shape; a gradient that does
 * not have the shape of the activation it belongs to, or an activation
 * whose shape is not that of the microbatches before it, is an
 * [HP_ERROR_MPI][error@Hp.Error] and never data read as another shape.
 * Every wait has the deadline of the library's collectives
 * (`HP_COLLECTIVE_TIMEOUT`). A stage that fails in a step sends its
 * neighbours, in place of the message each waits for next, a notice
 * that they pass on, and every stage meets the others at the end of
 * the step, failed or not: the whole pipeline fails at once with the
 * failed stage and its error named. Each step's messages have tags of their own, so a
 * message that a failed step left behind is never taken for a later
 * one.
 *
 * Since: 1.0
 */

/* the dtype, the number of dims and the dims */
#define HEADER_SIZE (2 + HP_TENSOR_MAX_NDIM)
/* in place of a dtype: the sender failed, the stage after it says which */
#define STAGE_FAILED (-1)

struct _HpPipelineSchedule
{
  GObject parent_instance;

  HpDeviceMesh *mesh;
  gint dim;
  HpPipelineScheduleKind kind;
  guint n_microbatches;
  guint stage;
  guint n_stages;
  /* steps and evaluations run so far, which pick their messages' tags */
  guint64 runs;
};

G_DEFINE_FINAL_TYPE (HpPipelineSchedule, hp_pipeline_schedule, G_TYPE_OBJECT)

enum
{
  PROP_0,
  PROP_KIND,
  PROP_N_MICROBATCHES,
  PROP_STAGE,
  PROP_N_STAGES,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
hp_pipeline_schedule_finalize (GObject *object)
{
  HpPipelineSchedule *self = HP_PIPELINE_SCHEDULE (object);

  g_clear_object (&self->mesh);
  G_OBJECT_CLASS (hp_pipeline_schedule_parent_class)->finalize (object);
}

static void
hp_pipeline_schedule_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  HpPipelineSchedule *self = HP_PIPELINE_SCHEDULE (object);

  switch (prop_id)
    {
    case PROP_KIND:
      g_value_set_enum (value, self->kind);
      break;
    case PROP_N_MICROBATCHES:
      g_value_set_uint (value, self->n_microbatches);
      break;
    case PROP_STAGE:
      g_value_set_uint (value, self->stage);
      break;
    case PROP_N_STAGES:
      g_value_set_uint (value, self->n_stages);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_pipeline_schedule_class_init (HpPipelineScheduleClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_pipeline_schedule_finalize;
  object_class->get_property = hp_pipeline_schedule_get_property;

  /**
   * HpPipelineSchedule:kind:
   *
   * The order of the forwards and backwards.
   *
   * Since: 1.0
   */
  properties[PROP_KIND] =
    g_param_spec_enum ("kind", NULL, NULL, HP_TYPE_PIPELINE_SCHEDULE_KIND,
                       HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * HpPipelineSchedule:n-microbatches:
   *
   * The number of microbatches a step splits the batch into.
   *
   * Since: 1.0
   */
  properties[PROP_N_MICROBATCHES] =
    g_param_spec_uint ("n-microbatches", NULL, NULL, 1, G_MAXUINT, 1,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * HpPipelineSchedule:stage:
   *
   * This rank's stage, its coordinate on the pipeline dim.
   *
   * Since: 1.0
   */
  properties[PROP_STAGE] =
    g_param_spec_uint ("stage", NULL, NULL, 0, G_MAXUINT, 0,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /**
   * HpPipelineSchedule:n-stages:
   *
   * The number of stages, the size of the pipeline dim.
   *
   * Since: 1.0
   */
  properties[PROP_N_STAGES] =
    g_param_spec_uint ("n-stages", NULL, NULL, 1, G_MAXUINT, 1,
                       G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_pipeline_schedule_init (HpPipelineSchedule *self)
{
  self->n_microbatches = 1;
  self->n_stages = 1;
}

/**
 * hp_pipeline_schedule_new:
 * @mesh: the device mesh
 * @dim_name: (nullable): the name of its pipeline dim, usually `pp`, or
 *   %NULL for a 1-D @mesh
 * @kind: the schedule
 * @n_microbatches: how many microbatches a step splits the batch into
 * @error: return location for a [struct@GLib.Error]
 *
 * Makes the schedule of this rank's stage. Not collective.
 *
 * Returns: (transfer full): a new schedule, or %NULL with
 *   [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error] when @n_microbatches is
 *   0, [HP_ERROR_MESH][error@Hp.Error] when @dim_name is %NULL and @mesh
 *   is not 1-D, or the error of [method@Hp.DeviceMesh.get_dim_index]
 *   when @mesh has no dim @dim_name
 *
 * Since: 1.0
 */
HpPipelineSchedule *
hp_pipeline_schedule_new (HpDeviceMesh            *mesh,
                          const gchar             *dim_name,
                          HpPipelineScheduleKind   kind,
                          guint                    n_microbatches,
                          GError                 **error)
{
  HpPipelineSchedule *self;
  gint dim = 0;

  g_return_val_if_fail (HP_IS_DEVICE_MESH (mesh), NULL);
  g_return_val_if_fail (kind == HP_PIPELINE_SCHEDULE_KIND_GPIPE ||
                        kind == HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  if (n_microbatches == 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpPipelineSchedule: a step needs at least one microbatch, got 0");
      return NULL;
    }
  if (dim_name != NULL)
    {
      dim = hp_device_mesh_get_dim_index (mesh, dim_name, error);
      if (dim < 0)
        return NULL;
    }
  else if (hp_device_mesh_get_ndim (mesh) != 1)
    {
      g_autofree gchar *text = hp_device_mesh_to_string (mesh);

      g_set_error (error, HP_ERROR, HP_ERROR_MESH,
                   "HpPipelineSchedule: the mesh %s is not 1-D and no pipeline dim was named",
                   text);
      return NULL;
    }

  self = g_object_new (HP_TYPE_PIPELINE_SCHEDULE, NULL);
  self->mesh = g_object_ref (mesh);
  self->dim = dim;
  self->kind = kind;
  self->n_microbatches = n_microbatches;
  self->stage = (guint) hp_device_mesh_get_local_rank (mesh, dim);
  self->n_stages = (guint) hp_device_mesh_get_shape (mesh, NULL)[dim];
  return self;
}

/**
 * hp_pipeline_schedule_get_kind:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Gets [property@Hp.PipelineSchedule:kind].
 *
 * Returns: the schedule's kind
 *
 * Since: 1.0
 */
HpPipelineScheduleKind
hp_pipeline_schedule_get_kind (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B);
  return self->kind;
}

/**
 * hp_pipeline_schedule_get_n_microbatches:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Gets [property@Hp.PipelineSchedule:n-microbatches].
 *
 * Returns: the number of microbatches of a step
 *
 * Since: 1.0
 */
guint
hp_pipeline_schedule_get_n_microbatches (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), 0);
  return self->n_microbatches;
}

/**
 * hp_pipeline_schedule_get_stage:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Gets [property@Hp.PipelineSchedule:stage].
 *
 * Returns: this rank's stage, from 0
 *
 * Since: 1.0
 */
guint
hp_pipeline_schedule_get_stage (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), 0);
  return self->stage;
}

/**
 * hp_pipeline_schedule_get_n_stages:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Gets [property@Hp.PipelineSchedule:n-stages].
 *
 * Returns: the number of stages
 *
 * Since: 1.0
 */
guint
hp_pipeline_schedule_get_n_stages (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), 0);
  return self->n_stages;
}

/**
 * hp_pipeline_schedule_is_first_stage:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Whether this rank's stage is the first, which takes the data.
 *
 * Returns: %TRUE on the first stage
 *
 * Since: 1.0
 */
gboolean
hp_pipeline_schedule_is_first_stage (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), FALSE);
  return self->stage == 0;
}

/**
 * hp_pipeline_schedule_is_last_stage:
 * @self: a [class@Hp.PipelineSchedule]
 *
 * Whether this rank's stage is the last, which computes the loss.
 *
 * Returns: %TRUE on the last stage
 *
 * Since: 1.0
 */
gboolean
hp_pipeline_schedule_is_last_stage (HpPipelineSchedule *self)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), FALSE);
  return self->stage + 1 == self->n_stages;
}

/**
 * hp_pipeline_schedule_split:
 * @self: a [class@Hp.PipelineSchedule]
 * @batch: a batch, split along dim 0
 * @error: return location for a [struct@GLib.Error]
 *
 * Splits @batch into [property@Hp.PipelineSchedule:n-microbatches]
 * equal parts along dim 0, in order.
 *
 * Returns: (transfer container) (element-type Hp.Tensor): the
 *   microbatches, or %NULL with [HP_ERROR_INVALID_ARGUMENT][error@Hp.Error]
 *   when @batch has no dims or its dim 0 is not a multiple of the
 *   number of microbatches
 *
 * Since: 1.0
 */
GPtrArray *
hp_pipeline_schedule_split (HpPipelineSchedule  *self,
                            HpTensor            *batch,
                            GError             **error)
{
  g_autoptr(GPtrArray) parts = NULL;
  guint ndim;
  const gint64 *shape;
  gint64 rows;

  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), NULL);
  g_return_val_if_fail (HP_IS_TENSOR (batch), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  shape = hp_tensor_get_shape (batch, &ndim);
  if (ndim == 0 || shape[0] % self->n_microbatches != 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "HpPipelineSchedule: a batch of %" G_GINT64_FORMAT " rows cannot be split "
                   "into %u microbatches of equal size", ndim > 0 ? shape[0] : 0,
                   self->n_microbatches);
      return NULL;
    }
  rows = shape[0] / self->n_microbatches;
  parts = g_ptr_array_new_with_free_func (g_object_unref);
  for (guint m = 0; m < self->n_microbatches; m++)
    {
      HpTensor *part = hp_tensor_narrow (batch, 0, m * rows, rows, error);

      if (part == NULL)
        return NULL;
      g_ptr_array_add (parts, part);
    }
  return g_steal_pointer (&parts);
}

/* A message on its way: its header and the tensor whose data it sends */
typedef struct
{
  MPI_Request requests[2];
  gint64 header[HEADER_SIZE];
  HpTensor *tensor;
} Sending;

/* What one step keeps of each microbatch between its forward and its
 * backward */
typedef struct
{
  HpPipelineSchedule *self;
  HpPipelineStageFunc func;
  gpointer user_data;
  MPI_Comm comm;
  HpTensor **inputs;
  HpTensor **outputs;
  GPtrArray *sendings;
  gint64 first_input[HEADER_SIZE];
  gdouble loss;
  /* FALSE for an evaluation: forwards only, nothing kept for a backward */
  gboolean training;
  /* the first tag of this run's messages */
  int tag_base;
  /* how many activations (0) and gradients (1) were sent */
  guint sent[2];
  /* the neighbour that said a stage failed, and that stage, or -1 */
  gint told_by;
  gint64 failed_stage;
  /* why the stage failed, as its error said, which the notices carry */
  gchar *failure;
} Step;

static void
fill_header (gint64    *header,
             HpTensor  *tensor)
{
  guint ndim;
  const gint64 *shape = hp_tensor_get_shape (tensor, &ndim);

  memset (header, 0, HEADER_SIZE * sizeof (gint64));
  header[0] = hp_tensor_get_dtype (tensor);
  header[1] = ndim;
  for (guint k = 0; k < ndim; k++)
    header[2 + k] = shape[k];
}

static gchar *
header_to_string (const gint64 *header)
{
  GString *text = g_string_new (NULL);

  if (header[0] >= HP_DTYPE_FLOAT32 && header[0] <= HP_DTYPE_INT64)
    g_string_append (text, hp_dtype_to_string ((HpDType) header[0]));
  else
    g_string_append_printf (text, "dtype %" G_GINT64_FORMAT, header[0]);
  g_string_append (text, " [");
  for (gint64 k = 0; k < MIN (header[1], HP_TENSOR_MAX_NDIM); k++)
    g_string_append_printf (text, "%s%" G_GINT64_FORMAT, k > 0 ? ", " : "", header[2 + k]);
  g_string_append (text, "]");
  return g_string_free (text, FALSE);
}

/* message tags: one pair (header, data) per microbatch and direction,
 * after the run's first tag */
static int
tag_of (Step     *step,
        guint     microbatch,
        gboolean  gradient,
        gboolean  data)
{
  return step->tag_base + (int) ((microbatch * 2 + (gradient ? 1 : 0)) * 2 + (data ? 1 : 0));
}

static gboolean
data_count (HpTensor  *tensor,
            int       *count,
            GError   **error)
{
  gint64 bytes = hp_tensor_get_numel (tensor) * (gint64) hp_dtype_get_size (hp_tensor_get_dtype (tensor));

  if (bytes > G_MAXINT)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_NOT_SUPPORTED,
                   "HpPipelineSchedule: a message of %" G_GINT64_FORMAT " bytes is more than "
                   "one MPI message holds", bytes);
      return FALSE;
    }
  *count = (int) bytes;
  return TRUE;
}

/* Starts sending @tensor to stage @peer; waited for at the end of the step */
static gboolean
start_send (Step      *step,
            HpTensor  *tensor,
            guint      peer,
            guint      microbatch,
            gboolean   gradient,
            GError   **error)
{
  Sending *sending = g_new0 (Sending, 1);
  int count;

  sending->tensor = g_object_ref (tensor);
  fill_header (sending->header, tensor);
  g_ptr_array_add (step->sendings, sending);
  if (!data_count (tensor, &count, error) ||
      !_hp_mpi_check (MPI_Isend (sending->header, HEADER_SIZE, MPI_INT64_T, (int) peer,
                                 tag_of (step, microbatch, gradient, FALSE), step->comm,
                                 &sending->requests[0]), "MPI_Isend", error) ||
      !_hp_mpi_check (MPI_Isend (_hp_tensor_data (tensor), count, MPI_BYTE, (int) peer,
                                 tag_of (step, microbatch, gradient, TRUE), step->comm,
                                 &sending->requests[1]), "MPI_Isend", error))
    return FALSE;
  step->sent[gradient ? 1 : 0]++;
  return TRUE;
}

/* Tells stage @peer, in place of the header of the message it waits for
 * next, that a stage failed, and in place of the data why; nothing
 * waits for these sends */
static void
send_failure (Step     *step,
              guint     peer,
              guint     microbatch,
              gboolean  gradient)
{
  gint64 *notice = g_new0 (gint64, HEADER_SIZE);
  gchar *reason = g_strdup (step->failure != NULL ? step->failure : "");
  MPI_Request request;

  notice[0] = STAGE_FAILED;
  notice[1] = step->told_by >= 0 ? step->failed_stage : step->self->stage;
  notice[2] = (gint64) strlen (reason);
  if (MPI_Isend (notice, HEADER_SIZE, MPI_INT64_T, (int) peer,
                 tag_of (step, microbatch, gradient, FALSE), step->comm, &request) == MPI_SUCCESS)
    MPI_Request_free (&request);
  if (MPI_Isend (reason, (int) notice[2], MPI_CHAR, (int) peer,
                 tag_of (step, microbatch, gradient, TRUE), step->comm, &request) == MPI_SUCCESS)
    MPI_Request_free (&request);
  _hp_collective_abandon (notice);
  _hp_collective_abandon (reason);
}

/* After this stage failed, or heard that one did: the neighbours that
 * still wait for a message from it (the next stage for an activation,
 * in a training step the one before for a gradient) get a notice in its
 * place, fail and pass it on, so the whole pipeline stops at once
 * instead of at the deadline; not back to the neighbour it came from */
static void
tell_neighbours (Step          *step,
                 const GError  *failure)
{
  HpPipelineSchedule *self = step->self;

  if (step->failure == NULL && failure != NULL)
    step->failure = g_strdup (failure->message);

  if (self->stage + 1 < self->n_stages && step->told_by != (gint) self->stage + 1 &&
      step->sent[0] < self->n_microbatches)
    send_failure (step, self->stage + 1, step->sent[0], FALSE);
  if (step->training && self->stage > 0 && step->told_by != (gint) self->stage - 1 &&
      step->sent[1] < self->n_microbatches)
    send_failure (step, self->stage - 1, step->sent[1], TRUE);
}

static gboolean
wait_sends (Step    *step,
            GError **error)
{
  for (guint i = 0; i < step->sendings->len; i++)
    {
      Sending *sending = g_ptr_array_index (step->sendings, i);

      for (guint r = 0; r < 2; r++)
        if (sending->requests[r] != MPI_REQUEST_NULL &&
            !_hp_collective_wait (&sending->requests[r], step->self->mesh, HP_COLLECTIVE_SEND,
                                  "pipeline", error))
          return FALSE;
    }
  return TRUE;
}

/* Receives a tensor from stage @peer; when @expected is not NULL its
 * dtype and shape must be those */
static HpTensor *
receive (Step          *step,
         guint          peer,
         guint          microbatch,
         gboolean       gradient,
         const gint64  *expected,
         GError       **error)
{
  gint64 *header = g_new0 (gint64, HEADER_SIZE);
  MPI_Request request = MPI_REQUEST_NULL;
  g_autoptr(HpTensor) tensor = NULL;
  int count;

  if (!_hp_mpi_check (MPI_Irecv (header, HEADER_SIZE, MPI_INT64_T, (int) peer,
                                 tag_of (step, microbatch, gradient, FALSE), step->comm, &request),
                      "MPI_Irecv", error) ||
      !_hp_collective_wait (&request, step->self->mesh, HP_COLLECTIVE_RECV, "pipeline", error))
    {
      _hp_collective_abandon (header);
      return NULL;
    }
  if (header[0] == STAGE_FAILED)
    {
      gchar *reason = g_malloc0 ((gsize) CLAMP (header[2], 0, G_MAXINT - 1) + 1);

      step->told_by = (gint) peer;
      step->failed_stage = header[1];
      if (!_hp_mpi_check (MPI_Irecv (reason, (int) CLAMP (header[2], 0, G_MAXINT - 1), MPI_CHAR,
                                     (int) peer, tag_of (step, microbatch, gradient, TRUE),
                                     step->comm, &request), "MPI_Irecv", error) ||
          !_hp_collective_wait (&request, step->self->mesh, HP_COLLECTIVE_RECV, "pipeline", error))
        {
          _hp_collective_abandon (reason);
          g_free (header);
          return NULL;
        }
      step->failure = reason;
      g_set_error (error, HP_ERROR, HP_ERROR_MPI,
                   "HpPipelineSchedule: stage %" G_GINT64_FORMAT " failed in this step%s%s%s, "
                   "so stage %u stops at microbatch %u", header[1], *reason ? " (" : "", reason,
                   *reason ? ")" : "", step->self->stage, microbatch);
      g_free (header);
      return NULL;
    }
  if (header[0] < HP_DTYPE_FLOAT32 || header[0] > HP_DTYPE_INT64 || header[1] < 0 ||
      header[1] > HP_TENSOR_MAX_NDIM ||
      (expected != NULL && memcmp (header, expected, HEADER_SIZE * sizeof (gint64)) != 0))
    {
      g_autofree gchar *got = header_to_string (header);
      g_autofree gchar *want = expected != NULL ? header_to_string (expected) : g_strdup ("a tensor");

      g_set_error (error, HP_ERROR, HP_ERROR_MPI,
                   "HpPipelineSchedule: stage %u got %s of microbatch %u from stage %u as %s, "
                   "but expected %s", step->self->stage, gradient ? "the gradient" : "the activation",
                   microbatch, peer, got, want);
      g_free (header);
      return NULL;
    }
  for (gint64 k = 0; k < header[1]; k++)
    if (header[2 + k] < 0)
      {
        g_set_error (error, HP_ERROR, HP_ERROR_MPI,
                     "HpPipelineSchedule: stage %u got a negative dim from stage %u",
                     step->self->stage, peer);
        g_free (header);
        return NULL;
      }
  tensor = hp_tensor_new_zeros ((HpDType) header[0], header + 2, (guint) header[1]);
  g_free (header);
  if (!data_count (tensor, &count, error))
    return NULL;
  if (!_hp_mpi_check (MPI_Irecv (_hp_tensor_data (tensor), count, MPI_BYTE, (int) peer,
                                 tag_of (step, microbatch, gradient, TRUE), step->comm, &request),
                      "MPI_Irecv", error) ||
      !_hp_collective_wait (&request, step->self->mesh, HP_COLLECTIVE_RECV, "pipeline", error))
    {
      _hp_collective_abandon (g_steal_pointer (&tensor));
      return NULL;
    }
  return g_steal_pointer (&tensor);
}

/* What the stages exchange of @tensor: itself, or the local tensor of
 * a DTensor made replicate (differentiable), which is the whole tensor
 * on every rank of its mesh */
static HpTensor *
exchanged (HpTensor  *tensor,
           GError   **error)
{
  g_autoptr(GPtrArray) replicate = NULL;
  g_autoptr(HpDTensor) whole = NULL;

  if (!HP_IS_DTENSOR (tensor))
    return g_object_ref (tensor);
  replicate = _hp_placements_replicated (hp_dtensor_get_placements (HP_DTENSOR (tensor))->len);
  whole = hp_dtensor_redistribute (HP_DTENSOR (tensor), replicate, error);
  return whole != NULL ? g_object_ref (hp_dtensor_get_local (whole)) : NULL;
}

static gboolean
run_forward (Step    *step,
             guint    m,
             GError **error)
{
  HpPipelineSchedule *self = step->self;
  g_autoptr(HpTensor) input = NULL;
  g_autoptr(HpTensor) output = NULL;
  g_autoptr(GError) local_error = NULL;

  if (self->stage > 0)
    {
      /* every microbatch's activation has the first one's layout */
      input = receive (step, self->stage - 1, m, FALSE, m > 0 ? step->first_input : NULL, error);
      if (input == NULL)
        return FALSE;
      if (m == 0)
        fill_header (step->first_input, input);
      if (step->training && hp_dtype_is_floating (hp_tensor_get_dtype (input)))
        hp_tensor_set_requires_grad (input, TRUE);
    }
  output = step->func (self, m, input, step->user_data, &local_error);
  if (output == NULL)
    {
      if (local_error == NULL)
        g_set_error (&local_error, HP_ERROR, HP_ERROR_STATE,
                     "HpPipelineSchedule: stage %u gave no tensor for microbatch %u",
                     self->stage, m);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }

  if (self->stage + 1 == self->n_stages)
    {
      g_autoptr(HpTensor) whole = NULL;
      gdouble value;

      if (hp_tensor_get_numel (output) != 1)
        {
          g_autofree gchar *text = _hp_tensor_shape_to_string (output);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "HpPipelineSchedule: the last stage's loss of microbatch %u has shape %s, "
                       "but a loss has one element", m, text);
          return FALSE;
        }
      whole = HP_IS_DTENSOR (output) ? hp_dtensor_full_tensor (HP_DTENSOR (output), error)
                                     : g_object_ref (output);
      if (whole == NULL || isnan (value = hp_tensor_item (whole, error)))
        {
          /* a NaN loss, not a failed item(): the other stages must stop too */
          if (whole != NULL && (error == NULL || *error == NULL))
            g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                         "HpPipelineSchedule: the loss of microbatch %u is NaN", m);
          return FALSE;
        }
      step->loss += value / self->n_microbatches;
      if (!step->training)
        return TRUE;
      /* the backward starts from the microbatch's share of the mean */
      step->outputs[m] = hp_tensor_scale (output, 1.0 / self->n_microbatches, error);
      if (step->outputs[m] == NULL)
        return FALSE;
    }
  else
    {
      g_autoptr(HpTensor) sent = exchanged (output, error);

      if (sent == NULL || !start_send (step, sent, self->stage + 1, m, FALSE, error))
        return FALSE;
      if (!step->training)
        return TRUE;
      step->outputs[m] = g_steal_pointer (&sent);
    }
  step->inputs[m] = g_steal_pointer (&input);
  return TRUE;
}

static gboolean
run_backward (Step    *step,
              guint    m,
              GError **error)
{
  HpPipelineSchedule *self = step->self;
  g_autoptr(HpTensor) grad = NULL;
  g_autoptr(HpTensor) output = g_steal_pointer (&step->outputs[m]);
  g_autoptr(HpTensor) input = g_steal_pointer (&step->inputs[m]);

  if (self->stage + 1 < self->n_stages)
    {
      gint64 expected[HEADER_SIZE];

      fill_header (expected, output);
      grad = receive (step, self->stage + 1, m, TRUE, expected, error);
      if (grad == NULL)
        return FALSE;
    }
  if (!hp_tensor_backward (output, grad, error))
    return FALSE;
  if (input != NULL && self->stage > 0)
    {
      HpTensor *own = hp_tensor_get_grad (input);
      g_autoptr(HpTensor) input_grad = own != NULL ? g_object_ref (own)
                                                   : _hp_tensor_new_zeros_like (input);

      if (!start_send (step, input_grad, self->stage - 1, m, TRUE, error))
        return FALSE;
    }
  return TRUE;
}

static void
sending_free (gpointer data)
{
  Sending *sending = data;

  g_clear_object (&sending->tensor);
  g_free (sending);
}

/* After a failure, MPI may still read a pending message's buffers */
static void
sending_abandon (gpointer data)
{
  Sending *sending = data;

  _hp_collective_abandon (sending->tensor);
  _hp_collective_abandon (sending);
}

/* Starts @step for the next run of @self, after the stages agreed on
 * @call (which gets the run's number): its tags are its own, so that a
 * message a failed run left behind is never taken for one of a later
 * run */
static gboolean
start_run (HpPipelineSchedule  *self,
           HpCollectiveCall    *call,
           gint64              *agreed,
           guint                n_agreed,
           Step                *step,
           GError             **error)
{
  int *tag_ub = NULL, flag = 0;
  guint64 span = 4 * (guint64) self->n_microbatches, slots;

  agreed[n_agreed] = (gint64) self->runs;
  call->shape = agreed;
  call->ndim = n_agreed + 1;
  if (!_hp_collective_agree (self->mesh, call, error))
    return FALSE;
  step->self = self;
  step->comm = hp_device_mesh_get_dim_comm (self->mesh, self->dim);
  step->sendings = g_ptr_array_new_with_free_func (sending_free);
  step->told_by = -1;
  step->failed_stage = -1;
  MPI_Comm_get_attr (step->comm, MPI_TAG_UB, &tag_ub, &flag);
  slots = MAX ((flag ? (guint64) *tag_ub + 1 : 32768) / span, 1);
  step->tag_base = (int) ((self->runs++ % slots) * span);
  return TRUE;
}

/* The forwards (and, when @training, the backwards) of every
 * microbatch in the schedule's order; the mean loss on every stage */
static gdouble
run_schedule (HpPipelineSchedule   *self,
              HpPipelineStageFunc   func,
              gpointer              user_data,
              gboolean              training,
              GError              **error)
{
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_SEND, "pipeline schedule");
  gint64 agreed[4];
  gdouble sums[2];
  Step step = { 0 };
  guint M, warmup, forwards = 0, backwards = 0;
  gboolean ok = TRUE;

  /* a stage evaluating while another trains would wait for gradients
   * that never come */
  agreed[0] = self->kind;
  agreed[1] = self->n_microbatches;
  agreed[2] = training;
  if (!start_run (self, &call, agreed, 3, &step, error))
    return NAN;

  M = self->n_microbatches;
  step.func = func;
  step.user_data = user_data;
  step.inputs = g_new0 (HpTensor *, M);
  step.outputs = g_new0 (HpTensor *, M);
  step.training = training;

  /* GPipe: all forwards, then all backwards. 1F1B: as many forwards as
   * stages after this one, then one forward and one backward in turn,
   * then the backwards left. An evaluation: the forwards, in order */
  warmup = self->kind == HP_PIPELINE_SCHEDULE_KIND_GPIPE || !training
    ? M : MIN (self->n_stages - self->stage - 1, M);
  while (ok && forwards < warmup)
    ok = run_forward (&step, forwards++, error);
  while (ok && forwards < M)
    ok = run_forward (&step, forwards++, error) && run_backward (&step, backwards++, error);
  while (ok && training && backwards < M)
    ok = run_backward (&step, backwards++, error);
  if (!ok)
    tell_neighbours (&step, error != NULL ? *error : NULL);

  /* every stage meets here, failed or not, so that one which finished
   * its part hears of another's failure; then the sends are complete,
   * unless a stage failed and will never take them. The loss is the
   * last stage's: the others add nothing */
  sums[0] = step.loss;
  sums[1] = ok ? 0 : 1;
  if (self->n_stages > 1 &&
      !_hp_collective_allreduce (self->mesh, step.comm, sums, 2, MPI_DOUBLE, MPI_SUM,
                                 "pipeline schedule", ok ? error : NULL))
    ok = FALSE;
  else if (ok && sums[1] > 0)
    {
      g_set_error (error, HP_ERROR, HP_ERROR_MPI,
                   "HpPipelineSchedule: %.0f of the %u stages failed in this step", sums[1],
                   self->n_stages);
      ok = FALSE;
    }
  ok = ok && wait_sends (&step, error);

  for (guint m = 0; m < M; m++)
    {
      g_clear_object (&step.inputs[m]);
      g_clear_object (&step.outputs[m]);
    }
  g_free (step.inputs);
  g_free (step.outputs);
  g_free (step.failure);
  if (!ok)
    g_ptr_array_set_free_func (step.sendings, sending_abandon);
  g_ptr_array_unref (step.sendings);
  return ok ? sums[0] : NAN;
}

/**
 * hp_pipeline_schedule_step:
 * @self: a [class@Hp.PipelineSchedule]
 * @func: (scope call) (closure user_data): runs this rank's stage forward
 *   on one microbatch
 * @user_data: data for @func
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the forwards and backwards of every microbatch on this rank's
 * stage, in the schedule's order; collective over the pipeline dim:
 * every stage calls it. The gradients of the stage's parameters
 * accumulate the whole batch's (zero them before, and average them
 * over data-parallel replicas after). The stages first agree on the
 * schedule, so stages that differ in kind or microbatches, or of which
 * some train and others evaluate ([method@Hp.PipelineSchedule.evaluate]),
 * fail alike before any message.
 *
 * Returns: the loss of the batch, the mean of the microbatches' losses,
 *   the same on every stage; NaN with @error set: the error of @func,
 *   [HP_ERROR_MPI][error@Hp.Error] when the stages disagree on the
 *   schedule, a message does not have the dtype and shape it must, or
 *   one does not come within `HP_COLLECTIVE_TIMEOUT`, or another stage
 *   failed in the step, [HP_ERROR_SHAPE][error@Hp.Error] when the last
 *   stage's loss has more than one element,
 *   [HP_ERROR_STATE][error@Hp.Error] when it is NaN
 *
 * Since: 1.0
 */
gdouble
hp_pipeline_schedule_step (HpPipelineSchedule  *self,
                           HpPipelineStageFunc  func,
                           gpointer             user_data,
                           GError             **error)
{
  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), NAN);
  g_return_val_if_fail (func != NULL, NAN);
  g_return_val_if_fail (error == NULL || *error == NULL, NAN);

  return run_schedule (self, func, user_data, TRUE, error);
}

/**
 * hp_pipeline_schedule_evaluate:
 * @self: a [class@Hp.PipelineSchedule]
 * @func: (scope call) (closure user_data): runs this rank's stage forward
 *   on one microbatch
 * @user_data: data for @func
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs the forward of every microbatch on this rank's stage, in order,
 * with gradient recording off ([func@Hp.grad_mode_set_enabled]) around
 * @func, the activations sent from stage to stage as in
 * [method@Hp.PipelineSchedule.step], and no backward: an evaluation,
 * which keeps no autograd graph and leaves the parameters' gradients as
 * they were. Collective over the pipeline dim: every stage calls it,
 * and the stages agree first that they all evaluate. The schedule's
 * kind does not matter: without backwards GPipe and 1F1B are the same
 * order.
 *
 * Returns: the loss of the batch, the mean of the microbatches' losses,
 *   the same on every stage (average it over data-parallel replicas as
 *   a training loss); NaN with @error set: the errors of
 *   [method@Hp.PipelineSchedule.step]
 *
 * Since: 1.0
 */
gdouble
hp_pipeline_schedule_evaluate (HpPipelineSchedule  *self,
                               HpPipelineStageFunc  func,
                               gpointer             user_data,
                               GError             **error)
{
  gboolean grad_mode;
  gdouble loss;

  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), NAN);
  g_return_val_if_fail (func != NULL, NAN);
  g_return_val_if_fail (error == NULL || *error == NULL, NAN);

  grad_mode = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);
  loss = run_schedule (self, func, user_data, FALSE, error);
  hp_grad_mode_set_enabled (grad_mode);
  return loss;
}

/* @names, NUL-terminated one after the other and led by their number,
 * packed into int64s: a message receive() takes like any tensor */
static HpTensor *
pack_names (const gchar * const *names,
            guint                n_names)
{
  g_autoptr(GByteArray) bytes = g_byte_array_new ();
  gint64 count = n_names;
  g_autofree gint64 *packed = NULL;
  gint64 shape[1];

  g_byte_array_append (bytes, (const guint8 *) &count, sizeof count);
  for (guint i = 0; i < n_names; i++)
    g_byte_array_append (bytes, (const guint8 *) names[i], strlen (names[i]) + 1);
  shape[0] = (bytes->len + sizeof (gint64) - 1) / sizeof (gint64);
  packed = g_new0 (gint64, shape[0]);
  memcpy (packed, bytes->data, bytes->len);
  return hp_tensor_new_from_int64_data (packed, shape[0], shape, 1, NULL);
}

/* The names pack_names() packed, or NULL with HP_ERROR_MPI when @packed
 * does not hold them */
static GStrv
unpack_names (HpTensor  *packed,
              guint      peer,
              GError   **error)
{
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  const gchar *data = _hp_tensor_data (packed);
  gsize size = hp_tensor_get_numel (packed) * sizeof (gint64), at = sizeof (gint64);
  gint64 count = -1;

  if (hp_tensor_get_dtype (packed) == HP_DTYPE_INT64 && size >= sizeof count)
    memcpy (&count, data, sizeof count);
  for (gint64 i = 0; i < count; i++)
    {
      const gchar *end = at < size ? memchr (data + at, '\0', size - at) : NULL;

      if (end == NULL)
        break;
      g_strv_builder_add (builder, data + at);
      at = end - data + 1;
      if (i + 1 == count)
        return g_strv_builder_end (builder);
    }
  if (count == 0)
    return g_strv_builder_end (builder);
  g_set_error (error, HP_ERROR, HP_ERROR_MPI,
               "HpPipelineSchedule: the names stage %u sent do not unpack", peer);
  return NULL;
}

/**
 * hp_pipeline_schedule_gather:
 * @self: a [class@Hp.PipelineSchedule]
 * @names: (array zero-terminated=1): the names of this stage's tensors
 * @tensors: (element-type Hp.Tensor): this stage's tensors, one per
 *   name, plain tensors (gather a DTensor whole first)
 * @gathered_names: (out) (optional) (nullable) (array zero-terminated=1) (transfer full):
 *   return location for the names of every stage's tensors, on the
 *   first stage
 * @gathered_tensors: (out) (optional) (nullable) (element-type Hp.Tensor) (transfer container):
 *   return location for every stage's tensors, on the first stage
 * @error: return location for a [struct@GLib.Error]
 *
 * Collects the named tensors of every stage on the first: each later
 * stage sends its own with MPI point-to-point messages, each after its
 * dtype and shape, waited for with the deadline of the collectives
 * (`HP_COLLECTIVE_TIMEOUT`), so that a stage that failed before it makes
 * the first fail rather than wait for ever. On the first stage
 * @gathered_names and @gathered_tensors are the first stage's, then the
 * second's, and so on (a name two stages hold is there twice); on the
 * others %NULL. Collective over the pipeline dim, after an agreement
 * that every stage gathers. Saving a checkpoint of a pipelined model
 * gathers each stage's whole tensors on one rank this way.
 *
 * Returns: %TRUE, or %FALSE with [HP_ERROR_MPI][error@Hp.Error] when a
 *   stage does not come within `HP_COLLECTIVE_TIMEOUT` or sends what is
 *   not names and tensors
 *
 * Since: 1.0
 */
gboolean
hp_pipeline_schedule_gather (HpPipelineSchedule   *self,
                             const gchar * const  *names,
                             GPtrArray            *tensors,
                             GStrv                *gathered_names,
                             GPtrArray           **gathered_tensors,
                             GError              **error)
{
  HpCollectiveCall call = HP_COLLECTIVE_CALL_INIT (HP_COLLECTIVE_SEND, "pipeline gather");
  gint64 agreed[1];
  g_autoptr(GStrvBuilder) all_names = NULL;
  g_autoptr(GPtrArray) all_tensors = NULL;
  Step step = { 0 };
  gboolean ok = TRUE;

  g_return_val_if_fail (HP_IS_PIPELINE_SCHEDULE (self), FALSE);
  g_return_val_if_fail (names != NULL, FALSE);
  g_return_val_if_fail (tensors != NULL && tensors->len == g_strv_length ((GStrv) names), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);
  for (guint i = 0; i < tensors->len; i++)
    g_return_val_if_fail (HP_IS_TENSOR (g_ptr_array_index (tensors, i)) &&
                          !HP_IS_DTENSOR (g_ptr_array_index (tensors, i)), FALSE);

  if (gathered_names != NULL)
    *gathered_names = NULL;
  if (gathered_tensors != NULL)
    *gathered_tensors = NULL;
  if (!start_run (self, &call, agreed, 0, &step, error))
    return FALSE;

  /* the names, then the tensors one after the other on one tag, which
   * keeps their order: within the tags of a run of one microbatch */
  if (self->stage > 0)
    {
      g_autoptr(HpTensor) packed = pack_names (names, tensors->len);

      ok = start_send (&step, packed, 0, 0, FALSE, error);
      for (guint i = 0; ok && i < tensors->len; i++)
        ok = start_send (&step, g_ptr_array_index (tensors, i), 0, 0, TRUE, error);
      ok = ok && wait_sends (&step, error);
    }
  else
    {
      all_names = g_strv_builder_new ();
      all_tensors = g_ptr_array_new_with_free_func (g_object_unref);
      g_strv_builder_addv (all_names, (const gchar **) names);
      for (guint i = 0; i < tensors->len; i++)
        g_ptr_array_add (all_tensors, g_object_ref (g_ptr_array_index (tensors, i)));
      for (guint from = 1; ok && from < self->n_stages; from++)
        {
          g_autoptr(HpTensor) packed = receive (&step, from, 0, FALSE, NULL, error);
          g_auto(GStrv) theirs = packed != NULL ? unpack_names (packed, from, error) : NULL;

          ok = theirs != NULL;
          for (guint i = 0; ok && theirs[i] != NULL; i++)
            {
              HpTensor *tensor = receive (&step, from, 0, TRUE, NULL, error);

              ok = tensor != NULL;
              if (ok)
                g_ptr_array_add (all_tensors, tensor);
            }
          if (ok)
            g_strv_builder_addv (all_names, (const gchar **) theirs);
        }
    }
  if (!ok)
    g_ptr_array_set_free_func (step.sendings, sending_abandon);
  g_ptr_array_unref (step.sendings);
  g_free (step.failure);
  if (!ok)
    return FALSE;
  if (self->stage == 0 && gathered_names != NULL)
    *gathered_names = g_strv_builder_end (all_names);
  if (self->stage == 0 && gathered_tensors != NULL)
    *gathered_tensors = g_steal_pointer (&all_tensors);
  return TRUE;
}
