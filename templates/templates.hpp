#pragma once
// The CUDA source templates, embedded at build time from templates/*.cu.
#include <string>
#include <string_view>
#include <vector>

namespace cutune {

// The text of templates/<file_name>; throws cutune::Error naming the file if it was not embedded.
std::string_view template_source(std::string_view file_name);

// Names of every embedded template file, for listings and CI compile checks.
std::vector<std::string> template_files();

}  // namespace cutune
