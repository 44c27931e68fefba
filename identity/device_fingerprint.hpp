#pragma once
// A GPU as the engine identifies and describes it: what the CUDA driver reports of it. Plain data,
// no CUDA and no database. The store keeps it as a row (db::DeviceRecord adds the row's id and what
// was measured on the device); the lookup library asks by its uuid, name and compute capability.
#include <cstdint>
#include <string>

namespace cutune {

struct DeviceFingerprint {
  std::string uuid;  // "GPU-xxxxxxxx-…", stable identity across driver updates
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t memory_bytes = 0;
  std::int64_t l2_bytes = 0;
  int memory_clock_khz = 0;
  int bus_width_bits = 0;
  double theoretical_bandwidth_gbs = 0;  // 2 (DDR) × clock × bus width
  int driver_version = 0;
  std::string nvrtc_version;
};

}  // namespace cutune
