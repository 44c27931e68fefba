#pragma once
// Checks a kernel spec before anything is tuned or stored: every length, grid, block, shared-memory
// size and argument evaluates for every problem and config (SpecFamily::check_plans), and every
// launch's arguments match its kernel's declaration. The latter compiles the template once (the
// first valid config, the first problem) through NVRTC with a static_assert per argument — the
// parameter count, pointer or not, pointee size, scalar size and kind — so it needs no GPU and is
// exact where the driver's parameter info would give sizes only. Kernels must also be defined
// with C linkage, which the compiled image's symbol table shows.
#include <string>
#include <vector>

#include "spec_family.hpp"

namespace cutune {

// Throws UsageError "<spec>: <field>: <what is wrong>".
void check_spec_kernels(const SpecFamily& family, const Space& space, const Problem& problem, const std::string& arch);

// Everything above, and that the constraints leave some config.
void check_spec_family(const SpecFamily& family, const Space& space, const std::vector<Problem>& problems,
                       const std::string& arch);

}  // namespace cutune
