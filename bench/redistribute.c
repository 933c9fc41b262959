/* bench/redistribute.c: hp_dtensor_redistribute against the bare MPI call
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A measurement, not a test: it prints one line per figure with PASS or
 * FAIL against its target and always exits 0. Run it under mpirun; the
 * mesh is 1-d over all ranks.
 *
 * For float32 tensors of [rows, 1024] (1, 4, 16 and 64 MiB in all) it
 * times four redistributions against the collective that does the same
 * work on the same bytes:
 *
 *   S(0) -> R       MPI_Allgather
 *   P(sum) -> R     MPI_Allreduce
 *   P(sum) -> S(0)  MPI_Reduce_scatter_block
 *   S(0) -> S(1)    MPI_Alltoall, plus packing each destination's column
 *                   block contiguously before it; the row blocks that
 *                   arrive are the result's rows in order, so the
 *                   collective puts them in place
 *
 * Targets: hp / bare <= 1.05 for the first three from 4 MiB on, <= 1.3
 * for the last at every size.
 *
 * Where the library calls another collective than the bare one (the
 * variants with per-rank counts, which it needs for uneven pieces), that
 * call is timed on the same bytes too, with the same even counts: the
 * library's time against it is its own overhead, while the bare ratio
 * also holds the difference between Open MPI's algorithms for the two.
 *
 * The library side is timed as a caller uses it: each call makes a new
 * DTensor, which is dropped (untimed) just before the next call. The bare
 * side allocates nothing while timed, the best it can do; the library
 * recycles buffers of equal size from 128 KiB up
 * (hp-protocols/tensor/hp-storage.c), so after the warm-up both write to
 * memory that is already mapped. Both even write to the same memory: the
 * bare call puts its result into the buffer of the library's latest
 * result, which the library takes back for its next call. Each side
 * reads the same input buffer.
 *
 * Each call starts after a barrier and counts the slowest rank (MPI_Wtime,
 * then MPI_Allreduce MAX). The sides run in rounds of one call each, in
 * an order that turns from round to round; after 5 warm-up rounds, each
 * case runs as many rounds as fit in about a second (--seconds-per-case;
 * 20 to 2000 rounds). The ratio is the median over the rounds of hp time
 * / bare time: the calls of a round run a moment apart, so load that
 * other programs put on the machine mostly hits all of them (the median
 * times and the best times are printed too).
 *
 * Unless given --default-malloc, the timing runs with glibc's malloc set
 * to keep freed memory mapped (see keep_malloc_mapped()), which spares
 * MPI's own temporary buffers a page fault per page on every call.
 *
 * On 4 ranks it also measures memory: rank 0 distributes a 256 MiB
 * tensor as S(0), and every other rank's peak resident size must grow
 * by less than twice its 64 MiB shard. This part runs first, while the
 * process is fresh.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#ifdef __GLIBC__
# include <malloc.h>
#endif

#include <hp-protocols/hp-mpi.h>

#define WARMUP 5
#define MIN_ROUNDS 20
#define MAX_ROUNDS 2000
#define COLS 1024
#define MIB ((gsize) 1 << 20)

#define MEMORY_RANKS 4
#define MEMORY_ROWS 65536   /* x COLS float32 = 256 MiB */

static const gsize sizes_mib[] = { 1, 4, 16, 64 };

/* Command-line options */
static gdouble seconds_per_case = 1.0;
static gboolean default_malloc = FALSE;

static const GOptionEntry options[] = {
  { "seconds-per-case", 's', 0, G_OPTION_ARG_DOUBLE, &seconds_per_case,
    "Time to spend on each transition and size (default 1)", "S" },
  { "default-malloc", 0, 0, G_OPTION_ARG_NONE, &default_malloc,
    "Time with glibc's malloc as configured, which unmaps large buffers on free", NULL },
  G_OPTION_ENTRY_NULL
};

