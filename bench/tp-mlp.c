/* bench/tp-mlp.c: a Megatron tensor-parallel MLP block with DTensors
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A measurement, not a test: it prints one line per figure with PASS or
 * FAIL against its target and always exits 0. Run it on one rank or under
 * mpirun on several (see README.md).
 *
 * The step: x [512, 1024] -> linear W1 [4096, 1024] + b1 -> gelu ->
 * linear W2 [1024, 4096] + b2 -> loss = mean of every output element,
 * then backward to all five tensors (x included), float32.
 *
 * On n ranks the block is laid out on a 1-d mesh the Megatron way: x
 * Replicate, W1 and b1 S(0) (column parallel, the hidden activations come
 * out S(-1)), W2 S(1) and b2 Replicate (row parallel, the output comes out
 * Partial(sum)); full_tensor() all-reduces the output. In backward the
 * gradient rule all-reduces the gradient of x (Megatron's f and g
 * operators). The step code is the same for both: the DTensor version
 * only differs in its inputs.
 *
 * Figures:
 *  (a) the median time of the step: on one rank with plain tensors and
 *      with DTensors on a mesh of one rank; on n > 1 ranks with DTensors,
 *      and with --t1-ms (the plain median of a 1-rank run) the speedup,
 *      target >= 1.9 on 2 ranks (0.95 n in general);
 *  (b) the loss of the DTensor step against the plain step (relative
 *      difference <= 1e-5), and the gathered DTensor gradients against
 *      the plain gradients;
 *  (c) the cost of dispatching an op on DTensors of 64 x 64 floats, per
 *      call, against the same op on their local tensors (target: <= 5 us
 *      more), without and with gradients recorded.
 * bench/run-tp-mlp.sh runs it on 1 and 2 ranks and the numpy version of
 * the step (tp_mlp_numpy.py) for comparison.
 */

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include <hp-protocols/hp-mpi.h>
#include <hp-protocols/hp-protocols.h>

#define DIM 1024
#define HIDDEN 4096
#define TOKENS 512
#define WARMUPS 2
#define REPEATS 10
#define LOSS_RTOL 1e-5
#define SPEEDUP_PER_RANK 0.95
#define SMALL 64
#define DISPATCH_CALLS 2000
#define DISPATCH_ROUNDS 30
#define OVERHEAD_TARGET_US 5.0

static gint world_rank;
static gint world_size;

static gdouble
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const gchar *
verdict (gboolean ok)
{
  return ok ? "PASS" : "FAIL";
}

static void
check (gboolean  ok,
       GError   *error)
{
  if (!ok)
    g_error ("bench-tp-mlp: %s", error != NULL ? error->message : "failed");
}

static gint
compare_doubles (gconstpointer a,
                 gconstpointer b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return (x > y) - (x < y);
}

