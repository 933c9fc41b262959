/* hp-storage.c: the buffers behind tensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every tensor buffer is 64-byte aligned. Large buffers are recycled:
 * malloc serves them (with glibc, always above 32 MiB) by a fresh mmap and
 * hands them back to the kernel when they are freed, so each page of each
 * new op output faults on its first write, which on a virtual machine
 * costs more than the arithmetic itself (bench/README.md). A buffer of
 * POOL_MIN_BYTES or more whose last reference goes away is therefore kept
 * in one of POOL_SLOTS slots (POOL_MAX_BYTES in all), and the next request
 * of the same size takes it back, already mapped. A training step makes
 * the same sizes over and over, so the slots hit. Smaller buffers are left
 * to malloc, which recycles them itself.
 */

#include "config.h"

#include "hp-tensor-private.h"

#define POOL_MIN_BYTES ((gsize) 1 << 20)
#define POOL_MAX_BYTES ((gsize) 256 << 20)
/* A forward and backward step has a dozen or more large buffers in
 * flight (activations, their gradients, weight gradients kept until the
 * next step, collective results); with fewer slots than that, the
 * buffers freed last find the slots full and every step faults them in
 * again. The byte limit bounds what is kept. */
#define POOL_SLOTS 32

typedef struct
{
  gpointer data;
  gsize size;
} PooledBuffer;

G_LOCK_DEFINE_STATIC (pool);
static PooledBuffer *pool_slots[POOL_SLOTS];
static gsize pool_bytes;

static void
pooled_buffer_release (gpointer user_data)
{
  PooledBuffer *buffer = user_data;

  G_LOCK (pool);
  if (pool_bytes + buffer->size <= POOL_MAX_BYTES)
    for (guint i = 0; i < POOL_SLOTS; i++)
      if (pool_slots[i] == NULL)
        {
          pool_bytes += buffer->size;
          pool_slots[i] = g_steal_pointer (&buffer);
          break;
        }
  G_UNLOCK (pool);

  if (buffer != NULL)
    {
      g_aligned_free (buffer->data);
      g_free (buffer);
    }
}

/* Uninitialised storage of @size bytes */
GBytes *
_hp_storage_new (gsize size)
{
  PooledBuffer *buffer = NULL;
  gpointer data;

  if (size < POOL_MIN_BYTES)
    {
      /* g_aligned_alloc() may return NULL for a zero size */
      data = g_aligned_alloc (MAX (size, 1), 1, 64);
      return g_bytes_new_with_free_func (data, size, g_aligned_free, data);
    }

  G_LOCK (pool);
  for (guint i = 0; i < POOL_SLOTS; i++)
    if (pool_slots[i] != NULL && pool_slots[i]->size == size)
      {
        buffer = g_steal_pointer (&pool_slots[i]);
        pool_bytes -= size;
        break;
      }
  G_UNLOCK (pool);

  if (buffer == NULL)
    {
      buffer = g_new (PooledBuffer, 1);
      buffer->data = g_aligned_alloc (size, 1, 64);
      buffer->size = size;
    }

  return g_bytes_new_with_free_func (buffer->data, size, pooled_buffer_release, buffer);
}
