/* Small test harness for the C tests of the claimdag C ABI: checks that count failures,
 * one temporary store directory per test (removed afterwards), and a few JSON helpers that
 * are just enough for the compact JSON the library returns. */
#ifndef CLAIMDAG_TEST_UTIL_H
#define CLAIMDAG_TEST_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include "claimdag.h"

extern int t_failures;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);         \
      t_failures++;                                                                    \
    }                                                                                  \
  } while (0)

#define CHECK_CODE(call, want)                                                         \
  do {                                                                                 \
    claimdag_code rc_ = (call);                                                        \
    claimdag_code want_ = (want);                                                      \
    if (rc_ != want_) {                                                                \
      fprintf(stderr, "%s:%d: %s\n  returned %s (%d), want %s (%d): %s\n", __FILE__,   \
              __LINE__, #call, claimdag_code_str(rc_), (int)rc_,                       \
              claimdag_code_str(want_), (int)want_, claimdag_last_error());            \
      t_failures++;                                                                    \
    }                                                                                  \
  } while (0)

#define CHECK_OK(call) CHECK_CODE(call, CLAIMDAG_OK)

/* The last error of this thread contains `text`. */
#define CHECK_MESSAGE(text)                                                            \
  do {                                                                                 \
    const char *m_ = claimdag_last_error();                                            \
    if (m_ == NULL || strstr(m_, (text)) == NULL) {                                    \
      fprintf(stderr, "%s:%d: last error \"%s\" does not contain \"%s\"\n", __FILE__,  \
              __LINE__, m_ ? m_ : "(NULL)", (text));                                   \
      t_failures++;                                                                    \
    }                                                                                  \
  } while (0)

/* A test gets a fresh directory `tmp` and a store path `store` inside it (not created yet). */
typedef void (*test_fn)(const char *tmp, const char *store);

/* Runs one test in its own temporary directory and prints "ok - NAME" or "not ok - NAME". */
void run_test(const char *name, test_fn fn);

/* Prints the "# N passed, M failed" line; returns the process exit status. */
int finish(void);

/* Opens the store at `path`; aborts the test program when that fails. */
claimdag_store *open_store(const char *path);

/* The actor id for a small number, as `printf '%032x' N` prints it. */
void actor_for(unsigned n, char out[33]);

/* Sleeps `ms` milliseconds. */
void sleep_ms(long ms);

/* Copies the value of `"key":` in the first object of `json` that has `"id":"<id>"` (or the
 * first `"key":` in `json` when id is NULL) into `out`, without quotes for strings.
 * Returns 0 when found, -1 otherwise. */
int json_field(const char *json, const char *id, const char *key, char *out, size_t n);

/* How many times `needle` occurs in `text`. */
int count_of(const char *text, const char *needle);

#endif
