#pragma once
// Element types a problem can name, and what they are called in CUDA source.
#include <cstddef>
#include <string>
#include <vector>

namespace cutune {

struct ElementType {
  std::string name;       // int32, uint32, int64, float32, float64
  std::string cuda_name;  // int, unsigned int, long long, float, double
  std::size_t bytes;
};

// Throws UsageError naming the allowed types when `name` is not one of `allowed`.
const ElementType& element_type(const std::string& name, const std::vector<std::string>& allowed);

}  // namespace cutune
