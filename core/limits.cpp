#include "limits.hpp"

#include <regex>

#include "error.hpp"

namespace cutune {

DeviceLimits limits_for_arch(const std::string& arch) {
  static const std::regex pattern(R"(sm_(\d+)(\d)a?)");
  std::smatch match;
  if (!std::regex_match(arch, match, pattern))
    throw UsageError("unknown --arch '" + arch + "' (expected a name like sm_90)");
  DeviceLimits limits;
  limits.cc_major = std::stoi(match[1]);
  limits.cc_minor = std::stoi(match[2]);
  if (limits.cc_major < 7) throw UsageError("--arch " + arch + " is older than CUDA 13 supports (sm_75 and newer)");
  // Opt-in shared memory per block, from the CUDA programming guide's table of limits.
  const int cc = limits.cc_major * 10 + limits.cc_minor;
  limits.max_shared_per_block_optin = cc == 75                                         ? 64 * 1024
                                      : cc == 80 || cc == 87                           ? 163 * 1024
                                      : cc == 86 || cc == 89 || cc == 120 || cc == 121 ? 99 * 1024
                                                                                       : 227 * 1024;
  // Resident threads per SM, from the same table.
  limits.max_threads_per_sm = cc == 75                                                     ? 1024
                              : cc == 86 || cc == 87 || cc == 89 || cc == 120 || cc == 121 ? 1536
                                                                                           : 2048;
  return limits;
}

}  // namespace cutune
