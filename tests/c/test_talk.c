/* The holder and the rest talking through the C ABI: claimdag_claim_json and
 * claimdag_claim_next_json answer the grant (the last checkpoint, the outputs of the
 * prerequisites), claimdag_renew_progress and claimdag_renew_json leave a checkpoint and
 * learn of a cancel request, claimdag_cancel, claimdag_complete_output and
 * claimdag_complete_many_json (all or nothing), and claimdag_claim_next_many_json claims a
 * batch. Every refusal leaves the out-params as
 * they were and changes nothing. */
#define _XOPEN_SOURCE 700

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A value no call writes: out-params must still hold it after a refusal. */
static char untouched_text[] = "untouched";
#define UNTOUCHED (untouched_text)

/* Everything the store holds (every node, archived and finished ones too, and the
 * history), as one string to compare before and after a refused call. */
static char *everything(claimdag_store *s) {
  claimdag_list_options o;
  memset(&o, 0, sizeof o);
  o.terminal = true;
  o.archived = true;
  char *nodes = NULL, *log = NULL;
  CHECK_OK(claimdag_list_json_opts(s, &o, &nodes));
  CHECK_OK(claimdag_log_json(s, NULL, &log));
  if (nodes == NULL || log == NULL) {
    claimdag_string_free(nodes);
    claimdag_string_free(log);
    return NULL;
  }
  size_t n = strlen(nodes) + strlen(log) + 2;
  char *all = malloc(n);
  if (all != NULL) snprintf(all, n, "%s\n%s", nodes, log);
  claimdag_string_free(nodes);
  claimdag_string_free(log);
  return all;
}

/* `s` holds what `before` says, and frees `before`. */
static void unchanged(claimdag_store *s, char *before) {
  char *now = everything(s);
  CHECK(before != NULL && now != NULL && strcmp(before, now) == 0);
  free(before);
  free(now);
}

/* A string of `n` copies of `c`. */
static char *repeat(char c, size_t n) {
  char *text = malloc(n + 1);
  if (text == NULL) abort();
  memset(text, c, n);
  text[n] = '\0';
  return text;
}

/* A holder leaves a checkpoint and stalls; the next holder's grant carries it. */
static void a_checkpoint_reaches_the_next_holder(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], you[33], id[33], field[128];
  char *json = NULL;
  uint64_t gen = 0;
  bool asked = true;
  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "migrate the orders table", NULL, NULL, id));
  CHECK_OK(claimdag_claim_json(s, id, me, 0, 200, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "generation", field, sizeof field) == 0);
    gen = strtoull(field, NULL, 10);
    CHECK(gen == 2);
    CHECK(strstr(json, "\"progress\":null") != NULL);
    CHECK(strstr(json, "\"inputs\":{}") != NULL);
    claimdag_string_free(json);
  }
  CHECK_OK(claimdag_renew_progress(s, id, me, gen, 200, "copied 4 of 9 chunks", &asked));
  CHECK(asked == false);
  /* NULL: the answer is not wanted. */
  CHECK_OK(claimdag_renew_progress(s, id, me, gen, 200, NULL, NULL));
  /* The holder stalls: its lease runs out. */
  sleep_ms(500);
  json = NULL;
  CHECK_OK(claimdag_claim_next_json(s, you, NULL, NULL, 0, 0, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "id", field, sizeof field) == 0 && strcmp(field, id) == 0);
    CHECK(json_field(json, NULL, "generation", field, sizeof field) == 0 &&
          strtoull(field, NULL, 10) > gen);
    CHECK(json_field(json, NULL, "progress", field, sizeof field) == 0 &&
          strcmp(field, "copied 4 of 9 chunks") == 0);
    CHECK(json_field(json, NULL, "progress_at", field, sizeof field) == 0 &&
          strcmp(field, "null") != 0);
    claimdag_string_free(json);
  }
  /* The stalled holder is fenced off, checkpoint and all. */
  char *before = everything(s);
  asked = true;
  CHECK_CODE(claimdag_renew_progress(s, id, me, gen, 0, "copied 5", &asked),
             CLAIMDAG_STALE_GENERATION);
  CHECK(asked == true);
  unchanged(s, before);
  /* Nothing else is ready: NOT_FOUND, nothing written. */
  json = UNTOUCHED;
  CHECK_CODE(claimdag_claim_next_json(s, me, NULL, NULL, 0, 0, &json), CLAIMDAG_NOT_FOUND);
  CHECK(json == UNTOUCHED);
  CHECK_CODE(claimdag_claim_json(s, id, me, 0, 0, &json), CLAIMDAG_ALREADY_CLAIMED);
  CHECK(json == UNTOUCHED);
  claimdag_close(s);
}

