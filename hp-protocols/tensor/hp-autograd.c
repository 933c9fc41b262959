/* hp-autograd.c: graph nodes and the backward pass
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "hp-mpi-private.h"
#include "hp-tensor-ops.h"
#include "hp-tensor-private.h"

/* Where the gradient of one input goes: to output @output_nr of the node
 * that produced the input, or into the leaf itself, or nowhere. */
typedef struct
{
  HpAutogradNode *node;
  guint output_nr;
  HpTensor *leaf;
} HpEdge;

struct _HpAutogradNode
{
  gatomicrefcount ref_count;
  const gchar *name;
  HpBackwardFunc backward;
  guint n_inputs;
  guint n_outputs;
  HpEdge *edges;
  GPtrArray *saved;
  gpointer data;
  GDestroyNotify destroy;
  /* set once backward has run through the node and dropped its state */
  gboolean released;
};

gboolean
_hp_autograd_should_record (HpTensor * const *inputs,
                            guint             n_inputs)
{
  if (!hp_grad_mode_is_enabled ())
    return FALSE;

  for (guint i = 0; i < n_inputs; i++)
    if (inputs[i] != NULL && hp_tensor_get_requires_grad (inputs[i]))
      return TRUE;

  return FALSE;
}

HpAutogradNode *
_hp_autograd_node_new (const gchar      *name,
                       HpBackwardFunc    backward,
                       HpTensor * const *inputs,
                       guint             n_inputs,
                       guint             n_outputs)
{
  HpAutogradNode *node = g_new0 (HpAutogradNode, 1);

  g_atomic_ref_count_init (&node->ref_count);
  node->name = name;
  node->backward = backward;
  node->n_inputs = n_inputs;
  node->n_outputs = n_outputs;
  node->edges = g_new0 (HpEdge, MAX (n_inputs, 1));
  node->saved = g_ptr_array_new_with_free_func (_hp_object_unref_nullable);

  for (guint i = 0; i < n_inputs; i++)
    {
      HpTensor *input = inputs[i];
      HpAutogradNode *producer;
      guint output_nr;

      if (input == NULL || !hp_tensor_get_requires_grad (input))
        continue;

      producer = _hp_tensor_get_grad_fn (input, &output_nr);
      if (producer != NULL)
        {
          node->edges[i].node = _hp_autograd_node_ref (producer);
          node->edges[i].output_nr = output_nr;
        }
      else
        node->edges[i].leaf = g_object_ref (input);
    }

  return node;
}

HpAutogradNode *
_hp_autograd_node_ref (HpAutogradNode *node)
{
  g_atomic_ref_count_inc (&node->ref_count);
  return node;
}

/* Drops the node's edges, saved tensors and data. Edges to dying nodes
 * are appended to @dying instead of being freed here, so that a long
 * chain is freed in a loop, not by recursion. */
static void
hp_autograd_node_release (HpAutogradNode *node,
                          GPtrArray      *dying)
{
  for (guint i = 0; i < node->n_inputs; i++)
    {
      HpAutogradNode *next = g_steal_pointer (&node->edges[i].node);

      if (next != NULL && g_atomic_ref_count_dec (&next->ref_count))
        g_ptr_array_add (dying, next);
      g_clear_object (&node->edges[i].leaf);
    }
  g_ptr_array_set_size (node->saved, 0);
  if (node->destroy != NULL && node->data != NULL)
    node->destroy (node->data);
  node->data = NULL;
  node->destroy = NULL;
  node->released = TRUE;
}

void
_hp_autograd_node_unref (HpAutogradNode *node)
{
  g_autoptr(GPtrArray) dying = NULL;

  if (!g_atomic_ref_count_dec (&node->ref_count))
    return;

  dying = g_ptr_array_new ();
  g_ptr_array_add (dying, node);
  while (dying->len > 0)
    {
      HpAutogradNode *dead = g_ptr_array_steal_index (dying, dying->len - 1);

      hp_autograd_node_release (dead, dying);
      g_free (dead->edges);
      g_ptr_array_unref (dead->saved);
      g_free (dead);
    }
}

