#include "templates.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace cutune::detail {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_templates();
}

namespace cutune {

std::string_view template_source(std::string_view file_name) {
  for (const auto& [name, text] : detail::embedded_templates())
    if (name == file_name) return text;
  throw std::runtime_error("template '" + std::string(file_name) + "' is not embedded in this build");
}

std::vector<std::string> template_files() {
  std::vector<std::string> names;
  for (const auto& entry : detail::embedded_templates()) names.emplace_back(entry.first);
  return names;
}

}  // namespace cutune
