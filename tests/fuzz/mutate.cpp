#include "mutate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include <nlohmann/json.hpp>

namespace cutune::fuzz {
namespace {

using Json = nlohmann::ordered_json;

std::size_t below(Rng& rng, std::size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }
template <class T>
const T& pick(Rng& rng, const std::vector<T>& items) {
  return items[below(rng, items.size())];
}

// Values that importers have got wrong, or could: wrong types, signs, magnitudes and texts.
Json interesting_value(Rng& rng) {
  switch (below(rng, 32)) {
    case 0:
      return nullptr;
    case 1:
      return true;
    case 2:
      return false;
    case 3:
      return 0;
    case 4:
      return -1;
    case 5:
      return 1;
    case 6:
      return -0.0;
    case 7:
      return 1e308;
    case 8:
      return -1e308;
    case 9:
      return std::numeric_limits<std::int64_t>::max();
    case 10:
      return std::numeric_limits<std::int64_t>::min();
    case 11:
      return std::numeric_limits<std::uint64_t>::max();
    case 12:
      return 4.9e-324;
    case 13:
      return 0.5;
    case 14:
      return -3.25;
    case 15:
      return "";
    case 16:
      return "x";
    case 17:
      return "big";
    case 18:
      return std::string(1000, 'A');
    case 19:
      return "a,b=c";
    case 20:
      return "line\nbreak\ttab";
    case 21:
      return "\xC3\xA9t\xC3\xA9";
    case 22:
      return Json::array();
    case 23:
      return Json::object();
    case 24:
      return Json::array({0, -1});
    case 25:
      return Json::array({1, "x", nullptr});
    case 26:
      return Json{{"a", 1}};
    case 27:
      return "RuntimeFailedConfig";
    case 28:
      return "ok";
    case 29:
      return "bogus_status";
    case 30:
      return 2147483648.0;
    default:
      return 1e-9;
  }
}

// Every value in the document, containers included, in document order (at most `limit`).
void collect(Json& node, std::vector<Json*>& nodes, std::size_t limit) {
  if (nodes.size() >= limit) return;
  nodes.push_back(&node);
  if (node.is_structured())
    for (auto& child : node) collect(child, nodes, limit);
}

Json* random_node(Json& root, Rng& rng, bool (*want)(const Json&) = nullptr) {
  std::vector<Json*> nodes;
  collect(root, nodes, 20000);
  if (want) std::erase_if(nodes, [&](const Json* n) { return !want(*n); });
  return nodes.empty() ? nullptr : nodes[below(rng, nodes.size())];
}

// A member of some object in the document named `key`, or nullptr.
Json* find_member(Json& root, const std::string& key, Rng& rng) {
  std::vector<Json*> nodes, found;
  collect(root, nodes, 20000);
  for (Json* n : nodes)
    if (n->is_object() && n->contains(key)) found.push_back(&(*n)[key]);
  return found.empty() ? nullptr : found[below(rng, found.size())];
}

// Keys the importers and the simulator read: setting one of them to an odd value reaches their
// checks far more often than a blind pick does.
const std::vector<std::string> kFieldNames = {"time",
                                              "times",
                                              "compile_time",
                                              "verification_time",
                                              "benchmark_time",
                                              "GB/s",
                                              "GFLOP/s",
                                              "timestamp",
                                              "problem_size",
                                              "kernel_name",
                                              "device_name",
                                              "tune_params_keys",
                                              "tune_params",
                                              "cache",
                                              "objective",
                                              "configuration",
                                              "invalidity",
                                              "measurements",
                                              "value",
                                              "name",
                                              "runtimes",
                                              "compilation",
                                              "format",
                                              "format_version",
                                              "devices",
                                              "uuid",
                                              "copy_bandwidth_gbs",
                                              "status",
                                              "time_ms_median",
                                              "time_ms_min",
                                              "time_ms_stdev",
                                              "samples",
                                              "config",
                                              "config_json",
                                              "family",
                                              "key",
                                              "size",
                                              "dtype",
                                              "descriptor",
                                              "run",
                                              "id",
                                              "device_uuid",
                                              "template_hash",
                                              "problem_key",
                                              "cubin_base64",
                                              "launch",
                                              "arch",
                                              "cutune",
                                              "device",
                                              "problem",
                                              "template",
                                              "hash",
                                              "results",
                                              "runs",
                                              "problems",
                                              "templates",
                                              "cubins",
                                              "problem_schemas",
                                              "fields",
                                              "seed",
                                              "error_index",
                                              "gbs",
                                              "copy_fraction",
                                              "elapsed_s",
                                              "created_at",
                                              "cc_major",
                                              "sm_count",
                                              "started_at"};

constexpr const char* kDeep = "@@deeply nested@@";

void mutate_structure(Json& doc, Rng& rng) {
  switch (below(rng, 14)) {
    case 0:
    case 1: {  // a named field gets an odd value
      if (Json* field = find_member(doc, pick(rng, kFieldNames), rng)) *field = interesting_value(rng);
      return;
    }
    case 2: {  // any value gets an odd value
      if (Json* node = random_node(doc, rng)) *node = interesting_value(rng);
      return;
    }
    case 3: {  // a member or element goes
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_structured() && !n.empty(); });
      if (!node) return;
      if (node->is_object())
        node->erase(std::next(node->begin(), static_cast<std::ptrdiff_t>(below(rng, node->size()))).key());
      else
        node->erase(below(rng, node->size()));
      return;
    }
    case 4: {  // an element is duplicated, or a member copied under another name
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_structured() && !n.empty(); });
      if (!node) return;
      const std::size_t at = below(rng, node->size());
      if (node->is_array()) {
        node->push_back((*node)[at]);
      } else {
        auto it = std::next(node->begin(), static_cast<std::ptrdiff_t>(at));
        (*node)[it.key() + (chance(rng, 0.5) ? "_copy" : ",1")] = it.value();
      }
      return;
    }
    case 5: {  // a key is renamed: emptied, cut, or given an extra value
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_object() && !n.empty(); });
      if (!node) return;
      auto it = std::next(node->begin(), static_cast<std::ptrdiff_t>(below(rng, node->size())));
      const std::string key = it.key();
      Json value = it.value();
      node->erase(key);
      std::string renamed;
      switch (below(rng, 4)) {
        case 0:
          renamed = "";
          break;
        case 1:
          renamed = key.substr(0, below(rng, key.size() + 1));
          break;
        case 2:
          renamed = key + ",7";
          break;
        default:
          renamed = "," + key + ",,";
          break;
      }
      (*node)[renamed] = std::move(value);
      return;
    }
    case 6: {  // tune_params_keys: an extra, a missing, a repeated or a mistyped name
      if (!doc.is_object() || !doc.contains("tune_params_keys") || !doc["tune_params_keys"].is_array()) return;
      Json& keys = doc["tune_params_keys"];
      switch (below(rng, 4)) {
        case 0:
          keys.push_back(chance(rng, 0.5) ? "extra_param" : "");
          break;
        case 1:
          if (!keys.empty()) keys.erase(below(rng, keys.size()));
          break;
        case 2:
          if (!keys.empty()) keys.push_back(keys[below(rng, keys.size())]);
          break;
        default:
          if (!keys.empty()) keys[below(rng, keys.size())] = interesting_value(rng);
          break;
      }
      return;
    }
    case 7: {  // a cache key emptied or cut short
      if (!doc.is_object() || !doc.contains("cache") || !doc["cache"].is_object() || doc["cache"].empty()) return;
      Json& cache = doc["cache"];
      auto it = std::next(cache.begin(), static_cast<std::ptrdiff_t>(below(rng, cache.size())));
      const std::string key = it.key();
      Json entry = it.value();
      if (entry.is_object() && !entry.empty() && chance(rng, 0.5)) entry.erase(entry.begin().key());
      cache.erase(key);
      const auto comma = key.rfind(',');
      cache[chance(rng, 0.5) || comma == std::string::npos ? std::string() : key.substr(0, comma)] = std::move(entry);
      return;
    }
    case 8: {  // a number changes sign, becomes zero or huge, or becomes its text (and back)
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_number() || n.is_string(); });
      if (!node) return;
      if (node->is_string()) {
        const Json parsed = Json::parse(node->get<std::string>(), nullptr, false);
        if (!parsed.is_discarded() && parsed.is_number())
          *node = parsed;
        else
          *node = node->get<std::string>() + "0";
        return;
      }
      const double v = node->get<double>();
      switch (below(rng, 4)) {
        case 0:
          *node = -v;
          break;
        case 1:
          *node = 0;
          break;
        case 2:
          *node = v * 1e300;
          break;
        default:
          *node = node->dump();
          break;
      }
      return;
    }
    case 9: {  // deep nesting: a placeholder that mutate_json replaces in the text (the serializer recurses)
      if (Json* node = random_node(doc, rng)) *node = kDeep;
      return;
    }
    case 10: {  // an object becomes an array of its values, or an array an object
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_structured(); });
      if (!node) return;
      Json other = node->is_object() ? Json::array() : Json::object();
      std::size_t i = 0;
      for (auto& child : *node) {
        if (other.is_array())
          other.push_back(child);
        else
          other[std::to_string(i++)] = child;
      }
      *node = std::move(other);
      return;
    }
    case 11: {  // an array loses or gains elements at the end
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_array(); });
      if (!node) return;
      if (!node->empty() && chance(rng, 0.5))
        node->erase(node->size() - 1);
      else
        node->push_back(interesting_value(rng));
      return;
    }
    case 12: {  // the document itself replaced by one of its parts, or wrapped
      if (chance(rng, 0.5)) {
        if (Json* node = random_node(doc, rng)) doc = Json(*node);
      } else {
        doc = Json::array({doc});
      }
      return;
    }
    default: {  // a member added with an odd name
      Json* node = random_node(doc, rng, [](const Json& n) { return n.is_object(); });
      if (node) (*node)[pick(rng, kFieldNames) + (chance(rng, 0.5) ? "" : "_x")] = interesting_value(rng);
      return;
    }
  }
}

