/* Every error code a C host can see, the NULL checks of every pointer parameter, UTF-8
 * checks, and out-params left alone on failure. */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Present in debug builds of the library only; not in the header. */
claimdag_code claimdag_testing_panic(void);

static const char *UNKNOWN = "0000000000000000000000000000dead";

static void seed(claimdag_store *s, char a[33]) {
  CHECK_OK(claimdag_upsert(s, "a node", NULL, NULL, a));
}

static void not_found(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], id[33] = "untouched";
  char *json = (char *)"untouched";
  uint64_t gen = 77;
  seed(s, a);
  CHECK_CODE(claimdag_get_json(s, UNKNOWN, &json), CLAIMDAG_NOT_FOUND);
  CHECK_MESSAGE("not found");
  CHECK(strcmp(json, "untouched") == 0);
  CHECK_CODE(claimdag_resolve(s, "deadbeef", id), CLAIMDAG_NOT_FOUND);
  CHECK(strcmp(id, "untouched") == 0);
  CHECK_CODE(claimdag_unlink(s, UNKNOWN, a), CLAIMDAG_NOT_FOUND);
  CHECK_OK(claimdag_unlink(s, a, a)); /* a link that is not there: a no-op */
  CHECK_CODE(claimdag_upsert(s, "child", NULL, UNKNOWN, id), CLAIMDAG_NOT_FOUND);
  /* Nothing ready: claim_next and next say NOT_FOUND and write nothing. */
  char me[33];
  actor_for(7, me);
  CHECK_OK(claimdag_complete(s, a, "cancelled", 1));
  CHECK_CODE(claimdag_claim_next(s, me, id, &gen), CLAIMDAG_NOT_FOUND);
  CHECK(strcmp(id, "untouched") == 0 && gen == 77);
  CHECK_CODE(claimdag_next(s, NULL, NULL, id), CLAIMDAG_NOT_FOUND);
  CHECK_MESSAGE("a ready node in workspace");
  claimdag_close(s);
}

static void already_claimed(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  /* The holder included. */
  CHECK_CODE(claimdag_claim(s, a, me, &gen), CLAIMDAG_ALREADY_CLAIMED);
  CHECK_MESSAGE("already claimed");
  CHECK_MESSAGE("gen=2");
  claimdag_close(s);
}

static void assignee_busy(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_upsert(s, "another node", NULL, NULL, b));
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_CODE(claimdag_claim(s, b, me, &gen), CLAIMDAG_ASSIGNEE_BUSY);
  CHECK_MESSAGE("already holds");
  CHECK_OK(claimdag_config_set(s, "max_held", "0"));
  CHECK_OK(claimdag_claim(s, b, me, &gen));
  claimdag_close(s);
}

static void not_ready(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_upsert(s, "waits", NULL, NULL, b));
  CHECK_OK(claimdag_link(s, a, b));
  CHECK_CODE(claimdag_claim(s, b, me, &gen), CLAIMDAG_NOT_READY);
  CHECK_MESSAGE("not ready");
  claimdag_close(s);
}

static void attempts_exhausted(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  uint64_t gen = 0, back = 0;
  actor_for(7, me);
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.max_attempts = 1;
  CHECK_OK(claimdag_upsert_ex(s, "one try", &o, a));
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_OK(claimdag_release(s, a, me, gen, &back));
  CHECK(back == gen + 1);
  CHECK_CODE(claimdag_claim(s, a, me, &gen), CLAIMDAG_ATTEMPTS_EXHAUSTED);
  CHECK_MESSAGE("attempts exhausted");
  claimdag_close(s);
}

static void resource_conflict(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33], you[33];
  uint64_t gen = 0;
  actor_for(7, me);
  actor_for(8, you);
  const char *dir_res[] = {"src/parser/"};
  const char *file_res[] = {"src/parser/lex.rs"};
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.resources = dir_res;
  o.resources_len = 1;
  CHECK_OK(claimdag_upsert_ex(s, "rework the parser", &o, a));
  o.resources = file_res;
  CHECK_OK(claimdag_upsert_ex(s, "fix the lexer", &o, b));
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_CODE(claimdag_claim(s, b, you, &gen), CLAIMDAG_RESOURCE_CONFLICT);
  CHECK_MESSAGE("resource");
  claimdag_close(s);
}

