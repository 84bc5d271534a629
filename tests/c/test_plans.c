/* Plans, the archive and the graph through the C ABI: claimdag_import_json,
 * claimdag_archive, claimdag_unarchive, claimdag_list_json_opts and claimdag_graph, with
 * their refusals. The NULL checks of their pointer parameters are in test_errors.c. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *PLAN = "{\"nodes\": ["
                          "{\"key\": \"design\", \"summary\": \"design the parser\", "
                          "\"estimate\": 3},"
                          "{\"key\": \"lex\", \"summary\": \"write the lexer\", "
                          "\"deps\": [\"design\"], \"resources\": [\"src/lex/\"]},"
                          "{\"key\": \"docs\", \"summary\": \"document the grammar\", "
                          "\"soft_deps\": [\"design\"], \"role\": \"writer\"}"
                          "]}";

/* Copies the id of the `n`th object (from 0) of a JSON array such as import returns. */
static int nth_id(const char *json, int n, char out[33]) {
  const char *p = json;
  for (int i = 0; i <= n; i++) {
    p = strstr(p, "\"id\":\"");
    if (p == NULL) {
      return -1;
    }
    p += strlen("\"id\":\"");
  }
  if (strlen(p) < 32) {
    return -1;
  }
  memcpy(out, p, 32);
  out[32] = '\0';
  return 0;
}

/* How many nodes a list call returns. */
static int listed(claimdag_store *s, const claimdag_list_options *o) {
  char *json = NULL;
  int n = -1;
  CHECK_OK(claimdag_list_json_opts(s, o, &json));
  if (json != NULL) {
    n = count_of(json, "\"id\":");
    claimdag_string_free(json);
  }
  return n;
}

