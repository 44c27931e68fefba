#pragma once
// What cutune observes of a measured config besides its time (schema version 8): the energy one
// run of its plan costs, the clock its timed samples ran at, and the resources the compiler and the
// driver gave its kernels. Plain data, with its fields listed once (kObservationFields): the
// store's columns, cutune JSON, the worker's messages and the reports' data are all made from that
// list, so that an observation is added in one place (and in one migration).
//
// Every field may be unknown: results stored before version 8, results imported from files that
// never had them, GPUs without NVML, energy when it was not asked for (--energy). Unknown is
// nullopt or '' and never 0: 0 spill bytes is an observation.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json_fwd.hpp>

namespace cutune::db {

struct Observations {
  // ---- energy (NVML, read only; measured over a window of back-to-back runs when --energy asks) --
  std::optional<double> energy_j;  // per run of the plan, the whole board's
  std::optional<double> power_w;   // the board's average power over that window
  // How: "energy_counter" (NVML's total-energy counter, Volta and later) or "power_samples"
  // (NVML's power reading, sampled through the window); '' when not measured.
  std::string energy_method;
  std::optional<std::int64_t> energy_runs;  // back-to-back runs in the window the energy is over

  // ---- clocks during the timed samples (NVML, read after each sample) ----------------------------
  std::optional<double> sm_clock_mhz;             // the median of the SM clock readings
  std::optional<std::int64_t> throttled_samples;  // samples after which the GPU named a slowdown reason
  std::string throttle_reasons;                   // the reasons seen, "sw_power_cap,hw_thermal"; '' none
  // The samples were taken a second time, because most of the first ones were throttled; the result
  // holds the second set, and throttled_samples counts in it.
  bool remeasured = false;

  // ---- resources, over the plan's kernels (ptxas' report and the driver's attributes) -----------
  std::optional<std::int64_t> registers;          // per thread, the most of any kernel
  std::optional<std::int64_t> spill_store_bytes;  // summed over the kernels
  std::optional<std::int64_t> spill_load_bytes;
  std::optional<std::int64_t> local_bytes;           // per thread, the most (spills and local arrays)
  std::optional<std::int64_t> static_shared_bytes;   // per block, the most
  std::optional<std::int64_t> dynamic_shared_bytes;  // per block, the most
  // The least occupied launch of the plan: its resident blocks per SM, and its resident warps as a
  // fraction of the SM's maximum (the theoretical occupancy, cuOccupancyMaxActiveBlocksPerMultiprocessor).
  std::optional<std::int64_t> blocks_per_sm;
  std::optional<double> occupancy;
  // NVRTC's log of a successful compile without ptxas' resource report: its warnings.
  std::string compile_warnings;

  bool operator==(const Observations&) const = default;
};

// One field: its name (the results column and the JSON member) and where it lives.
struct ObservationField {
  const char* name;
  std::variant<std::optional<double> Observations::*, std::optional<std::int64_t> Observations::*,
               std::string Observations::*, bool Observations::*>
      member;
};

inline constexpr std::array<ObservationField, 17> kObservationFields{{
    {"energy_j", &Observations::energy_j},
    {"power_w", &Observations::power_w},
    {"energy_method", &Observations::energy_method},
    {"energy_runs", &Observations::energy_runs},
    {"sm_clock_mhz", &Observations::sm_clock_mhz},
    {"throttled_samples", &Observations::throttled_samples},
    {"throttle_reasons", &Observations::throttle_reasons},
    {"remeasured", &Observations::remeasured},
    {"registers", &Observations::registers},
    {"spill_store_bytes", &Observations::spill_store_bytes},
    {"spill_load_bytes", &Observations::spill_load_bytes},
    {"local_bytes", &Observations::local_bytes},
    {"static_shared_bytes", &Observations::static_shared_bytes},
    {"dynamic_shared_bytes", &Observations::dynamic_shared_bytes},
    {"blocks_per_sm", &Observations::blocks_per_sm},
    {"occupancy", &Observations::occupancy},
    {"compile_warnings", &Observations::compile_warnings},
}};

// The known fields as a JSON object: unknown ones (nullopt, '', false) are left out, so that an
// old reader and an empty observation agree.
nlohmann::json to_json(const Observations& observations);
// Members named as in kObservationFields are read; others are ignored. Throws std::invalid_argument
// naming the member when one has the wrong JSON type.
Observations observations_from_json(const nlohmann::json& object);

// "energy_j, power_w, …": the results columns, in kObservationFields order.
std::string observation_columns();

}  // namespace cutune::db