const gchar *
_hp_autograd_node_get_name (HpAutogradNode *node)
{
  return node->name;
}

guint
_hp_autograd_node_get_n_inputs (HpAutogradNode *node)
{
  return node->n_inputs;
}

gboolean
_hp_autograd_node_needs_input_grad (HpAutogradNode *node,
                                    guint           index)
{
  g_return_val_if_fail (index < node->n_inputs, FALSE);

  return node->edges[index].node != NULL || node->edges[index].leaf != NULL;
}

guint
_hp_autograd_node_save (HpAutogradNode *node,
                        HpTensor       *tensor)
{
  g_ptr_array_add (node->saved, tensor != NULL ? hp_tensor_detach (tensor) : NULL);
  return node->saved->len - 1;
}

HpTensor *
_hp_autograd_node_get_saved (HpAutogradNode *node,
                             guint           index)
{
  g_return_val_if_fail (index < node->saved->len, NULL);

  return g_ptr_array_index (node->saved, index);
}

void
_hp_autograd_node_set_data (HpAutogradNode *node,
                            gpointer        data,
                            GDestroyNotify  destroy)
{
  if (node->destroy != NULL && node->data != NULL)
    node->destroy (node->data);
  node->data = data;
  node->destroy = destroy;
}

gpointer
_hp_autograd_node_get_data (HpAutogradNode *node)
{
  return node->data;
}

void
_hp_autograd_node_set_output (HpAutogradNode *node,
                              HpTensor       *output,
                              guint           output_nr)
{
  g_return_if_fail (output_nr < node->n_outputs);

  _hp_tensor_set_grad_fn (output, node, output_nr);
}

/* The common case: one output, some saved tensors, optional op data.
 * Does nothing unless an input requires grad and grad mode is on; when it
 * does nothing it still frees @data. */
void
_hp_autograd_record (const gchar      *name,
                     HpBackwardFunc    backward,
                     HpTensor * const *inputs,
                     guint             n_inputs,
                     HpTensor         *output,
                     HpTensor * const *saved,
                     guint             n_saved,
                     gpointer          data,
                     GDestroyNotify    destroy)
{
  g_autoptr(HpAutogradNode) node = NULL;

  if (!_hp_autograd_should_record (inputs, n_inputs))
    {
      if (destroy != NULL && data != NULL)
        destroy (data);
      return;
    }

  node = _hp_autograd_node_new (name, backward, inputs, n_inputs, 1);
  for (guint i = 0; i < n_saved; i++)
    _hp_autograd_node_save (node, saved[i]);
  _hp_autograd_node_set_data (node, data, destroy);
  _hp_autograd_node_set_output (node, output, 0);
}

/* Per node during one backward pass */
typedef struct
{
  guint pending;        /* edges from nodes not yet run that point here */
  HpTensor **grads;     /* one per output, NULL until a gradient arrives */
  guint n_outputs;
} NodeState;

static void
node_state_free (gpointer data)
{
  NodeState *state = data;

  for (guint i = 0; i < state->n_outputs; i++)
    g_clear_object (&state->grads[i]);
  g_free (state->grads);
  g_free (state);
}

/* A gradient whose values are still on their way (_hp_autograd_defer) */
typedef struct
{
  HpTensor *grad;
  HpAutogradFinishFunc finish;
  gpointer data;
  GDestroyNotify destroy;
} Deferred;

/* The Deferred of the innermost pass running on this thread, or NULL */
static GPrivate deferred_key;

static void
deferred_clear (gpointer pointer)
{
  Deferred *deferred = pointer;

  g_clear_object (&deferred->grad);
  if (deferred->destroy != NULL)
    deferred->destroy (deferred->data);
}

