#pragma once
// The reduction operators of the reduce and resample families, on the host side: names, the
// code the templates see as CUTUNE_OP, the reference result of a range, and the inputs that make
// each operator's result checkable.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "data.hpp"

namespace cutune {

enum class ReductionOp { sum, min, max, mean };

inline std::string to_string(ReductionOp op) {
  switch (op) {
    case ReductionOp::sum:
      return "sum";
    case ReductionOp::min:
      return "min";
    case ReductionOp::max:
      return "max";
    case ReductionOp::mean:
      return "mean";
  }
  return "?";
}

// Throws UsageError naming the operators `allowed` when `name` is not one of them.
inline ReductionOp reduction_op(const std::string& name, const std::vector<ReductionOp>& allowed) {
  std::string list;
  for (const ReductionOp op : allowed) {
    if (to_string(op) == name) return op;
    list += (list.empty() ? "" : ", ") + to_string(op);
  }
  throw UsageError("unknown operator '" + name + "' (this kernel takes: " + list + ")");
}

// CUTUNE_OP in the templates: 0 sum, 1 min, 2 max. A mean is a sum divided by the count, so it
// shares the sum's code (and compiled binaries); the division is a kernel argument.
inline int template_op_code(ReductionOp op) { return op == ReductionOp::min ? 1 : op == ReductionOp::max ? 2 : 0; }

// The exact result over `values` (sums in long double, which is exact for the inputs below).
template <class T>
long double reduce_range(std::span<const T> values, ReductionOp op) {
  const auto serial = [op](std::span<const T> part) -> long double {
    if (op == ReductionOp::min) return *std::min_element(part.begin(), part.end());
    if (op == ReductionOp::max) return *std::max_element(part.begin(), part.end());
    long double sum = 0;
    for (const T v : part) sum += v;
    return sum;
  };
  long double result;
  if (values.size() <= 4 * kChunk) {
    result = serial(values);
  } else {
    // Large references (reduce at 2^26 and up) on every core: per-chunk results combined in chunk
    // order, so the sum is the same on any machine (and exact on fill_dyadic data in any order).
    std::vector<long double> parts((values.size() + kChunk - 1) / kChunk);
    for_each_chunk(values.size(), kChunk, [&](std::size_t chunk, std::size_t first, std::size_t count) {
      parts[chunk] = serial(values.subspan(first, count));
    });
    result = parts[0];
    for (std::size_t c = 1; c < parts.size(); ++c) {
      if (op == ReductionOp::min)
        result = std::min(result, parts[c]);
      else if (op == ReductionOp::max)
        result = std::max(result, parts[c]);
      else
        result += parts[c];
    }
  }
  return op == ReductionOp::mean ? result / static_cast<long double>(values.size()) : result;
}

// Sums get multiples of 1/8, whose sums are exact in any order; minima and maxima get values
// with full mantissas, so the extreme of a range is one element rather than one of many ties.
template <class T>
void fill_for(ReductionOp op, std::span<T> values, std::uint64_t seed) {
  if (op == ReductionOp::sum || op == ReductionOp::mean)
    fill_dyadic(values, seed);
  else
    fill_uniform_nonzero(values, seed);
}

}  // namespace cutune
