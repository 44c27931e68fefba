#include "element_types.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace cutune {

const ElementType& element_type(const std::string& name, const std::vector<std::string>& allowed) {
  static const std::vector<ElementType> all{{"int32", "int", 4},
                                            {"uint32", "unsigned int", 4},
                                            {"int64", "long long", 8},
                                            {"float32", "float", 4},
                                            {"float64", "double", 8}};
  if (std::find(allowed.begin(), allowed.end(), name) != allowed.end())
    for (const auto& t : all)
      if (t.name == name) return t;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  throw UsageError("unknown --type '" + name + "' (this kernel takes: " + list + ")");
}

}  // namespace cutune
