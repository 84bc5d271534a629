/* Time through the C ABI: claimdag_claim_next_wait wakes when another process completes a
 * prerequisite and returns CLAIMDAG_NOT_FOUND when its bound runs out;
 * claimdag_release_retry_in and claimdag_upsert_not_before make a node scheduled, and
 * claimdag_get_json shows its not_before. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* Milliseconds of the monotonic clock. */
static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Milliseconds since the Unix epoch. */
static uint64_t wall_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (uint64_t)tv.tv_sec * 1000u + (uint64_t)tv.tv_usec / 1000u;
}

/* The node's not_before from claimdag_get_json (0 when null), and its display word. */
static uint64_t not_before_of(claimdag_store *s, const char *id, char *display, size_t n) {
  char *json = NULL;
  char field[64];
  uint64_t nb = 0;
  CHECK_OK(claimdag_get_json(s, id, &json));
  if (json == NULL) return 0;
  if (json_field(json, NULL, "not_before", field, sizeof field) == 0 &&
      strcmp(field, "null") != 0) {
    nb = strtoull(field, NULL, 10);
  }
  CHECK(json_field(json, NULL, "display", display, n) == 0);
  claimdag_string_free(json);
  return nb;
}

/* A second process completes the prerequisite while this one waits for the next node. */
static void wakes_on_another_process(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], you[33], first[33], then[33], got[33] = "untouched";
  uint64_t gen = 0, got_gen = 77;
  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "build the index", NULL, NULL, first));
  CHECK_OK(claimdag_upsert(s, "query the index", NULL, NULL, then));
  CHECK_OK(claimdag_link(s, first, then));
  CHECK_OK(claimdag_claim(s, first, you, &gen));
  fflush(NULL);
  pid_t child = fork();
  if (child == 0) {
    /* The other process: its own handle, a moment later. */
    sleep_ms(300);
    claimdag_store *other = NULL;
    int rc = claimdag_open(path, &other) == CLAIMDAG_OK &&
                     claimdag_complete(other, first, "done", gen) == CLAIMDAG_OK
                 ? 0
                 : 1;
    _exit(rc);
  }
  CHECK(child > 0);
  uint64_t t = mono_ms();
  CHECK_OK(claimdag_claim_next_wait(s, me, NULL, NULL, 0, 30000, got, &got_gen));
  uint64_t took = mono_ms() - t;
  int status = -1;
  CHECK(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  CHECK(strcmp(got, then) == 0);
  CHECK(got_gen == 2);
  CHECK(took >= 200 && took < 15000);
  claimdag_close(s);
}

/* Nothing becomes ready: NOT_FOUND after the bound, out-params untouched. */
static void a_wait_runs_out(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], you[33], id[33], got[33] = "untouched";
  uint64_t gen = 0, got_gen = 77;
  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "held by someone else", NULL, NULL, id));
  CHECK_OK(claimdag_claim(s, id, you, &gen));
  uint64_t t = mono_ms();
  CHECK_CODE(claimdag_claim_next_wait(s, me, NULL, NULL, 0, 400, got, &got_gen),
             CLAIMDAG_NOT_FOUND);
  uint64_t took = mono_ms() - t;
  CHECK(took >= 400 && took < 10000);
  CHECK(strcmp(got, "untouched") == 0 && got_gen == 77);
  /* 0 does not wait; NULLs are refused as claim_next refuses them. */
  t = mono_ms();
  CHECK_CODE(claimdag_claim_next_wait(s, me, NULL, NULL, 0, 0, got, &got_gen),
             CLAIMDAG_NOT_FOUND);
  CHECK(mono_ms() - t < 5000);
  CHECK_CODE(claimdag_claim_next_wait(s, NULL, NULL, NULL, 0, 10, got, &got_gen),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_next_wait(s, me, NULL, NULL, 0, 10, NULL, &got_gen),
             CLAIMDAG_INVALID_INPUT);
  CHECK(strcmp(got, "untouched") == 0 && got_gen == 77);
  claimdag_close(s);
}

