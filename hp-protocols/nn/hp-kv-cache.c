/* hp-kv-cache.c
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * The cache keeps, per layer, the rotated keys and the values of every
 * position seen so far and joins each step's new ones to them. The
 * copy a join makes is of the size the attention reads anyway, so a new
 * position still costs the projections and feed-forward networks of one
 * position only.
 */

#include "config.h"

#include "hp-kv-cache-private.h"
#include "hp-tensor-ops.h"

/**
 * HpKVCache:
 *
 * The keys and values a [class@Hp.Decoder] has computed for the
 * positions it has seen, so that continuing a sequence with
 * [method@Hp.Decoder.forward_with_cache] costs the new positions only.
 *
 * A cache belongs to one decoder with
 * [property@Hp.KVCache:n-layers] layers and one batch of
 * [property@Hp.KVCache:batch-size] sequences, and holds at most
 * [property@Hp.KVCache:capacity] positions. Layer i's keys and values
 * ([method@Hp.KVCache.get_keys], [method@Hp.KVCache.get_values]) have
 * shape [batch, length, key/value heads, head dim]: the keys after the
 * rotary embedding. When the decoder is tensor parallel they are
 * DTensors whose heads are sharded as the attention shards them, so each
 * rank keeps its own heads only.
 *
 * [method@Hp.KVCache.reset] empties the cache for a new sequence.
 *
 * Since: 1.0
 */

struct _HpKVCache
{
  GObject parent_instance;

  guint n_layers;
  gint64 batch_size;
  gint64 capacity;
  gint64 length;
  HpTensor **keys;        /* n_layers entries, NULL while empty */
  HpTensor **values;
  HpTensor **pending_keys;
  HpTensor **pending_values;
};

G_DEFINE_FINAL_TYPE (HpKVCache, hp_kv_cache, G_TYPE_OBJECT)

enum {
  PROP_0,
  PROP_N_LAYERS,
  PROP_BATCH_SIZE,
  PROP_CAPACITY,
  PROP_LENGTH,
  N_PROPS
};

static GParamSpec *properties[N_PROPS];

static void
clear_entries (HpTensor **entries,
               guint      n)
{
  for (guint i = 0; i < n; i++)
    g_clear_object (&entries[i]);
}

static void
hp_kv_cache_finalize (GObject *object)
{
  HpKVCache *self = HP_KV_CACHE (object);

  hp_kv_cache_reset (self);
  g_free (self->keys);
  g_free (self->values);
  g_free (self->pending_keys);
  g_free (self->pending_values);
  G_OBJECT_CLASS (hp_kv_cache_parent_class)->finalize (object);
}

static void
hp_kv_cache_constructed (GObject *object)
{
  HpKVCache *self = HP_KV_CACHE (object);

  G_OBJECT_CLASS (hp_kv_cache_parent_class)->constructed (object);
  self->keys = g_new0 (HpTensor *, self->n_layers);
  self->values = g_new0 (HpTensor *, self->n_layers);
  self->pending_keys = g_new0 (HpTensor *, self->n_layers);
  self->pending_values = g_new0 (HpTensor *, self->n_layers);
}

