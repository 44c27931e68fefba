#pragma once
// CLI11 reads "99999999999999999999" into a 64-bit option without complaint (the value is clamped),
// so a mistyped size or seed would silently become another one. The 64-bit integer options check
// their text with this validator first; 32-bit ones are range-checked by CLI11 itself.
#include <CLI/CLI.hpp>

#include <charconv>
#include <limits>
#include <string>

namespace cutune {

// Accepts the whole text as one integer of type T (decimal, optional leading '-' for signed T).
template <class T>
CLI::Validator whole_number_of_type(const std::string& range_words) {
  return CLI::Validator(
      [range_words](const std::string& text) -> std::string {
        T value{};
        const char* end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error == std::errc::result_out_of_range) return "'" + text + "' is out of range (" + range_words + ")";
        if (error != std::errc() || stop != end) return "'" + text + "' is not a whole number (" + range_words + ")";
        return {};
      },
      "INT");
}

inline CLI::Validator int64_text() {
  return whole_number_of_type<std::int64_t>("a 64-bit integer, at most " +
                                            std::to_string(std::numeric_limits<std::int64_t>::max()));
}

inline CLI::Validator uint64_text() {
  return whole_number_of_type<std::uint64_t>("0 or more, at most " +
                                             std::to_string(std::numeric_limits<std::uint64_t>::max()));
}

}  // namespace cutune
