#define _XOPEN_SOURCE 700

#include "util.h"

#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int t_failures = 0;
static int passed = 0;
static int failed = 0;

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  if (remove(path) != 0) {
    fprintf(stderr, "cannot remove %s: %s\n", path, strerror(errno));
    t_failures++;
  }
  return 0;
}

void run_test(const char *name, test_fn fn) {
  char tmpl[4096];
  char store[4200];
  const char *base = getenv("TMPDIR");
  if (base == NULL || *base == '\0') {
#ifdef P_tmpdir
    base = P_tmpdir;
#else
    base = ".";
#endif
  }
  snprintf(tmpl, sizeof tmpl, "%s/claimdag-c-XXXXXX", base);
  if (mkdtemp(tmpl) == NULL) {
    fprintf(stderr, "mkdtemp %s: %s\n", tmpl, strerror(errno));
    exit(2);
  }
  /* With CLAIMDAG_C_STORE_BASE (a postgres:// URL), the store is a fresh schema of that
   * database instead of a directory. */
  const char *pg = getenv("CLAIMDAG_C_STORE_BASE");
  static int n_stores = 0;
  if (pg != NULL && *pg != '\0') {
    snprintf(store, sizeof store, "%s%sschema=c_%ld_%d", pg, strchr(pg, '?') ? "&" : "?",
             (long)getpid(), n_stores++);
  } else {
    snprintf(store, sizeof store, "%s/store", tmpl);
  }
  int before = t_failures;
  fn(tmpl, store);
  nftw(tmpl, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
  if (access(tmpl, F_OK) == 0) {
    fprintf(stderr, "temporary directory %s was not removed\n", tmpl);
    t_failures++;
  }
  if (t_failures == before) {
    passed++;
    printf("ok - %s\n", name);
  } else {
    failed++;
    printf("not ok - %s\n", name);
  }
  fflush(stdout);
}

int finish(void) {
  printf("# %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

claimdag_store *open_store(const char *path) {
  claimdag_store *s = NULL;
  claimdag_code rc = claimdag_open(path, &s);
  if (rc != CLAIMDAG_OK || s == NULL) {
    fprintf(stderr, "claimdag_open(%s): %s: %s\n", path, claimdag_code_str(rc),
            claimdag_last_error());
    exit(2);
  }
  return s;
}

void actor_for(unsigned n, char out[33]) { snprintf(out, 33, "%032x", n); }

void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int json_field(const char *json, const char *id, const char *key, char *out, size_t n) {
  char pat[128];
  const char *start = json;
  const char *end = json + strlen(json);
  if (id != NULL) {
    snprintf(pat, sizeof pat, "{\"id\":\"%s\"", id);
    start = strstr(json, pat);
    if (start == NULL) {
      return -1;
    }
    const char *next = strstr(start + 1, "{\"id\":\"");
    if (next != NULL) {
      end = next;
    }
  }
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *at = strstr(start, pat);
  if (at == NULL || at >= end) {
    return -1;
  }
  at += strlen(pat);
  size_t len = 0;
  if (*at == '"') {
    at++;
    while (at[len] != '\0' && at[len] != '"') {
      len += at[len] == '\\' && at[len + 1] != '\0' ? 2 : 1;
    }
  } else if (*at == '[') {
    while (at[len] != '\0' && at[len] != ']') {
      len++;
    }
    if (at[len] == ']') {
      len++;
    }
  } else {
    while (at[len] != '\0' && at[len] != ',' && at[len] != '}' && at[len] != ']') {
      len++;
    }
  }
  if (len + 1 > n) {
    return -1;
  }
  memcpy(out, at, len);
  out[len] = '\0';
  return 0;
}

int count_of(const char *text, const char *needle) {
  int n = 0;
  size_t step = strlen(needle);
  for (const char *p = strstr(text, needle); p != NULL; p = strstr(p + step, needle)) {
    n++;
  }
  return n;
}
