#pragma once
// Deterministic mutations of fuzz inputs: structure-aware ones on JSON documents (delete,
// duplicate, retype and rename members, odd numbers and strings, extra or missing
// tune_params_keys, empty and cut cache keys, deep nesting) followed now and then by text-level
// ones (truncation, flipped bytes, numbers no double holds), and token-level ones on expressions.
// The same seed text and generator state always give the same result.
#include <cstdint>
#include <random>
#include <string>

namespace cutune::fuzz {

using Rng = std::mt19937_64;

// One to four mutations of a JSON document (or of text that no longer parses as one).
std::string mutate_json(const std::string& seed, Rng& rng);
// One to four mutations of a --restrict / spec expression.
std::string mutate_expression(const std::string& seed, Rng& rng);

}  // namespace cutune::fuzz
