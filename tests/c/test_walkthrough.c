/* The README walkthrough and the fence, through the C ABI. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <string.h>

#include "util.h"

static void walkthrough(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33], you[33], field[64];
  char *json = NULL;
  uint64_t gen = 0;
  size_t count = 99;

  CHECK_OK(claimdag_upsert(s, "parse the manifest header", NULL, NULL, a));
  CHECK_OK(claimdag_upsert(s, "reject a manifest with no header", NULL, a, b));
  CHECK(strlen(a) == 32 && strlen(b) == 32 && strcmp(a, b) != 0);
  CHECK_OK(claimdag_link(s, a, b));

  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(json != NULL && count_of(json, "\"id\":") == 2);
  CHECK(json_field(json, a, "display", field, sizeof field) == 0 && strcmp(field, "ready") == 0);
  CHECK(json_field(json, b, "display", field, sizeof field) == 0 && strcmp(field, "todo") == 0);
  claimdag_string_free(json);

  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK(gen == 2);

  uint64_t untouched = 12345;
  CHECK_CODE(claimdag_claim(s, a, you, &untouched), CLAIMDAG_ALREADY_CLAIMED);
  CHECK(untouched == 12345);
  CHECK_MESSAGE("already claimed");
  CHECK_MESSAGE(me);

  CHECK_OK(claimdag_renew(s, a, me));
  CHECK_OK(claimdag_reclaim(s, 60000, &count));
  CHECK(count == 0);
  CHECK_OK(claimdag_complete(s, a, "done", 2));

  json = NULL;
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(json != NULL && count_of(json, "\"id\":") == 1);
  CHECK(json_field(json, b, "display", field, sizeof field) == 0 && strcmp(field, "ready") == 0);
  CHECK(json_field(json, b, "ready", field, sizeof field) == 0 && strcmp(field, "true") == 0);
  claimdag_string_free(json);

  json = NULL;
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "status", field, sizeof field) == 0 && strcmp(field, "done") == 0);
  CHECK(json_field(json, NULL, "generation", field, sizeof field) == 0 && strcmp(field, "2") == 0);
  CHECK(json_field(json, NULL, "completed_by", field, sizeof field) == 0 &&
        strcmp(field, me) == 0);
  claimdag_string_free(json);
  claimdag_close(s);
}

static void fence(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char b[33], you[33], field[64];
  uint64_t gen = 0;
  size_t count = 0;
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "reject a manifest with no header", NULL, NULL, b));
  CHECK_OK(claimdag_claim_ex(s, b, you, 0, 200, &gen));
  CHECK(gen == 2);
  sleep_ms(300);
  CHECK_OK(claimdag_reclaim(s, CLAIMDAG_NO_LEASE, &count));
  CHECK(count == 1);

  CHECK_CODE(claimdag_complete(s, b, "done", 2), CLAIMDAG_STALE_GENERATION);
  CHECK_MESSAGE("stale generation");
  CHECK_CODE(claimdag_renew_ex(s, b, you, 2, 0), CLAIMDAG_STALE_GENERATION);

  char *json = NULL;
  CHECK_OK(claimdag_get_json(s, b, &json));
  CHECK(json_field(json, NULL, "status", field, sizeof field) == 0 && strcmp(field, "todo") == 0);
  CHECK(json_field(json, NULL, "generation", field, sizeof field) == 0 && strcmp(field, "3") == 0);
  CHECK(json_field(json, NULL, "attempts", field, sizeof field) == 0 && strcmp(field, "1") == 0);
  claimdag_string_free(json);

  /* The node is free again: a fresh claim gets the next generation. */
  CHECK_OK(claimdag_claim(s, b, you, &gen));
  CHECK(gen == 4);
  CHECK_OK(claimdag_complete_ex(s, b, "done", 4, you, "late but fenced"));
  claimdag_close(s);
}

/* Expiry needs no reclaim: the next write hands an expired claim back by itself. */
static void expiry_without_reclaim(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33], you[33];
  uint64_t gen = 0;
  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "short lease", NULL, NULL, a));
  CHECK_OK(claimdag_claim_ex(s, a, me, 1, 100, &gen));
  CHECK(gen == 2);
  sleep_ms(200);
  CHECK_OK(claimdag_claim(s, a, you, &gen));
  CHECK(gen == 4);
  CHECK_CODE(claimdag_complete_ex(s, a, "done", 2, me, NULL), CLAIMDAG_STALE_GENERATION);
  CHECK_OK(claimdag_complete_ex(s, a, "done", 4, you, NULL));
  claimdag_close(s);
}

int main(void) {
  run_test("walkthrough", walkthrough);
  run_test("fence", fence);
  run_test("expiry without reclaim", expiry_without_reclaim);
  return finish();
}