static void not_claimed(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  uint64_t gen = 5;
  actor_for(7, me);
  seed(s, a);
  CHECK_CODE(claimdag_renew(s, a, me), CLAIMDAG_NOT_CLAIMED);
  CHECK_MESSAGE("not claimed");
  CHECK_CODE(claimdag_release(s, a, me, 1, &gen), CLAIMDAG_NOT_CLAIMED);
  CHECK(gen == 5);
  CHECK_CODE(claimdag_complete(s, a, "done", 1), CLAIMDAG_NOT_CLAIMED);
  claimdag_close(s);
}

static void terminal(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_complete(s, a, "cancelled", 1));
  CHECK_CODE(claimdag_claim(s, a, me, &gen), CLAIMDAG_TERMINAL);
  CHECK_MESSAGE("terminal");
  claimdag_close(s);
}

static void stale_generation(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_CODE(claimdag_claim_ex(s, a, me, 9, 0, &gen), CLAIMDAG_STALE_GENERATION);
  CHECK_MESSAGE("stale generation");
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_CODE(claimdag_complete(s, a, "done", gen - 1), CLAIMDAG_STALE_GENERATION);
  claimdag_close(s);
}

static void not_holder(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33], you[33];
  uint64_t gen = 0;
  actor_for(7, me);
  actor_for(8, you);
  seed(s, a);
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_CODE(claimdag_renew(s, a, you), CLAIMDAG_NOT_HOLDER);
  CHECK_MESSAGE("not the holder");
  CHECK_CODE(claimdag_complete_ex(s, a, "done", gen, you, NULL), CLAIMDAG_NOT_HOLDER);
  claimdag_close(s);
}

static void cycle(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33];
  seed(s, a);
  CHECK_OK(claimdag_upsert(s, "second", NULL, NULL, b));
  CHECK_OK(claimdag_link(s, a, b));
  CHECK_CODE(claimdag_link(s, b, a), CLAIMDAG_CYCLE);
  CHECK_MESSAGE("cycle");
  CHECK_CODE(claimdag_link_ex(s, a, a, true), CLAIMDAG_CYCLE);
  claimdag_close(s);
}

