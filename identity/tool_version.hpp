#pragma once
// What built this binary: the project's version (CMake's project()) and the git commit of the tree it
// was compiled from, taken at build time ("+dirty" when tracked files differed; "unknown" outside a
// git checkout). Runs record it, so that a result can be traced to the code that measured it.
#include <string>

namespace cutune {

std::string tool_commit();   // "2f6e5b3", "2f6e5b3+dirty" or "unknown"
std::string tool_version();  // "cutune 0.1.0 (2f6e5b3)"

}  // namespace cutune