/* Sorts @values and gives their median */
static gdouble
median (gdouble *values,
        guint    n)
{
  qsort (values, n, sizeof (gdouble), compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

static gdouble
max_over_ranks (gdouble value)
{
  gdouble out;

  MPI_Allreduce (&value, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

/* torch.chunk's piece @index of @size in @n pieces */
static void
chunk (gint64  size,
       gint    n,
       gint    index,
       gint64 *offset,
       gint64 *length)
{
  gint64 piece = (size + n - 1) / n;

  *offset = MIN (piece * index, size);
  *length = MIN (*offset + piece, size) - *offset;
}

/* The part at @coordinate of a random tensor whose elements depend only
 * on @seed and their global index, so every layout holds the same
 * numbers: N(0, 1) when @bound is 0, else uniform in [-bound, bound) */
static HpTensor *
random_part (const gint64 *shape,
             guint         ndim,
             gint          shard_dim,
             gint          n,
             gint          coordinate,
             gdouble       bound,
             guint64       seed)
{
  g_autoptr(GError) error = NULL;
  gint64 offsets[2] = { 0, 0 };
  gint64 lengths[2];
  HpTensor *part;

  memcpy (lengths, shape, ndim * sizeof (gint64));
  if (shard_dim >= 0)
    chunk (shape[shard_dim], n, coordinate, &offsets[shard_dim], &lengths[shard_dim]);
  if (bound == 0.0)
    part = hp_tensor_new_randn_slice (HP_DTYPE_FLOAT32, shape, ndim, offsets, ndim,
                                      lengths, ndim, seed, &error);
  else
    part = hp_tensor_new_uniform_slice (HP_DTYPE_FLOAT32, shape, ndim, offsets, ndim,
                                        lengths, ndim, -bound, bound, seed, &error);
  check (part != NULL, error);
  return part;
}

static GPtrArray *
placements_of (const gchar *text)
{
  g_autoptr(GError) error = NULL;
  GPtrArray *placements = hp_placements_new_from_string (text, &error);

  check (placements != NULL, error);
  return placements;
}

/* A leaf requiring gradients: a plain tensor without @mesh, else a
 * DTensor with placement @text on the 1-d @mesh */
static HpTensor *
parameter (HpDeviceMesh *mesh,
           const gchar  *text,
           const gint64 *shape,
           guint         ndim,
           gdouble       bound,
           guint64       seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = NULL;
  g_autoptr(HpTensor) local = NULL;
  HpPlacement *p;
  HpTensor *out;
  gint shard_dim = -1;

  if (mesh == NULL)
    {
      out = random_part (shape, ndim, -1, 1, 0, bound, seed);
      hp_tensor_set_requires_grad (out, TRUE);
      return out;
    }

  placements = placements_of (text);
  p = g_ptr_array_index (placements, 0);
  if (hp_placement_is_shard (p))
    shard_dim = hp_shard_get_dim (HP_SHARD (p));
  local = random_part (shape, ndim, shard_dim, hp_device_mesh_get_size (mesh),
                       hp_device_mesh_get_coordinate (mesh, NULL)[0], bound, seed);
  out = HP_TENSOR (hp_dtensor_new_from_local (local, mesh, placements, shape, ndim, FALSE, &error));
  check (out != NULL, error);
  hp_tensor_set_requires_grad (out, TRUE);
  return out;
}

typedef struct
{
  HpTensor *x, *w1, *b1, *w2, *b2;
} Block;

#define N_BLOCK_TENSORS 5

static HpTensor **
block_tensors (Block *block)
{
  return (HpTensor **) block;
}

/* PyTorch's default initialisation of nn.Linear: weight and bias uniform
 * in +-1/sqrt(in) */
static void
block_init (Block        *block,
            HpDeviceMesh *mesh)
{
  const gint64 x_shape[] = { TOKENS, DIM };
  const gint64 w1_shape[] = { HIDDEN, DIM };
  const gint64 b1_shape[] = { HIDDEN };
  const gint64 w2_shape[] = { DIM, HIDDEN };
  const gint64 b2_shape[] = { DIM };

  block->x = parameter (mesh, "(R)", x_shape, 2, 0.0, 1);
  block->w1 = parameter (mesh, "(S(0))", w1_shape, 2, 1.0 / sqrt (DIM), 2);
  block->b1 = parameter (mesh, "(S(0))", b1_shape, 1, 1.0 / sqrt (DIM), 3);
  block->w2 = parameter (mesh, "(S(1))", w2_shape, 2, 1.0 / sqrt (HIDDEN), 4);
  block->b2 = parameter (mesh, "(R)", b2_shape, 1, 1.0 / sqrt (HIDDEN), 5);
}

static void
block_clear (Block *block)
{
  for (guint i = 0; i < N_BLOCK_TENSORS; i++)
    g_clear_object (&block_tensors (block)[i]);
}

/* One training step's compute: forward, loss, backward; the gradients
 * stay on the block's tensors. Returns the loss. */
static gdouble
step (Block *block)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(HpTensor) h = NULL;
  g_autoptr(HpTensor) a = NULL;
  g_autoptr(HpTensor) y = NULL;
  g_autoptr(HpTensor) whole = NULL;
  g_autoptr(HpTensor) loss = NULL;
  gdouble value;

  for (guint i = 0; i < N_BLOCK_TENSORS; i++)
    hp_tensor_zero_grad (block_tensors (block)[i]);

  h = hp_tensor_linear (block->x, block->w1, block->b1, &error);
  check (h != NULL, error);
  a = hp_tensor_gelu (h, &error);
  check (a != NULL, error);
  y = hp_tensor_linear (a, block->w2, block->b2, &error);
  check (y != NULL, error);
  /* a Partial(sum) output: all-reduce it (Megatron's g) */
  if (HP_IS_DTENSOR (y))
    whole = hp_dtensor_full_tensor (HP_DTENSOR (y), &error);
  else
    whole = g_object_ref (y);
  check (whole != NULL, error);
  loss = hp_tensor_mean_all (whole, &error);
  check (loss != NULL, error);
  check (hp_tensor_backward (loss, NULL, &error), error);
  value = hp_tensor_item (loss, &error);
  check (error == NULL, error);
  return value;
}

/* Whether the gradients of @dist, gathered, are those of @plain */
static gboolean
gradients_agree (Block   *dist,
                 Block   *plain,
                 gdouble *worst)
{
  static const gchar * const expected[] = { "(R)", "(S(0))", "(S(0))", "(S(1))", "(R)" };
  gboolean ok = TRUE;

  *worst = 0.0;
  for (guint i = 0; i < N_BLOCK_TENSORS; i++)
    {
      g_autoptr(GError) error = NULL;
      HpTensor *grad = hp_tensor_get_grad (block_tensors (dist)[i]);
      HpTensor *want = hp_tensor_get_grad (block_tensors (plain)[i]);
      g_autoptr(HpTensor) whole = NULL;
      g_autofree gchar *placements = NULL;
      g_autofree gdouble *got_values = NULL;
      g_autofree gdouble *want_values = NULL;
      gdouble scale = 0.0, diff = 0.0;
      gsize n, n_want;

      /* the same on every rank, so no rank is left in a collective */
      if (grad == NULL || !HP_IS_DTENSOR (grad))
        return FALSE;
      placements = hp_placements_to_string (hp_dtensor_get_placements (HP_DTENSOR (grad)));
      ok &= g_str_equal (placements, expected[i]);
      whole = hp_dtensor_full_tensor (HP_DTENSOR (grad), &error);
      check (whole != NULL, error);
      got_values = hp_tensor_to_float64_array (whole, &n);
      want_values = hp_tensor_to_float64_array (want, &n_want);
      if (n != n_want)
        return FALSE;
      /* largest difference relative to the largest gradient element */
      for (gsize j = 0; j < n; j++)
        {
          scale = MAX (scale, fabs (want_values[j]));
          diff = MAX (diff, fabs (got_values[j] - want_values[j]));
        }
      *worst = MAX (*worst, scale > 0.0 ? diff / scale : diff);
    }
  return ok && *worst <= 1e-4;
}

static glong
page_faults (void)
{
  struct rusage usage;

  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/* Times WARMUPS + REPEATS steps of @block on every rank; gives the median
 * and the best of the slowest rank's times, and the page faults per step
 * (the most of any rank) */
static void
time_steps (Block   *block,
            gdouble *median_out,
            gdouble *best_out,
            gdouble *faults_out)
{
  gdouble times[REPEATS];
  glong faults = 0;

  for (guint r = 0; r < WARMUPS + REPEATS; r++)
    {
      glong faults_before;
      gdouble start, elapsed;

      MPI_Barrier (MPI_COMM_WORLD);
      faults_before = page_faults ();
      start = now ();
      step (block);
      elapsed = max_over_ranks (now () - start);
      if (r < WARMUPS)
        continue;
      times[r - WARMUPS] = elapsed;
      faults += page_faults () - faults_before;
    }

  *median_out = median (times, REPEATS);
  *best_out = times[0];
  *faults_out = max_over_ranks ((gdouble) faults / REPEATS);
}

/* @t1 (seconds; 0 if unknown): the median plain step on one rank */
static void
bench_step (HpDeviceMesh *mesh,
            gdouble       t1)
{
  Block plain = { NULL }, dist = { NULL };
  gdouble t_plain = 0.0, t_dist, best, faults;
  gdouble plain_loss, dist_loss, rel, worst;
  gboolean grads_ok;

  /* timing first, one kind of step at a time: the library keeps freed
   * large buffers by size for reuse, and the first steps of each kind
   * fill that cache with its sizes */
  if (world_size == 1)
    {
      block_init (&plain, NULL);
      time_steps (&plain, &t_plain, &best, &faults);
      g_print ("tp-mlp step, plain tensors on 1 rank: median %.1f ms (best %.1f), "
               "%.0f page faults per step\n", 1e3 * t_plain, 1e3 * best, faults);
    }

  block_init (&dist, mesh);
  time_steps (&dist, &t_dist, &best, &faults);
  if (world_rank == 0)
    {
      if (world_size == 1)
        g_print ("tp-mlp step, DTensors on a 1-rank mesh: median %.1f ms (best %.1f), "
                 "%.0f page faults per step, %.3f of the plain step (no target)\n",
                 1e3 * t_dist, 1e3 * best, faults, t_dist / t_plain);
      else
        g_print ("tp-mlp step, DTensors on %d ranks: median %.1f ms (best %.1f), "
                 "%.0f page faults per step\n", world_size, 1e3 * t_dist, 1e3 * best, faults);
      if (world_size > 1 && t1 > 0.0)
        {
          gdouble speedup = t1 / t_dist;
          gdouble target = SPEEDUP_PER_RANK * world_size;

          g_print ("tp-mlp speedup %d ranks over 1: %.1f ms / %.1f ms = %.2f "
                   "(target >= %.2f): %s\n", world_size, 1e3 * t1, 1e3 * t_dist, speedup,
                   target, verdict (speedup >= target));
        }
    }

  /* then the checks: the plain step on every rank against the DTensor
   * step, loss and gathered gradients */
  if (plain.x == NULL)
    block_init (&plain, NULL);
  plain_loss = step (&plain);
  dist_loss = step (&dist);
  grads_ok = gradients_agree (&dist, &plain, &worst);
  rel = fabs (dist_loss - plain_loss) / fabs (plain_loss);
  /* the gradient check may differ between ranks: report the worst */
  worst = max_over_ranks (grads_ok ? worst : G_MAXDOUBLE);

  if (world_rank == 0)
    {
      g_print ("tp-mlp loss: %d rank%s %.9g, plain tensors %.9g, relative difference %.1e "
               "(target <= %.0e): %s\n", world_size, world_size > 1 ? "s" : "", dist_loss,
               plain_loss, rel, LOSS_RTOL, verdict (rel <= LOSS_RTOL));
      g_print ("tp-mlp gradients: DTensors with placements (R) (S(0)) (S(0)) (S(1)) (R), "
               "gathered, within %.1e of the plain ones relative to the largest element "
               "(target <= 1e-04): %s\n", worst, verdict (worst <= 1e-4));
    }

  block_clear (&plain);
  block_clear (&dist);
}

/* Dispatch overhead */

typedef HpTensor *(*Op) (HpTensor **inputs, GError **error);

static HpTensor *
op_add (HpTensor **in,
        GError   **error)
{
  return hp_tensor_add (in[0], in[1], error);
}

static HpTensor *
op_linear (HpTensor **in,
           GError   **error)
{
  return hp_tensor_linear (in[0], in[1], in[2], error);
}

/* Seconds per call of @op on @inputs over DISPATCH_CALLS calls, each
 * freeing its result */
static gdouble
time_calls (Op         op,
            HpTensor **inputs)
{
  g_autoptr(GError) error = NULL;
  gdouble start = now ();

  for (guint i = 0; i < DISPATCH_CALLS; i++)
    {
      HpTensor *out = op (inputs, &error);

      check (out != NULL, error);
      g_object_unref (out);
    }
  return (now () - start) / DISPATCH_CALLS;
}

static void
bench_dispatch_case (HpDeviceMesh        *mesh,
                     const gchar         *name,
                     Op                   op,
                     const gchar * const *texts,
                     guint                n_inputs,
                     gboolean             requires_grad)
{
  static const gint64 shapes[][2] = { { SMALL, SMALL }, { SMALL, SMALL }, { SMALL, 0 } };
  HpTensor *dist[3] = { NULL }, *local[3] = { NULL };
  gdouble best_dist = G_MAXDOUBLE, best_local = G_MAXDOUBLE, overhead;

  for (guint i = 0; i < n_inputs; i++)
    {
      guint ndim = shapes[i][1] > 0 ? 2 : 1;

      dist[i] = parameter (mesh, texts[i], shapes[i], ndim, 1.0, 10 + i);
      hp_tensor_set_requires_grad (dist[i], FALSE);
      local[i] = hp_dtensor_get_local (HP_DTENSOR (dist[i]));
      hp_tensor_set_requires_grad (dist[i], requires_grad);
      hp_tensor_set_requires_grad (local[i], requires_grad);
    }

  /* warm up, then interleave the two, each first half the time */
  time_calls (op, dist);
  time_calls (op, local);
  for (guint r = 0; r < 2 * DISPATCH_ROUNDS; r++)
    {
      if ((r + r / 2) % 2 == 0)
        best_dist = MIN (best_dist, time_calls (op, dist));
      else
        best_local = MIN (best_local, time_calls (op, local));
    }
  best_dist = max_over_ranks (best_dist);
  best_local = max_over_ranks (best_local);
  overhead = 1e6 * (best_dist - best_local);

  if (world_rank == 0)
    g_print ("dispatch %s%s on %d rank%s: DTensor %.2f us, local %.2f us, overhead %.2f us "
             "per call (target <= %.0f us): %s\n", name, requires_grad ? ", requiring grad" : "",
             world_size, world_size > 1 ? "s" : "", 1e6 * best_dist, 1e6 * best_local, overhead,
             OVERHEAD_TARGET_US, verdict (overhead <= OVERHEAD_TARGET_US));

  for (guint i = 0; i < n_inputs; i++)
    {
      g_object_unref (dist[i]);
      g_object_unref (local[i]);
    }
}

static void
bench_dispatch (HpDeviceMesh *mesh)
{
  static const gchar * const replicated[] = { "(R)", "(R)" };
  static const gchar * const sharded[] = { "(S(0))", "(S(0))" };
  static const gchar * const colwise[] = { "(R)", "(S(0))", "(S(0))" };

  for (guint g = 0; g < 2; g++)
    {
      bench_dispatch_case (mesh, "add R + R 64x64", op_add, replicated, 2, g);
      bench_dispatch_case (mesh, "add S(0) + S(0) 64x64", op_add, sharded, 2, g);
      bench_dispatch_case (mesh, "linear x R [64, 64], W S(0) [64, 64], b S(0) [64]",
                           op_linear, colwise, 3, g);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GOptionContext) context = NULL;
  g_autoptr(HpDeviceMesh) mesh = NULL;
  g_autofree gchar *only = NULL;
  gdouble t1_ms = 0.0;
  gint shape[1];
  const GOptionEntry entries[] = {
    { "t1-ms", 0, 0, G_OPTION_ARG_DOUBLE, &t1_ms,
      "Median plain step on one rank (from a 1-rank run), for the speedup", "MS" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &only,
      "Run only this part: step or dispatch", "PART" },
    { NULL }
  };

  context = g_option_context_new ("- Megatron MLP step with DTensors");
  g_option_context_add_main_entries (context, entries, NULL);
  check (g_option_context_parse (context, &argc, &argv, &error), error);

  check (hp_init (&error), error);
  world_rank = hp_get_world_rank ();
  world_size = hp_get_world_size ();
  shape[0] = world_size;
  mesh = hp_device_mesh_new (shape, 1, NULL, &error);
  check (mesh != NULL, error);

  if (world_rank == 0)
    g_print ("# bench-tp-mlp: %d rank%s; x [%d, %d] -> linear [%d] -> gelu -> linear [%d] -> "
             "mean, float32, forward + backward; median of %d steps after %d warm-ups, the "
             "slowest rank counts; OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s\n",
             world_size, world_size > 1 ? "s" : "", TOKENS, DIM, HIDDEN, DIM, REPEATS, WARMUPS,
             g_getenv ("OPENBLAS_NUM_THREADS") ?: "(unset)",
             g_getenv ("OPENBLAS_CORETYPE") ?: "(unset)");

  if (only == NULL || g_str_equal (only, "step"))
    bench_step (mesh, 1e-3 * t1_ms);
  if (only == NULL || g_str_equal (only, "dispatch"))
    bench_dispatch (mesh);
  return 0;
}