/* A cancel request reaches the holder at its renewal; a todo node is cancelled at once. */
static void a_cancel_request_reaches_the_holder(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], you[33], id[33], todo[33], field[128];
  char *json = NULL;
  uint64_t gen = 0;
  bool flag = false;
  actor_for(7, me);
  actor_for(8, you);
  CHECK_OK(claimdag_upsert(s, "render the report", NULL, NULL, id));
  CHECK_OK(claimdag_claim(s, id, me, &gen));
  CHECK_OK(claimdag_renew_progress(s, id, me, gen, 0, NULL, &flag));
  CHECK(flag == false);
  CHECK_OK(claimdag_renew_json(s, id, me, gen, 0, NULL, &json));
  if (json != NULL) {
    CHECK(strstr(json, "\"cancel_requested\":null") != NULL);
    claimdag_string_free(json);
  }
  /* A stale generation is refused; nothing changes. */
  char *before = everything(s);
  flag = false;
  CHECK_CODE(claimdag_cancel(s, id, you, "too late", gen + 1, &flag),
             CLAIMDAG_STALE_GENERATION);
  CHECK(flag == false);
  unchanged(s, before);
  CHECK_OK(claimdag_cancel(s, id, you, "the customer withdrew", gen, &flag));
  CHECK(flag == true);
  flag = false;
  CHECK_OK(claimdag_renew_progress(s, id, me, gen, 0, "stopping", &flag));
  CHECK(flag == true);
  json = NULL;
  CHECK_OK(claimdag_renew_json(s, id, me, gen, 0, NULL, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "reason", field, sizeof field) == 0 &&
          strcmp(field, "the customer withdrew") == 0);
    CHECK(json_field(json, NULL, "by", field, sizeof field) == 0 && strcmp(field, you) == 0);
    CHECK(json_field(json, NULL, "at", field, sizeof field) == 0 && strtoull(field, NULL, 10) > 0);
    claimdag_string_free(json);
  }
  CHECK_OK(claimdag_complete_output(s, id, "cancelled", gen, me, "stopped", NULL));
  json = NULL;
  CHECK_OK(claimdag_get_json(s, id, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "status", field, sizeof field) == 0 &&
          strcmp(field, "cancelled") == 0);
    CHECK(json_field(json, NULL, "progress", field, sizeof field) == 0 &&
          strcmp(field, "stopping") == 0);
    CHECK(json_field(json, NULL, "cancel_requested", field, sizeof field) != 0 ||
          strcmp(field, "null") == 0);
    claimdag_string_free(json);
  }
  /* A finished node: TERMINAL, the out-param untouched. */
  flag = true;
  CHECK_CODE(claimdag_cancel(s, id, NULL, NULL, 0, &flag), CLAIMDAG_TERMINAL);
  CHECK(flag == true);
  /* A todo node is cancelled at once, by nobody in particular. */
  CHECK_OK(claimdag_upsert(s, "send the newsletter", NULL, NULL, todo));
  flag = true;
  CHECK_OK(claimdag_cancel(s, todo, NULL, NULL, 0, &flag));
  CHECK(flag == false);
  json = NULL;
  CHECK_OK(claimdag_get_json(s, todo, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "status", field, sizeof field) == 0 &&
          strcmp(field, "cancelled") == 0);
    claimdag_string_free(json);
  }
  /* Refusals of arguments, the out-param untouched. */
  flag = true;
  CHECK_CODE(claimdag_cancel(NULL, id, NULL, NULL, 0, &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_cancel(s, NULL, NULL, NULL, 0, &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("id");
  CHECK_CODE(claimdag_cancel(s, "ffffffffffffffffffffffffffffffff", NULL, NULL, 0, &flag),
             CLAIMDAG_NOT_FOUND);
  CHECK(flag == true);
  claimdag_close(s);
}

/* Outputs flow to the dependents' grants, archived prerequisites included. */
static void outputs_flow_to_dependents(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], a[33], b[33], c[33], field[128], pat[128];
  char *json = NULL;
  uint64_t ga = 0, gb = 0;
  size_t archived = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "extract", NULL, NULL, a));
  CHECK_OK(claimdag_upsert(s, "count", NULL, NULL, b));
  CHECK_OK(claimdag_upsert(s, "publish", NULL, NULL, c));
  CHECK_OK(claimdag_link(s, a, c));
  CHECK_OK(claimdag_link(s, b, c));
  CHECK_OK(claimdag_claim(s, a, me, &ga));
  CHECK_OK(claimdag_complete_output(s, a, "done", ga, NULL, NULL,
                                    "{ \"rows\": 3, \"files\": [\"x.csv\"] }"));
  CHECK_OK(claimdag_claim(s, b, me, &gb));
  CHECK_OK(claimdag_complete_output(s, b, "done", gb, me, NULL, NULL));
  CHECK_OK(claimdag_get_json(s, a, &json));
  if (json != NULL) {
    CHECK(strstr(json, "\"output\":{\"rows\":3,\"files\":[\"x.csv\"]}") != NULL);
    claimdag_string_free(json);
  }
  const char *ids[1] = {a};
  CHECK_OK(claimdag_archive(s, NULL, ids, 1, CLAIMDAG_NO_OLDER_THAN, &archived));
  CHECK(archived == 1);
  json = NULL;
  CHECK_OK(claimdag_claim_next_json(s, me, NULL, NULL, 0, 0, &json));
  if (json != NULL) {
    CHECK(json_field(json, NULL, "id", field, sizeof field) == 0 && strcmp(field, c) == 0);
    snprintf(pat, sizeof pat, "\"%s\":{\"rows\":3,\"files\":[\"x.csv\"]}", a);
    CHECK(strstr(json, pat) != NULL);
    snprintf(pat, sizeof pat, "\"%s\":null", b);
    CHECK(strstr(json, pat) != NULL);
    claimdag_string_free(json);
  }
  claimdag_close(s);
}