typedef enum
{
  BARE_ALLGATHER,
  BARE_ALLREDUCE,
  BARE_REDUCE_SCATTER,
  BARE_ALLTOALL,
} BareKind;

typedef struct
{
  const gchar *from;
  const gchar *to;
  BareKind kind;
  const gchar *bare_name;
  /* the collective the library calls, with counts for uneven pieces,
   * given the same even counts; NULL where it is the bare one */
  const gchar *same_call_name;
  gdouble target;          /* largest hp / bare time ratio */
  gsize target_from_mib;   /* smallest global size the target applies to */
} Transition;

static const Transition transitions[] = {
  { "S(0)", "R", BARE_ALLGATHER, "MPI_Allgather", "MPI_Allgatherv", 1.05, 4 },
  { "P(sum)", "R", BARE_ALLREDUCE, "MPI_Allreduce", NULL, 1.05, 4 },
  { "P(sum)", "S(0)", BARE_REDUCE_SCATTER, "MPI_Reduce_scatter_block", "MPI_Reduce_scatter",
    1.05, 4 },
  { "S(0)", "S(1)", BARE_ALLTOALL, "pack + MPI_Alltoall", "pack + MPI_Alltoallv", 1.3, 0 },
};

/* Who is timed: the library, the bare collective, or the bare
 * collective the library itself calls */
typedef enum
{
  SIDE_HP,
  SIDE_BARE,
  SIDE_SAME_CALL,
  N_SIDES
} Side;

/* One transition at one size, as this rank sees it */
typedef struct
{
  const Transition *transition;
  MPI_Comm comm;
  gint n;
  gint64 rows;
  HpDTensor *input;
  GPtrArray *target;
  const gfloat *local;     /* the input's local buffer, read by both sides */
  gint64 local_rows;       /* rows of the local input */
  HpDTensor *last_result;  /* the library's latest result, until its next call */
  gfloat *bare_out;        /* where the bare side writes while there is none */
  gfloat *bare_packed;     /* S(0) -> S(1) only */
  gint64 out_numel;
  int *counts;             /* n equal pieces, for the same call */
  int *displs;
} Case;

/* The tensor's own buffer, without a copy; the tensor keeps it alive */
static const gfloat *
floats_of (HpTensor *t)
{
  g_autoptr(GBytes) bytes = hp_tensor_get_bytes (t);

  return g_bytes_get_data (bytes, NULL);
}

static void
case_clear (Case *c)
{
  g_clear_object (&c->last_result);
  g_clear_object (&c->input);
  g_clear_pointer (&c->target, g_ptr_array_unref);
  g_clear_pointer (&c->bare_out, g_aligned_free);
  g_clear_pointer (&c->bare_packed, g_aligned_free);
  g_clear_pointer (&c->counts, g_free);
  g_clear_pointer (&c->displs, g_free);
}

