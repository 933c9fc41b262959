/* hp-generator.h: continuing a prompt with a decoder
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#if !defined (HP_PROTOCOLS_INSIDE) && !defined (HP_PROTOCOLS_COMPILATION)
# error "Only <hp-protocols/hp-protocols.h> can be included directly."
#endif

#include "hp-decoder.h"
#include "hp-version-macros.h"

G_BEGIN_DECLS

#define HP_TYPE_GENERATOR (hp_generator_get_type ())

HP_AVAILABLE_IN_ALL
G_DECLARE_FINAL_TYPE (HpGenerator, hp_generator, HP, GENERATOR, GObject)

HP_AVAILABLE_IN_ALL
HpGenerator *hp_generator_new      (void);
HP_AVAILABLE_IN_ALL
gint64      *hp_generator_generate (HpGenerator   *self,
                                    HpDecoder     *decoder,
                                    const gint64  *prompt,
                                    gsize          n_prompt,
                                    gsize         *n_out,
                                    GError       **error);

G_END_DECLS
