/* hp-state-dict.h: an ordered map from names to tensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include <glib-object.h>

#include "hp-tensor.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_STATE_DICT (hp_state_dict_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpStateDict, hp_state_dict, HP, STATE_DICT, GObject)

HP_AVAILABLE_IN_ALL
HpStateDict *hp_state_dict_new          (void);
HP_AVAILABLE_IN_ALL
void         hp_state_dict_insert       (HpStateDict  *self,
                                         const gchar  *name,
                                         HpTensor     *tensor);
HP_AVAILABLE_IN_ALL
HpTensor    *hp_state_dict_lookup       (HpStateDict  *self,
                                         const gchar  *name);
HP_AVAILABLE_IN_ALL
gboolean     hp_state_dict_contains     (HpStateDict  *self,
                                         const gchar  *name);
HP_AVAILABLE_IN_ALL
gboolean     hp_state_dict_remove       (HpStateDict  *self,
                                         const gchar  *name);
HP_AVAILABLE_IN_ALL
guint        hp_state_dict_get_size     (HpStateDict  *self);
HP_AVAILABLE_IN_ALL
GStrv        hp_state_dict_get_names    (HpStateDict  *self);
HP_AVAILABLE_IN_ALL
const gchar *hp_state_dict_get_name     (HpStateDict  *self,
                                         guint         index);
HP_AVAILABLE_IN_ALL
HpTensor    *hp_state_dict_get_tensor   (HpStateDict  *self,
                                         guint         index);

G_END_DECLS
