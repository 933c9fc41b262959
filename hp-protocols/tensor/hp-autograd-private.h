/* hp-autograd-private.h: the reverse-mode autograd graph
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * An op that records builds one node: it names the op, keeps an edge per
 * input (to the node that produced it, or to the leaf tensor itself, or
 * nothing when the input needs no gradient), the tensors its backward
 * needs (saved as detached aliases, so an output saved by its own node
 * makes no reference cycle) and op data such as a dim or a scale.
 *
 * The backward function receives one gradient per output (NULL when no
 * gradient reached that output) and fills grad_inputs[i] (transfer full)
 * for each input i with _hp_autograd_node_needs_input_grad(). It runs
 * with grad mode off, so it may call the public ops freely.
 *
 * _hp_autograd_grad() runs a backward pass that hands the gradients of
 * chosen leaves back instead of adding them to the leaves' grad: a
 * node's backward can run a graph of its own with it (activation
 * checkpointing, hp-module-checkpoint.c).
 *
 * A backward may hand on a gradient whose values are still on their way
 * (a non-blocking collective fills it) with _hp_autograd_defer(): the
 * pass finishes it before anything reads it (another gradient added to
 * it, a leaf's grad set) and at its end, so the collective runs while the
 * nodes after it compute.
 */

#pragma once

#include "hp-tensor.h"

G_BEGIN_DECLS

typedef struct _HpAutogradNode HpAutogradNode;

typedef gboolean (*HpBackwardFunc) (HpAutogradNode  *node,
                                    HpTensor       **grad_outputs,
                                    HpTensor       **grad_inputs,
                                    GError         **error);

gboolean        _hp_autograd_should_record        (HpTensor * const *inputs,
                                                   guint             n_inputs);
HpAutogradNode *_hp_autograd_node_new             (const gchar      *name,
                                                   HpBackwardFunc    backward,
                                                   HpTensor * const *inputs,
                                                   guint             n_inputs,
                                                   guint             n_outputs);
HpAutogradNode *_hp_autograd_node_ref             (HpAutogradNode   *node);
void            _hp_autograd_node_unref           (HpAutogradNode   *node);
const gchar    *_hp_autograd_node_get_name        (HpAutogradNode   *node);
guint           _hp_autograd_node_get_n_inputs    (HpAutogradNode   *node);
gboolean        _hp_autograd_node_needs_input_grad (HpAutogradNode  *node,
                                                   guint             index);
guint           _hp_autograd_node_save            (HpAutogradNode   *node,
                                                   HpTensor         *tensor);
HpTensor       *_hp_autograd_node_get_saved       (HpAutogradNode   *node,
                                                   guint             index);
void            _hp_autograd_node_set_data        (HpAutogradNode   *node,
                                                   gpointer          data,
                                                   GDestroyNotify    destroy);
gpointer        _hp_autograd_node_get_data        (HpAutogradNode   *node);
void            _hp_autograd_node_set_output      (HpAutogradNode   *node,
                                                   HpTensor         *output,
                                                   guint             output_nr);
void            _hp_autograd_record               (const gchar      *name,
                                                   HpBackwardFunc    backward,
                                                   HpTensor * const *inputs,
                                                   guint             n_inputs,
                                                   HpTensor         *output,
                                                   HpTensor * const *saved,
                                                   guint             n_saved,
                                                   gpointer          data,
                                                   GDestroyNotify    destroy);
/* With @abandon (another one failed: the ranks are out of step), gives
 * up at once instead of waiting */
typedef gboolean (*HpAutogradFinishFunc) (gpointer  data,
                                          gboolean  abandon,
                                          GError  **error);

gboolean        _hp_autograd_defer                (HpTensor         *grad,
                                                   HpAutogradFinishFunc finish,
                                                   gpointer          data,
                                                   GDestroyNotify    destroy,
                                                   GError          **error);
gboolean        _hp_autograd_run_backward         (HpTensor         *root,
                                                   HpTensor         *grad,
                                                   GError          **error);
gboolean        _hp_autograd_grad                 (const gchar      *what,
                                                   HpTensor         *root,
                                                   HpTensor         *grad,
                                                   HpTensor * const *leaves,
                                                   guint             n_leaves,
                                                   HpTensor        **grads_out,
                                                   GError          **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (HpAutogradNode, _hp_autograd_node_unref)

G_END_DECLS
