/* hp-grad-mode.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "hp-grad-mode.h"

/* Per thread, like torch.no_grad(): stored inverted so that the zero
 * initial value of a thread-local means "enabled". */
static _Thread_local gboolean grad_mode_disabled;

/**
 * hp_grad_mode_is_enabled:
 *
 * Tells whether operations on tensors that require gradients record
 * autograd nodes in the calling thread. Grad mode is on by default.
 *
 * Returns: %TRUE if recording is on
 *
 * Since: 1.0
 */
gboolean
hp_grad_mode_is_enabled (void)
{
  return !grad_mode_disabled;
}

/**
 * hp_grad_mode_set_enabled:
 * @enabled: whether to record autograd nodes
 *
 * Turns autograd recording on or off for the calling thread. Turn it off
 * around parameter initialisation and optimiser steps; results computed
 * while it is off have no gradient history.
 *
 * Since: 1.0
 */
void
hp_grad_mode_set_enabled (gboolean enabled)
{
  grad_mode_disabled = !enabled;
}
