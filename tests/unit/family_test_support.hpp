#pragma once
// What the CPU tests of every family need: generated inputs for a problem, and a small device
// whose limits the families' spaces must respect.
#include <cstdint>
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "core/limits.hpp"
#include "family.hpp"

namespace cutune::testing {

inline HostBuffers generated_inputs(const Family& family, const Problem& problem, std::uint64_t seed) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, seed, inputs);
  return inputs;
}

// Fewer threads and much less shared memory than any supported GPU: constraints must bite.
inline DeviceLimits small_device() {
  DeviceLimits limits;
  limits.max_threads_per_block = 256;
  limits.max_shared_per_block = 16 * 1024;
  limits.max_shared_per_block_optin = 32 * 1024;
  return limits;
}

// Calls `check` on every config of the family's space for a device like an H100 and for
// small_device(); the small one must admit fewer configs, and neither none.
inline void for_each_config_on_both_devices(const Family& family,
                                            const std::function<void(const DeviceLimits&, const ConfigView&)>& check) {
  std::size_t sizes[2] = {0, 0};
  int which = 0;
  for (const DeviceLimits& limits : {DeviceLimits{}, small_device()}) {
    const Space space = family.space(limits);
    const auto configs = space.enumerate();
    EXPECT_FALSE(configs.empty());
    for (const auto& config : configs) {
      SCOPED_TRACE(space.key(config));
      check(limits, ConfigView(space, config));
    }
    sizes[which++] = configs.size();
  }
  EXPECT_LT(sizes[1], sizes[0]);
}

// Every config of `family` on `limits` passes `holds` (which names what it checks); returns how
// many configs there were.
inline std::size_t expect_every_config(const Family& family, const DeviceLimits& limits,
                                       const std::function<void(const ConfigView&)>& holds) {
  const Space space = family.space(limits);
  const auto configs = space.enumerate();
  for (const auto& config : configs) {
    SCOPED_TRACE(space.key(config));
    const ConfigView c(space, config);
    EXPECT_LE(c["block"], limits.max_threads_per_block);
    holds(c);
  }
  return configs.size();
}

}  // namespace cutune::testing