static void
case_init (Case             *c,
           const Transition *transition,
           HpDeviceMesh     *mesh,
           gint64            rows,
           guint64           seed)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) from = NULL;
  g_autoptr(HpTensor) local = NULL;
  gint64 global[2] = { rows, COLS };
  gint64 local_shape[2];
  gboolean partial;

  memset (c, 0, sizeof *c);
  c->transition = transition;
  c->comm = hp_device_mesh_get_dim_comm (mesh, 0);
  c->n = hp_device_mesh_get_size (mesh);
  c->rows = rows;

  from = hp_placements_new_from_string (transition->from, &error);
  g_assert_no_error (error);
  c->target = hp_placements_new_from_string (transition->to, &error);
  g_assert_no_error (error);

  /* a Partial input holds a whole-sized value on every rank */
  partial = transition->kind == BARE_ALLREDUCE || transition->kind == BARE_REDUCE_SCATTER;
  c->local_rows = partial ? rows : rows / c->n;
  local_shape[0] = c->local_rows;
  local_shape[1] = COLS;
  local = hp_tensor_new_uniform (HP_DTYPE_FLOAT32, local_shape, 2, -1.0, 1.0, seed);
  c->input = hp_dtensor_new_from_local (local, mesh, from, global, 2, FALSE, &error);
  g_assert_no_error (error);
  c->local = floats_of (local);

  switch (transition->kind)
    {
    case BARE_ALLGATHER:
    case BARE_ALLREDUCE:
      c->out_numel = rows * COLS;
      break;
    case BARE_REDUCE_SCATTER:
      c->out_numel = rows / c->n * COLS;
      break;
    case BARE_ALLTOALL:
      c->out_numel = rows * (COLS / c->n);
      c->bare_packed = g_aligned_alloc (c->local_rows * COLS, sizeof (gfloat), 64);
      break;
    }
  c->bare_out = g_aligned_alloc (c->out_numel, sizeof (gfloat), 64);

  /* the piece of each rank: its input (all-gather), its result
   * (reduce-scatter) or the block it exchanges with each (all-to-all) */
  c->counts = g_new (int, c->n);
  c->displs = g_new (int, c->n);
  for (gint r = 0; r < c->n; r++)
    {
      switch (transition->kind)
        {
        case BARE_ALLGATHER:
          c->counts[r] = (int) (c->local_rows * COLS);
          break;
        case BARE_REDUCE_SCATTER:
          c->counts[r] = (int) c->out_numel;
          break;
        case BARE_ALLTOALL:
        case BARE_ALLREDUCE:
        default:
          c->counts[r] = (int) (c->out_numel / c->n);
          break;
        }
      c->displs[r] = r * c->counts[r];
    }
}

/* The bare collective into @out; with @same_call, the variant with
 * per-rank counts that the library calls */
static void
run_bare (Case     *c,
          gfloat   *out,
          gboolean  same_call)
{
  gint64 local_numel = c->local_rows * COLS;
  int rc = MPI_SUCCESS;

  switch (c->transition->kind)
    {
    case BARE_ALLGATHER:
      if (same_call)
        rc = MPI_Allgatherv (c->local, (int) local_numel, MPI_FLOAT,
                             out, c->counts, c->displs, MPI_FLOAT, c->comm);
      else
        rc = MPI_Allgather (c->local, (int) local_numel, MPI_FLOAT,
                            out, (int) local_numel, MPI_FLOAT, c->comm);
      break;

    case BARE_ALLREDUCE:
      rc = MPI_Allreduce (c->local, out, (int) local_numel, MPI_FLOAT, MPI_SUM, c->comm);
      break;

    case BARE_REDUCE_SCATTER:
      if (same_call)
        rc = MPI_Reduce_scatter (c->local, out, c->counts, MPI_FLOAT, MPI_SUM, c->comm);
      else
        rc = MPI_Reduce_scatter_block (c->local, out, (int) (local_numel / c->n),
                                       MPI_FLOAT, MPI_SUM, c->comm);
      break;

    case BARE_ALLTOALL:
      {
        gint64 width = COLS / c->n;
        gint64 block = c->local_rows * width;

        /* destination d gets columns [d * width, (d + 1) * width) of
         * every local row, as one contiguous block */
        for (gint d = 0; d < c->n; d++)
          for (gint64 r = 0; r < c->local_rows; r++)
            memcpy (c->bare_packed + d * block + r * width,
                    c->local + r * COLS + d * width, width * sizeof (gfloat));

        /* source s sends rows [s * local_rows, (s + 1) * local_rows) of
         * this rank's column block: received in order, they are the
         * result, so no unpacking is needed */
        if (same_call)
          rc = MPI_Alltoallv (c->bare_packed, c->counts, c->displs, MPI_FLOAT,
                              out, c->counts, c->displs, MPI_FLOAT, c->comm);
        else
          rc = MPI_Alltoall (c->bare_packed, (int) block, MPI_FLOAT,
                             out, (int) block, MPI_FLOAT, c->comm);
      }
      break;
    }

  g_assert (rc == MPI_SUCCESS);
}