static void
hp_kv_cache_get_property (GObject    *object,
                          guint       prop_id,
                          GValue     *value,
                          GParamSpec *pspec)
{
  HpKVCache *self = HP_KV_CACHE (object);

  switch (prop_id)
    {
    case PROP_N_LAYERS:
      g_value_set_uint (value, self->n_layers);
      break;
    case PROP_BATCH_SIZE:
      g_value_set_int64 (value, self->batch_size);
      break;
    case PROP_CAPACITY:
      g_value_set_int64 (value, self->capacity);
      break;
    case PROP_LENGTH:
      g_value_set_int64 (value, self->length);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_kv_cache_set_property (GObject      *object,
                          guint         prop_id,
                          const GValue *value,
                          GParamSpec   *pspec)
{
  HpKVCache *self = HP_KV_CACHE (object);

  switch (prop_id)
    {
    case PROP_N_LAYERS:
      self->n_layers = g_value_get_uint (value);
      break;
    case PROP_BATCH_SIZE:
      self->batch_size = g_value_get_int64 (value);
      break;
    case PROP_CAPACITY:
      self->capacity = g_value_get_int64 (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
hp_kv_cache_class_init (HpKVCacheClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->finalize = hp_kv_cache_finalize;
  object_class->constructed = hp_kv_cache_constructed;
  object_class->get_property = hp_kv_cache_get_property;
  object_class->set_property = hp_kv_cache_set_property;

  /**
   * HpKVCache:n-layers:
   *
   * The number of decoder layers the cache holds keys and values for.
   *
   * Since: 1.0
   */
  properties[PROP_N_LAYERS] =
    g_param_spec_uint ("n-layers", NULL, NULL, 1, G_MAXUINT, 1,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * HpKVCache:batch-size:
   *
   * The number of sequences, the first dim of the ids the cache goes
   * with.
   *
   * Since: 1.0
   */
  properties[PROP_BATCH_SIZE] =
    g_param_spec_int64 ("batch-size", NULL, NULL, 1, G_MAXINT64, 1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * HpKVCache:capacity:
   *
   * The most positions the cache holds.
   *
   * Since: 1.0
   */
  properties[PROP_CAPACITY] =
    g_param_spec_int64 ("capacity", NULL, NULL, 1, G_MAXINT64, 1,
                        G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  /**
   * HpKVCache:length:
   *
   * The number of positions the cache holds now.
   *
   * Since: 1.0
   */
  properties[PROP_LENGTH] =
    g_param_spec_int64 ("length", NULL, NULL, 0, G_MAXINT64, 0,
                        G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties (object_class, N_PROPS, properties);
}

static void
hp_kv_cache_init (HpKVCache *self)
{
}

/**
 * hp_kv_cache_new:
 * @n_layers: the number of decoder layers, at least 1
 * @batch_size: the number of sequences, at least 1
 * @capacity: the most positions to hold, at least 1
 *
 * Creates an empty cache for a decoder with @n_layers layers.
 *
 * Returns: (transfer full): a new [class@Hp.KVCache]
 *
 * Since: 1.0
 */
HpKVCache *
hp_kv_cache_new (guint  n_layers,
                 gint64 batch_size,
                 gint64 capacity)
{
  g_return_val_if_fail (n_layers >= 1, NULL);
  g_return_val_if_fail (batch_size >= 1, NULL);
  g_return_val_if_fail (capacity >= 1, NULL);

  return g_object_new (HP_TYPE_KV_CACHE,
                       "n-layers", n_layers,
                       "batch-size", batch_size,
                       "capacity", capacity,
                       NULL);
}

/**
 * hp_kv_cache_get_n_layers:
 * @self: a [class@Hp.KVCache]
 *
 * Gets [property@Hp.KVCache:n-layers].
 *
 * Returns: the number of layers
 *
 * Since: 1.0
 */
guint
hp_kv_cache_get_n_layers (HpKVCache *self)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), 0);

  return self->n_layers;
}

/**
 * hp_kv_cache_get_batch_size:
 * @self: a [class@Hp.KVCache]
 *
 * Gets [property@Hp.KVCache:batch-size].
 *
 * Returns: the number of sequences
 *
 * Since: 1.0
 */
gint64
hp_kv_cache_get_batch_size (HpKVCache *self)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), 0);

  return self->batch_size;
}

/**
 * hp_kv_cache_get_capacity:
 * @self: a [class@Hp.KVCache]
 *
 * Gets [property@Hp.KVCache:capacity].
 *
 * Returns: the most positions the cache holds
 *
 * Since: 1.0
 */
gint64
hp_kv_cache_get_capacity (HpKVCache *self)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), 0);

  return self->capacity;
}

/**
 * hp_kv_cache_get_length:
 * @self: a [class@Hp.KVCache]
 *
 * Gets [property@Hp.KVCache:length]: the positions seen so far, which
 * is also the rotary position of the next one.
 *
 * Returns: the number of cached positions
 *
 * Since: 1.0
 */
gint64
hp_kv_cache_get_length (HpKVCache *self)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), 0);

  return self->length;
}

