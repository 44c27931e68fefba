#pragma once
// The report page's parts, embedded at build time (see reports/CMakeLists.txt).
#include <string_view>

namespace cutune::report::assets {

std::string_view page_html();     // a (device, family) or run report
std::string_view index_html();    // a database's index
std::string_view compare_html();  // two runs or devices side by side
std::string_view style_css();
std::string_view common_js();  // helpers every page script uses, placed before it
std::string_view page_js();
std::string_view index_js();
std::string_view compare_js();
std::string_view chart_js();  // Chart.js, the version pinned in reports/package.json
std::string_view chart_js_version();

}  // namespace cutune::report::assets
