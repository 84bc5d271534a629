// The walkthrough and the fence from C++ against an installed libclaimdag, built with
// nothing but pkg-config's flags (tests/install/run.sh). `walkthrough-cpp DIR`.
#include <claimdag.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace {

int failed = 0;

void check(bool ok, const std::string &what) {
  std::printf("%s - C++: %s\n", ok ? "ok" : "not ok", what.c_str());
  if (!ok) {
    std::printf("# last error: %s\n", claimdag_last_error());
    failed = 1;
  }
}

struct Close {
  void operator()(claimdag_store *s) const { claimdag_close(s); }
};

std::string actor(unsigned n) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%032x", n);
  return hex;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: walkthrough-cpp DIR\n");
    return 2;
  }
  claimdag_store *raw = nullptr;
  check(claimdag_open(argv[1], &raw) == CLAIMDAG_OK, "open a new store");
  if (raw == nullptr) return 1;
  std::unique_ptr<claimdag_store, Close> s(raw);
  const std::string me = actor(7), you = actor(8);
  char a[33], b[33], next[33];
  std::uint64_t gen = 0, stale = 0;
  std::size_t handed = 99;

  check(claimdag_upsert(s.get(), "parse the manifest header", nullptr, nullptr, a) ==
                CLAIMDAG_OK &&
            claimdag_upsert(s.get(), "reject a manifest with no header", nullptr, a, b) ==
                CLAIMDAG_OK &&
            claimdag_link(s.get(), a, b) == CLAIMDAG_OK,
        "two nodes, b waits on a");
  check(claimdag_claim(s.get(), a, me.c_str(), &gen) == CLAIMDAG_OK && gen == 2,
        "claim a at gen=2");
  check(claimdag_claim(s.get(), a, you.c_str(), &stale) == CLAIMDAG_ALREADY_CLAIMED,
        std::string("a second claim is refused: ") + claimdag_code_str(CLAIMDAG_ALREADY_CLAIMED));
  check(claimdag_renew(s.get(), a, me.c_str()) == CLAIMDAG_OK, "renew");
  check(claimdag_reclaim(s.get(), 60000, &handed) == CLAIMDAG_OK && handed == 0,
        "reclaim hands back no live claim");
  check(claimdag_complete(s.get(), a, "done", 2) == CLAIMDAG_OK, "complete a with gen=2");
  check(claimdag_next(s.get(), nullptr, nullptr, next) == CLAIMDAG_OK && std::string(next) == b,
        "b is next");
  check(claimdag_claim(s.get(), b, me.c_str(), &gen) == CLAIMDAG_OK && gen == 2,
        "claim b at gen=2");
  check(claimdag_reclaim(s.get(), 0, &handed) == CLAIMDAG_OK && handed == 1, "reclaim --lease 0");
  check(claimdag_complete(s.get(), b, "done", 2) == CLAIMDAG_STALE_GENERATION,
        "a stale generation is refused");
  return failed;
}