static gboolean
is_deferred (GArray   *deferred,
             HpTensor *grad)
{
  for (guint i = 0; grad != NULL && i < deferred->len; i++)
    if (g_array_index (deferred, Deferred, i).grad == grad)
      return TRUE;
  return FALSE;
}

/* Finishes every deferred gradient of the pass, in the order they were
 * deferred; after one fails, the others are given up on without waiting
 * (a deadline each would add up) */
static gboolean
finish_deferred (GArray  *deferred,
                 GError **error)
{
  gboolean ok = TRUE;

  for (guint i = 0; i < deferred->len; i++)
    {
      Deferred *one = &g_array_index (deferred, Deferred, i);

      if (ok)
        ok = one->finish (one->data, FALSE, error);
      else
        one->finish (one->data, TRUE, NULL);
    }
  g_array_set_size (deferred, 0);
  return ok;
}

/**
 * _hp_autograd_defer:
 * @grad: a gradient that a backward function hands on, whose values
 *   are not there yet
 * @finish: puts them there (waits for the collective that fills them)
 * @data: for @finish
 * @destroy: frees @data after @finish ran
 * @error: return location for a [struct@GLib.Error]
 *
 * The backward pass that runs calls @finish before it reads @grad and at
 * its end, whether or not it fails. Outside a pass, @finish runs now.
 *
 * Returns: %TRUE, or %FALSE with the error of @finish when it ran now
 *   and failed
 */
gboolean
_hp_autograd_defer (HpTensor             *grad,
                    HpAutogradFinishFunc  finish,
                    gpointer              data,
                    GDestroyNotify        destroy,
                    GError              **error)
{
  GArray *deferred = g_private_get (&deferred_key);
  Deferred one = { g_object_ref (grad), finish, data, destroy };
  gboolean ok;

  if (deferred != NULL)
    {
      g_array_append_val (deferred, one);
      return TRUE;
    }
  ok = finish (data, FALSE, error);
  deferred_clear (&one);
  return ok;
}

static gboolean
accumulate (HpTensor  **slot,
            HpTensor   *grad,
            GError    **error)
{
  GArray *deferred = g_private_get (&deferred_key);
  HpTensor *sum;

  if (*slot == NULL)
    {
      *slot = g_object_ref (grad);
      return TRUE;
    }
  if (deferred != NULL && (is_deferred (deferred, *slot) || is_deferred (deferred, grad)) &&
      !finish_deferred (deferred, error))
    return FALSE;

  sum = hp_tensor_add (*slot, grad, error);
  if (sum == NULL)
    return FALSE;

  g_object_unref (*slot);
  *slot = sum;
  return TRUE;
}

static gboolean
check_grad_fits (const gchar  *what,
                 HpTensor     *target,
                 HpTensor     *grad,
                 GError      **error)
{
  guint t_ndim, g_ndim;
  const gint64 *t_shape = hp_tensor_get_shape (target, &t_ndim);
  const gint64 *g_shape = hp_tensor_get_shape (grad, &g_ndim);

  if (G_OBJECT_TYPE (target) != G_OBJECT_TYPE (grad))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_INVALID_ARGUMENT,
                   "%s: the gradient of an %s must be an %s too, got an %s",
                   what, G_OBJECT_TYPE_NAME (target), G_OBJECT_TYPE_NAME (target),
                   G_OBJECT_TYPE_NAME (grad));
      return FALSE;
    }
  if (!_hp_shape_equal (t_shape, t_ndim, g_shape, g_ndim) ||
      hp_tensor_get_dtype (target) != hp_tensor_get_dtype (grad))
    {
      g_autofree gchar *t_str = _hp_tensor_describe (target);
      g_autofree gchar *g_str = _hp_tensor_describe (grad);

      g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                   "%s: gradient %s does not fit tensor %s", what, g_str, t_str);
      return FALSE;
    }
  return TRUE;
}

/* Counts, for every node reachable from @root, how many edges of other
 * reachable nodes point at it. */
