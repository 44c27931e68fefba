#pragma once
// --json: one JSON document on stdout per command, its keys in the order they were set and always
// present (null where a value is unknown), so that scripts can rely on them.
#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>
#include <ostream>

namespace cutune {

inline constexpr const char* json_option_help = "print one JSON document instead of text";

// Text that is not UTF-8 (a device name from an imported file, say) is replaced, not refused.
inline void print_json(std::ostream& out, const nlohmann::ordered_json& document) {
  out << document.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

template <class T>
nlohmann::ordered_json json_or_null(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json();
}

// JSON has no infinity or NaN: such a number is unknown.
inline nlohmann::ordered_json finite_or_null(double value) {
  return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
}

}  // namespace cutune