static void invalid_input(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], id[33] = "untouched", me[33];
  uint64_t gen = 0;
  actor_for(7, me);
  seed(s, a);
  CHECK_CODE(claimdag_upsert(s, "   ", NULL, NULL, id), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("summary");
  CHECK(strcmp(id, "untouched") == 0);
  CHECK_CODE(claimdag_upsert(s, "x", "Not A Kind", NULL, id), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim(s, a, "not-an-actor", &gen), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim(s, "abc", me, &gen), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete(s, a, "finished", 1), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("done, failed or cancelled");
  CHECK_CODE(claimdag_config_set(s, "colour", "blue"), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_config_set(s, "default_ttl", "soon"), CLAIMDAG_INVALID_INPUT);
  char *json = NULL;
  CHECK_CODE(claimdag_list_json_ex(s, NULL, "sleeping", NULL, false, &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_list_json_ex(s, "bad workspace!", NULL, NULL, false, &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK(json == NULL);
  /* now + ttl would overflow the clock. */
  CHECK_CODE(claimdag_claim_ex(s, a, me, 0, UINT64_MAX - 5, &gen), CLAIMDAG_INVALID_INPUT);
  claimdag_close(s);
}

static void corrupt(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], file[4300];
  char *json = NULL;
  seed(s, a);
  claimdag_close(s);
  snprintf(file, sizeof file, "%s/snapshot.json", path);
  FILE *f = fopen(file, "wb");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("garbage{{{", f);
    fclose(f);
  }
  s = open_store(path);
  CHECK_CODE(claimdag_list_json(s, &json), CLAIMDAG_CORRUPT);
  CHECK_MESSAGE("corrupt");
  CHECK_MESSAGE("snapshot.json");
  CHECK(json == NULL);
  CHECK_CODE(claimdag_check(s, &json), CLAIMDAG_CORRUPT);
  CHECK_CODE(claimdag_upsert(s, "more", NULL, NULL, a), CLAIMDAG_CORRUPT);
  claimdag_close(s);
}

static void io(const char *tmp, const char *path) {
  (void)path;
  char file[4300], id[33];
  char *json = NULL;
  snprintf(file, sizeof file, "%s/not-a-dir", tmp);
  FILE *f = fopen(file, "wb");
  CHECK(f != NULL);
  if (f != NULL) {
    fputs("plain file\n", f);
    fclose(f);
  }
  claimdag_store *s = open_store(file);
  CHECK_CODE(claimdag_upsert(s, "x", NULL, NULL, id), CLAIMDAG_IO);
  CHECK_MESSAGE(file);
  CHECK_CODE(claimdag_list_json(s, &json), CLAIMDAG_IO);
  claimdag_close(s);
}

static void internal(const char *tmp, const char *path) {
  (void)tmp;
  (void)path;
  CHECK_CODE(claimdag_testing_panic(), CLAIMDAG_INTERNAL);
  CHECK_MESSAGE("panicked");
  CHECK_MESSAGE("deliberate");
  /* The library keeps working after a caught panic. */
  claimdag_store *s = open_store(path);
  char a[33];
  CHECK_OK(claimdag_upsert(s, "after the panic", NULL, NULL, a));
  claimdag_close(s);
}

static void codes_and_messages(const char *tmp, const char *path) {
  (void)tmp;
  static const char *names[] = {"ok",
                                "not_found",
                                "already_claimed",
                                "assignee_busy",
                                "not_ready",
                                "attempts_exhausted",
                                "resource_conflict",
                                "not_claimed",
                                "terminal",
                                "stale_generation",
                                "not_holder",
                                "cycle",
                                "invalid_input",
                                "corrupt",
                                "io",
                                "internal"};
  CHECK(CLAIMDAG_OK == 0 && CLAIMDAG_NOT_FOUND == 1 && CLAIMDAG_ALREADY_CLAIMED == 2);
  CHECK(CLAIMDAG_ASSIGNEE_BUSY == 3 && CLAIMDAG_NOT_READY == 4);
  CHECK(CLAIMDAG_ATTEMPTS_EXHAUSTED == 5 && CLAIMDAG_RESOURCE_CONFLICT == 6);
  CHECK(CLAIMDAG_NOT_CLAIMED == 7 && CLAIMDAG_TERMINAL == 8);
  CHECK(CLAIMDAG_STALE_GENERATION == 9 && CLAIMDAG_NOT_HOLDER == 10 && CLAIMDAG_CYCLE == 11);
  CHECK(CLAIMDAG_INVALID_INPUT == 12 && CLAIMDAG_CORRUPT == 13 && CLAIMDAG_IO == 14);
  CHECK(CLAIMDAG_INTERNAL == 15);
  for (int i = 0; i <= 15; i++) {
    CHECK(strcmp(claimdag_code_str((claimdag_code)i), names[i]) == 0);
  }
  CHECK(strcmp(claimdag_code_str((claimdag_code)16), "unknown") == 0);
  CHECK(strcmp(claimdag_code_str((claimdag_code)-1), "unknown") == 0);
  CHECK(strcmp(claimdag_version(), "") != 0);

  /* A success clears the message; a failure sets it. */
  claimdag_store *s = open_store(path);
  char id[33];
  CHECK_CODE(claimdag_get_json(s, "deadbeef", NULL), CLAIMDAG_INVALID_INPUT);
  CHECK(strlen(claimdag_last_error()) > 0);
  CHECK(strstr(claimdag_last_error_json(), "\"code\":\"invalid_input\"") != NULL);
  CHECK_OK(claimdag_upsert(s, "fine", NULL, NULL, id));
  CHECK(claimdag_last_error() != NULL && strcmp(claimdag_last_error(), "") == 0);
  CHECK(claimdag_last_error_json() != NULL && strcmp(claimdag_last_error_json(), "") == 0);

  /* The generic door and actor names. */
  char *out = NULL;
  CHECK_CODE(claimdag_call_json(NULL, "list", NULL, &out), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_call_json(s, NULL, NULL, &out), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_call_json(s, "list", NULL, NULL), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_call_json(s, "fly", "{}", &out), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("unknown verb");
  CHECK_CODE(claimdag_call_json(s, "list", "{\"colour\": 1}", &out), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("colour");
  CHECK_CODE(claimdag_call_json(s, "list", "{not json", &out), CLAIMDAG_INVALID_INPUT);
  CHECK(out == NULL);
  CHECK_OK(claimdag_call_json(s, "claim_next", "{\"assignee\": \"name:w1\"}", &out));
  CHECK(out != NULL && strstr(out, "\"generation\":2") != NULL);
  claimdag_string_free(out);
  out = NULL;
  CHECK_OK(claimdag_upsert(s, "another", NULL, NULL, id));
  CHECK_CODE(claimdag_call_json(s, "claim_next", "{\"assignee\": \"name:w1\"}", &out),
             CLAIMDAG_ASSIGNEE_BUSY);
  CHECK(out == NULL);
  CHECK(strstr(claimdag_last_error_json(), "\"held\":[") != NULL);
  char named[33];
  CHECK_OK(claimdag_actor("w1", named));
  CHECK(strlen(named) == 32);
  CHECK_CODE(claimdag_actor("no spaces", named), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_actor(NULL, named), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_actor("w1", NULL), CLAIMDAG_INVALID_INPUT);
  claimdag_close(s);
  claimdag_close(NULL);
  claimdag_string_free(NULL);
}

static void invalid_utf8(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], id[33] = "untouched", me[33];
  uint64_t gen = 0;
  char *json = NULL;
  const char bad[] = {'b', 'a', 'd', (char)0xff, (char)0xfe, '\0'};
  actor_for(7, me);
  seed(s, a);
  CHECK_CODE(claimdag_upsert(s, bad, NULL, NULL, id), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("UTF-8");
  CHECK_MESSAGE("summary");
  CHECK(strcmp(id, "untouched") == 0);
  CHECK_CODE(claimdag_upsert(s, "ok", bad, NULL, id), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim(s, a, bad, &gen), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_ex(s, a, "cancelled", 1, NULL, bad), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_get_json(s, bad, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_config_set(s, "max_held", bad), CLAIMDAG_INVALID_INPUT);
  claimdag_store *other = NULL;
  CHECK_CODE(claimdag_open(bad, &other), CLAIMDAG_INVALID_INPUT);
  CHECK(other == NULL);
  const char *labels[] = {"fine", bad};
  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  o.labels = labels;
  o.labels_len = 2;
  CHECK_CODE(claimdag_upsert_ex(s, "labelled", &o, id), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("options.labels[1]");
  CHECK_CODE(claimdag_import_json(s, NULL, bad, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("plan_json");
  CHECK_CODE(claimdag_import_json(s, bad, "{\"nodes\": []}", &json), CLAIMDAG_INVALID_INPUT);
  const char *bad_ids[] = {bad};
  size_t count = 99;
  CHECK_CODE(claimdag_archive(s, NULL, bad_ids, 1, 0, &count), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("ids[0]");
  CHECK(count == 99);
  CHECK_CODE(claimdag_unarchive(s, bad, NULL), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_graph(s, NULL, bad, false, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("format");
  claimdag_list_options lo;
  memset(&lo, 0, sizeof lo);
  lo.status = bad;
  CHECK_CODE(claimdag_list_json_opts(s, &lo, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("options.status");
  CHECK(json == NULL);
  /* The node was not cancelled by the refused complete, nor anything created. */
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(count_of(json, "\"id\":") == 1);
  CHECK(count_of(json, "\"status\":\"todo\"") == 1);
  claimdag_string_free(json);
  claimdag_close(s);
}

/* A NULL where a value is required is CLAIMDAG_INVALID_INPUT naming the argument, for
 * every pointer parameter, and a refused call changed nothing. */
#define NULL_ARG(call, name)                                                           \
  do {                                                                                 \
    CHECK_CODE(call, CLAIMDAG_INVALID_INPUT);                                          \
    CHECK_MESSAGE("`" name "` is NULL");                                               \
  } while (0)

static void null_arguments(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], id[33], me[33];
  uint64_t gen = 0;
  size_t count = 0;
  char *json = NULL;
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_upsert(s, "second", NULL, NULL, b));

  NULL_ARG(claimdag_open(path, NULL), "out");

  NULL_ARG(claimdag_resolve(NULL, a, id), "store");
  NULL_ARG(claimdag_resolve(s, NULL, id), "text");
  NULL_ARG(claimdag_resolve(s, a, NULL), "out_id");

  NULL_ARG(claimdag_upsert(NULL, "x", NULL, NULL, id), "store");
  NULL_ARG(claimdag_upsert(s, NULL, NULL, NULL, id), "summary");
  NULL_ARG(claimdag_upsert(s, "not created", NULL, NULL, NULL), "out_id");

  claimdag_upsert_options o;
  memset(&o, 0, sizeof o);
  NULL_ARG(claimdag_upsert_ex(NULL, "x", &o, id), "store");
  NULL_ARG(claimdag_upsert_ex(s, NULL, &o, id), "summary");
  NULL_ARG(claimdag_upsert_ex(s, "not created", &o, NULL), "out_id");
  o.labels_len = 1;
  NULL_ARG(claimdag_upsert_ex(s, "not created", &o, id), "options.labels");
  o.labels_len = 0;
  o.resources_len = 1;
  NULL_ARG(claimdag_upsert_ex(s, "not created", &o, id), "options.resources");
  const char *holes[] = {NULL};
  o.resources = holes;
  NULL_ARG(claimdag_upsert_ex(s, "not created", &o, id), "options.resources[0]");

  NULL_ARG(claimdag_link(NULL, a, b), "store");
  NULL_ARG(claimdag_link(s, NULL, b), "parent");
  NULL_ARG(claimdag_link(s, a, NULL), "child");
  NULL_ARG(claimdag_link_ex(NULL, a, b, true), "store");
  NULL_ARG(claimdag_link_ex(s, NULL, b, true), "parent");
  NULL_ARG(claimdag_link_ex(s, a, NULL, true), "child");
  NULL_ARG(claimdag_unlink(NULL, a, b), "store");
  NULL_ARG(claimdag_unlink(s, NULL, b), "parent");
  NULL_ARG(claimdag_unlink(s, a, NULL), "child");

  NULL_ARG(claimdag_claim(NULL, a, me, &gen), "store");
  NULL_ARG(claimdag_claim(s, NULL, me, &gen), "id");
  NULL_ARG(claimdag_claim(s, a, NULL, &gen), "assignee");
  NULL_ARG(claimdag_claim(s, a, me, NULL), "out_generation");
  NULL_ARG(claimdag_claim_ex(NULL, a, me, 0, 0, &gen), "store");
  NULL_ARG(claimdag_claim_ex(s, NULL, me, 0, 0, &gen), "id");
  NULL_ARG(claimdag_claim_ex(s, a, NULL, 0, 0, &gen), "assignee");
  NULL_ARG(claimdag_claim_ex(s, a, me, 0, 0, NULL), "out_generation");

  NULL_ARG(claimdag_claim_next(NULL, me, id, &gen), "store");
  NULL_ARG(claimdag_claim_next(s, NULL, id, &gen), "assignee");
  NULL_ARG(claimdag_claim_next(s, me, NULL, &gen), "out_id");
  NULL_ARG(claimdag_claim_next(s, me, id, NULL), "out_generation");
  NULL_ARG(claimdag_claim_next_ex(NULL, me, NULL, NULL, 0, id, &gen), "store");
  NULL_ARG(claimdag_claim_next_ex(s, NULL, NULL, NULL, 0, id, &gen), "assignee");
  NULL_ARG(claimdag_claim_next_ex(s, me, NULL, NULL, 0, NULL, &gen), "out_id");
  NULL_ARG(claimdag_claim_next_ex(s, me, NULL, NULL, 0, id, NULL), "out_generation");

  /* None of the refused claims above took effect. */
  CHECK_OK(claimdag_list_json(s, &json));
  CHECK(count_of(json, "\"id\":") == 2);
  CHECK(count_of(json, "\"status\":\"todo\"") == 2);
  CHECK(count_of(json, "\"generation\":1,") == 2);
  claimdag_string_free(json);
  json = NULL;

  CHECK_OK(claimdag_claim(s, a, me, &gen));
  NULL_ARG(claimdag_renew(NULL, a, me), "store");
  NULL_ARG(claimdag_renew(s, NULL, me), "id");
  NULL_ARG(claimdag_renew(s, a, NULL), "actor");
  NULL_ARG(claimdag_renew_ex(NULL, a, me, gen, 0), "store");
  NULL_ARG(claimdag_renew_ex(s, NULL, me, gen, 0), "id");
  NULL_ARG(claimdag_renew_ex(s, a, NULL, gen, 0), "actor");
  NULL_ARG(claimdag_release(NULL, a, me, gen, &gen), "store");
  NULL_ARG(claimdag_release(s, NULL, me, gen, &gen), "id");
  NULL_ARG(claimdag_release(s, a, NULL, gen, &gen), "actor");
  NULL_ARG(claimdag_release(s, a, me, gen, NULL), "out_generation");
  NULL_ARG(claimdag_reclaim(NULL, 0, &count), "store");
  NULL_ARG(claimdag_reclaim(s, 0, NULL), "out_count");
  NULL_ARG(claimdag_reclaim_json(NULL, NULL, 0, &json), "store");
  NULL_ARG(claimdag_reclaim_json(s, NULL, 0, NULL), "out_json");
  /* The claim is still there: neither release nor reclaim went through. */
  CHECK_CODE(claimdag_claim(s, a, me, &gen), CLAIMDAG_ALREADY_CLAIMED);

  NULL_ARG(claimdag_complete(NULL, a, "done", gen), "store");
  NULL_ARG(claimdag_complete(s, NULL, "done", gen), "id");
  NULL_ARG(claimdag_complete(s, a, NULL, gen), "status");
  NULL_ARG(claimdag_complete_ex(NULL, a, "done", gen, NULL, NULL), "store");
  NULL_ARG(claimdag_complete_ex(s, NULL, "done", gen, NULL, NULL), "id");
  NULL_ARG(claimdag_complete_ex(s, a, NULL, gen, NULL, NULL), "status");
  CHECK_OK(claimdag_complete(s, a, "done", gen));
  NULL_ARG(claimdag_reopen(NULL, a, 0, &gen), "store");
  NULL_ARG(claimdag_reopen(s, NULL, 0, &gen), "id");
  NULL_ARG(claimdag_reopen(s, a, 0, NULL), "out_generation");

  NULL_ARG(claimdag_get_json(NULL, a, &json), "store");
  NULL_ARG(claimdag_get_json(s, NULL, &json), "id");
  NULL_ARG(claimdag_get_json(s, a, NULL), "out_json");
  NULL_ARG(claimdag_list_json(NULL, &json), "store");
  NULL_ARG(claimdag_list_json(s, NULL), "out_json");
  NULL_ARG(claimdag_list_json_ex(NULL, NULL, NULL, NULL, true, &json), "store");
  NULL_ARG(claimdag_list_json_ex(s, NULL, NULL, NULL, true, NULL), "out_json");
  NULL_ARG(claimdag_next(NULL, NULL, NULL, id), "store");
  NULL_ARG(claimdag_next(s, NULL, NULL, NULL), "out_id");
  NULL_ARG(claimdag_ready_json(NULL, NULL, NULL, &json), "store");
  NULL_ARG(claimdag_ready_json(s, NULL, NULL, NULL), "out_json");
  NULL_ARG(claimdag_log_json(NULL, NULL, &json), "store");
  NULL_ARG(claimdag_log_json(s, NULL, NULL), "out_json");
  NULL_ARG(claimdag_config_get(NULL, "max_held", &json), "store");
  NULL_ARG(claimdag_config_get(s, NULL, &json), "key");
  NULL_ARG(claimdag_config_get(s, "max_held", NULL), "out_value");
  NULL_ARG(claimdag_config_set(NULL, "max_held", "3"), "store");
  NULL_ARG(claimdag_config_set(s, NULL, "3"), "key");
  NULL_ARG(claimdag_config_set(s, "max_held", NULL), "value");
  NULL_ARG(claimdag_config_json(NULL, &json), "store");
  NULL_ARG(claimdag_config_json(s, NULL), "out_json");
  NULL_ARG(claimdag_check(NULL, &json), "store");
  NULL_ARG(claimdag_check(s, NULL), "out_json");
  CHECK(json == NULL);

  /* Still done, settings unchanged. */
  CHECK_OK(claimdag_get_json(s, a, &json));
  CHECK(count_of(json, "\"status\":\"done\"") == 1);
  claimdag_string_free(json);
  CHECK_OK(claimdag_config_get(s, "max_held", &json));
  CHECK(strcmp(json, "1") == 0);
  claimdag_string_free(json);
  claimdag_close(s);
}

/* The same for the plan, archive, list-options and graph functions; their optional
 * pointers (workspace, format, options, out_status, ids when n_ids is 0) accept NULL. */
static void null_arguments_plans_and_archive(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], me[33];
  char *json = NULL;
  size_t count = 99;
  uint64_t gen = 0;
  const char *plan = "{\"nodes\": [{\"key\": \"k\", \"summary\": \"planned\"}]}";
  actor_for(7, me);
  seed(s, a);
  CHECK_OK(claimdag_claim(s, a, me, &gen));
  CHECK_OK(claimdag_complete(s, a, "done", gen));

  NULL_ARG(claimdag_import_json(NULL, NULL, plan, &json), "store");
  NULL_ARG(claimdag_import_json(s, NULL, NULL, &json), "plan_json");
  NULL_ARG(claimdag_import_json(s, NULL, plan, NULL), "out_json");
  CHECK(json == NULL);

  const char *ids[] = {a};
  const char *holes[] = {a, NULL};
  NULL_ARG(claimdag_archive(NULL, NULL, ids, 1, CLAIMDAG_NO_OLDER_THAN, &count), "store");
  NULL_ARG(claimdag_archive(s, NULL, NULL, 1, CLAIMDAG_NO_OLDER_THAN, &count), "ids");
  NULL_ARG(claimdag_archive(s, NULL, holes, 2, CLAIMDAG_NO_OLDER_THAN, &count), "ids[1]");
  NULL_ARG(claimdag_archive(s, NULL, ids, 1, CLAIMDAG_NO_OLDER_THAN, NULL), "out_count");
  NULL_ARG(claimdag_archive(s, NULL, NULL, 0, 0, NULL), "out_count");
  CHECK(count == 99);

  /* Nothing was imported or archived by the refused calls. */
  CHECK_OK(claimdag_list_json_ex(s, NULL, NULL, NULL, true, &json));
  CHECK(count_of(json, "\"id\":") == 1 && strstr(json, a) != NULL);
  claimdag_string_free(json);
  json = NULL;

  NULL_ARG(claimdag_list_json_opts(NULL, NULL, &json), "store");
  NULL_ARG(claimdag_list_json_opts(s, NULL, NULL), "out_json");
  NULL_ARG(claimdag_graph(NULL, NULL, NULL, false, &json), "store");
  NULL_ARG(claimdag_graph(s, NULL, NULL, false, NULL), "out_text");
  CHECK(json == NULL);

  /* The optional ones: NULL workspace, NULL ids with n_ids 0, NULL options, NULL format,
   * NULL out_status. */
  CHECK_OK(claimdag_archive(s, NULL, NULL, 0, CLAIMDAG_NO_OLDER_THAN, &count));
  CHECK(count == 1);
  NULL_ARG(claimdag_unarchive(NULL, a, NULL), "store");
  NULL_ARG(claimdag_unarchive(s, NULL, NULL), "id");
  CHECK_OK(claimdag_list_json_opts(s, NULL, &json));
  CHECK(json != NULL && strcmp(json, "[]") == 0);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_unarchive(s, a, NULL));
  CHECK_OK(claimdag_graph(s, NULL, NULL, true, &json));
  CHECK(json != NULL && strstr(json, "digraph") != NULL);
  claimdag_string_free(json);
  json = NULL;
  CHECK_OK(claimdag_import_json(s, NULL, plan, &json));
  CHECK(json != NULL && count_of(json, "\"key\":\"k\"") == 1);
  claimdag_string_free(json);
  claimdag_close(s);
}

int main(void) {
  run_test("not_found", not_found);
  run_test("already_claimed", already_claimed);
  run_test("assignee_busy", assignee_busy);
  run_test("not_ready", not_ready);
  run_test("attempts_exhausted", attempts_exhausted);
  run_test("resource_conflict", resource_conflict);
  run_test("not_claimed", not_claimed);
  run_test("terminal", terminal);
  run_test("stale_generation", stale_generation);
  run_test("not_holder", not_holder);
  run_test("cycle", cycle);
  run_test("invalid_input", invalid_input);
  run_test("corrupt", corrupt);
  run_test("io", io);
  run_test("internal", internal);
  run_test("code names and last error", codes_and_messages);
  run_test("invalid UTF-8 refused", invalid_utf8);
  run_test("NULL for every pointer parameter", null_arguments);
  run_test("NULL for the plan, archive, list and graph parameters",
           null_arguments_plans_and_archive);
  return finish();
}