void mutate_text(std::string& text, Rng& rng) {
  switch (below(rng, 6)) {
    case 0:  // truncated
      text.resize(below(rng, text.size() + 1));
      return;
    case 1:  // flipped bytes
      for (std::size_t n = 1 + below(rng, 8); n > 0 && !text.empty(); --n)
        text[below(rng, text.size())] ^= static_cast<char>(1 << below(rng, 8));
      return;
    case 2: {  // a number no double or integer holds
      std::vector<std::size_t> digits;
      for (std::size_t i = 0; i < text.size(); ++i)
        if (std::isdigit(static_cast<unsigned char>(text[i])) &&
            (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))
          digits.push_back(i);
      if (digits.empty()) return;
      const std::size_t at = digits[below(rng, digits.size())];
      const std::array<const char*, 5> huge = {"1e999", "-1e999", "123456789012345678901234567890", "1e-999", "-0"};
      std::size_t end = at;
      while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.')) ++end;
      text.replace(at, end - at, huge[below(rng, huge.size())]);
      return;
    }
    case 3: {  // a stray bracket, quote or byte
      const std::string stray = std::string("[]{}\",:\\\0\xff", 11);
      text.insert(below(rng, text.size() + 1), 1, stray[below(rng, stray.size())]);
      return;
    }
    case 4: {  // a slice repeated
      if (text.empty()) return;
      const std::size_t at = below(rng, text.size()),
                        length = 1 + below(rng, std::min<std::size_t>(64, text.size() - at));
      text.insert(below(rng, text.size() + 1), text.substr(at, length));
      return;
    }
    default:  // a slice removed
      if (text.empty()) return;
      {
        const std::size_t at = below(rng, text.size());
        text.erase(at, 1 + below(rng, std::min<std::size_t>(64, text.size() - at)));
      }
      return;
  }
}

}  // namespace

