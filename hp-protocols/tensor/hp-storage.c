/* hp-storage.c: the buffers behind tensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Every tensor buffer is 64-byte aligned. Large buffers are recycled:
 * malloc serves them (with glibc, always above 32 MiB) by a fresh mmap and
 * hands them back to the kernel when they are freed, so each page of each
 * new op output faults on its first write, which on a virtual machine
 * costs more than the arithmetic itself (bench/README.md). Buffers from
 * glibc's first mmap threshold (128 KiB) up fare no better when a few of
 * them are freed together: glibc gives the top of its heap back to the
 * kernel, and the next ones fault in again. A buffer of POOL_MIN_BYTES
 * or more whose last reference goes away is therefore kept in one of POOL_SLOTS slots (POOL_MAX_BYTES in all),
 * and the next request of the same size takes it back, already mapped;
 * of several, the one released last, which is the likeliest to be still
 * in the CPU caches. When a released buffer does not fit, the buffers
 * released longest ago make room for it, so that the slots follow the
 * sizes a program uses now rather than those it used first. A training
 * step makes the same sizes over and over, so the slots hit. Smaller
 * buffers are left to malloc, which recycles them itself.
 */

#include "config.h"

#include "hp-tensor-private.h"

#define POOL_MIN_BYTES ((gsize) 128 << 10)
/* A forward and backward step has hundreds of large buffers in flight:
 * the activations every layer keeps for backward, their gradients, the
 * weight gradients kept until the optimizer step. After backward most of
 * them come back at once, and the next forward asks for the same sizes
 * again. With too few slots or bytes (32 slots and 256 MiB before) the
 * pool evicted most of them: training a 25M-parameter model on 8 x 128
 * tokens, the second step faulted 400 MB in again and every later one
 * 33 MB (bench/README.md); 256 slots and 1 GiB keep all of them, and
 * every step after the first takes its buffers already mapped. The byte limit bounds what an idle program holds. */
#define POOL_MAX_BYTES ((gsize) 1024 << 20)
#define POOL_SLOTS 256

typedef struct
{
  gpointer data;
  gsize size;
  guint64 released;   /* pool_clock when it came into its slot */
} PooledBuffer;

G_LOCK_DEFINE_STATIC (pool);
static PooledBuffer *pool_slots[POOL_SLOTS];
static gsize pool_bytes;
static guint64 pool_clock;

static void
pooled_buffer_free (PooledBuffer *buffer)
{
  g_aligned_free (buffer->data);
  g_free (buffer);
}

/* The slot holding a buffer of @size (of any size if 0) that came back
 * last (@latest) or longest ago; -1 if there is none. Call it with the
 * lock held. */
static gint
find_slot (gsize    size,
           gboolean latest)
{
  gint found = -1;

  for (guint i = 0; i < POOL_SLOTS; i++)
    {
      PooledBuffer *b = pool_slots[i];

      if (b == NULL || (size != 0 && b->size != size))
        continue;
      if (found < 0 ||
          (latest ? b->released > pool_slots[found]->released
                  : b->released < pool_slots[found]->released))
        found = i;
    }
  return found;
}

static void
pooled_buffer_release (gpointer user_data)
{
  PooledBuffer *buffer = user_data;
  PooledBuffer *evicted[POOL_SLOTS];
  guint n_evicted = 0;

  if (buffer->size > POOL_MAX_BYTES)
    {
      pooled_buffer_free (buffer);
      return;
    }

  G_LOCK (pool);
  while (buffer != NULL)
    {
      gint free_slot = -1, oldest;

      for (guint i = 0; i < POOL_SLOTS && free_slot < 0; i++)
        if (pool_slots[i] == NULL)
          free_slot = i;

      if (free_slot >= 0 && pool_bytes + buffer->size <= POOL_MAX_BYTES)
        {
          buffer->released = ++pool_clock;
          pool_bytes += buffer->size;
          pool_slots[free_slot] = g_steal_pointer (&buffer);
          continue;
        }

      /* no room: the buffer back longest ago goes; the pool is not empty
       * here, as an empty one has room for any buffer this function keeps */
      oldest = find_slot (0, FALSE);
      pool_bytes -= pool_slots[oldest]->size;
      evicted[n_evicted++] = g_steal_pointer (&pool_slots[oldest]);
    }
  G_UNLOCK (pool);

  for (guint i = 0; i < n_evicted; i++)
    pooled_buffer_free (evicted[i]);
}

/* Uninitialised storage of @size bytes */
GBytes *
_hp_storage_new (gsize size)
{
  PooledBuffer *buffer = NULL;
  gpointer data;
  gint slot;

  if (size < POOL_MIN_BYTES)
    {
      /* g_aligned_alloc() may return NULL for a zero size */
      data = g_aligned_alloc (MAX (size, 1), 1, 64);
      return g_bytes_new_with_free_func (data, size, g_aligned_free, data);
    }

  G_LOCK (pool);
  slot = find_slot (size, TRUE);
  if (slot >= 0)
    {
      buffer = g_steal_pointer (&pool_slots[slot]);
      pool_bytes -= size;
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
