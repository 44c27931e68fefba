#include "field_text.hpp"

#include <cctype>

#include "core/error.hpp"

namespace cutune {

std::vector<NamedValue> parse_named_values(std::string_view text) {
  if (text.empty()) throw UsageError("empty name=value list");
  std::vector<NamedValue> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, end - start);
    const std::size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      throw UsageError("'" + std::string(item) + "' in '" + std::string(text) + "' is not name=value");
    if (equals == 0) throw UsageError("'" + std::string(item) + "' in '" + std::string(text) + "' has no name");
    NamedValue parsed{std::string(item.substr(0, equals)), std::string(item.substr(equals + 1))};
    for (const NamedValue& earlier : items)
      if (earlier.name == parsed.name)
        throw UsageError("'" + parsed.name + "' is given twice in '" + std::string(text) + "'");
    items.push_back(std::move(parsed));
    start = end + 1;
  }
  return items;
}

std::string format_named_values(const std::vector<NamedValue>& items) {
  std::string text;
  for (const NamedValue& item : items) {
    for (const std::string* part : {&item.name, &item.value})
      if (part->find_first_of(",=") != std::string::npos)
        throw Error("'" + *part + "' cannot be written as name=value text (it holds ',' or '=')");
    if (!text.empty()) text += ',';
    text += item.name;
    text += '=';
    text += item.value;
  }
  return text;
}

bool is_identifier(std::string_view name) {
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (const char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

}  // namespace cutune
