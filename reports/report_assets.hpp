#pragma once
// The report page's parts, embedded at build time (see reports/CMakeLists.txt).
#include <string_view>

namespace cutune::report::assets {

std::string_view page_html();
std::string_view style_css();
std::string_view page_js();
std::string_view chart_js();  // Chart.js, the version pinned in reports/package.json
std::string_view chart_js_version();

}  // namespace cutune::report::assets
