#pragma once
// The one codec for "name=value,name=value" text: configs ("block=256,ept=8"), problem keys
// ("n=1048576,op=sum,type=float32") and the fields users type on command lines. Every reader of
// such text goes through parse_named_values, so all of them accept and refuse the same things.
#include <string>
#include <string_view>
#include <vector>

namespace cutune {

struct NamedValue {
  std::string name;
  std::string value;
  bool operator==(const NamedValue&) const = default;
};

// Splits "a=1,b=x" into its items, in order. Refuses (UsageError naming the item) an item
// without '=', an empty name, a name given twice, and empty text; values may be empty strings
// only when written so ("a="). Spaces around names and values are not trimmed: a key is data.
std::vector<NamedValue> parse_named_values(std::string_view text);

// The inverse: "a=1,b=x". Names and values must not contain ',' or '=' (Error otherwise: the
// text would not read back).
std::string format_named_values(const std::vector<NamedValue>& items);

// A name as families, specs and expressions use them: a letter or '_', then letters, digits, '_'.
bool is_identifier(std::string_view name);

}  // namespace cutune
