/* Everything the CLI does, through the C ABI: upsert options, node forms, claim and renew
 * options, claim-next by role and workspace, release, reclaim, complete with actor and
 * note, reopen, next, ready, list filters, log, unlink, config and check. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void upsert_options(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], again[33], child[33], field[256];
  char *json = NULL;
  const char *labels[] = {"parser", "urgent"};
  const char *resources[] = {"src/parser/"};
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.kind = "bug";
  o.role = "reviewer";
  o.has_priority = true;
  o.priority = -3;
  o.estimate = 5;
  o.labels = labels;
  o.labels_len = 2;
  o.resources = resources;
  o.resources_len = 1;
  o.ticket_ref = "JIRA-12";
  o.max_attempts = 4;
  CHECK_OK(claimdag_upsert_ex(s, "  fix the lexer \n", &o, a));
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "summary", field, sizeof field) == 0 &&
        strcmp(field, "fix the lexer") == 0);
  CHECK(json_field(json, NULL, "kind", field, sizeof field) == 0 && strcmp(field, "bug") == 0);
  CHECK(json_field(json, NULL, "role", field, sizeof field) == 0 &&
        strcmp(field, "reviewer") == 0);
  CHECK(json_field(json, NULL, "priority", field, sizeof field) == 0 && strcmp(field, "-3") == 0);
  CHECK(json_field(json, NULL, "estimate", field, sizeof field) == 0 && strcmp(field, "5") == 0);
  CHECK(json_field(json, NULL, "labels", field, sizeof field) == 0 &&
        strcmp(field, "[\"parser\",\"urgent\"]") == 0);
  CHECK(json_field(json, NULL, "resources", field, sizeof field) == 0 &&
        strcmp(field, "[\"src/parser/\"]") == 0);
  CHECK(json_field(json, NULL, "ref", field, sizeof field) == 0 && strcmp(field, "JIRA-12") == 0);
  CHECK(json_field(json, NULL, "max_attempts", field, sizeof field) == 0 &&
        strcmp(field, "4") == 0);
  claimdag_string_free(json);

  /* Same identity again: same id, fields not given are kept, given ones merged. */
  claimdag_upsert_options merge;
  memset(&merge, 0, sizeof merge);
  merge.kind = "bug";
  merge.estimate = 8;
  CHECK_OK(claimdag_upsert_ex(s, "fix the lexer", &merge, again));
  CHECK(strcmp(a, again) == 0);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "estimate", field, sizeof field) == 0 && strcmp(field, "8") == 0);
  CHECK(json_field(json, NULL, "role", field, sizeof field) == 0 &&
        strcmp(field, "reviewer") == 0);
  claimdag_string_free(json);

  /* A different kind is a different node; NULL options are the defaults. */
  CHECK_OK(claimdag_upsert_ex(s, "fix the lexer", NULL, again));
  CHECK(strcmp(a, again) != 0);

  /* Parent by prefix, in the short form lists print. */
  char shortform[12];
  memcpy(shortform, a, 8);
  memcpy(shortform + 8, "...", 4);
  claimdag_upsert_options sub;
  memset(&sub, 0, sizeof sub);
  sub.parent = shortform;
  CHECK_OK(claimdag_upsert_ex(s, "a sub-task", &sub, child));
  json = NULL;
  CHECK_OK(claimdag_get_json(s, child, &json));
  CHECK(json_field(json, NULL, "parent", field, sizeof field) == 0 && strcmp(field, a) == 0);
  claimdag_string_free(json);

  /* Workspaces are part of the identity. */
  claimdag_upsert_options ws;
  memset(&ws, 0, sizeof ws);
  ws.workspace = "team-b";
  CHECK_OK(claimdag_upsert_ex(s, "a sub-task", &ws, again));
  CHECK(strcmp(again, child) != 0);
  json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, "team-b", NULL, NULL, false, &json));
  CHECK(count_of(json, "\"id\":") == 1 && strstr(json, again) != NULL);
  claimdag_string_free(json);
  claimdag_close(s);
}