static void walk(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char design[33], lex[33], docs[33], same[33], me[33], field[64];
  char *json = NULL, *again = NULL, *text = NULL;
  uint64_t gen = 0;
  size_t count = 99;
  const char *status = NULL;
  actor_for(7, me);

  /* Import: one object per node, in plan order, with its key. */
  CHECK_OK(claimdag_import_json(s, NULL, PLAN, &json));
  CHECK(json != NULL && count_of(json, "\"id\":") == 3);
  CHECK(nth_id(json, 0, design) == 0 && nth_id(json, 1, lex) == 0 && nth_id(json, 2, docs) == 0);
  CHECK(json_field(json, design, "key", field, sizeof field) == 0 &&
        strcmp(field, "design") == 0);
  CHECK(json_field(json, lex, "key", field, sizeof field) == 0 && strcmp(field, "lex") == 0);
  CHECK(json_field(json, docs, "key", field, sizeof field) == 0 && strcmp(field, "docs") == 0);
  /* Importing again changes nothing and returns the same ids. */
  CHECK_OK(claimdag_import_json(s, NULL, PLAN, &again));
  CHECK(again != NULL && json != NULL && strcmp(json, again) == 0);
  claimdag_string_free(again);
  claimdag_string_free(json);
  /* The ids are the ones upsert mints from the same fields. */
  CHECK_OK(claimdag_upsert(s, "design the parser", NULL, NULL, same));
  CHECK(strcmp(same, design) == 0);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, lex, &json));
  CHECK(json_field(json, NULL, "deps", field, sizeof field) == 0 && strstr(field, design) != NULL);
  CHECK(json_field(json, NULL, "display", field, sizeof field) == 0 && strcmp(field, "todo") == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_log_json(s, NULL, &json));
  CHECK(count_of(json, "\"verb\":\"create\"") == 3);
  claimdag_string_free(json);

  /* Claim and finish the head, then archive it. */
  CHECK_OK(claimdag_claim(s, design, me, &gen));
  CHECK_OK(claimdag_complete(s, design, "done", gen));
  const char *ids[] = {design};
  CHECK_OK(claimdag_archive(s, NULL, ids, 1, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 1);

  /* Live lists leave it out; the archived list shows it alone. */
  claimdag_list_options o;
  memset(&o, 0, sizeof o);
  o.terminal = true;
  CHECK(listed(s, &o) == 2);
  CHECK(listed(s, NULL) == 2);
  memset(&o, 0, sizeof o);
  o.only_archived = true;
  json = NULL;
  CHECK_OK(claimdag_list_json_opts(s, &o, &json));
  CHECK(json != NULL && count_of(json, "\"id\":") == 1 && strstr(json, design) != NULL);
  CHECK(json_field(json, design, "archived", field, sizeof field) == 0 &&
        strcmp(field, "true") == 0);
  CHECK(json_field(json, design, "status", field, sizeof field) == 0 &&
        strcmp(field, "done") == 0);
  claimdag_string_free(json);
  memset(&o, 0, sizeof o);
  o.terminal = true;
  o.archived = true;
  CHECK(listed(s, &o) == 3);

  /* The dependents still see how it ended: both are ready, and show finds it. */
  json = NULL;
  CHECK_OK(claimdag_get_json(s, lex, &json));
  CHECK(json_field(json, NULL, "display", field, sizeof field) == 0 &&
        strcmp(field, "ready") == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, docs, &json));
  CHECK(json_field(json, NULL, "ready", field, sizeof field) == 0 && strcmp(field, "true") == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, design, &json));
  CHECK(json_field(json, NULL, "archived", field, sizeof field) == 0 &&
        strcmp(field, "true") == 0);
  claimdag_string_free(json);
  memset(&o, 0, sizeof o);
  o.status = "ready";
  CHECK(listed(s, &o) == 2); /* lex and docs */

  /* The graph: dot by default, Mermaid or JSON on request; the archived node is not drawn. */
  CHECK_OK(claimdag_graph(s, NULL, NULL, false, &text));
  CHECK(text != NULL && strstr(text, "digraph") != NULL);
  CHECK(text != NULL && strstr(text, "write the lexer") != NULL);
  CHECK(text != NULL && strstr(text, "design the parser") == NULL);
  claimdag_string_free(text);
  text = NULL;
  CHECK_OK(claimdag_graph(s, NULL, "mermaid", true, &text));
  CHECK(text != NULL && strstr(text, "flowchart") != NULL);
  claimdag_string_free(text);
  text = NULL;
  CHECK_OK(claimdag_graph(s, NULL, "json", false, &text));
  CHECK(text != NULL && strncmp(text, "{\"nodes\":[", 10) == 0);
  CHECK(text != NULL && strstr(text, "\"summary\":\"write the lexer\"") != NULL);
  CHECK(text != NULL && strstr(text, "\"edges\":[") != NULL);
  claimdag_string_free(text);

  /* Unarchive: back with its status and generation. */
  CHECK_OK(claimdag_unarchive(s, design, &status));
  CHECK(status != NULL && strcmp(status, "done") == 0);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, design, &json));
  CHECK(json_field(json, NULL, "generation", field, sizeof field) == 0 &&
        strcmp(field, "2") == 0);
  CHECK(json_field(json, NULL, "archived", field, sizeof field) == 0 &&
        strcmp(field, "false") == 0);
  claimdag_string_free(json);
  memset(&o, 0, sizeof o);
  o.terminal = true;
  CHECK(listed(s, &o) == 3);
  text = NULL;
  CHECK_OK(claimdag_graph(s, "", "dot", true, &text));
  CHECK(text != NULL && strstr(text, "design the parser") != NULL);
  claimdag_string_free(text);

  json = NULL;
  CHECK_OK(claimdag_log_json(s, design, &json));
  CHECK(count_of(json, "\"verb\":\"archive\"") == 1);
  CHECK(count_of(json, "\"verb\":\"unarchive\"") == 1);
  claimdag_string_free(json);
  CHECK_OK(claimdag_check(s, &json));
  claimdag_string_free(json);
  claimdag_close(s);
}