static gboolean
collect_graph (HpAutogradNode  *root,
               GHashTable      *states,
               GError         **error)
{
  g_autoptr(GPtrArray) stack = g_ptr_array_new ();

  g_ptr_array_add (stack, root);
  while (stack->len > 0)
    {
      HpAutogradNode *node = g_ptr_array_steal_index (stack, stack->len - 1);

      if (node->released)
        {
          g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                       "backward through %s a second time: the graph was freed "
                       "by the first backward", node->name);
          return FALSE;
        }

      if (g_hash_table_contains (states, node))
        continue;

      {
        NodeState *state = g_new0 (NodeState, 1);
        state->n_outputs = node->n_outputs;
        state->grads = g_new0 (HpTensor *, node->n_outputs);
        g_hash_table_insert (states, _hp_autograd_node_ref (node), state);
      }

      for (guint i = 0; i < node->n_inputs; i++)
        if (node->edges[i].node != NULL)
          g_ptr_array_add (stack, node->edges[i].node);
    }

  {
    GHashTableIter iter;
    gpointer key;

    g_hash_table_iter_init (&iter, states);
    while (g_hash_table_iter_next (&iter, &key, NULL))
      {
        HpAutogradNode *node = key;

        for (guint i = 0; i < node->n_inputs; i++)
          if (node->edges[i].node != NULL)
            {
              NodeState *next = g_hash_table_lookup (states, node->edges[i].node);
              next->pending++;
            }
      }
  }

  return TRUE;
}

static gboolean
run_node (HpAutogradNode  *node,
          NodeState       *state,
          GHashTable      *states,
          GHashTable      *leaf_grads,
          GPtrArray       *ready,
          GError         **error)
{
  g_autofree HpTensor **grad_inputs = g_new0 (HpTensor *, MAX (node->n_inputs, 1));
  gboolean reached = FALSE;
  gboolean ok = TRUE;

  /* A node whose outputs got no gradient passes none on */
  for (guint i = 0; i < state->n_outputs; i++)
    reached |= state->grads[i] != NULL;

  if (reached)
    ok = node->backward (node, state->grads, grad_inputs, error);
  if (ok)
    for (guint i = 0; i < node->n_inputs; i++)
      if (grad_inputs[i] != NULL && !_hp_autograd_node_needs_input_grad (node, i))
        g_clear_object (&grad_inputs[i]);

  for (guint i = 0; i < node->n_inputs; i++)
    {
      HpEdge *edge = &node->edges[i];

      if (ok && grad_inputs[i] != NULL)
        {
          if (edge->leaf != NULL)
            {
              HpTensor *slot = g_hash_table_lookup (leaf_grads, edge->leaf);
              gboolean had = slot != NULL;

              ok = check_grad_fits (node->name, edge->leaf, grad_inputs[i], error) &&
                   accumulate (&slot, grad_inputs[i], error);
              if (ok)
                {
                  if (had)
                    g_hash_table_steal (leaf_grads, edge->leaf);
                  g_hash_table_insert (leaf_grads, edge->leaf, slot);
                }
            }
          else
            {
              NodeState *next = g_hash_table_lookup (states, edge->node);
              GArray *deferred = g_private_get (&deferred_key);

              /* the node it goes to reads it */
              if (deferred != NULL && is_deferred (deferred, grad_inputs[i]))
                ok = finish_deferred (deferred, error);
              ok = ok && accumulate (&next->grads[edge->output_nr], grad_inputs[i], error);
            }
        }

      /* A node is ready once every node pointing at it has run, whether
       * or not it sent a gradient. */
      if (edge->node != NULL)
        {
          NodeState *next = g_hash_table_lookup (states, edge->node);
          if (--next->pending == 0)
            g_ptr_array_add (ready, edge->node);
        }

      g_clear_object (&grad_inputs[i]);
    }

  return ok;
}

