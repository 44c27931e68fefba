#pragma once
// What a Kernel Tuner cache file must hold, checked in one place for `tune db import-kt`
// (interchange_kernel_tuner.cpp) and `tune --simulate` (tuner/simulate/landscape.cpp). Header-only:
// the simulator does not link the interchange library.
//
// A cache file is an object with "cache": {key: entry}, the parameters' names in
// "tune_params_keys" (or, without it, in the order of "tune_params"), and optionally
// "kernel_name", "device_name" and "problem_size". Each key is the entry's parameter values
// joined by commas in that order; an entry holds its values by name too (a value it lacks is
// read from its key), "time" (ms: a positive number, or the name of a failure) and optionally
// "times" (the samples, positive), the costs "compile_time", "verification_time",
// "benchmark_time" (ms, at least 0), "GB/s", "GFLOP/s" (at least 0) and "timestamp".
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "interchange_json.hpp"

namespace cutune::db::kernel_tuner {

using interchange::Json;

struct Entry {
  std::string key;
  const Json* json = nullptr;     // the entry itself, inside the file's JSON
  std::vector<Json> values;       // one per parameter, in parameter order: strings, finite numbers, booleans
  std::optional<double> time_ms;  // the objective when the config was measured (> 0)
  std::string failure;            // else the name of its failure ("CompilationFailedConfig", …)
  std::vector<double> samples;    // "times" (each > 0)
  double compile_ms = 0, verification_ms = 0, benchmark_ms = 0;
  std::optional<double> gbs, gflops;
};

struct CacheFile {
  std::vector<std::string> parameters;
  std::optional<std::string> kernel_name, device_name;  // absent: nullopt; kernel_name is never empty
  Json problem_size;                                    // null when absent; else a positive integer or a list of them
  std::int64_t problem_elements = 0;                    // the product of problem_size; 0 when absent
  std::vector<Entry> entries;                           // at least one
};

// "tune_params": each parameter's values, in order (a non-empty list of distinct values).
inline std::vector<std::vector<Json>> parameter_values(const Json& file, const std::vector<std::string>& parameters) {
  using namespace interchange;
  const Json& params = object_at(file, "tune_params");
  std::vector<std::vector<Json>> all;
  for (const auto& name : parameters) {
    const Json* values = member(params, name);
    if (!values || !values->is_array() || values->empty())
      throw InterchangeError("parameter " + in_quotes(name) + " has no list of values in \"tune_params\"");
    std::set<std::string> seen;
    for (const auto& v : *values) {
      if (!is_parameter_value(v))
        throw InterchangeError("parameter " + in_quotes(name) + " has the value " + shown(v) +
                               " in \"tune_params\" (values are strings, numbers or booleans)");
      if (!seen.insert(v.is_string() ? v.get<std::string>() : v.dump()).second)
        throw InterchangeError("parameter " + in_quotes(name) + " lists the value " + shown(v) +
                               " twice in \"tune_params\"");
    }
    all.emplace_back(values->begin(), values->end());
  }
  return all;
}

namespace detail {

inline std::vector<std::string> parameter_names(const Json& file) {
  using namespace interchange;
  std::vector<std::string> names;
  if (const Json* keys = member(file, "tune_params_keys")) {
    if (!keys->is_array()) refuse_member("tune_params_keys", *keys, "a list of parameter names");
    for (const auto& k : *keys) names.push_back(text_value("tune_params_keys", k, Text::name));
  } else if (const Json* params = member(file, "tune_params"); params && params->is_object()) {
    for (const auto& [name, values] : params->items()) names.push_back(name);
  } else {
    throw InterchangeError("it has neither \"tune_params_keys\" nor a \"tune_params\" object to name its parameters");
  }
  if (names.empty()) throw InterchangeError("it names no parameters");
  std::set<std::string> seen;
  for (const auto& n : names) {
    if (n.empty() || n.find_first_of(",=") != std::string::npos)
      throw InterchangeError("parameter name " + in_quotes(n) + " is empty or holds ',' or '='");
    if (!seen.insert(n).second) throw InterchangeError("parameter " + in_quotes(n) + " is named twice");
  }
  return names;
}

// null, a positive integer, or a non-empty list of them whose product fits 64 bits.
inline std::int64_t problem_elements(const Json& size) {
  using namespace interchange;
  if (size.is_null()) return 0;
  const auto positive = [](const Json& d) {
    // nlohmann reads 0 and up as unsigned
    return d.is_number_integer() &&
           (d.is_number_unsigned() ? d.get<std::uint64_t>() - 1 < std::uint64_t{INT64_MAX} : d.get<std::int64_t>() > 0);
  };
  const auto refuse = [&] { refuse_member("problem_size", size, "a positive integer or a list of them"); };
  if (!size.is_array()) {
    if (!positive(size)) refuse();
    return size.get<std::int64_t>();
  }
  if (size.empty() || size.size() > 16) refuse();
  std::int64_t product = 1;
  for (const auto& d : size) {
    if (!positive(d)) refuse();
    if (__builtin_mul_overflow(product, d.get<std::int64_t>(), &product))
      throw InterchangeError("\"problem_size\" is " + shown(size) + ", more elements than 64 bits count");
  }
  return product;
}

// The key's comma-separated values, when it has one per parameter.
inline std::optional<std::vector<std::string>> split_key(const std::string& key, std::size_t parameters) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t comma = key.find(',', start);
    parts.push_back(key.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (parts.size() != parameters) return std::nullopt;
  return parts;
}

inline Entry read_entry(const std::string& key, const Json& json, const std::vector<std::string>& parameters) {
  using namespace interchange;
  if (key.empty()) throw InterchangeError("a cache entry has an empty key");
  for (const char c : key)  // keys name configs in traces and messages, one line each
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) throw InterchangeError("its key holds a control character");
  if (!json.is_object()) throw InterchangeError("the entry is " + shown(json) + ", not an object");
  Entry e;
  e.key = key;
  e.json = &json;
  std::optional<std::vector<std::string>> parts;
  for (std::size_t p = 0; p < parameters.size(); ++p) {
    const std::string& name = parameters[p];
    if (const Json* value = member(json, name)) {
      if (!is_parameter_value(*value)) refuse_member(name, *value, "a parameter value (a string, number or boolean)");
      e.values.push_back(*value);
      continue;
    }
    if (!parts) parts = split_key(key, parameters.size());
    if (!parts)
      throw InterchangeError("it lacks parameter " + in_quotes(name) +
                             ", and its key does not hold one value for each of the " +
                             std::to_string(parameters.size()) + " parameters in \"tune_params_keys\"");
    const std::string& text = (*parts)[p];
    const Json parsed = Json::parse(text, nullptr, false);
    e.values.push_back(!parsed.is_discarded() && is_parameter_value(parsed) ? parsed : Json(text));
  }
  const Json& time = required(json, "time");
  if (time.is_string())
    e.failure = text_value("time", time, Text::name);
  else
    e.time_ms = number_value("time", time, Sign::positive);
  if (const Json* samples = member(json, "times")) {
    if (!samples->is_array()) refuse_member("times", *samples, "a list of positive numbers");
    for (const auto& s : *samples) e.samples.push_back(number_value("times", s, Sign::positive));
  }
  e.compile_ms = number_or(json, "compile_time", 0, Sign::non_negative);
  e.verification_ms = number_or(json, "verification_time", 0, Sign::non_negative);
  e.benchmark_ms = number_or(json, "benchmark_time", 0, Sign::non_negative);
  // User metrics: a failed config may hold anything there; only a number is kept.
  for (const auto& [name, field] : {std::pair{"GB/s", &e.gbs}, std::pair{"GFLOP/s", &e.gflops}})
    if (const Json* value = member(json, name); value && value->is_number())
      *field = number_value(name, *value, Sign::non_negative);
  return e;
}

}  // namespace detail