/* A refused import or archive writes nothing and leaves the out-params alone. */
static void refusals(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char *json = NULL;
  char *text = (char *)"untouched";
  char a[33], me[33];
  size_t count = 99;
  uint64_t gen = 0;
  const char *status = "untouched";
  actor_for(7, me);

  CHECK_CODE(claimdag_import_json(s, NULL, "{\"nodes\": [", &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("JSON");
  CHECK(json == NULL);
  CHECK_CODE(claimdag_import_json(s, NULL, "[1, 2]", &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_import_json(s, NULL, "{\"nodes\": [{\"key\": \"k\", \"summary\": \"s\", "
                                           "\"colour\": \"blue\"}]}",
                                  &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("\"k\"");
  CHECK_CODE(claimdag_import_json(s, NULL, "{\"nodes\": [{\"key\": \"k\", \"summary\": \"   \"}]}",
                                  &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_import_json(s, "bad workspace!", PLAN, &json), CLAIMDAG_INVALID_INPUT);
  /* A valid first node does not survive a cycle further on. */
  CHECK_CODE(claimdag_import_json(s, NULL,
                                  "{\"nodes\": ["
                                  "{\"key\": \"alone\", \"summary\": \"fine on its own\"},"
                                  "{\"key\": \"a\", \"summary\": \"A\", \"deps\": [\"b\"]},"
                                  "{\"key\": \"b\", \"summary\": \"B\", \"deps\": [\"a\"]}]}",
                                  &json),
             CLAIMDAG_CYCLE);
  CHECK_MESSAGE("cycle");
  CHECK_CODE(claimdag_import_json(s, NULL,
                                  "{\"nodes\": [{\"key\": \"a\", \"summary\": \"A\", "
                                  "\"deps\": [\"a\"]}]}",
                                  &json),
             CLAIMDAG_CYCLE);
  CHECK_CODE(claimdag_import_json(s, NULL,
                                  "{\"nodes\": [{\"key\": \"a\", \"summary\": \"A\", "
                                  "\"deps\": [\"nowhere\"]}]}",
                                  &json),
             CLAIMDAG_NOT_FOUND);
  CHECK(json == NULL);
  CHECK_OK(claimdag_log_json(s, NULL, &json));
  CHECK(json != NULL && strcmp(json, "[]") == 0);
  claimdag_string_free(json);
  json = NULL;
  claimdag_list_options all;
  memset(&all, 0, sizeof all);
  all.terminal = true;
  all.archived = true;
  CHECK(listed(s, &all) == 0);

  /* Archive takes finished nodes only; the whole call is refused. */
  char done[33];
  CHECK_OK(claimdag_upsert(s, "still to do", NULL, NULL, a));
  CHECK_OK(claimdag_upsert(s, "finished", NULL, NULL, done));
  CHECK_OK(claimdag_claim(s, done, me, &gen));
  CHECK_OK(claimdag_complete(s, done, "done", gen));
  const char *both[] = {done, a};
  CHECK_CODE(claimdag_archive(s, NULL, both, 2, CLAIMDAG_NO_OLDER_THAN, &count),
             CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("not finished");
  CHECK(count == 99);
  const char *unknown[] = {"0000000000000000000000000000dead"};
  CHECK_CODE(claimdag_archive(s, NULL, unknown, 1, CLAIMDAG_NO_OLDER_THAN, &count),
             CLAIMDAG_NOT_FOUND);
  CHECK_CODE(claimdag_archive(s, "bad workspace!", NULL, 0, 0, &count), CLAIMDAG_INVALID_INPUT);
  CHECK(count == 99);
  all.only_archived = true;
  CHECK(listed(s, &all) == 0);

  /* Unarchive takes archived nodes only. */
  CHECK_CODE(claimdag_unarchive(s, done, &status), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("not archived");
  CHECK_CODE(claimdag_unarchive(s, unknown[0], &status), CLAIMDAG_NOT_FOUND);
  CHECK(strcmp(status, "untouched") == 0);

  /* Graph formats and list filters are checked. */
  CHECK_CODE(claimdag_graph(s, NULL, "svg", false, &text), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("dot, mermaid or json");
  CHECK_CODE(claimdag_graph(s, "bad workspace!", NULL, false, &text), CLAIMDAG_INVALID_INPUT);
  CHECK(strcmp(text, "untouched") == 0);
  claimdag_list_options o;
  memset(&o, 0, sizeof o);
  o.status = "sleeping";
  CHECK_CODE(claimdag_list_json_opts(s, &o, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("sleeping");
  o.status = NULL;
  o.holder = "not-an-actor";
  CHECK_CODE(claimdag_list_json_opts(s, &o, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("holder must be 32 hex characters");
  CHECK(json == NULL);
  claimdag_close(s);
}

/* older_than_ms: CLAIMDAG_NO_OLDER_THAN is "not given", 0 is "every finished node". */
static void archive_ages_and_workspaces(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char x[33], y[33], z[33], w[33], other[33], me[33];
  size_t count = 0;
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "x", NULL, NULL, x));
  CHECK_OK(claimdag_upsert(s, "y", NULL, NULL, y));
  CHECK_OK(claimdag_upsert(s, "z", NULL, NULL, z));
  CHECK_OK(claimdag_upsert(s, "w", NULL, NULL, w));
  CHECK_OK(claimdag_complete(s, x, "cancelled", 1));
  CHECK_OK(claimdag_complete(s, y, "cancelled", 1));
  CHECK_OK(claimdag_complete(s, w, "cancelled", 1));
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.workspace = "team-b";
  CHECK_OK(claimdag_upsert_ex(s, "elsewhere", &o, other));
  CHECK_OK(claimdag_claim_next_ex(s, me, "team-b", NULL, 0, other, &gen));
  CHECK_OK(claimdag_complete(s, other, "done", gen));

  /* Ids alone: only those. */
  const char *just_x[] = {x};
  CHECK_OK(claimdag_archive(s, NULL, just_x, 1, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 1);
  /* Again: already archived, skipped. */
  CHECK_OK(claimdag_archive(s, NULL, just_x, 1, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 0);
  /* An hour is older than anything here. */
  CHECK_OK(claimdag_archive(s, NULL, NULL, 0, 3600000, &count));
  CHECK(count == 0);
  /* An id and 0: that id and every other finished node of the workspace (y, w). */
  CHECK_OK(claimdag_unarchive(s, x, NULL));
  CHECK_OK(claimdag_archive(s, NULL, just_x, 1, 0, &count));
  CHECK(count == 3);
  claimdag_list_options l;
  memset(&l, 0, sizeof l);
  l.terminal = true;
  CHECK(listed(s, &l) == 1); /* z, still todo */
  l.workspace = "team-b";
  CHECK(listed(s, &l) == 1); /* the other workspace was not touched */

  /* No ids, no age: every finished node of the workspace. */
  CHECK_OK(claimdag_archive(s, "team-b", NULL, 0, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 1);
  CHECK(listed(s, &l) == 0);
  l.only_archived = true;
  CHECK(listed(s, &l) == 1);
  l.workspace = NULL;
  CHECK(listed(s, &l) == 3);

  /* Ids are found in any workspace, in any node form. */
  char prefix[12];
  CHECK_OK(claimdag_unarchive(s, other, NULL));
  memcpy(prefix, other, 8);
  memcpy(prefix + 8, "...", 4);
  const char *by_prefix[] = {prefix};
  CHECK_OK(claimdag_archive(s, NULL, by_prefix, 1, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 1);
  claimdag_close(s);
}

/* A plan in another workspace, and references to existing nodes. */
static void import_workspaces_and_references(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char *json = NULL;
  char here[33], there[33], base[33], child[33], field[128];
  CHECK_OK(claimdag_import_json(s, NULL, PLAN, &json));
  CHECK(nth_id(json, 0, here) == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_import_json(s, "team-b", PLAN, &json));
  CHECK(nth_id(json, 0, there) == 0);
  claimdag_string_free(json);
  CHECK(strcmp(here, there) != 0);

  CHECK_OK(claimdag_upsert(s, "an existing node", NULL, NULL, base));
  char plan[512];
  snprintf(plan, sizeof plan,
           "{\"nodes\": [{\"key\": \"follow-up\", \"summary\": \"after the existing node\", "
           "\"deps\": [\"%.8s\"], \"parent\": \"%s\", \"labels\": [\"c\"]}]}",
           base, base);
  json = NULL;
  CHECK_OK(claimdag_import_json(s, NULL, plan, &json));
  CHECK(nth_id(json, 0, child) == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, child, &json));
  CHECK(json_field(json, NULL, "parent", field, sizeof field) == 0 && strcmp(field, base) == 0);
  CHECK(json_field(json, NULL, "deps", field, sizeof field) == 0 && strstr(field, base) != NULL);
  claimdag_string_free(json);
  claimdag_close(s);
}

int main(void) {
  unsetenv("CLAIMDAG_WORKSPACE");
  run_test("import, claim, archive, list archived, unarchive, graph", walk);
  run_test("refused import, archive, unarchive, graph and list write nothing", refusals);
  run_test("archive by id, by age and by workspace", archive_ages_and_workspaces);
  run_test("import into a workspace and onto existing nodes", import_workspaces_and_references);
  return finish();
}
