#pragma once
// Content hashes for template identity and the compile cache key. FNV-1a (64-bit) is enough here:
// keys are compared within one user's database and cache, never against an adversary.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace cutune {

class Fnv1a {
 public:
  Fnv1a& add(std::string_view bytes) {
    for (unsigned char c : bytes) state_ = (state_ ^ c) * 0x100000001b3ULL;
    state_ = (state_ ^ 0xff) * 0x100000001b3ULL;  // field separator: ("ab","c") != ("a","bc")
    return *this;
  }
  std::uint64_t value() const { return state_; }
  std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(state_));
    return text;
  }

 private:
  std::uint64_t state_ = 0xcbf29ce484222325ULL;
};

inline std::string content_hash(std::string_view text) { return Fnv1a().add(text).hex(); }

}  // namespace cutune
