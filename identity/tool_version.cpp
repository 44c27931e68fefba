#include "tool_version.hpp"

#include "cutune_git_commit.hpp"  // generated at build time (cmake/git_commit.cmake)

namespace cutune {

std::string tool_commit() { return CUTUNE_GIT_COMMIT; }

std::string tool_version() { return std::string("cutune ") + CUTUNE_VERSION + " (" + CUTUNE_GIT_COMMIT + ")"; }

}  // namespace cutune
