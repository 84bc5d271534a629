/*
 * Prints what the C ABI's JSON functions give, for the test that compares the JSON of every
 * front door (tests/python/test_same_json.py).
 *
 *   json_dump DIR show ID | list | ready | log | reclaim LEASE_MS | import PLAN_FILE |
 *             claim ID ACTOR | call VERB ARGS_JSON
 *
 * Prints the JSON on stdout and exits 0; on a refusal prints claimdag_last_error_json() and
 * exits 1.
 */
#define _XOPEN_SOURCE 700

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claimdag.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(buf);
    return NULL;
  }
  buf[n] = '\0';
  fclose(f);
  return buf;
}

int main(int argc, char **argv) {
  claimdag_store *s = NULL;
  char *json = NULL;
  claimdag_code rc;
  if (argc < 3) {
    fprintf(stderr, "usage: json_dump DIR VERB [ARGS]\n");
    return 2;
  }
  if (claimdag_open(argv[1], &s) != CLAIMDAG_OK) {
    fprintf(stderr, "open: %s\n", claimdag_last_error());
    return 2;
  }
  const char *verb = argv[2];
  if (strcmp(verb, "show") == 0 && argc == 4) {
    rc = claimdag_get_json(s, argv[3], &json);
  } else if (strcmp(verb, "list") == 0) {
    claimdag_list_options o;
    memset(&o, 0, sizeof o);
    o.terminal = true;
    o.archived = true;
    rc = claimdag_list_json_opts(s, &o, &json);
  } else if (strcmp(verb, "ready") == 0) {
    rc = claimdag_ready_json(s, NULL, NULL, &json);
  } else if (strcmp(verb, "log") == 0) {
    rc = claimdag_log_json(s, NULL, &json);
  } else if (strcmp(verb, "reclaim") == 0 && argc == 4) {
    rc = claimdag_reclaim_json(s, NULL, strtoull(argv[3], NULL, 10), &json);
  } else if (strcmp(verb, "import") == 0 && argc == 4) {
    char *plan = read_file(argv[3]);
    if (plan == NULL) return 2;
    rc = claimdag_import_json(s, NULL, plan, &json);
    free(plan);
  } else if (strcmp(verb, "claim") == 0 && argc == 5) {
    uint64_t gen = 0;
    rc = claimdag_claim(s, argv[3], argv[4], &gen);
    if (rc == CLAIMDAG_OK) printf("{\"generation\":%llu}\n", (unsigned long long)gen);
  } else if (strcmp(verb, "call") == 0 && argc == 5) {
    rc = claimdag_call_json(s, argv[3], argv[4], &json);
  } else {
    fprintf(stderr, "json_dump: unknown verb or arguments\n");
    claimdag_close(s);
    return 2;
  }
  if (rc != CLAIMDAG_OK) {
    printf("%s\n", claimdag_last_error_json());
    claimdag_close(s);
    return 1;
  }
  if (json != NULL) {
    printf("%s\n", json);
    claimdag_string_free(json);
  }
  claimdag_close(s);
  return 0;
}