/* complete_many: all or nothing. */
static void complete_many_is_all_or_nothing(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], ids[10][33], summary[32];
  uint64_t gens[10];
  char req[4096];
  char *out = UNTOUCHED;
  actor_for(7, me);
  CHECK_OK(claimdag_config_set(s, "max_held", "0"));
  for (int i = 0; i < 10; i++) {
    snprintf(summary, sizeof summary, "shard %d", i);
    CHECK_OK(claimdag_upsert(s, summary, NULL, NULL, ids[i]));
    CHECK_OK(claimdag_claim(s, ids[i], me, &gens[i]));
  }
  /* One stale generation among ten: refused, nothing changes. */
  size_t len = 0;
  len += (size_t)snprintf(req + len, sizeof req - len, "[");
  for (int i = 0; i < 10; i++) {
    len += (size_t)snprintf(req + len, sizeof req - len,
                            "%s{\"node\":\"%s\",\"status\":\"done\",\"gen\":%llu,"
                            "\"output\":{\"shard\":%d}}",
                            i ? "," : "", ids[i],
                            (unsigned long long)(i == 6 ? gens[i] - 1 : gens[i]), i);
  }
  snprintf(req + len, sizeof req - len, "]");
  char *before = everything(s);
  CHECK_CODE(claimdag_complete_many_json(s, req, &out), CLAIMDAG_STALE_GENERATION);
  CHECK_MESSAGE(ids[6]);
  CHECK(out == UNTOUCHED);
  unchanged(s, before);
  /* Not JSON, a bad status, NULLs: refused, nothing changes. */
  before = everything(s);
  CHECK_CODE(claimdag_complete_many_json(s, "[{\"node\":", &out), CLAIMDAG_INVALID_INPUT);
  snprintf(req, sizeof req, "{\"completions\":[{\"node\":\"%s\",\"status\":\"finished\",\"gen\":%llu}]}",
           ids[0], (unsigned long long)gens[0]);
  CHECK_CODE(claimdag_complete_many_json(s, req, &out), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_many_json(s, NULL, &out), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_many_json(NULL, "[]", &out), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_many_json(s, "[]", NULL), CLAIMDAG_INVALID_INPUT);
  CHECK(out == UNTOUCHED);
  unchanged(s, before);
  /* All ten at once. */
  len = 0;
  len += (size_t)snprintf(req + len, sizeof req - len, "{\"completions\":[");
  for (int i = 0; i < 10; i++) {
    len += (size_t)snprintf(req + len, sizeof req - len,
                            "%s{\"node\":\"%s\",\"status\":\"%s\",\"gen\":%llu,\"actor\":\"%s\"}",
                            i ? "," : "", ids[i], i == 9 ? "failed" : "done",
                            (unsigned long long)gens[i], me);
  }
  snprintf(req + len, sizeof req - len, "]}");
  CHECK_OK(claimdag_complete_many_json(s, req, &out));
  CHECK(out != UNTOUCHED);
  if (out != UNTOUCHED && out != NULL) {
    CHECK(out[0] == '[');
    CHECK(count_of(out, "\"status\":\"done\"") == 9);
    CHECK(count_of(out, "\"status\":\"failed\"") == 1);
    CHECK(strstr(out, ids[0]) < strstr(out, ids[9]));
    claimdag_string_free(out);
  }
  char *json = NULL;
  CHECK_OK(claimdag_list_json(s, &json));
  if (json != NULL) {
    CHECK(strcmp(json, "[]") == 0);
    claimdag_string_free(json);
  }
  claimdag_close(s);
}

