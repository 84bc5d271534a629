/* The README walkthrough and the fence against an installed libclaimdag, built with
 * nothing but pkg-config's flags (tests/install/run.sh). `walkthrough DIR` runs it on a
 * new store in DIR and prints "ok - ..." a check; `walkthrough --version` prints
 * claimdag_version(). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <claimdag.h>

static int failed = 0;

static void check(int ok, const char *what) {
  printf("%s - C: %s\n", ok ? "ok" : "not ok", what);
  if (!ok) {
    printf("# last error: %s\n", claimdag_last_error());
    failed = 1;
  }
}

int main(int argc, char **argv) {
  claimdag_store *s = NULL;
  char a[33], b[33], next[33], me[33], you[33];
  uint64_t gen = 0, stale = 0;
  size_t handed = 99;

  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    puts(claimdag_version());
    return 0;
  }
  if (argc != 2) {
    fprintf(stderr, "usage: walkthrough DIR | --version\n");
    return 2;
  }
  snprintf(me, sizeof me, "%032x", 7);
  snprintf(you, sizeof you, "%032x", 8);

  check(claimdag_open(argv[1], &s) == CLAIMDAG_OK, "open a new store");
  if (s == NULL) return 1;
  check(claimdag_upsert(s, "parse the manifest header", NULL, NULL, a) == CLAIMDAG_OK &&
            claimdag_upsert(s, "reject a manifest with no header", NULL, a, b) == CLAIMDAG_OK &&
            claimdag_link(s, a, b) == CLAIMDAG_OK,
        "two nodes, b waits on a");
  check(claimdag_claim(s, a, me, &gen) == CLAIMDAG_OK && gen == 2, "claim a at gen=2");
  check(claimdag_claim(s, a, you, &stale) == CLAIMDAG_ALREADY_CLAIMED, "a second claim is refused");
  check(claimdag_renew(s, a, me) == CLAIMDAG_OK, "renew");
  check(claimdag_reclaim(s, 60000, &handed) == CLAIMDAG_OK && handed == 0,
        "reclaim hands back no live claim");
  check(claimdag_complete(s, a, "done", 2) == CLAIMDAG_OK, "complete a with gen=2");
  check(claimdag_next(s, NULL, NULL, next) == CLAIMDAG_OK && strcmp(next, b) == 0, "b is next");

  /* The fence: b's claim is handed back, and its old generation is refused. */
  check(claimdag_claim(s, b, me, &gen) == CLAIMDAG_OK && gen == 2, "claim b at gen=2");
  check(claimdag_reclaim(s, 0, &handed) == CLAIMDAG_OK && handed == 1, "reclaim --lease 0");
  check(claimdag_complete(s, b, "done", 2) == CLAIMDAG_STALE_GENERATION,
        "a stale generation is refused");
  claimdag_close(s);
  return failed;
}
