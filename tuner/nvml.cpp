#include "nvml.hpp"

#include <dlfcn.h>

#include <mutex>

#include <fmt/format.h>

namespace cutune::nvml {
namespace {

// NVML's C ABI, as documented (nvml.h): enums are ints, handles opaque pointers.
using Return = int;                            // nvmlReturn_t; 0 is NVML_SUCCESS
using Device = void*;                          // nvmlDevice_t
constexpr int kClockSm = 1, kClockMemory = 2;  // nvmlClockType_t

// Getters only: see nvml.hpp. A function this driver lacks stays null, and its reading unknown.
struct Library {
  Return (*init)() = nullptr;  // nvmlInit_v2
  const char* (*error_string)(Return) = nullptr;
  Return (*handle_by_uuid)(const char*, Device*) = nullptr;
  Return (*total_energy)(Device, unsigned long long*) = nullptr;
  Return (*power_usage)(Device, unsigned*) = nullptr;
  Return (*clock_info)(Device, int, unsigned*) = nullptr;
  Return (*clock_reasons)(Device, unsigned long long*) = nullptr;  // "event" reasons, or the older "throttle" ones
  Return (*power_limit_constraints)(Device, unsigned*, unsigned*) = nullptr;
  Return (*power_limit)(Device, unsigned*) = nullptr;
  Return (*enforced_power_limit)(Device, unsigned*) = nullptr;
  Return (*applications_clock)(Device, int, unsigned*) = nullptr;
  Return (*default_applications_clock)(Device, int, unsigned*) = nullptr;
  Return (*persistence_mode)(Device, int*) = nullptr;
  Return (*compute_mode)(Device, int*) = nullptr;
  std::string failure;  // why NVML cannot be used; empty when it can
};

template <class F>
void resolve(void* library, F& pointer, const char* name) {
  pointer = reinterpret_cast<F>(dlsym(library, name));
}

Library load() {
  Library l;
  void* library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    l.failure = "no NVML (libnvidia-ml.so.1 could not be loaded)";
    return l;
  }
  resolve(library, l.init, "nvmlInit_v2");
  resolve(library, l.error_string, "nvmlErrorString");
  resolve(library, l.handle_by_uuid, "nvmlDeviceGetHandleByUUID");
  resolve(library, l.total_energy, "nvmlDeviceGetTotalEnergyConsumption");
  resolve(library, l.power_usage, "nvmlDeviceGetPowerUsage");
  resolve(library, l.clock_info, "nvmlDeviceGetClockInfo");
  resolve(library, l.clock_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!l.clock_reasons) resolve(library, l.clock_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  resolve(library, l.power_limit_constraints, "nvmlDeviceGetPowerManagementLimitConstraints");
  resolve(library, l.power_limit, "nvmlDeviceGetPowerManagementLimit");
  resolve(library, l.enforced_power_limit, "nvmlDeviceGetEnforcedPowerLimit");
  resolve(library, l.applications_clock, "nvmlDeviceGetApplicationsClock");
  resolve(library, l.default_applications_clock, "nvmlDeviceGetDefaultApplicationsClock");
  resolve(library, l.persistence_mode, "nvmlDeviceGetPersistenceMode");
  resolve(library, l.compute_mode, "nvmlDeviceGetComputeMode");
  if (!l.init || !l.handle_by_uuid) {
    l.failure = "NVML lacks nvmlInit_v2 or nvmlDeviceGetHandleByUUID (driver too old)";
    return l;
  }
  if (const Return r = l.init(); r != 0)
    l.failure = fmt::format("NVML failed to initialise: {}", l.error_string ? l.error_string(r) : std::to_string(r));
  return l;
}

// Loaded and initialised once per process; never shut down (NVML counts its users).
const Library& library() {
  static std::once_flag once;
  static Library loaded;
  std::call_once(once, [] { loaded = load(); });
  return loaded;
}

template <class T, class F, class... A>
std::optional<T> read(F function, Device device, A... arguments) {
  if (!function) return std::nullopt;
  T value{};
  if (function(device, arguments..., &value) != 0) return std::nullopt;
  return value;
}

}  // namespace

std::string reason_names(std::uint64_t reasons) {
  static const std::pair<std::uint64_t, const char*> kNames[] = {
      {reason::gpu_idle, "gpu_idle"},
      {reason::applications_clocks_setting, "applications_clocks_setting"},
      {reason::sw_power_cap, "sw_power_cap"},
      {reason::hw_slowdown, "hw_slowdown"},
      {reason::sync_boost, "sync_boost"},
      {reason::sw_thermal, "sw_thermal"},
      {reason::hw_thermal, "hw_thermal"},
      {reason::hw_power_brake, "hw_power_brake"},
      {reason::display_clock_setting, "display_clock_setting"}};
  std::string names;
  for (const auto& [bit, name] : kNames)
    if (reasons & bit) {
      names += names.empty() ? "" : ",";
      names += name;
      reasons &= ~bit;
    }
  if (reasons) names += fmt::format("{}{:#x}", names.empty() ? "" : ",", reasons);
  return names;
}

std::string describe(const Settings& s) {
  const auto text = [](const auto& value) { return value ? std::to_string(*value) : std::string("unknown"); };
  return fmt::format(
      "power limit {} mW (enforced {} mW), applications clocks SM {} MHz / memory {} MHz (default SM {} MHz), "
      "persistence mode {}, compute mode {}",
      text(s.power_limit_mw), text(s.enforced_power_limit_mw), text(s.applications_sm_clock_mhz),
      text(s.applications_memory_clock_mhz), text(s.default_applications_sm_clock_mhz), text(s.persistence_mode),
      text(s.compute_mode));
}

std::optional<Gpu> Gpu::find(const std::string& uuid, std::string* why) {
  const Library& l = library();
  if (!l.failure.empty()) {
    if (why) *why = l.failure;
    return std::nullopt;
  }
  Device device = nullptr;
  if (const Return r = l.handle_by_uuid(uuid.c_str(), &device); r != 0) {
    if (why)
      *why = fmt::format("NVML does not know {}: {}", uuid, l.error_string ? l.error_string(r) : std::to_string(r));
    return std::nullopt;
  }
  return Gpu(device);
}

std::optional<std::uint64_t> Gpu::total_energy_mj() const {
  const auto mj = read<unsigned long long>(library().total_energy, handle_);
  return mj ? std::optional<std::uint64_t>(*mj) : std::nullopt;
}

std::optional<double> Gpu::power_w() const {
  const auto mw = read<unsigned>(library().power_usage, handle_);
  return mw ? std::optional<double>(*mw * 1e-3) : std::nullopt;
}

std::optional<unsigned> Gpu::sm_clock_mhz() const { return read<unsigned>(library().clock_info, handle_, kClockSm); }

std::optional<std::uint64_t> Gpu::clock_event_reasons() const {
  const auto bits = read<unsigned long long>(library().clock_reasons, handle_);
  return bits ? std::optional<std::uint64_t>(*bits) : std::nullopt;
}

std::optional<std::pair<double, double>> Gpu::power_limit_range_w() const {
  const Library& l = library();
  unsigned low = 0, high = 0;
  if (!l.power_limit_constraints || l.power_limit_constraints(handle_, &low, &high) != 0) return std::nullopt;
  return std::pair{low * 1e-3, high * 1e-3};
}

std::optional<double> Gpu::enforced_power_limit_w() const {
  const auto mw = read<unsigned>(library().enforced_power_limit, handle_);
  return mw ? std::optional<double>(*mw * 1e-3) : std::nullopt;
}

Settings Gpu::settings() const {
  const Library& l = library();
  Settings s;
  s.power_limit_mw = read<unsigned>(l.power_limit, handle_);
  s.enforced_power_limit_mw = read<unsigned>(l.enforced_power_limit, handle_);
  s.applications_sm_clock_mhz = read<unsigned>(l.applications_clock, handle_, kClockSm);
  s.applications_memory_clock_mhz = read<unsigned>(l.applications_clock, handle_, kClockMemory);
  s.default_applications_sm_clock_mhz = read<unsigned>(l.default_applications_clock, handle_, kClockSm);
  s.persistence_mode = read<int>(l.persistence_mode, handle_);
  s.compute_mode = read<int>(l.compute_mode, handle_);
  return s;
}

}  // namespace cutune::nvml
