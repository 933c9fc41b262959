/* hp-mpi-progress.c: moving the library's non-blocking requests on
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Open MPI moves a non-blocking collective on only inside MPI calls
 * (there is no progress thread), so a collective started ahead of the
 * work it should hide behind (an FSDP unit's all-gather) would mostly
 * wait for its MPI_Wait. The library therefore keeps the requests it
 * started and waits for later in one list, and the places every
 * computation passes through (each op call, each node of a backward)
 * call _hp_mpi_progress(), which tests them. That costs one atomic read
 * when nothing is in flight, so on one rank nothing.
 *
 * A request that a test completes becomes MPI_REQUEST_NULL in its
 * owner's variable and leaves the list: its owner's wait then returns at
 * once. A failed test is not reported here: the owner's wait tests the
 * request again and reports it. MPI runs at MPI_THREAD_FUNNELED, so
 * only the thread that added the requests tests them.
 */

#include "config.h"

#include "hp-mpi-private.h"

/* enough for the parameters of any one unit or bucket: more are tested
 * from a heap copy */
#define STACK_REQUESTS 64

static GPtrArray *pending;      /* MPI_Request *, the owners' variables */
static gint n_pending;
static GThread *owner;

/* Adds @request, a started request whose owner waits for it later, to
 * the requests that _hp_mpi_progress() tests */
void
_hp_mpi_progress_add (MPI_Request *request)
{
  if (pending == NULL)
    pending = g_ptr_array_new ();
  owner = g_thread_self ();
  g_ptr_array_add (pending, request);
  g_atomic_int_set (&n_pending, (gint) pending->len);
}

/* Takes @request out of them again (no-op when it is not there: a test
 * completed it) before its owner waits for it or forgets it */
void
_hp_mpi_progress_remove (MPI_Request *request)
{
  if (g_atomic_int_get (&n_pending) == 0)
    return;
  g_ptr_array_remove_fast (pending, request);
  g_atomic_int_set (&n_pending, (gint) pending->len);
}

/* Tests every request added and not yet complete, which lets MPI move
 * all of them on */
void
_hp_mpi_progress (void)
{
  MPI_Request stack_requests[STACK_REQUESTS];
  int stack_indices[STACK_REQUESTS];
  g_autofree MPI_Request *heap_requests = NULL;
  g_autofree int *heap_indices = NULL;
  MPI_Request *requests = stack_requests;
  int *indices = stack_indices;
  int n;
  int done = 0;

  if (G_LIKELY (g_atomic_int_get (&n_pending) == 0) || g_thread_self () != owner)
    return;

  n = (int) pending->len;
  if (n > STACK_REQUESTS)
    {
      requests = heap_requests = g_new (MPI_Request, n);
      indices = heap_indices = g_new (int, n);
    }
  for (int i = 0; i < n; i++)
    requests[i] = *(MPI_Request *) g_ptr_array_index (pending, i);
  /* whatever the outcome, MPI set a completed request to
   * MPI_REQUEST_NULL in the copy: the owners get the copies back */
  (void) MPI_Testsome (n, requests, &done, indices, MPI_STATUSES_IGNORE);
  for (int i = n; i-- > 0;)
    {
      *(MPI_Request *) g_ptr_array_index (pending, i) = requests[i];
      if (requests[i] == MPI_REQUEST_NULL)
        g_ptr_array_remove_index_fast (pending, i);
    }
  g_atomic_int_set (&n_pending, (gint) pending->len);
}
