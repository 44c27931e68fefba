#pragma once
// What the CPU tests of every family need: a problem's generated inputs, and a check that a
// space honours a device's limits. One home, so each family's test says what is particular to it.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

#include "family.hpp"

namespace cutune::testing {

inline HostBuffers inputs_for(const Family& family, const Problem& problem, std::uint64_t seed) {
  HostBuffers inputs;
  for (const auto& spec : family.buffers(problem))
    if (spec.role == BufferRole::input) inputs.at(spec.name).resize(static_cast<std::size_t>(spec.bytes));
  family.generate_inputs(problem, seed, inputs);
  return inputs;
}

// A device with fewer threads and less shared memory per block than any Hopper.
inline DeviceLimits small_device() {
  DeviceLimits small;
  small.max_threads_per_block = 256;
  small.max_shared_per_block = 16 * 1024;
  small.max_shared_per_block_optin = 32 * 1024;
  return small;
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
