#pragma once
// The names of the functions a cubin defines, read from its ELF symbol table: what
// cuModuleGetFunction can find. A kernel declared without extern "C" appears under its C++ mangled
// name (_Z6saxpyifPKfPf), so a spec that launches "saxpy" would fail for every config.
#include <string>
#include <vector>

namespace cutune {

// Names of the symbols of type FUNC in an ELF64 image; empty for anything that is not one.
std::vector<std::string> cubin_function_names(const std::vector<char>& cubin);

}  // namespace cutune
