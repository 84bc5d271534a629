// The header is usable from C++ and safe to include twice.
#include "claimdag.h"
#include "claimdag.h"

#include <cstdio>
#include <cstring>

int main() {
  if (std::strcmp(claimdag_code_str(CLAIMDAG_STALE_GENERATION), "stale_generation") != 0) {
    std::puts("not ok - header_twice.cpp");
    return 1;
  }
  claimdag_store *s = nullptr;
  claimdag_code rc = claimdag_open(nullptr, nullptr);
  claimdag_close(s);
  if (rc != CLAIMDAG_INVALID_INPUT) {
    std::puts("not ok - header_twice.cpp");
    return 1;
  }
  claimdag_upsert_options options = {};
  (void)options;
  std::printf("ok - header included twice from C++ (library %s)\n", claimdag_version());
  return 0;
}