static HpDTensor *
run_hp (Case *c)
{
  g_autoptr(GError) error = NULL;
  HpDTensor *out = hp_dtensor_redistribute (c->input, c->target, &error);

  g_assert_no_error (error);
  return out;
}

/* Where the bare side writes: into the buffer of the library's latest
 * result, which nobody reads any more, so that both sides write to the
 * same memory (the speed of a large buffer in this VM depends on where
 * it lands; see bench/README.md). The library gets that buffer back from
 * its cache for its next call, once the result is dropped. */
static gfloat *
bare_target (Case *c)
{
  g_autoptr(HpTensor) local = NULL;

  if (c->last_result == NULL)
    return c->bare_out;
  local = hp_dtensor_get_local (c->last_result);
  return (gfloat *) floats_of (local);
}

/* Seconds one call takes on the slowest rank, known to every rank */
static gdouble
time_once (Case *c,
           Side  side)
{
  gdouble start, mine, slowest = 0.0;
  gfloat *out = NULL;
  HpDTensor *result = NULL;

  /* outside the timing: the library's previous result goes (its buffer
   * back to the cache), or the bare side picks its output */
  if (side == SIDE_HP)
    g_clear_object (&c->last_result);
  else
    out = bare_target (c);

  MPI_Barrier (c->comm);
  start = MPI_Wtime ();
  if (side == SIDE_HP)
    result = run_hp (c);
  else
    run_bare (c, out, side == SIDE_SAME_CALL);
  mine = MPI_Wtime () - start;
  MPI_Allreduce (&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, c->comm);

  if (side == SIDE_HP)
    c->last_result = result;
  return slowest;
}

static gint
n_sides (Case *c)
{
  return c->transition->same_call_name != NULL ? N_SIDES : SIDE_SAME_CALL;
}

/* Times round @index: each side once, in an order that turns round from
 * one round to the next, so that each side goes first as often as the
 * others */
static void
time_round (Case    *c,
            gint     index,
            gdouble  times[N_SIDES])
{
  gint sides = n_sides (c);

  for (gint k = 0; k < sides; k++)
    {
      Side side = (index + k) % sides;

      times[side] = time_once (c, side);
    }
}

static gdouble
largest_difference (const gfloat *a,
                    const gfloat *b,
                    gint64        n)
{
  gdouble largest = 0.0;

  for (gint64 i = 0; i < n; i++)
    largest = MAX (largest, ABS ((gdouble) a[i] - b[i]));
  return largest;
}

/* The largest difference of the library's result, and of the library's
 * own call, from the bare result, over all ranks (valid on rank 0) */
