/* A C handle on a PostgreSQL store survives its connection: right after the server killed
 * it, and after the server restarted as after a crash, the handle's next call reconnects and
 * works. tests/c/run.sh runs it with CLAIMDAG_C_STORE_BASE (the server's URL) and the two
 * faults as shell commands: CLAIMDAG_C_KILL (ends every claimdag connection) and
 * CLAIMDAG_C_RESTART (restarts the server). */
#define _XOPEN_SOURCE 700

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void fault(const char *var) {
  const char *cmd = getenv(var);
  CHECK(cmd != NULL && *cmd != '\0');
  if (cmd != NULL && system(cmd) != 0) {
    fprintf(stderr, "%s failed: %s\n", var, cmd);
    t_failures++;
  }
}

static void reconnects(const char *tmp, const char *path) {
  (void)tmp;
  claimdag_store *s = open_store(path);
  char a[33], b[33], me[33];
  char *json = NULL;
  uint64_t gen = 0;
  actor_for(7, me);
  CHECK_OK(claimdag_upsert(s, "before the faults", NULL, NULL, a));
  const char *faults[] = {"CLAIMDAG_C_KILL", "CLAIMDAG_C_RESTART"};
  for (int i = 0; i < 2; i++) {
    fault(faults[i]);
    /* The first call after the fault: a read, on a connection that is gone. */
    CHECK_OK(claimdag_get_json(s, a, &json));
    CHECK(json != NULL && strstr(json, a) != NULL);
    claimdag_string_free(json);
    json = NULL;
    CHECK_OK(claimdag_upsert(s, i == 0 ? "after the kill" : "after the restart", NULL, NULL,
                             b));
    CHECK_OK(claimdag_claim(s, b, me, &gen));
    CHECK(gen == 2);
    CHECK_OK(claimdag_complete(s, b, "done", gen));
    /* Right after the fault again, the first call a write. */
    fault(faults[i]);
    CHECK_OK(claimdag_upsert(s, i == 0 ? "a write first, killed" : "a write first, restarted",
                             NULL, NULL, b));
  }
  claimdag_close(s);
}

int main(void) {
  run_test("a handle reconnects after its connections were killed and after a restart",
           reconnects);
  return finish();
}