static void node_forms(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], id[33], upper[33], prefix[9], dotted[12];
  CHECK_OK(claimdag_upsert(s, "find me", NULL, NULL, a));
  for (int i = 0; i < 33; i++) {
    upper[i] = (a[i] >= 'a' && a[i] <= 'f') ? (char)(a[i] - 'a' + 'A') : a[i];
  }
  memcpy(prefix, a, 8);
  prefix[8] = '\0';
  snprintf(dotted, sizeof dotted, "%s...", prefix);
  CHECK_OK(claimdag_resolve(s, upper, id));
  CHECK(strcmp(id, a) == 0);
  CHECK_OK(claimdag_resolve(s, prefix, id));
  CHECK(strcmp(id, a) == 0);
  CHECK_OK(claimdag_resolve(s, dotted, id));
  CHECK(strcmp(id, a) == 0);
  CHECK_CODE(claimdag_resolve(s, "abc", id), CLAIMDAG_INVALID_INPUT);
  uint64_t gen = 0;
  char me[33];
  actor_for(7, me);
  CHECK_OK(claimdag_claim(s, dotted, me, &gen));
  CHECK_OK(claimdag_complete(s, prefix, "done", gen));
  claimdag_close(s);
}

static void claim_renew_release(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33], field[64];
  char *json = NULL;
  uint64_t gen = 0, back = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "lease me", NULL, NULL, a));
  CHECK_OK(claimdag_claim_ex(s, a, me, 1, 60000, &gen));
  CHECK(gen == 2);
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "ttl_ms", field, sizeof field) == 0 && strcmp(field, "60000") == 0);
  CHECK(json_field(json, NULL, "holder", field, sizeof field) == 0 && strcmp(field, me) == 0);
  claimdag_string_free(json);
  CHECK_OK(claimdag_renew_ex(s, a, me, 2, 120000));
  CHECK_CODE(claimdag_renew_ex(s, a, me, 1, 0), CLAIMDAG_STALE_GENERATION);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "ttl_ms", field, sizeof field) == 0 &&
        strcmp(field, "120000") == 0);
  claimdag_string_free(json);
  CHECK_OK(claimdag_release(s, a, me, gen, &back));
  CHECK(back == 3);
  /* Claim again at the expected generation, then lose it to reclaim --lease 0. */
  CHECK_OK(claimdag_claim_ex(s, a, me, 3, 0, &gen));
  CHECK(gen == 4);
  json = NULL;
  CHECK_OK(claimdag_reclaim_json(s, NULL, 0, &json));
  CHECK(json != NULL && strstr(json, a) != NULL && strstr(json, "\"generation\":5") != NULL);
  claimdag_string_free(json);
  CHECK_CODE(claimdag_complete(s, a, "done", 4), CLAIMDAG_STALE_GENERATION);
  claimdag_close(s);
}

static void complete_and_reopen(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33], field[64];
  char *json = NULL;
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "finish me", NULL, NULL, a));
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_OK(claimdag_complete_ex(s, a, "failed", gen, me, "flaky test, see log"));
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(json_field(json, NULL, "status", field, sizeof field) == 0 && strcmp(field, "failed") == 0);
  CHECK(json_field(json, NULL, "note", field, sizeof field) == 0 &&
        strcmp(field, "flaky test, see log") == 0);
  claimdag_string_free(json);
  CHECK_CODE(claimdag_reopen(s, a, 1, &gen), CLAIMDAG_STALE_GENERATION);
  CHECK_OK(claimdag_reopen(s, a, 0, &gen));
  CHECK(gen == 3);
  /* A todo node may be cancelled at its generation without a claim. */
  CHECK_OK(claimdag_complete(s, a, "cancelled", 3));
  claimdag_close(s);
}