/* Runs the backward pass from output @root_nr of @root_node, seeded with
 * @seed, with grad mode off; the gradients that reach leaves end up in
 * @leaf_grads (leaf -> gradient, no leaf changed). On success the graph
 * is released. */
static gboolean
run_graph (HpAutogradNode  *root_node,
           guint            root_nr,
           HpTensor        *seed,
           GHashTable      *leaf_grads,
           GError         **error)
{
  g_autoptr(GHashTable) states = NULL;
  g_autoptr(GPtrArray) ready = NULL;
  g_autoptr(GArray) deferred = NULL;
  GArray *outer;
  gboolean was_enabled;
  gboolean ok = TRUE;

  states = g_hash_table_new_full (NULL, NULL,
                                  (GDestroyNotify) _hp_autograd_node_unref,
                                  node_state_free);
  if (!collect_graph (root_node, states, error))
    return FALSE;

  {
    NodeState *state = g_hash_table_lookup (states, root_node);
    state->grads[root_nr] = g_object_ref (seed);
  }

  was_enabled = hp_grad_mode_is_enabled ();
  hp_grad_mode_set_enabled (FALSE);

  deferred = g_array_new (FALSE, FALSE, sizeof (Deferred));
  g_array_set_clear_func (deferred, deferred_clear);
  outer = g_private_get (&deferred_key);
  g_private_set (&deferred_key, deferred);

  ready = g_ptr_array_new ();
  g_ptr_array_add (ready, root_node);
  while (ok && ready->len > 0)
    {
      HpAutogradNode *node = g_ptr_array_steal_index (ready, ready->len - 1);
      NodeState *state = g_hash_table_lookup (states, node);

      /* as every op call does, between nodes whose backward makes no op
       * call of its own */
      _hp_mpi_progress ();
      ok = run_node (node, state, states, leaf_grads, ready, error);

      /* the gradients of a node's outputs are not needed once it ran */
      for (guint i = 0; i < state->n_outputs; i++)
        g_clear_object (&state->grads[i]);
    }
  if (ok)
    ok = finish_deferred (deferred, error);
  else
    finish_deferred (deferred, NULL);
  g_private_set (&deferred_key, outer);

  if (ok)
    {
      GHashTableIter iter;
      gpointer key;

      g_autoptr(GPtrArray) dying = g_ptr_array_new ();

      /* every node is still referenced by @states, so none dies here */
      g_hash_table_iter_init (&iter, states);
      while (g_hash_table_iter_next (&iter, &key, NULL))
        hp_autograd_node_release (key, dying);
      g_assert (dying->len == 0);
    }

  hp_grad_mode_set_enabled (was_enabled);
  return ok;
}

/* The seed of a backward from @root: @grad checked against it, or ones
 * for a one-element @root; NULL with an error naming @what otherwise */
static HpTensor *
make_seed (const gchar  *what,
           HpTensor     *root,
           HpTensor     *grad,
           GError      **error)
{
  if (!hp_tensor_get_requires_grad (root))
    {
      g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                   "%s: the tensor does not require grad and has no gradient history", what);
      return NULL;
    }

  if (grad == NULL)
    {
      guint ndim;
      const gint64 *shape = hp_tensor_get_shape (root, &ndim);

      if (hp_tensor_get_numel (root) != 1)
        {
          g_autofree gchar *shape_str = _hp_shape_to_string (shape, ndim);

          g_set_error (error, HP_ERROR, HP_ERROR_SHAPE,
                       "%s: a gradient can be left out only for a tensor "
                       "with one element, not shape %s", what, shape_str);
          return NULL;
        }
      return _hp_tensor_new_ones_like (root);
    }
  if (!check_grad_fits (what, root, grad, error))
    return NULL;
  return g_object_ref (grad);
}

