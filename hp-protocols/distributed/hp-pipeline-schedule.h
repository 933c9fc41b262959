/* hp-pipeline-schedule.h: GPipe and 1F1B over the pp dim of a mesh
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-device-mesh.h"
#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

/**
 * HpPipelineScheduleKind:
 * @HP_PIPELINE_SCHEDULE_KIND_GPIPE: every microbatch's forward, then
 *   every microbatch's backward (GPipe)
 * @HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B: 1F1B, a warm-up of forwards, then one
 *   forward and one backward in turn, then the remaining backwards
 *   (PipeDream's 1F1B): at most as many microbatches in flight as
 *   stages
 *
 * The order in which a [class@Hp.PipelineSchedule] runs the forwards
 * and backwards of the microbatches.
 *
 * Since: 1.0
 */
typedef enum
{
  HP_PIPELINE_SCHEDULE_KIND_GPIPE,
  HP_PIPELINE_SCHEDULE_KIND_ONE_F_ONE_B,
} HpPipelineScheduleKind;

#define HP_TYPE_PIPELINE_SCHEDULE (hp_pipeline_schedule_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpPipelineSchedule, hp_pipeline_schedule, HP, PIPELINE_SCHEDULE, GObject)

/**
 * HpPipelineStageFunc:
 * @schedule: the schedule
 * @microbatch: the microbatch, from 0
 * @input: (nullable): on a stage after the first, the output of the
 *   stage before it for @microbatch, a tensor that requires grad in a
 *   training step; %NULL
 *   on the first stage, which takes the microbatch's data itself
 * @user_data: (closure): the data given to
 *   [method@Hp.PipelineSchedule.step]
 * @error: return location for a [struct@GLib.Error]
 *
 * Runs this rank's stage forward on one microbatch, with gradients
 * recorded in [method@Hp.PipelineSchedule.step] and not in
 * [method@Hp.PipelineSchedule.evaluate]. A stage before the last
 * returns its output, which the
 * schedule sends to the next stage; the last stage returns the
 * microbatch's loss, a one-element tensor (the mean over its rows).
 *
 * Returns: (transfer full) (nullable): the output or the loss, or
 *   %NULL with @error set
 *
 * Since: 1.0
 */
typedef HpTensor *(*HpPipelineStageFunc) (HpPipelineSchedule  *schedule,
                                          guint                microbatch,
                                          HpTensor            *input,
                                          gpointer             user_data,
                                          GError             **error);

HP_AVAILABLE_IN_ALL
HpPipelineSchedule     *hp_pipeline_schedule_new              (HpDeviceMesh            *mesh,
                                                               const gchar             *dim_name,
                                                               HpPipelineScheduleKind   kind,
                                                               guint                    n_microbatches,
                                                               GError                 **error);
HP_AVAILABLE_IN_ALL
HpPipelineScheduleKind  hp_pipeline_schedule_get_kind         (HpPipelineSchedule      *self);
HP_AVAILABLE_IN_ALL
guint                   hp_pipeline_schedule_get_n_microbatches (HpPipelineSchedule    *self);
HP_AVAILABLE_IN_ALL
guint                   hp_pipeline_schedule_get_stage        (HpPipelineSchedule      *self);
HP_AVAILABLE_IN_ALL
guint                   hp_pipeline_schedule_get_n_stages     (HpPipelineSchedule      *self);
HP_AVAILABLE_IN_ALL
gboolean                hp_pipeline_schedule_is_first_stage   (HpPipelineSchedule      *self);
HP_AVAILABLE_IN_ALL
gboolean                hp_pipeline_schedule_is_last_stage    (HpPipelineSchedule      *self);
HP_AVAILABLE_IN_ALL
GPtrArray              *hp_pipeline_schedule_split            (HpPipelineSchedule      *self,
                                                               HpTensor                *batch,
                                                               GError                 **error);
HP_AVAILABLE_IN_ALL
gdouble                 hp_pipeline_schedule_step             (HpPipelineSchedule      *self,
                                                               HpPipelineStageFunc      func,
                                                               gpointer                 user_data,
                                                               GError                 **error);
HP_AVAILABLE_IN_ALL
gdouble                 hp_pipeline_schedule_evaluate         (HpPipelineSchedule      *self,
                                                               HpPipelineStageFunc      func,
                                                               gpointer                 user_data,
                                                               GError                 **error);
HP_AVAILABLE_IN_ALL
gboolean                hp_pipeline_schedule_gather           (HpPipelineSchedule      *self,
                                                               const gchar * const     *names,
                                                               GPtrArray               *tensors,
                                                               GStrv                   *gathered_names,
                                                               GPtrArray              **gathered_tensors,
                                                               GError                 **error);

G_END_DECLS
