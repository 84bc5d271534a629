/* Four threads share one handle and loop claim_next + complete until nothing is ready:
 * every node is granted exactly once. */
#define _XOPEN_SOURCE 700

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "util.h"

#define NODES 200
#define THREADS 4

static char ids[NODES][33];
static int granted[NODES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

struct worker {
  claimdag_store *s;
  unsigned number;
  int claims;
  int errors;
};

static int index_of(const char *id) {
  for (int i = 0; i < NODES; i++) {
    if (strcmp(ids[i], id) == 0) {
      return i;
    }
  }
  return -1;
}

static void *work(void *arg) {
  struct worker *w = arg;
  char me[33], id[33];
  actor_for(w->number, me);
  for (;;) {
    uint64_t gen = 0;
    claimdag_code rc = claimdag_claim_next(w->s, me, id, &gen);
    if (rc == CLAIMDAG_NOT_FOUND) {
      break;
    }
    if (rc != CLAIMDAG_OK) {
      fprintf(stderr, "worker %u: claim_next: %s: %s\n", w->number, claimdag_code_str(rc),
              claimdag_last_error());
      w->errors++;
      break;
    }
    int i = index_of(id);
    if (i < 0 || gen != 2) {
      fprintf(stderr, "worker %u: unexpected grant %s gen=%llu\n", w->number, id,
              (unsigned long long)gen);
      w->errors++;
    } else {
      pthread_mutex_lock(&lock);
      granted[i]++;
      pthread_mutex_unlock(&lock);
    }
    w->claims++;
    rc = claimdag_complete_ex(w->s, id, "done", gen, me, NULL);
    if (rc != CLAIMDAG_OK) {
      fprintf(stderr, "worker %u: complete %s: %s: %s\n", w->number, id, claimdag_code_str(rc),
              claimdag_last_error());
      w->errors++;
      break;
    }
  }
  return NULL;
}

static void four_threads_one_handle(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  for (int i = 0; i < NODES; i++) {
    char summary[64];
    snprintf(summary, sizeof summary, "node number %d", i);
    CHECK_OK(claimdag_upsert(s, summary, NULL, NULL, ids[i]));
    granted[i] = 0;
  }
  pthread_t threads[THREADS];
  struct worker workers[THREADS];
  for (int t = 0; t < THREADS; t++) {
    workers[t].s = s;
    workers[t].number = (unsigned)t + 1;
    workers[t].claims = 0;
    workers[t].errors = 0;
    CHECK(pthread_create(&threads[t], NULL, work, &workers[t]) == 0);
  }
  int total = 0;
  for (int t = 0; t < THREADS; t++) {
    CHECK(pthread_join(threads[t], NULL) == 0);
    CHECK(workers[t].errors == 0);
    total += workers[t].claims;
  }
  CHECK(total == NODES);
  int once = 0;
  for (int i = 0; i < NODES; i++) {
    once += granted[i] == 1;
  }
  CHECK(once == NODES);

  char *json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, NULL, "done", NULL, true, &json));
  CHECK(json != NULL && count_of(json, "\"status\":\"done\"") == NODES);
  claimdag_string_free(json);
  claimdag_close(s);
}

/* Each thread has its own last error. */
static void *fail_here(void *arg) {
  claimdag_store *s = arg;
  char *json = NULL;
  claimdag_code rc = claimdag_get_json(s, "ffffffffffffffffffffffffffffffff", &json);
  int ok = rc == CLAIMDAG_NOT_FOUND && strstr(claimdag_last_error(), "not found") != NULL;
  return ok ? s : NULL;
}

static void last_error_per_thread(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char *json = NULL;
  CHECK_CODE(claimdag_get_json(s, NULL, &json), CLAIMDAG_INVALID_INPUT);
  pthread_t t;
  void *result = NULL;
  CHECK(pthread_create(&t, NULL, fail_here, s) == 0);
  CHECK(pthread_join(t, &result) == 0);
  CHECK(result == s);
  /* This thread's message is still its own. */
  CHECK_MESSAGE("`id` is NULL");
  claimdag_close(s);
}

int main(void) {
  run_test("four threads share one handle", four_threads_one_handle);
  run_test("last error is per thread", last_error_per_thread);
  return finish();
}