/* Bad arguments and the 64 KiB limits: refused, out-params untouched, nothing changes. */
static void refusals_change_nothing(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], id[33];
  uint64_t gen = 0;
  bool flag = true;
  char *json = UNTOUCHED;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "long notes", NULL, NULL, id));
  CHECK_OK(claimdag_claim(s, id, me, &gen));
  char *exact = repeat('p', 65536);
  CHECK_OK(claimdag_renew_progress(s, id, me, gen, 0, exact, &flag));
  CHECK(flag == false);
  free(exact);
  char *before = everything(s);
  char *big = repeat('q', 65537);
  flag = true;
  CHECK_CODE(claimdag_renew_progress(s, id, me, gen, 0, big, &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_renew_json(s, id, me, gen, 0, big, &json), CLAIMDAG_INVALID_INPUT);
  /* An output of more than 64 KiB: a JSON string of 65537 characters. */
  big[0] = '"';
  big[65536] = '"';
  CHECK_CODE(claimdag_complete_output(s, id, "done", gen, NULL, NULL, big),
             CLAIMDAG_INVALID_INPUT);
  free(big);
  CHECK_CODE(claimdag_complete_output(s, id, "done", gen, NULL, NULL, "{not json"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("JSON");
  CHECK_CODE(claimdag_complete_output(s, id, "done", gen, NULL, NULL, "[1] trailing"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_output(s, id, "finished", gen, NULL, NULL, "1"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_output(s, id, "done", gen + 1, NULL, NULL, "1"),
             CLAIMDAG_STALE_GENERATION);
  /* NULL where a value is required. */
  CHECK_CODE(claimdag_renew_progress(NULL, id, me, gen, 0, "x", &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_renew_progress(s, NULL, me, gen, 0, "x", &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_renew_progress(s, id, NULL, gen, 0, "x", &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_renew_json(s, id, me, gen, 0, "x", NULL), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_renew_json(s, id, NULL, gen, 0, "x", &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_output(s, NULL, "done", gen, NULL, NULL, "1"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_output(s, id, NULL, gen, NULL, NULL, "1"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_complete_output(NULL, id, "done", gen, NULL, NULL, "1"),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_json(s, id, me, 0, 0, NULL), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_json(s, NULL, me, 0, 0, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_json(s, id, NULL, 0, 0, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_next_json(s, NULL, NULL, NULL, 0, 0, &json), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_next_json(s, me, NULL, NULL, 0, 0, NULL), CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_next_json(NULL, me, NULL, NULL, 0, 0, &json), CLAIMDAG_INVALID_INPUT);
  /* Not UTF-8. */
  CHECK_CODE(claimdag_renew_progress(s, id, me, gen, 0, "\xff\xfe", &flag), CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("UTF-8");
  CHECK(flag == true && json == UNTOUCHED);
  unchanged(s, before);
  /* The limit is on the output as stored: exactly 64 KiB compacted is fine. */
  char *fits = repeat('o', 65536);
  fits[0] = '"';
  fits[65535] = '"';
  CHECK_OK(claimdag_complete_output(s, id, "done", gen, me, NULL, fits));
  free(fits);
  claimdag_close(s);
}

/* claimdag_claim_next_many_json claims a batch in one write, in pick order, within
 * max_held; nothing ready is NOT_FOUND and writes nothing. */
static void a_batch_of_claims_in_one_write(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char me[33], ids[4][33], summary[32];
  char *json = UNTOUCHED;
  actor_for(11, me);
  CHECK_OK(claimdag_config_set(s, "max_held", "3"));
  for (int i = 0; i < 4; i++) {
    snprintf(summary, sizeof summary, "batch page %d", i);
    CHECK_OK(claimdag_upsert(s, summary, NULL, NULL, ids[i]));
  }
  CHECK_CODE(claimdag_claim_next_many_json(s, me, NULL, NULL, 0, 0, 0, &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK_MESSAGE("count");
  CHECK(json == UNTOUCHED);
  CHECK_OK(claimdag_claim_next_many_json(s, me, NULL, NULL, 0, 0, 10, &json));
  /* A list of three grants (max_held), the oldest nodes first at equal paths. */
  CHECK(json != UNTOUCHED && json[0] == '[');
  for (int i = 0; i < 3; i++) CHECK(strstr(json, ids[i]) != NULL);
  CHECK(strstr(json, ids[3]) == NULL);
  CHECK(strstr(json, "\"generation\":2") != NULL);
  claimdag_string_free(json);
  json = UNTOUCHED;
  CHECK_CODE(claimdag_claim_next_many_json(s, me, NULL, NULL, 0, 0, 2, &json),
             CLAIMDAG_ASSIGNEE_BUSY);
  char other[33];
  actor_for(12, other);
  CHECK_OK(claimdag_claim_next_many_json(s, other, NULL, NULL, 0, 0, 2, &json));
  CHECK(strstr(json, ids[3]) != NULL);
  claimdag_string_free(json);
  json = UNTOUCHED;
  CHECK_CODE(claimdag_claim_next_many_json(s, other, NULL, NULL, 0, 0, 2, &json),
             CLAIMDAG_NOT_FOUND);
  CHECK(json == UNTOUCHED);
  CHECK_CODE(claimdag_claim_next_many_json(s, NULL, NULL, NULL, 0, 0, 2, &json),
             CLAIMDAG_INVALID_INPUT);
  CHECK_CODE(claimdag_claim_next_many_json(s, me, NULL, NULL, 0, 0, 2, NULL),
             CLAIMDAG_INVALID_INPUT);
  claimdag_close(s);
}

/* `claimdag_call_json(s, verb, args)`, which must succeed; its reply (free it). */
static char *call(claimdag_store *s, const char *verb, const char *args) {
  char *out = NULL;
  CHECK_OK(claimdag_call_json(s, verb, args, &out));
  return out;
}

/* What people decide, through the one door to every verb: an epic follows its child, a
 * gate is approved at its generation (a stale one refused, nothing changed), a deadline
 * already past shows overdue, and the renewal that spends past the budget answers the
 * request to stop. */
static void people_and_budgets_decide(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char epic[33], child[33], gate[33], args[512];
  char *out = call(s, "upsert", "{\"summary\": \"release\", \"kind\": \"epic\"}");
  CHECK(out != NULL && sscanf(out, "{\"id\":\"%32[0-9a-f]\"}", epic) == 1);
  claimdag_string_free(out);
  snprintf(args, sizeof args,
           "{\"summary\": \"notes\", \"parent\": \"%s\", \"budget\": \"tokens=100\", "
           "\"deadline\": \"2020-01-01T00:00:00Z\"}",
           epic);
  out = call(s, "upsert", args);
  CHECK(out != NULL && sscanf(out, "{\"id\":\"%32[0-9a-f]\"}", child) == 1);
  claimdag_string_free(out);
  char *shown = NULL;
  CHECK_OK(claimdag_get_json(s, child, &shown));
  CHECK(shown != NULL && strstr(shown, "\"overdue\":true") != NULL);
  CHECK(strstr(shown, "\"budget\":{\"tokens\":100}") != NULL);
  claimdag_string_free(shown);
  uint64_t gen = 0;
  CHECK_CODE(claimdag_claim(s, epic, "name:w", &gen), CLAIMDAG_NOT_READY);
  CHECK_OK(claimdag_claim(s, child, "name:w", &gen));
  snprintf(args, sizeof args,
           "{\"node\": \"%s\", \"actor\": \"name:w\", \"gen\": %llu, "
           "\"usage\": \"tokens=150\"}",
           child, (unsigned long long)gen);
  out = call(s, "renew", args);
  CHECK(out != NULL && strstr(out, "over budget: tokens 150 of 100") != NULL);
  claimdag_string_free(out);
  CHECK_OK(claimdag_complete(s, child, "done", gen));
  CHECK_OK(claimdag_get_json(s, epic, &shown));
  CHECK(shown != NULL && strstr(shown, "\"status\":\"done\"") != NULL);
  claimdag_string_free(shown);
  out = call(s, "upsert", "{\"summary\": \"sign off\", \"kind\": \"gate\"}");
  CHECK(out != NULL && sscanf(out, "{\"id\":\"%32[0-9a-f]\"}", gate) == 1);
  claimdag_string_free(out);
  snprintf(args, sizeof args, "{\"node\": \"%s\", \"gen\": 2}", gate);
  char *before = everything(s);
  out = UNTOUCHED;
  CHECK_CODE(claimdag_call_json(s, "approve", args, &out), CLAIMDAG_STALE_GENERATION);
  CHECK(out == UNTOUCHED);
  unchanged(s, before);
  snprintf(args, sizeof args, "{\"node\": \"%s\", \"gen\": 1, \"note\": \"ok\"}", gate);
  out = call(s, "approve", args);
  CHECK(out != NULL && strstr(out, "\"status\":\"done\"") != NULL);
  claimdag_string_free(out);
  claimdag_close(s);
}

int main(void) {
  unsetenv("CLAIMDAG_WORKSPACE");
  unsetenv("CLAIMDAG_ACTOR");
  run_test("a checkpoint reaches the next holder's grant", a_checkpoint_reaches_the_next_holder);
  run_test("a cancel request reaches the holder at its renewal",
           a_cancel_request_reaches_the_holder);
  run_test("outputs flow to dependents, archived prerequisites included",
           outputs_flow_to_dependents);
  run_test("complete_many is all or nothing", complete_many_is_all_or_nothing);
  run_test("refusals leave out-params untouched and change nothing", refusals_change_nothing);
  run_test("a batch of claims in one write", a_batch_of_claims_in_one_write);
  run_test("epics, gates, deadlines and budgets through claimdag_call_json",
           people_and_budgets_decide);
  return finish();
}