static gdouble
compare_results (Case *c)
{
  g_autoptr(HpDTensor) out = run_hp (c);
  g_autoptr(HpTensor) local = NULL;
  gdouble mine, largest = 0.0;

  run_bare (c, c->bare_out, FALSE);
  local = hp_dtensor_get_local (out);
  g_assert_cmpint (hp_tensor_get_numel (local), ==, c->out_numel);
  mine = largest_difference (floats_of (local), c->bare_out, c->out_numel);

  if (n_sides (c) == N_SIDES)
    {
      gfloat *same = g_aligned_alloc (c->out_numel, sizeof (gfloat), 64);

      run_bare (c, same, TRUE);
      mine = MAX (mine, largest_difference (same, c->bare_out, c->out_numel));
      g_aligned_free (same);
    }

  MPI_Reduce (&mine, &largest, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
  return largest;
}

static int
compare_doubles (const void *a,
                 const void *b)
{
  gdouble x = *(const gdouble *) a, y = *(const gdouble *) b;

  return (x > y) - (x < y);
}

static gdouble
median (gdouble *values,
        gsize    n)
{
  qsort (values, n, sizeof (gdouble), compare_doubles);
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

/* The load averages of the machine, to judge the figures by */
static gchar *
load_average (void)
{
  g_autofree gchar *text = NULL;
  g_auto(GStrv) fields = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("unknown");
  fields = g_strsplit (text, " ", 4);
  if (g_strv_length (fields) < 3)
    return g_strdup ("unknown");
  return g_strdup_printf ("%s %s %s", fields[0], fields[1], fields[2]);
}

static const gchar *
verdict (const Transition *transition,
         gsize             mib,
         gdouble           ratio)
{
  if (mib < transition->target_from_mib)
    return "no target below 4 MiB";
  return ratio <= transition->target ? "PASS" : "FAIL";
}

static void
bench_case (const Transition *transition,
            HpDeviceMesh     *mesh,
            gsize             mib,
            gint              rank)
{
  Case c;
  gint64 rows = (gint64) (mib * MIB / (COLS * sizeof (gfloat)));
  gdouble *times[N_SIDES] = { NULL };
  g_autofree gdouble *ratios = NULL;
  g_autofree gdouble *same_call_ratios = NULL;
  gdouble medians[N_SIDES], bests[N_SIDES];
  gdouble ratio, diff;
  gdouble round_seconds = G_MAXDOUBLE;
  gint n = hp_device_mesh_get_size (mesh);
  gint rounds, sides;

  if (rows % n != 0 || COLS % n != 0)
    {
      if (rank == 0)
        g_print ("%s -> %s %zu MiB: skipped, %d ranks do not divide [%" G_GINT64_FORMAT
                 ", %d]\n", transition->from, transition->to, mib, n, rows, COLS);
      return;
    }

  case_init (&c, transition, mesh, rows, 1000 * mib + rank);
  sides = n_sides (&c);
  diff = compare_results (&c);

  /* the warm-up (whose first calls may still fault pages in) also tells
   * how many rounds fit in the time given to a case; every rank sees the
   * same times, so all agree on the count */
  for (gint r = 0; r < WARMUP; r++)
    {
      gdouble t[N_SIDES], sum = 0.0;

      time_round (&c, r, t);
      for (gint k = 0; k < sides; k++)
        sum += t[k];
      round_seconds = MIN (round_seconds, sum);
    }
  rounds = CLAMP ((gint) (seconds_per_case / MAX (round_seconds, 1e-6)), MIN_ROUNDS, MAX_ROUNDS);

  for (gint k = 0; k < sides; k++)
    times[k] = g_new (gdouble, rounds);
  ratios = g_new (gdouble, rounds);
  same_call_ratios = g_new (gdouble, rounds);
  for (gint r = 0; r < rounds; r++)
    {
      gdouble t[N_SIDES];

      time_round (&c, r, t);
      for (gint k = 0; k < sides; k++)
        times[k][r] = t[k];
      ratios[r] = t[SIDE_HP] / t[SIDE_BARE];
      if (sides == N_SIDES)
        same_call_ratios[r] = t[SIDE_HP] / t[SIDE_SAME_CALL];
    }

  if (rank == 0)
    {
      g_autoptr(GString) line = g_string_new (NULL);

      /* median() sorts, so the best times come first afterwards */
      ratio = median (ratios, rounds);
      for (gint k = 0; k < sides; k++)
        {
          medians[k] = median (times[k], rounds);
          bests[k] = times[k][0];
        }

      g_string_append_printf (line, "np %d %6s -> %-4s %2zu MiB: ratio %.3f (target <= %.2f): %s; "
                              "median hp %.3f ms, %s %.3f ms",
                              n, transition->from, transition->to, mib, ratio,
                              transition->target, verdict (transition, mib, ratio),
                              medians[SIDE_HP] * 1e3, transition->bare_name,
                              medians[SIDE_BARE] * 1e3);
      if (sides == N_SIDES)
        g_string_append_printf (line, "; the library's own call %s %.3f ms, ratio %.3f",
                                transition->same_call_name, medians[SIDE_SAME_CALL] * 1e3,
                                median (same_call_ratios, rounds));
      g_string_append_printf (line, "; best hp %.3f, bare %.3f ms (%.3f); %d rounds; "
                              "results differ by %.1e\n",
                              bests[SIDE_HP] * 1e3, bests[SIDE_BARE] * 1e3,
                              bests[SIDE_HP] / bests[SIDE_BARE], rounds, diff);
      g_print ("%s", line->str);
    }

  for (gint k = 0; k < sides; k++)
    g_free (times[k]);
  case_clear (&c);
}

/* A field of /proc/self/status in KiB, or -1 */
static gint64
status_kib (const gchar *field)
{
  g_autofree gchar *text = NULL;
  g_auto(GStrv) lines = NULL;
  gsize len = strlen (field);

  if (!g_file_get_contents ("/proc/self/status", &text, NULL, NULL))
    return -1;

  lines = g_strsplit (text, "\n", -1);
  for (gchar **l = lines; *l != NULL; l++)
    if (strncmp (*l, field, len) == 0 && (*l)[len] == ':')
      return g_ascii_strtoll (*l + len + 1, NULL, 10);
  return -1;
}

/* Sets the peak resident size back to the current one (Linux >= 4.0);
 * FALSE where that is not possible */
static gboolean
reset_peak (void)
{
  FILE *f = fopen ("/proc/self/clear_refs", "w");
  gboolean ok;

  if (f == NULL)
    return FALSE;
  ok = fputs ("5", f) >= 0;
  ok &= fclose (f) == 0;
  return ok;
}

/* The peak resident size so far in KiB */
static gint64
peak_kib (void)
{
  gint64 hwm = status_kib ("VmHWM");
  struct rusage usage;

  if (hwm >= 0)
    return hwm;
  getrusage (RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

static void
bench_memory (HpDeviceMesh *mesh,
              gint          rank,
              gint          n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) placements = NULL;
  g_autoptr(HpTensor) whole = NULL;
  g_autoptr(HpDTensor) spread = NULL;
  MPI_Comm comm = hp_device_mesh_get_comm (mesh);
  const gint64 shape[2] = { MEMORY_ROWS, COLS };
  const gsize whole_bytes = (gsize) MEMORY_ROWS * COLS * sizeof (gfloat);
  const gsize shard_bytes = whole_bytes / MEMORY_RANKS;
  gint64 before, after, growth;
  g_autofree gint64 *growths = g_new0 (gint64, n);
  gboolean was_reset, all_reset = FALSE, all_pass = TRUE;
  gint64 worst = 0;

  if (n != MEMORY_RANKS)
    {
      if (rank == 0)
        g_print ("memory: distribute 256 MiB as S(0) is measured on %d ranks only; "
                 "this run has %d (note, no verdict)\n", MEMORY_RANKS, n);
      return;
    }

  placements = hp_placements_new_from_string ("S(0)", &error);
  g_assert_no_error (error);

  /* the source's tensor lives in a buffer of our own, so that freeing it
   * leaves the library's buffer cache as it was */
  if (rank == 0)
    {
      gfloat *data = g_malloc (whole_bytes);
      g_autoptr(GBytes) bytes = NULL;

      for (gsize i = 0; i < whole_bytes / sizeof (gfloat); i++)
        data[i] = (gfloat) (i % 1000);
      bytes = g_bytes_new_take (data, whole_bytes);
      whole = hp_tensor_new_from_bytes (bytes, HP_DTYPE_FLOAT32, shape, 2, &error);
      g_assert_no_error (error);
    }

  MPI_Barrier (comm);
  was_reset = reset_peak ();
  before = was_reset ? status_kib ("VmRSS") : peak_kib ();
  if (before < 0)
    before = peak_kib ();

  spread = hp_dtensor_distribute (whole, mesh, placements, 0, &error);
  g_assert_no_error (error);

  after = peak_kib ();
  growth = after - before;
  MPI_Gather (&growth, 1, MPI_INT64_T, growths, 1, MPI_INT64_T, 0, comm);
  MPI_Allreduce (&was_reset, &all_reset, 1, MPI_INT, MPI_LAND, comm);

  if (rank != 0)
    return;

  g_print ("memory: distribute [%d, %d] float32 (%zu MiB) as S(0) from rank 0 over %d ranks; "
           "shard %zu MiB; peak resident growth (%s):\n",
           MEMORY_ROWS, COLS, whole_bytes / MIB, n, shard_bytes / MIB,
           all_reset ? "VmHWM after, reset to VmRSS before" : "peak after - peak before");
  for (gint r = 0; r < n; r++)
    {
      gdouble times_shard = (gdouble) growths[r] * 1024 / shard_bytes;

      if (r == 0)
        {
          g_print ("  rank %d (source): %.1f MiB, %.2f x shard (no target)\n",
                   r, growths[r] / 1024.0, times_shard);
          continue;
        }
      g_print ("  rank %d: %.1f MiB, %.2f x shard\n", r, growths[r] / 1024.0, times_shard);
      worst = MAX (worst, growths[r]);
      all_pass &= times_shard < 2.0;
    }
  g_print ("memory: non-source ranks peak at most %.2f x shard (target < 2): %s\n",
           (gdouble) worst * 1024 / shard_bytes, all_pass ? "PASS" : "FAIL");
}

/* Keeps memory that malloc() hands back mapped, for MPI's own scratch
 * buffers: by default glibc serves large requests (always from 32 MiB
 * on) by a fresh mmap() and unmaps them on free(), so an MPI_Allreduce
 * or MPI_Reduce_scatter of 64 MiB faults in its temporary buffer page by
 * page on every call, on both sides alike, and in this VM that costs
 * more than the collective (bench/README.md). Returns what it did. */
static const gchar *
keep_malloc_mapped (gboolean keep)
{
#ifdef __GLIBC__
  if (keep && mallopt (M_MMAP_MAX, 0) == 1 && mallopt (M_TRIM_THRESHOLD, G_MAXINT) == 1)
    return "malloc keeps freed memory (M_MMAP_MAX 0, M_TRIM_THRESHOLD max)";
#endif
  return "malloc as configured";
}

int
main (int    argc,
      char **argv)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GOptionContext) context = g_option_context_new (NULL);
  g_autoptr(HpDeviceMesh) mesh = NULL;
  const gchar *malloc_mode;
  g_autofree gchar *load = load_average ();
  gint n, rank;

  g_option_context_set_summary (context, "Times hp_dtensor_redistribute against the bare MPI "
                                "collective; run it under mpirun.");
  g_option_context_add_main_entries (context, options, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error) || !hp_init (&error))
    {
      g_printerr ("bench-redistribute: %s\n", error->message);
      return 0;
    }

  n = hp_get_world_size ();
  rank = hp_get_world_rank ();
  mesh = hp_device_mesh_new (&n, 1, NULL, &error);
  g_assert_no_error (error);

  if (rank == 0)
    g_print ("# bench-redistribute: %d ranks, 1-d mesh, float32 [rows, %d]; %d-%d rounds "
             "(about %g s) per case after %d warm-up, each call the slowest rank's time; "
             "ratio = median of hp / bare over the rounds; the bare side allocates nothing and "
             "writes into the buffer of the library's latest result; "
             "load average %s\n",
             n, COLS, MIN_ROUNDS, MAX_ROUNDS, seconds_per_case, WARMUP, load);

  /* the memory part runs first, in a fresh process with malloc as it is */
  bench_memory (mesh, rank, n);

  malloc_mode = keep_malloc_mapped (!default_malloc);
  if (rank == 0)
    g_print ("# timing with %s\n", malloc_mode);

  for (gsize t = 0; t < G_N_ELEMENTS (transitions); t++)
    for (gsize s = 0; s < G_N_ELEMENTS (sizes_mib); s++)
      bench_case (&transitions[t], mesh, sizes_mib[s], rank);

  return 0;
}