// Checks the whole file; throws InterchangeError naming `source`, the entry and the first problem
// for anything it does not hold as described above.
inline CacheFile read_cache_file(const Json& file, const std::string& source) {
  using namespace interchange;
  const std::string file_name = in_quotes(source, 120);
  CacheFile c;
  try {
    if (!file.is_object()) throw InterchangeError("it is " + shown(file) + ", not an object");
    const Json* cache = member(file, "cache");
    if (!cache || !cache->is_object()) throw InterchangeError("no \"cache\" object");
    c.parameters = detail::parameter_names(file);
  } catch (const InterchangeError& e) {
    throw InterchangeError(file_name + " is not a Kernel Tuner cache file: " + e.what());
  }
  try {
    if (member(file, "kernel_name")) c.kernel_name = text_at(file, "kernel_name", Text::name);
    if (member(file, "device_name"))
      c.device_name = text_at(file, "device_name", Text::label);  // "" for an unnamed GPU
    if (const Json* size = member(file, "problem_size")) c.problem_size = *size;
    c.problem_elements = detail::problem_elements(c.problem_size);
  } catch (const InterchangeError& e) {
    throw InterchangeError(file_name + ": " + e.what());
  }
  const Json& cache = file.at("cache");
  if (cache.empty()) throw InterchangeError(file_name + ": its \"cache\" is empty");
  c.entries.reserve(cache.size());
  for (const auto& [key, entry] : cache.items()) {
    try {
      c.entries.push_back(detail::read_entry(key, entry, c.parameters));
    } catch (const InterchangeError& e) {
      throw InterchangeError(file_name + ": cache entry " + in_quotes(key) + ": " + e.what());
    }
  }
  return c;
}

}  // namespace cutune::db::kernel_tuner