gboolean
_hp_autograd_run_backward (HpTensor  *root,
                           HpTensor  *grad,
                           GError   **error)
{
  g_autoptr(HpTensor) seed = NULL;
  g_autoptr(GHashTable) leaf_grads = NULL;
  HpAutogradNode *root_node;
  guint root_nr;
  GHashTableIter iter;
  gpointer key, value;
  gboolean ok = TRUE;

  seed = make_seed ("backward", root, grad, error);
  if (seed == NULL)
    return FALSE;

  root_node = _hp_tensor_get_grad_fn (root, &root_nr);
  if (root_node == NULL)
    {
      /* backward on a leaf: its gradient is the seed itself */
      g_autoptr(HpTensor) sum = NULL;
      HpTensor *old = hp_tensor_get_grad (root);

      if (old != NULL && (sum = hp_tensor_add (old, seed, error)) == NULL)
        return FALSE;
      hp_tensor_set_grad (root, old != NULL ? sum : seed);
      return TRUE;
    }

  leaf_grads = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  if (!run_graph (root_node, root_nr, seed, leaf_grads, error))
    return FALSE;

  /* Leaves change only when the whole pass succeeded: first every sum,
   * then every assignment. */
  g_hash_table_iter_init (&iter, leaf_grads);
  while (ok && g_hash_table_iter_next (&iter, &key, &value))
    {
      HpTensor *old = hp_tensor_get_grad (key);

      if (old != NULL)
        {
          HpTensor *sum = hp_tensor_add (old, value, error);

          ok = sum != NULL;
          if (ok)
            g_hash_table_iter_replace (&iter, sum);
        }
    }

  g_hash_table_iter_init (&iter, leaf_grads);
  while (ok && g_hash_table_iter_next (&iter, &key, &value))
    hp_tensor_set_grad (key, value);

  return ok;
}

/* Like torch.autograd.grad: the gradients of @root (seeded with @grad)
 * with respect to the leaves @leaves, into @grads_out (transfer full,
 * NULL for a leaf no gradient reached), without changing the grad of
 * any leaf. A leaf that requires grad but is not in @leaves and that the
 * graph reaches is an error: its gradient would be lost. */
gboolean
_hp_autograd_grad (const gchar      *what,
                   HpTensor         *root,
                   HpTensor         *grad,
                   HpTensor * const *leaves,
                   guint             n_leaves,
                   HpTensor        **grads_out,
                   GError          **error)
{
  g_autoptr(HpTensor) seed = NULL;
  g_autoptr(GHashTable) leaf_grads = NULL;
  HpAutogradNode *root_node;
  guint root_nr;

  seed = make_seed (what, root, grad, error);
  if (seed == NULL)
    return FALSE;

  leaf_grads = g_hash_table_new_full (NULL, NULL, NULL, g_object_unref);
  root_node = _hp_tensor_get_grad_fn (root, &root_nr);
  if (root_node == NULL)
    g_hash_table_insert (leaf_grads, root, g_steal_pointer (&seed));
  else if (!run_graph (root_node, root_nr, seed, leaf_grads, error))
    return FALSE;

  for (guint i = 0; i < n_leaves; i++)
    grads_out[i] = leaves[i] != NULL ? g_hash_table_lookup (leaf_grads, leaves[i]) : NULL;
  for (guint i = 0; i < n_leaves; i++)
    if (grads_out[i] != NULL)
      g_hash_table_steal (leaf_grads, leaves[i]);

  if (g_hash_table_size (leaf_grads) > 0)
    {
      GHashTableIter iter;
      gpointer key;
      g_autofree gchar *text = NULL;

      g_hash_table_iter_init (&iter, leaf_grads);
      g_hash_table_iter_next (&iter, &key, NULL);
      text = _hp_tensor_describe (key);
      for (guint i = 0; i < n_leaves; i++)
        g_clear_object (&grads_out[i]);
      g_set_error (error, HP_ERROR, HP_ERROR_STATE,
                   "%s: the graph reaches %s, which requires grad but is neither an "
                   "input nor a parameter", what, text);
      return FALSE;
    }
  return TRUE;
}
