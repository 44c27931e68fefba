#pragma once
#include <cstdint>
#include <string>

namespace cutune {

// What a kernel family's constraints need to know about the target. Filled from a real device,
// or from an architecture name alone for --compile-only without a GPU.
struct DeviceLimits {
  int cc_major = 9, cc_minor = 0;
  int max_threads_per_block = 1024;
  std::int64_t max_shared_per_block = 48 * 1024;         // without opt-in
  std::int64_t max_shared_per_block_optin = 227 * 1024;  // static + dynamic, after cuFuncSetAttribute
  int sm_count = 132;
  int max_threads_per_sm = 2048;  // resident threads per SM: the denominator of occupancy
  std::int64_t l2_bytes = 50 * 1024 * 1024;
  std::string arch() const { return "sm_" + std::to_string(cc_major) + std::to_string(cc_minor); }
};

// Limits for an architecture name like "sm_90". Throws UsageError for a malformed or unsupported name.
DeviceLimits limits_for_arch(const std::string& arch);

}  // namespace cutune