static void pick_by_role_and_path(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char lone[33], head[33], tail[33], review[33], id[33], me[33], field[256];
  char *json = NULL;
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "a lone task", NULL, NULL, lone));
  CHECK_OK(claimdag_upsert(s, "head of a chain", NULL, NULL, head));
  CHECK_OK(claimdag_upsert(s, "tail of a chain", NULL, NULL, tail));
  CHECK_OK(claimdag_link(s, head, tail));
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.role = "reviewer";
  o.estimate = 10;
  CHECK_OK(claimdag_upsert_ex(s, "review the design", &o, review));

  /* The longest critical path first: head (1 + 1) before the lone task. */
  CHECK_OK(claimdag_next(s, NULL, NULL, id));
  CHECK(strcmp(id, head) == 0);
  CHECK_OK(claimdag_ready_json(s, NULL, NULL, &json));
  CHECK(json_field(json, head, "critical", field, sizeof field) == 0 && strcmp(field, "2") == 0);
  CHECK(strstr(json, review) == NULL);
  claimdag_string_free(json);

  /* A reviewer sees the reviewer node too, and it wins on its estimate. */
  CHECK_OK(claimdag_next(s, NULL, "reviewer", id));
  CHECK(strcmp(id, review) == 0);
  CHECK_OK(claimdag_claim_next_ex(s, me, NULL, "reviewer", 30000, id, &gen));
  CHECK(strcmp(id, review) == 0 && gen == 2);
  CHECK_OK(claimdag_complete(s, id, "done", gen));

  CHECK_OK(claimdag_claim_next(s, me, id, &gen));
  CHECK(strcmp(id, head) == 0);
  CHECK_OK(claimdag_complete(s, id, "done", gen));
  CHECK_OK(claimdag_claim_next(s, me, id, &gen));
  CHECK(strcmp(id, tail) == 0 || strcmp(id, lone) == 0);
  CHECK_OK(claimdag_complete(s, id, "done", gen));
  CHECK_OK(claimdag_claim_next(s, me, id, &gen));
  CHECK_OK(claimdag_complete(s, id, "done", gen));
  CHECK_CODE(claimdag_claim_next(s, me, id, &gen), CLAIMDAG_NOT_FOUND);

  /* Another workspace has its own work. */
  CHECK_CODE(claimdag_claim_next_ex(s, me, "elsewhere", NULL, 0, id, &gen), CLAIMDAG_NOT_FOUND);
  claimdag_close(s);
}

static void list_filters_log_unlink(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33], field[64];
  char *json = NULL;
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "first", NULL, NULL, a));
  CHECK_OK(claimdag_upsert(s, "second", NULL, NULL, b));
  CHECK_OK(claimdag_link_ex(s, a, b, true));
  CHECK_OK(claimdag_link_ex(s, a, b, true));
  CHECK_OK(claimdag_get_json(s, b, &json));
  CHECK(json_field(json, NULL, "soft_deps", field, sizeof field) == 0 && strstr(field, a) != NULL);
  claimdag_string_free(json);
  CHECK_OK(claimdag_unlink(s, a, b));
  CHECK_OK(claimdag_unlink(s, a, b)); /* unlinking twice is a no-op, as linking twice is */

  CHECK_OK(claimdag_claim(s, a, me, &gen));
  json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, NULL, NULL, me, false, &json));
  CHECK(count_of(json, "\"id\":") == 1 && strstr(json, a) != NULL);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, NULL, "ready", NULL, false, &json));
  CHECK(count_of(json, "\"id\":") == 1 && strstr(json, b) != NULL);
  claimdag_string_free(json);
  CHECK_OK(claimdag_complete(s, a, "done", gen));
  json = NULL;
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(count_of(json, "\"id\":") == 1);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, NULL, NULL, NULL, true, &json));
  CHECK(count_of(json, "\"id\":") == 2);
  claimdag_string_free(json);

  json = NULL;
  CHECK_OK(claimdag_log_json(s, a, &json));
  CHECK(count_of(json, "\"verb\":\"create\"") == 1);
  CHECK(count_of(json, "\"verb\":\"claim\"") == 1);
  CHECK(count_of(json, "\"verb\":\"complete\"") == 1);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_log_json(s, NULL, &json));
  CHECK(count_of(json, "\"verb\":\"create\"") == 2);
  CHECK(count_of(json, "\"verb\":\"unlink\"") == 1);
  claimdag_string_free(json);
  claimdag_close(s);
}

