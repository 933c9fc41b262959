/* hp-nn-basic-private.h: helpers of the basic layers
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "hp-config.h"
#include "hp-dtype.h"
#include "hp-module.h"

G_BEGIN_DECLS

gboolean   _hp_nn_check_dtype   (HpConfig     *config,
                                 HpDType       dtype,
                                 GError      **error);
HpTensor  *_hp_nn_single_arg    (HpModule     *module,
                                 GPtrArray    *args,
                                 GError      **error);
GPtrArray *_hp_nn_single_output (HpTensor     *output);

G_END_DECLS
