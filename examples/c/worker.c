/*
 * A worker loop for claimdag, to copy into a C host.
 *
 *   worker DIR ACTOR [SEED]
 *
 * DIR is the store directory ("" for the default one), ACTOR a number that names this
 * worker (its actor id is the number as 32 hex digits), and SEED, when given, first
 * upserts that many demo tasks so the example has something to do.
 *
 * The loop: claim the next ready node, work on it in steps while renewing the lease at
 * the generation the claim granted, then complete it with that generation. When the
 * store hands the claim to someone else meanwhile (the lease ran out while this worker
 * stalled), renew or complete answers CLAIMDAG_STALE_GENERATION: the result is dropped,
 * never written over somebody else's work. The loop ends when nothing is ready.
 *
 * Build: cc -std=c99 worker.c -Iinclude -Ltarget/release -lclaimdag -o worker
 */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "claimdag.h"

/* The lease: long enough for one step of work, renewed after each step. */
#define LEASE_MS 30000
#define STEPS 3

static int fail(const char *what, claimdag_code rc) {
  fprintf(stderr, "worker: %s: %s: %s\n", what, claimdag_code_str(rc), claimdag_last_error());
  return 1;
}

/* One step of the real work; here it only waits a little. Returns 0 on success. */
static int work_step(const char *id, int step) {
  struct timespec ts = {0, 5 * 1000000L};
  (void)id;
  (void)step;
  nanosleep(&ts, NULL);
  return 0;
}

/* Works on one claimed node. Returns the status to finish it with, or NULL when the claim
 * was lost and the node must be left alone. */
static const char *work_on(claimdag_store *s, const char *id, const char *me, uint64_t gen) {
  for (int step = 0; step < STEPS; step++) {
    if (work_step(id, step) != 0) {
      return "failed";
    }
    claimdag_code rc = claimdag_renew_ex(s, id, me, gen, LEASE_MS);
    if (rc == CLAIMDAG_STALE_GENERATION || rc == CLAIMDAG_NOT_HOLDER ||
        rc == CLAIMDAG_NOT_CLAIMED) {
      fprintf(stderr, "worker: lost the claim on %.8s... (%s): stopping\n", id,
              claimdag_code_str(rc));
      return NULL;
    }
    if (rc != CLAIMDAG_OK) {
      fail("renew", rc);
      return NULL;
    }
  }
  return "done";
}

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: worker DIR ACTOR [SEED]\n");
    return 2;
  }
  char me[33];
  snprintf(me, sizeof me, "%032lx", strtoul(argv[2], NULL, 10));

  claimdag_store *s = NULL;
  claimdag_code rc = claimdag_open(argv[1], &s);
  if (rc != CLAIMDAG_OK) {
    return fail("open", rc);
  }

  int seed = argc == 4 ? atoi(argv[3]) : 0;
  for (int i = 0; i < seed; i++) {
    char summary[64], id[33];
    snprintf(summary, sizeof summary, "demo task %d", i);
    rc = claimdag_upsert(s, summary, NULL, NULL, id);
    if (rc != CLAIMDAG_OK) {
      claimdag_close(s);
      return fail("upsert", rc);
    }
  }

  int done = 0, lost = 0;
  for (;;) {
    char id[33];
    uint64_t gen = 0;
    rc = claimdag_claim_next_ex(s, me, NULL, NULL, LEASE_MS, id, &gen);
    if (rc == CLAIMDAG_NOT_FOUND) {
      break; /* nothing ready: a long-running worker would sleep and poll again */
    }
    if (rc != CLAIMDAG_OK) {
      claimdag_close(s);
      return fail("claim_next", rc);
    }
    const char *status = work_on(s, id, me, gen);
    if (status == NULL) {
      lost++;
      continue;
    }
    rc = claimdag_complete_ex(s, id, status, gen, me, NULL);
    if (rc == CLAIMDAG_STALE_GENERATION || rc == CLAIMDAG_NOT_HOLDER) {
      fprintf(stderr, "worker: %.8s... was handed to someone else: result dropped\n", id);
      lost++;
      continue;
    }
    if (rc != CLAIMDAG_OK) {
      claimdag_close(s);
      return fail("complete", rc);
    }
    printf("%s  %s  gen=%llu\n", id, status, (unsigned long long)gen);
    done++;
  }
  printf("worker %s: %d finished, %d lost\n", me, done, lost);
  claimdag_close(s);
  return 0;
}
