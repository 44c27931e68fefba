#pragma once
// Reading JSON that someone else wrote: the parse (nesting bounded), typed reads of members that
// refuse what makes no sense with a message naming the member, and values quoted short. Shared
// by the importers (db/interchange*.cpp) and the --simulate reader (tuner/simulate/landscape.cpp),
// so header-only: the simulator does not link the interchange library.
//
// Every refusal is an InterchangeError of one short line (`tune` prints it with exit 2). A message
// quotes at most kQuoted characters of any value it was given, never a whole document.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "interchange.hpp"

namespace cutune::db::interchange {

// Ordered, so that stored JSON text (configs, launch plans, descriptors) survives a round trip
// byte for byte.
using Json = nlohmann::ordered_json;

// Deeper nesting is refused before parsing: nothing these formats hold nests past a handful of
// levels, and nlohmann's serializer (dump) recurses once per level.
inline constexpr int kMaxNesting = 64;
inline constexpr std::size_t kQuoted = 40;

// Text quoted in a message: at most `limit` characters, one line.
inline std::string in_quotes(std::string_view text, std::size_t limit = kQuoted) {
  return "'" + shortened(text, limit) + "'";
}

// A JSON value as a message shows it: a string quoted, anything else as its (shortened) JSON text.
inline std::string shown(const Json& value) {
  if (value.is_string()) return in_quotes(value.get_ref<const std::string&>());
  if (value.is_number_float() && !std::isfinite(value.get<double>()))
    return value.get<double>() > 0 ? "1e999" : "-1e999";
  if (value.is_array() && value.size() > 8) return "an array of " + std::to_string(value.size()) + " values";
  if (value.is_object() && value.size() > 8) return "an object of " + std::to_string(value.size()) + " members";
  return shortened(value.dump(), kQuoted);
}

// nlohmann's messages start with "[json.exception.type_error.302] "; the rest is what matters.
inline std::string without_exception_tag(const std::string& message) {
  const auto end = message.find("] ");
  return message.rfind("[json.exception", 0) == 0 && end != std::string::npos ? message.substr(end + 2) : message;
}

// Parses a whole file's text; throws InterchangeError naming `source` for text that is not JSON
// or nests deeper than kMaxNesting.
inline Json parse_json(const std::string& text, const std::string& source) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if ((c == '[' || c == '{') && ++depth > kMaxNesting) {
      throw InterchangeError(in_quotes(source, 120) + " nests arrays and objects deeper than " +
                             std::to_string(kMaxNesting) + " levels (at byte " + std::to_string(i) + ")");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  try {
    return Json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers such as 1e999
    throw InterchangeError(in_quotes(source, 120) +
                           " is not valid JSON: " + shortened(without_exception_tag(e.what()), 120));
  }
}

// ---- typed reads of an object's members ----------------------------------------------------------
// `object` must be an object (callers check the sections they walk). Absent and null are the
// same: a member that is not there. Each read refuses another type or a value out of range,
// naming the member: "\"time\" is -1, not a positive number".

inline const Json* member(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] inline void refuse_member(std::string_view key, const Json& value, std::string_view wanted) {
  throw InterchangeError("\"" + shortened(key, kQuoted) + "\" is " + shown(value) + ", not " + std::string(wanted));
}

[[noreturn]] inline void missing_member(std::string_view key) {
  throw InterchangeError("\"" + shortened(key, kQuoted) + "\" is missing");
}

inline const Json& required(const Json& object, std::string_view key) {
  const Json* value = member(object, key);
  if (!value) missing_member(key);
  return *value;
}

// A string. non_empty refuses ""; a name is non-empty, at most 1000 bytes and free of control
// characters, and a label the same but may be empty.
enum class Text { any, non_empty, name, label };
inline std::string text_value(std::string_view key, const Json& value, Text kind = Text::any) {
  const char* wanted = kind == Text::any ? "a string" : kind == Text::label ? "a one-line text" : "a non-empty string";
  if (!value.is_string()) refuse_member(key, value, wanted);
  const std::string& text = value.get_ref<const std::string&>();
  if ((kind == Text::non_empty || kind == Text::name) && text.empty()) refuse_member(key, value, wanted);
  if (kind == Text::name || kind == Text::label) {
    if (text.size() > 1000) refuse_member(key, value, "a name of at most 1000 bytes");
    for (const char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F)
        refuse_member(key, value, "a name without control characters");
  }
  return text;
}
inline std::string text_at(const Json& object, std::string_view key, Text kind = Text::any) {
  return text_value(key, required(object, key), kind);
}
inline std::string text_or(const Json& object, std::string_view key, std::string fallback, Text kind = Text::any) {
  const Json* value = member(object, key);
  return value ? text_value(key, *value, kind) : std::move(fallback);
}

// A finite number: any, at least zero, or above zero.
enum class Sign { any, non_negative, positive };
inline double number_value(std::string_view key, const Json& value, Sign sign = Sign::any) {
  const char* wanted = sign == Sign::positive       ? "a positive number"
                       : sign == Sign::non_negative ? "a number of at least 0"
                                                    : "a number";
  if (!value.is_number()) refuse_member(key, value, wanted);
  const double v = value.get<double>();
  if (!std::isfinite(v) || (sign == Sign::positive && !(v > 0)) || (sign == Sign::non_negative && !(v >= 0)))
    refuse_member(key, value, wanted);
  return v;
}
inline double number_or(const Json& object, std::string_view key, double fallback, Sign sign = Sign::any) {
  const Json* value = member(object, key);
  return value ? number_value(key, *value, sign) : fallback;
}
inline std::optional<double> optional_number(const Json& object, std::string_view key, Sign sign = Sign::any) {
  const Json* value = member(object, key);
  return value ? std::optional<double>(number_value(key, *value, sign)) : std::nullopt;
}

// An integer from `low` to `high` (JSON integers only: 2.5 and 1e3 are refused).
inline std::int64_t integer_value(std::string_view key, const Json& value, std::int64_t low = 0,
                                  std::int64_t high = std::numeric_limits<std::int64_t>::max()) {
  const auto wanted = [&] {
    return high == std::numeric_limits<std::int64_t>::max()
               ? "an integer of at least " + std::to_string(low)
               : "an integer from " + std::to_string(low) + " to " + std::to_string(high);
  };
  if (value.is_number_unsigned()) {  // nlohmann reads 0 and up as unsigned
    if (value.get<std::uint64_t>() > static_cast<std::uint64_t>(high) ||
        static_cast<std::int64_t>(value.get<std::uint64_t>()) < low)
      refuse_member(key, value, wanted());
    return static_cast<std::int64_t>(value.get<std::uint64_t>());
  }
  if (!value.is_number_integer() || value.get<std::int64_t>() < low || value.get<std::int64_t>() > high)
    refuse_member(key, value, wanted());
  return value.get<std::int64_t>();
}
inline std::int64_t integer_at(const Json& object, std::string_view key, std::int64_t low = 0,
                               std::int64_t high = std::numeric_limits<std::int64_t>::max()) {
  return integer_value(key, required(object, key), low, high);
}
inline std::int64_t integer_or(const Json& object, std::string_view key, std::int64_t fallback, std::int64_t low = 0,
                               std::int64_t high = std::numeric_limits<std::int64_t>::max()) {
  const Json* value = member(object, key);
  return value ? integer_value(key, *value, low, high) : fallback;
}

inline bool boolean_or(const Json& object, std::string_view key, bool fallback) {
  const Json* value = member(object, key);
  if (value && !value->is_boolean()) refuse_member(key, *value, "true or false");
  return value ? value->get<bool>() : fallback;
}

// An object or array member, required.
inline const Json& object_at(const Json& object, std::string_view key) {
  const Json& value = required(object, key);
  if (!value.is_object()) refuse_member(key, value, "an object");
  return value;
}
inline const Json& array_at(const Json& object, std::string_view key) {
  const Json& value = required(object, key);
  if (!value.is_array()) refuse_member(key, value, "an array");
  return value;
}

// A parameter's value in a config: a string, a finite number or a boolean.
inline bool is_parameter_value(const Json& value) {
  return value.is_string() || value.is_boolean() || value.is_number_integer() || value.is_number_unsigned() ||
         (value.is_number_float() && std::isfinite(value.get<double>()));
}

}  // namespace cutune::db::interchange