std::string mutate_json(const std::string& seed, Rng& rng) {
  Json doc = Json::parse(seed, nullptr, false);
  std::string text = seed;
  const std::size_t structural = doc.is_discarded() ? 0 : 1 + below(rng, 4);
  if (structural > 0) {
    for (std::size_t i = 0; i < structural; ++i) {
      try {
        mutate_structure(doc, rng);
      } catch (const nlohmann::json::exception&) {  // a mutation that does not apply to what it picked
      }
    }
    text = doc.dump(chance(rng, 0.5) ? -1 : 1);
    const std::string placeholder = Json(kDeep).dump();
    for (auto at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder)) {
      const std::size_t depth = chance(rng, 0.2) ? 100000 : 2 + below(rng, 300);
      text.replace(at, placeholder.size(), std::string(depth, '[') + "1" + std::string(depth, ']'));
    }
  }
  if (structural == 0 || chance(rng, 0.25))
    for (std::size_t i = 1 + below(rng, 2); i > 0; --i) mutate_text(text, rng);
  return text;
}

std::string mutate_expression(const std::string& seed, Rng& rng) {
  static const std::vector<std::string> tokens = {"(",
                                                  ")",
                                                  "!",
                                                  "-",
                                                  "+",
                                                  "*",
                                                  "/",
                                                  "%",
                                                  "<",
                                                  "<=",
                                                  "==",
                                                  "!=",
                                                  ">",
                                                  ">=",
                                                  "&&",
                                                  "||",
                                                  "?",
                                                  ":",
                                                  ",",
                                                  "a",
                                                  "b",
                                                  "n",
                                                  "block",
                                                  "nosuch",
                                                  "regtile",
                                                  "ceil_div(",
                                                  "min(",
                                                  "max(",
                                                  "sizeof(",
                                                  "sizeof(type)",
                                                  "0",
                                                  "1",
                                                  "-1",
                                                  "9223372036854775807",
                                                  "9223372036854775808",
                                                  "99999999999999999999",
                                                  "1.5",
                                                  "0x10",
                                                  " ",
                                                  "\t",
                                                  "=",
                                                  "\xff",
                                                  "\xC3\xA9",
                                                  "&",
                                                  "|",
                                                  "~",
                                                  "^",
                                                  "'",
                                                  "\""};
  std::string text = seed;
  for (std::size_t n = 1 + below(rng, 4); n > 0; --n) {
    switch (below(rng, 7)) {
      case 0:
        text.insert(below(rng, text.size() + 1), pick(rng, tokens));
        break;
      case 1:
        if (!text.empty()) {
          const std::size_t at = below(rng, text.size());
          text.erase(at, 1 + below(rng, std::min<std::size_t>(8, text.size() - at)));
        }
        break;
      case 2: {  // nested deeply, in parentheses or unary operators
        const std::size_t depth = chance(rng, 0.3) ? 200 + below(rng, 400) : 1 + below(rng, 50);
        const std::string open = pick(rng, std::vector<std::string>{"(", "!", "-", "+", "min(1,", "a?1:"});
        std::string prefix, suffix;
        for (std::size_t i = 0; i < depth; ++i) {
          prefix += open;
          if (open.back() == '(' || open.back() == ',') suffix += ")";
        }
        text = prefix + text + suffix;
        break;
      }
      case 3:
        text += " " + pick(rng, tokens) + " " + seed;
        break;
      case 4:
        if (!text.empty()) text[below(rng, text.size())] = static_cast<char>(below(rng, 256));
        break;
      case 5:
        text = "(" + text + ") ? " + seed + " : " + seed;
        break;
      default:
        text = text.substr(0, below(rng, text.size() + 1));
        break;
    }
  }
  return text;
}

}  // namespace cutune::fuzz
