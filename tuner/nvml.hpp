#pragma once
// NVML, loaded at run time with dlopen (like the CUDA driver, cuda_driver.hpp), so that `tune`
// starts where there is no NVML at all: observations that need it are then unknown, never an error.
//
// READ ONLY. Nothing here sets clocks, power limits or any other setting: cutune runs on shared
// GPUs, and a tuner must not change what the next user of the GPU gets. The functions we resolve
// are all getters; the setters are not even looked up.
//
// The declarations are ours (nvml_abi in nvml.cpp), from NVML's documented C ABI: the toolkit's
// nvml.h is not installed everywhere we build.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cutune::nvml {

// Clock event ("throttle") reasons, NVML's bit values.
namespace reason {
inline constexpr std::uint64_t gpu_idle = 0x1;
inline constexpr std::uint64_t applications_clocks_setting = 0x2;
inline constexpr std::uint64_t sw_power_cap = 0x4;
inline constexpr std::uint64_t hw_slowdown = 0x8;
inline constexpr std::uint64_t sync_boost = 0x10;
inline constexpr std::uint64_t sw_thermal = 0x20;
inline constexpr std::uint64_t hw_thermal = 0x40;
inline constexpr std::uint64_t hw_power_brake = 0x80;
inline constexpr std::uint64_t display_clock_setting = 0x100;
// The reasons that slow a running kernel down for power or heat. Idle, application clocks and
// sync boost are settings or states, not throttling of the work being measured.
inline constexpr std::uint64_t slowing = sw_power_cap | hw_slowdown | sw_thermal | hw_thermal | hw_power_brake;
}  // namespace reason

// "sw_power_cap,hw_thermal" for the bits set, in bit order; unknown bits as "0x…".
std::string reason_names(std::uint64_t reasons);

// The settings a tuner must leave as it found them, as far as NVML reports them: tests read them
// before and after a run and compare. A field NVML does not report on this GPU is nullopt.
struct Settings {
  std::optional<unsigned> power_limit_mw;           // nvmlDeviceGetPowerManagementLimit
  std::optional<unsigned> enforced_power_limit_mw;  // nvmlDeviceGetEnforcedPowerLimit
  std::optional<unsigned> applications_sm_clock_mhz, applications_memory_clock_mhz;
  std::optional<unsigned> default_applications_sm_clock_mhz;
  std::optional<int> persistence_mode;  // 0 off, 1 on
  std::optional<int> compute_mode;
  bool operator==(const Settings&) const = default;
};
std::string describe(const Settings& settings);

// One GPU as NVML sees it. Cheap to copy (a handle).
class Gpu {
 public:
  // The GPU with this uuid ("GPU-…", as the CUDA driver reports it); nullopt with the reason in
  // `why` when NVML is missing, fails to initialise, or does not know the GPU (MIG slices, …).
  static std::optional<Gpu> find(const std::string& uuid, std::string* why = nullptr);

  // Each getter answers nullopt where this GPU or driver does not support the reading.
  std::optional<std::uint64_t> total_energy_mj() const;  // since the driver was loaded (Volta and later)
  std::optional<double> power_w() const;                 // the board's current power draw
  std::optional<unsigned> sm_clock_mhz() const;
  std::optional<std::uint64_t> clock_event_reasons() const;  // reason:: bits
  // The board's power limit range (min, max) in W, what the driver reports as settable.
  std::optional<std::pair<double, double>> power_limit_range_w() const;
  std::optional<double> enforced_power_limit_w() const;
  Settings settings() const;

 private:
  explicit Gpu(void* handle) : handle_(handle) {}
  void* handle_;  // nvmlDevice_t
};

}  // namespace cutune::nvml