/**
 * hp_kv_cache_get_keys:
 * @self: a [class@Hp.KVCache]
 * @layer: a layer index, below [property@Hp.KVCache:n-layers]
 *
 * Gets the rotated keys of @layer, [batch, length, key/value heads,
 * head dim] (a DTensor for a tensor-parallel decoder).
 *
 * Returns: (transfer none) (nullable): the keys, or %NULL while the
 *   cache is empty
 *
 * Since: 1.0
 */
HpTensor *
hp_kv_cache_get_keys (HpKVCache *self,
                      guint      layer)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), NULL);
  g_return_val_if_fail (layer < self->n_layers, NULL);

  return self->keys[layer];
}

/**
 * hp_kv_cache_get_values:
 * @self: a [class@Hp.KVCache]
 * @layer: a layer index, below [property@Hp.KVCache:n-layers]
 *
 * Gets the values of @layer, laid out as [method@Hp.KVCache.get_keys]
 * says.
 *
 * Returns: (transfer none) (nullable): the values, or %NULL while the
 *   cache is empty
 *
 * Since: 1.0
 */
HpTensor *
hp_kv_cache_get_values (HpKVCache *self,
                        guint      layer)
{
  g_return_val_if_fail (HP_IS_KV_CACHE (self), NULL);
  g_return_val_if_fail (layer < self->n_layers, NULL);

  return self->values[layer];
}

/**
 * hp_kv_cache_reset:
 * @self: a [class@Hp.KVCache]
 *
 * Empties the cache: its length becomes 0, and the next forward starts
 * a new sequence at position 0.
 *
 * Since: 1.0
 */
void
hp_kv_cache_reset (HpKVCache *self)
{
  g_return_if_fail (HP_IS_KV_CACHE (self));

  _hp_kv_cache_discard (self);
  clear_entries (self->keys, self->n_layers);
  clear_entries (self->values, self->n_layers);
  if (self->length != 0)
    {
      self->length = 0;
      g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LENGTH]);
    }
}

/* @cached followed by @fresh along the positions */
static HpTensor *
join (HpTensor  *cached,
      HpTensor  *fresh,
      GError   **error)
{
  g_autoptr(GPtrArray) parts = NULL;

  if (cached == NULL)
    return g_object_ref (fresh);
  parts = g_ptr_array_new ();
  g_ptr_array_add (parts, cached);
  g_ptr_array_add (parts, fresh);
  return hp_tensor_cat (parts, 1, error);
}

gboolean
_hp_kv_cache_extend (HpKVCache  *self,
                     guint       layer,
                     HpTensor   *keys,
                     HpTensor   *values,
                     HpTensor  **all_keys,
                     HpTensor  **all_values,
                     GError    **error)
{
  g_autoptr(HpTensor) joined_keys = NULL;
  g_autoptr(HpTensor) joined_values = NULL;

  g_return_val_if_fail (layer < self->n_layers, FALSE);

  joined_keys = join (self->keys[layer], keys, error);
  if (joined_keys == NULL)
    return FALSE;
  joined_values = join (self->values[layer], values, error);
  if (joined_values == NULL)
    return FALSE;
  g_set_object (&self->pending_keys[layer], joined_keys);
  g_set_object (&self->pending_values[layer], joined_values);
  *all_keys = g_steal_pointer (&joined_keys);
  *all_values = g_steal_pointer (&joined_values);
  return TRUE;
}

void
_hp_kv_cache_commit (HpKVCache *self,
                     gint64     n_new)
{
  for (guint i = 0; i < self->n_layers; i++)
    {
      if (self->pending_keys[i] == NULL)
        continue;
      g_clear_object (&self->keys[i]);
      g_clear_object (&self->values[i]);
      self->keys[i] = g_steal_pointer (&self->pending_keys[i]);
      self->values[i] = g_steal_pointer (&self->pending_values[i]);
    }
  self->length += n_new;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_LENGTH]);
}

void
_hp_kv_cache_discard (HpKVCache *self)
{
  clear_entries (self->pending_keys, self->n_layers);
  clear_entries (self->pending_values, self->n_layers);
}
