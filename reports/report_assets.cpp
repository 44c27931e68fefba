#include "report_assets.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace cutune::report::detail {
const std::vector<std::pair<std::string_view, std::string_view>>& embedded_assets();
}

namespace cutune::report::assets {
namespace {
std::string_view asset(std::string_view name) {
  for (const auto& [file, text] : detail::embedded_assets())
    if (file == name) return text;
  throw std::runtime_error("report asset '" + std::string(name) + "' is not embedded in this build");
}
}  // namespace

std::string_view page_html() { return asset("page.html"); }
std::string_view index_html() { return asset("index.html"); }
std::string_view compare_html() { return asset("compare.html"); }
std::string_view style_css() { return asset("style.css"); }
std::string_view common_js() { return asset("common.js"); }
std::string_view page_js() { return asset("report.js"); }
std::string_view index_js() { return asset("index.js"); }
std::string_view compare_js() { return asset("compare.js"); }
std::string_view chart_js() { return asset("chart.umd.min.js"); }
std::string_view chart_js_version() { return CUTUNE_CHART_JS_VERSION; }

}  // namespace cutune::report::assets