/* release_retry_in: scheduled until then, with not_before about now + retry_in. */
static void release_retry_in_schedules(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], id[33], got[33], display[32];
  uint64_t gen = 0, next = 0, got_gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "call the flaky service", NULL, NULL, id));
  CHECK_OK(claimdag_claim(s, id, me, &gen));
  uint64_t before = wall_ms();
  CHECK_OK(claimdag_release_retry_in(s, id, me, gen, 60000, &next));
  uint64_t after = wall_ms();
  CHECK(next == gen + 1);
  uint64_t nb = not_before_of(s, id, display, sizeof display);
  CHECK(strcmp(display, "scheduled") == 0);
  CHECK(nb >= before + 60000 && nb <= after + 60000);
  CHECK_CODE(claimdag_claim_next(s, me, got, &got_gen), CLAIMDAG_NOT_FOUND);
  /* A stale generation is refused and changes nothing. */
  CHECK_CODE(claimdag_release_retry_in(s, id, me, gen, 10, &next), CLAIMDAG_STALE_GENERATION);
  CHECK(not_before_of(s, id, display, sizeof display) == nb);
  /* Not claimable by id either until then. */
  CHECK_CODE(claimdag_claim(s, id, me, &gen), CLAIMDAG_NOT_READY);
  CHECK_MESSAGE("scheduled");

  /* A short retry: a waiter gets the node when it passes. */
  char soon[33];
  CHECK_OK(claimdag_upsert(s, "retried soon", NULL, NULL, soon));
  CHECK_OK(claimdag_claim(s, soon, me, &gen));
  CHECK_OK(claimdag_release_retry_in(s, soon, me, gen, 300, &next));
  uint64_t t = mono_ms();
  CHECK_OK(claimdag_claim_next_wait(s, me, NULL, NULL, 0, 30000, got, &got_gen));
  CHECK(mono_ms() - t >= 200);
  CHECK(strcmp(got, soon) == 0 && got_gen == next + 1);
  claimdag_close(s);
}

/* upsert_not_before: a time in ms since the epoch; 0 leaves it as it is. */
static void upsert_not_before(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char id[33], again[33], display[32];
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.kind = "job";
  /* 2030-01-01T00:00:00.500Z */
  CHECK_OK(claimdag_upsert_not_before(s, "nightly report", &o, UINT64_C(1893456000500), id));
  CHECK(not_before_of(s, id, display, sizeof display) == UINT64_C(1893456000500));
  CHECK(strcmp(display, "scheduled") == 0);
  CHECK_OK(claimdag_upsert_not_before(s, "nightly report", &o, 0, again));
  CHECK(strcmp(id, again) == 0);
  CHECK(not_before_of(s, id, display, sizeof display) == UINT64_C(1893456000500));
  /* Moved to the past: ready at once. */
  CHECK_OK(claimdag_upsert_not_before(s, "nightly report", &o, 1000, again));
  CHECK(not_before_of(s, id, display, sizeof display) == 1000);
  CHECK(strcmp(display, "ready") == 0);
  /* NULL options are the defaults, as for claimdag_upsert_ex. */
  CHECK_OK(claimdag_upsert_not_before(s, "plain", NULL, wall_ms() + 3600000, again));
  not_before_of(s, again, display, sizeof display);
  CHECK(strcmp(display, "scheduled") == 0);
  CHECK_CODE(claimdag_upsert_not_before(s, NULL, NULL, 1000, again), CLAIMDAG_INVALID_INPUT);
  claimdag_close(s);
}

int main(void) {
  unsetenv("CLAIMDAG_WORKSPACE");
  run_test("claim_next_wait wakes when another process completes a prerequisite",
           wakes_on_another_process);
  run_test("claim_next_wait runs out with NOT_FOUND", a_wait_runs_out);
  run_test("release_retry_in makes the node scheduled", release_retry_in_schedules);
  run_test("upsert_not_before schedules a node", upsert_not_before);
  return finish();
}