static void config_and_check(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char *text = NULL;
  char a[33], me[33], field[64];
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_config_get(s, "default_ttl", &text));
  CHECK(strcmp(text, "15m") == 0);
  claimdag_string_free(text);
  CHECK_OK(claimdag_config_get(s, "max_attempts", &text));
  CHECK(strcmp(text, "none") == 0);
  claimdag_string_free(text);
  CHECK_OK(claimdag_config_set(s, "default_ttl", "90s"));
  CHECK_OK(claimdag_config_set(s, "max_held", "3"));
  CHECK_OK(claimdag_config_set(s, "max_attempts", "2"));
  CHECK_OK(claimdag_config_get(s, "default_ttl", &text));
  CHECK(strcmp(text, "90s") == 0);
  claimdag_string_free(text);
  CHECK_OK(claimdag_config_json(s, &text));
  CHECK(strcmp(text, "{\"default_ttl_ms\":90000,\"max_held\":3,\"max_attempts\":2,"
                    "\"retry_delay_ms\":0,\"retry_delay_max_ms\":3600000,"
                    "\"history_keep\":\"all\",\"deadline_action\":\"none\"}") == 0);
  claimdag_string_free(text);
  CHECK_OK(claimdag_upsert(s, "uses the default lease", NULL, NULL, a));
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_OK(claimdag_get_json(s, a, &text));
  CHECK(json_field(text, NULL, "ttl_ms", field, sizeof field) == 0 && strcmp(field, "90000") == 0);
  claimdag_string_free(text);
  CHECK_OK(claimdag_config_set(s, "max_attempts", "none"));

  CHECK_OK(claimdag_check(s, &text));
  CHECK(json_field(text, NULL, "ok", field, sizeof field) == 0 && strcmp(field, "true") == 0);
  CHECK(json_field(text, NULL, "nodes", field, sizeof field) == 0 && strcmp(field, "1") == 0);
  claimdag_string_free(text);
  claimdag_close(s);
}

/* A store that does not exist reads as empty and is created by the first write; the same
 * directory opened twice shares its state. */
static void lazy_store_and_two_handles(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  claimdag_store *t = open_store(path);
  char *json = NULL;
  char a[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(strcmp(json, "[]") == 0);
  claimdag_string_free(json);
  CHECK_OK(claimdag_upsert(s, "seen by both", NULL, NULL, a));
  CHECK_OK(claimdag_claim(t, a, me, &gen));
  CHECK_CODE(claimdag_claim(s, a, me, &gen), CLAIMDAG_ALREADY_CLAIMED);
  claimdag_close(t);
  claimdag_close(s);
}

/* CLAIMDAG_WORKSPACE is the default workspace, as for the CLI. */
static void default_workspace_from_env(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33];
  char *json = NULL;
  CHECK_OK(claimdag_upsert(s, "same summary", NULL, NULL, a));
  CHECK(setenv("CLAIMDAG_WORKSPACE", "team-b", 1) == 0);
  CHECK_OK(claimdag_upsert(s, "same summary", NULL, NULL, b));
  CHECK(strcmp(a, b) != 0);
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(count_of(json, "\"workspace\":\"team-b\"") == 1 && count_of(json, "\"id\":") == 1);
  claimdag_string_free(json);
  CHECK(setenv("CLAIMDAG_WORKSPACE", "no spaces allowed", 1) == 0);
  CHECK_CODE(claimdag_list_json(s, &json), CLAIMDAG_INVALID_INPUT);
  CHECK(unsetenv("CLAIMDAG_WORKSPACE") == 0);
  json = NULL;
  CHECK_OK(claimdag_list_json_ex(s, "", NULL, NULL, false, &json));
  CHECK(count_of(json, "\"id\":") == 1 && strstr(json, a) != NULL);
  claimdag_string_free(json);
  claimdag_close(s);
}

int main(void) {
  unsetenv("CLAIMDAG_WORKSPACE");
  run_test("upsert options", upsert_options);
  run_test("node forms", node_forms);
  run_test("claim, renew and release options", claim_renew_release);
  run_test("complete with actor and note, reopen", complete_and_reopen);
  run_test("next, ready and claim_next by role", pick_by_role_and_path);
  run_test("list filters, log, soft link, unlink", list_filters_log_unlink);
  run_test("config and check", config_and_check);
  run_test("lazy store, two handles", lazy_store_and_two_handles);
  run_test("default workspace from the environment", default_workspace_from_env);
  return finish();
}
