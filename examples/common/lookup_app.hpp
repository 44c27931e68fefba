// What the example applications do around their lookup, the same in each: choose the device to
// ask about (the GPU, else the one named on the command line), print the match and its plan, and
// find the stored cubin to launch. What is particular to an application (its query, its grids, its
// check on the CPU) stays in its main.cpp.
//
// Header-only, C++17; needs cutune's lookup library (cutune::lookup) and cuda_driver_loader.hpp.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <cutune/lookup.hpp>

#include "cuda_driver_loader.hpp"

namespace example {

// The device a lookup asks about.
struct Target {
  std::string no_gpu;  // empty: there is a GPU, `device`; else why there is none (nothing is launched)
  CUdevice device = 0;
  cutune::lookup::DeviceIdentity identity;
};

// Loads the driver and asks about its first GPU. Without one, asks about the device the command
// line names: `device_name` (may be empty) and `cc` ("9.0"; empty: unknown, so no cubin can be
// chosen). Prints the "device" line. Empty, having printed nothing, when `cc` does not look like
// "9.0"; the application then says so.
inline std::optional<Target> choose_target(Driver& driver, const std::string& device_name, const std::string& cc) {
  Target target;
  target.no_gpu = driver.load();
  auto& identity = target.identity;
  if (target.no_gpu.empty()) {
    const Gpu gpu = first_gpu(driver);
    target.device = gpu.device;
    identity = {gpu.uuid, gpu.name, gpu.cc_major, gpu.cc_minor};
  } else {
    identity.name = device_name;
    if (!cc.empty() && std::sscanf(cc.c_str(), "%d.%d", &identity.cc_major, &identity.cc_minor) != 2) return {};
  }
  std::printf("device     %s\n", target.no_gpu.empty()
                                     ? (identity.name + " (" + identity.uuid + ")").c_str()
                                     : ("none: " + target.no_gpu + "; asking for '" + identity.name + "'").c_str());
  return target;
}

// Which level answered and with which config.
inline void print_level_and_config(const cutune::lookup::Match& match) {
  std::printf("level      %d (%s): %s\n", static_cast<int>(match.level), cutune::lookup::to_string(match.level),
              match.basis.c_str());
  std::printf("config     %s\n", match.config.c_str());
}

// The steps of a plan, memsets and launches in order, with their sizes.
inline void print_plan(const std::vector<cutune::lookup::Step>& steps) {
  for (const auto& step : steps) {
    if (const auto* l = std::get_if<cutune::lookup::Launch>(&step))
      std::printf("  launch   %s grid %u,%u,%u block %u,%u,%u shared %u B\n", l->kernel.c_str(), l->grid[0], l->grid[1],
                  l->grid[2], l->block[0], l->block[1], l->block[2], l->dynamic_shared_bytes);
    else {
      const auto& m = std::get<cutune::lookup::Memset>(step);
      std::printf("  memset   %s word 0x%08x, %lld B at +%lld%s\n", m.buffer.c_str(), m.word,
                  static_cast<long long>(m.bytes), static_cast<long long>(m.byte_offset),
                  m.stream_write ? " (stream writes)" : "");
    }
  }
}

// The match of a kernel spec's lookup: level, config, what was measured and its plan, whose sizes
// are the matched problem's (`plan_note` says which, e.g. "grids for the matched size").
inline void print_match(const cutune::lookup::Match& match, const char* plan_note) {
  print_level_and_config(match);
  if (match.result_id)
    std::printf("measured   %s (matched on %s), %.4f ms on %s; size distance %.3f\n", match.matched_problem.c_str(),
                match.match_key.c_str(), *match.time_ms, match.device_name.c_str(), match.size_distance);
  std::printf("plan       as measured (%s; this app sizes its own):\n", plan_note);
  print_plan(match.steps);
}

// The stored cubin for the query on the target's architecture, when there is a GPU to launch it
// on; otherwise prints why not and returns nothing. Without a GPU it still reports the cubin that
// a device of the named compute capability would get. `source` is the kernel's source, which an
// application without a fitting cubin would compile with NVRTC instead.
inline std::optional<cutune::lookup::Cubin> cubin_to_launch(cutune::lookup::Database& results,
                                                            const cutune::lookup::Query& query, const Target& target,
                                                            const char* source) {
  const auto& identity = target.identity;
  if (!target.no_gpu.empty()) {
    if (identity.cc_major != 0) {
      const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
      const auto cubin = results.cubin(query, arch);
      std::printf("cubin      %s\n", cubin ? (std::to_string(cubin.image.size()) + " bytes for " + cubin.arch).c_str()
                                           : ("none for " + arch + ": " + cubin.reason).c_str());
    }
    std::printf("no GPU: skipped the launch (%s)\n", target.no_gpu.c_str());
    return {};
  }
  const std::string arch = cutune::lookup::arch_of(identity.cc_major, identity.cc_minor);
  auto cubin = results.cubin(query, arch);
  if (!cubin) {
    std::printf("cubin      none for %s: %s; skipped the launch (an application would compile %s with NVRTC here)\n",
                arch.c_str(), cubin.reason.c_str(), source);
    return {};
  }
  std::printf("cubin      %zu bytes for %s\n", cubin.image.size(), cubin.arch.c_str());
  return cubin;
}

}  // namespace example
