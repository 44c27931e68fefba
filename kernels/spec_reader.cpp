// Reads a kernel spec file (docs/kernel-spec.md) into a SpecDefinition, checking everything that
// can be checked without a problem or a config: keys, kinds, names in expressions, files. Each
// error is one line naming the file, the line where TOML has one, and the field.
#include <toml++/toml.h>

#include <cerrno>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "element_types.hpp"
#include "core/limits.hpp"
#include "spec_family.hpp"

namespace cutune {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kElementTypes{"int32", "uint32", "int64", "float32", "float64"};
const std::vector<std::string> kScalarTypes{"int32", "uint32", "int64", "uint64", "float32", "float64"};

std::string line_of(const toml::node& node) {
  const auto& begin = node.source().begin;
  return begin.line ? "line " + std::to_string(begin.line) + ": " : std::string();
}

// Errors of one spec: "<file>: line 12: buffer 'x': length: …".
class SpecReader {
 public:
  explicit SpecReader(fs::path file) : file_(std::move(file)), folder_(file_.parent_path()) {}

  [[noreturn]] void fail(const std::string& what) const { throw UsageError(file_.string() + ": " + what); }
  [[noreturn]] void fail(const toml::node& at, const std::string& what) const {
    throw UsageError(file_.string() + ": " + line_of(at) + what);
  }

  // Only the listed keys: a misspelt key is an error, not silently ignored.
  void allow_keys(const toml::table& table, std::initializer_list<std::string_view> keys,
                  const std::string& where) const {
    for (const auto& [key, node] : table) {
      bool known = false;
      for (const auto k : keys) known |= key.str() == k;
      if (known) continue;
      std::string list;
      for (const auto k : keys) list += (list.empty() ? "" : ", ") + std::string(k);
      fail(node,
           (where.empty() ? "" : where + ": ") + "unknown key '" + std::string(key.str()) + "' (keys: " + list + ")");
    }
  }

  std::string text(const toml::table& t, std::string_view key, const std::string& where, bool required = true,
                   std::string fallback = {}) const {
    const toml::node* node = t.get(key);
    if (!node) {
      if (required) fail(where + ": needs '" + std::string(key) + "'");
      return fallback;
    }
    const auto value = node->value<std::string>();
    if (!value || !node->is_string()) fail(*node, where + ": '" + std::string(key) + "' must be a string");
    return *value;
  }

  std::vector<std::string> texts(const toml::table& t, std::string_view key, const std::string& where) const {
    std::vector<std::string> out;
    const toml::node* node = t.get(key);
    if (!node) return out;
    const toml::array* array = node->as_array();
    if (!array) fail(*node, where + ": '" + std::string(key) + "' must be an array of strings");
    for (const auto& item : *array) {
      if (!item.is_string()) fail(item, where + ": '" + std::string(key) + "' must hold strings only");
      out.push_back(*item.value<std::string>());
    }
    return out;
  }

  std::optional<double> number(const toml::table& t, std::string_view key, const std::string& where) const {
    const toml::node* node = t.get(key);
    if (!node) return std::nullopt;
    if (!node->is_number()) fail(*node, where + ": '" + std::string(key) + "' must be a number");
    return *node->value<double>();
  }

  std::optional<std::int64_t> integer(const toml::table& t, std::string_view key, const std::string& where) const {
    const toml::node* node = t.get(key);
    if (!node) return std::nullopt;
    if (!node->is_integer()) fail(*node, where + ": '" + std::string(key) + "' must be an integer");
    return *node->value<std::int64_t>();
  }

  const toml::table& table_at(const toml::node& node, const std::string& where) const {
    const toml::table* t = node.as_table();
    if (!t) fail(node, where + " must be a table");
    return *t;
  }

  // [[name]]: an array of tables, possibly absent.
  std::vector<const toml::table*> tables(const toml::table& t, std::string_view key) const {
    std::vector<const toml::table*> out;
    const toml::node* node = t.get(key);
    if (!node) return out;
    const toml::array* array = node->as_array();
    if (!array) fail(*node, "'" + std::string(key) + "' must be an array of tables ([[" + std::string(key) + "]])");
    for (const auto& item : *array) out.push_back(&table_at(item, "each [[" + std::string(key) + "]]"));
    return out;
  }

  fs::path existing_file(const std::string& relative, const std::string& where) const {
    const fs::path path = fs::absolute(folder_ / relative).lexically_normal();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) fail(where + ": no file '" + path.string() + "'");
    return path;
  }

  const fs::path& file() const { return file_; }
  const fs::path& folder() const { return folder_; }

 private:
  fs::path file_, folder_;
};

std::string read_text(const SpecReader& r, const fs::path& path, const std::string& where) {
  std::ifstream in(path, std::ios::binary);
  if (!in) r.fail(where + ": cannot read '" + path.string() + "'");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// ---- names in expressions ------------------------------------------------------------------------

// What an expression may read: axes (configs), problem fields, or both. Slots follow
// SpecFamily::slot_values: the axes, the fields, then sizeof of each field.
struct Names {
  const std::vector<SpecAxis>* axes = nullptr;  // null: no axes here
  const ProblemSchema* schema = nullptr;        // null: no problem fields here
  std::size_t axis_count = 0;
  const std::vector<SpecLet>* lets = nullptr;  // the lets declared so far

  std::optional<std::size_t> slot(std::string_view name) const {
    if (lets && schema)
      for (std::size_t k = 0; k < lets->size(); ++k)
        if ((*lets)[k].name == name && (axes || !(*lets)[k].reads_axes))
          return axis_count + 2 * schema->fields().size() + k;
    if (axes)
      for (std::size_t i = 0; i < axes->size(); ++i)
        if ((*axes)[i].axis.name == name) return i;
    if (schema) {
      if (const auto j = schema->index_of(name)) return axis_count + *j;
      if (name.starts_with("sizeof(") && name.ends_with(")")) {
        const auto field = name.substr(7, name.size() - 8);
        if (const auto j = schema->index_of(field); j && schema->fields()[*j].kind == FieldKind::element_type)
          return axis_count + schema->fields().size() + *j;
      }
    }
    return std::nullopt;
  }

  // Labels of labelled axes and of enumeration/element-type fields name their value numbers;
  // a label that two of them give different numbers is ambiguous and names nothing.
  std::optional<std::int64_t> constant(std::string_view name) const {
    std::optional<std::int64_t> found;
    bool ambiguous = false;
    const auto offer = [&](std::int64_t v) {
      if (found && *found != v) ambiguous = true;
      found = v;
    };
    if (axes)
      for (const SpecAxis& a : *axes)
        if (const auto v = a.axis.labels.empty() ? std::nullopt : a.axis.value_of(std::string(name))) offer(*v);
    if (schema)
      for (const ProblemField& f : schema->fields())
        for (std::size_t i = 0; i < f.choices.size(); ++i)
          if (f.choices[i] == name) offer(static_cast<std::int64_t>(i));
    return ambiguous ? std::nullopt : found;
  }
};

SpecExpression parse_expression(const SpecReader& r, const std::string& text, const Names& names,
                                const std::string& where) {
  try {
    return {where, Expression::parse(
                       text, [&](std::string_view n) { return names.slot(n); },
                       [&](std::string_view n) { return names.constant(n); }, "expression")};
  } catch (const UsageError& e) {
    r.fail(where + ": " + e.what());
  }
}

SpecExpression expression_at(const SpecReader& r, const toml::table& t, std::string_view key, const Names& names,
                             const std::string& where, std::optional<std::string> fallback = std::nullopt) {
  const toml::node* node = t.get(key);
  std::string text;
  if (!node) {
    if (!fallback) r.fail(where + ": needs '" + std::string(key) + "'");
    text = *fallback;
  } else if (node->is_integer()) {
    text = std::to_string(*node->value<std::int64_t>());
  } else if (node->is_string()) {
    text = *node->value<std::string>();
  } else {
    r.fail(*node, where + ": '" + std::string(key) + "' must be an expression (a string) or an integer");
  }
  return parse_expression(r, text, names, where + ": " + std::string(key));
}

std::vector<SpecExpression> dimensions(const SpecReader& r, const toml::table& t, std::string_view key,
                                       const Names& names, const std::string& where) {
  const toml::node* node = t.get(key);
  if (!node) r.fail(where + ": needs '" + std::string(key) + "' (one to three expressions)");
  std::vector<SpecExpression> out;
  const toml::array* array = node->as_array();
  if (!array || array->empty() || array->size() > 3)
    r.fail(*node, where + ": '" + std::string(key) + "' must be an array of one to three expressions");
  for (std::size_t i = 0; i < array->size(); ++i) {
    const toml::node& item = *array->get(i);
    std::string text;
    if (item.is_integer())
      text = std::to_string(*item.value<std::int64_t>());
    else if (item.is_string())
      text = *item.value<std::string>();
    else
      r.fail(item, where + ": '" + std::string(key) + "' holds something that is no expression");
    out.push_back(parse_expression(r, text, names, where + ": " + std::string(key) + "[" + std::to_string(i) + "]"));
  }
  return out;
}

// ---- problem fields --------------------------------------------------------------------------------

ProblemSchema read_fields(const SpecReader& r, const toml::table& top) {
  ProblemSchema schema;
  for (const toml::table* f : r.tables(top, "field")) {
    const std::string name = r.text(*f, "name", "a [[field]]");
    const std::string where = "field '" + name + "'";
    r.allow_keys(*f, {"name", "kind", "choices", "default", "keyed_at_default", "min", "max", "help"}, where);
    const std::string kind = r.text(*f, "kind", where);
    const std::string help = r.text(*f, "help", where, false);
    const toml::node* def = f->get("default");
    try {
      if (kind == "extent" || kind == "integer") {
        std::optional<std::int64_t> d;
        if (def) {
          if (!def->is_integer()) r.fail(*def, where + ": 'default' must be an integer");
          d = *def->value<std::int64_t>();
        }
        if (kind == "extent")
          schema.extent(name, help, d);
        else
          schema.integer(name, d, help);
      } else if (false) {
        std::optional<std::int64_t> d;
        if (def) {
          if (!def->is_integer()) r.fail(*def, where + ": 'default' must be an integer");
          d = *def->value<std::int64_t>();
        }
        schema.integer(name, d, help);
      } else if (kind == "element_type" || kind == "enumeration") {
        std::vector<std::string> choices = r.texts(*f, "choices", where);
        if (choices.empty()) r.fail(where + ": needs 'choices'");
        if (kind == "element_type")
          for (const auto& c : choices) element_type(c, kElementTypes);  // UsageError naming the types
        std::optional<std::string> d;
        if (def) {
          if (!def->is_string()) r.fail(*def, where + ": 'default' must be one of the choices");
          d = *def->value<std::string>();
        }
        if (kind == "element_type")
          schema.element_type(name, choices, d, help);
        else
          schema.enumeration(name, choices, d, help);
      } else {
        r.fail(where + ": unknown kind '" + kind + "' (extent, integer, element_type, enumeration)");
      }
      const auto min = r.integer(*f, "min", where), max = r.integer(*f, "max", where);
      if (min || max) schema.range(min, max);
      if (const toml::node* keyed = f->get("keyed_at_default")) {
        if (!keyed->is_boolean()) r.fail(*keyed, where + ": 'keyed_at_default' must be true or false");
        if (!*keyed->value<bool>()) schema.unkeyed_at_default();
      }
    } catch (const UsageError& e) {
      const std::string message = e.what();
      if (message.rfind(r.file().string(), 0) == 0) throw;
      r.fail(where + ": " + message);
    } catch (const Error& e) {
      r.fail(where + ": " + e.what());
    }
  }
  if (schema.empty()) r.fail("needs at least one [[field]] (the problem's fields; an extent for its size)");
  return schema;
}

// ---- axes ------------------------------------------------------------------------------------------

std::vector<SpecAxis> read_axes(const SpecReader& r, const toml::table& top, const ProblemSchema& schema) {
  std::vector<SpecAxis> axes;
  for (const toml::table* a : r.tables(top, "axis")) {
    const std::string name = r.text(*a, "name", "an [[axis]]");
    const std::string where = "axis '" + name + "'";
    r.allow_keys(*a, {"name", "values", "labels", "plan_only", "help"}, where);
    if (!is_identifier(name)) r.fail(where + ": the name is not an identifier");
    for (const SpecAxis& other : axes)
      if (other.axis.name == name) r.fail(where + ": declared twice");
    if (schema.field(name)) r.fail(where + ": a problem field has the same name");
    SpecAxis axis;
    axis.axis.name = name;
    axis.axis.help = r.text(*a, "help", where, false);
    const toml::node* values = a->get("values");
    const toml::node* labels = a->get("labels");
    if (!!values == !!labels) r.fail(where + ": needs either 'values' or 'labels'");
    const toml::array* array = (values ? values : labels)->as_array();
    if (!array || array->empty()) r.fail(*(values ? values : labels), where + ": needs a non-empty array");
    bool all_integers = true;
    for (const auto& item : *array) all_integers &= item.is_integer();
    if (values && all_integers) {
      for (const auto& item : *array) axis.axis.values.push_back(*item.value<std::int64_t>());
    } else {
      // Labels, or values that are floats or strings (passed to the template as their text).
      axis.define_text = values != nullptr;
      for (std::size_t i = 0; i < array->size(); ++i) {
        const toml::node& item = *array->get(i);
        std::string label;
        if (item.is_string())
          label = *item.value<std::string>();
        else if (item.is_integer())
          label = std::to_string(*item.value<std::int64_t>());
        else if (item.is_floating_point()) {
          std::ostringstream text;
          text.precision(17);
          text << *item.value<double>();
          label = text.str();
        } else {
          r.fail(item, where + ": values must be integers, floats or strings");
        }
        if (label.empty() || label.find_first_of(",=\n") != std::string::npos)
          r.fail(item, where + ": '" + label + "' cannot be written in a config text (no ',' or '=')");
        axis.axis.labels.push_back(label);
        axis.axis.values.push_back(static_cast<std::int64_t>(i));
      }
    }
    std::set<std::int64_t> distinct(axis.axis.values.begin(), axis.axis.values.end());
    std::set<std::string> distinct_labels(axis.axis.labels.begin(), axis.axis.labels.end());
    if (distinct.size() != axis.axis.values.size() || distinct_labels.size() != axis.axis.labels.size())
      r.fail(where + ": a value is listed twice");
    if (const toml::node* plan_only = a->get("plan_only")) {
      if (!plan_only->is_boolean()) r.fail(*plan_only, where + ": 'plan_only' must be true or false");
      axis.axis.plan_only = *plan_only->value<bool>();
    }
    axes.push_back(std::move(axis));
  }
  if (axes.empty()) r.fail("needs at least one [[axis]] (a parameter to tune)");
  return axes;
}

// ---- buffers and steps ----------------------------------------------------------------------------

SpecInit read_init(const SpecReader& r, const toml::node& node, const std::string& where) {
  const toml::table& t = r.table_at(node, where + ": 'init'");
  SpecInit init;
  init.kind = r.text(t, "kind", where + ": init");
  const auto need = [&](std::string_view key) {
    const auto v = r.number(t, key, where + ": init");
    if (!v) r.fail(node, where + ": init of kind '" + init.kind + "' needs '" + std::string(key) + "'");
    return *v;
  };
  if (init.kind == "uniform" || init.kind == "sorted" || init.kind == "integers") {
    r.allow_keys(t, {"kind", "low", "high"}, where + ": init");
    init.low = need("low");
    init.high = need("high");
    if (!(init.low < init.high) && !(init.kind == "integers" && init.low == init.high))
      r.fail(node, where + ": init needs low < high");
  } else if (init.kind == "constant") {
    r.allow_keys(t, {"kind", "value"}, where + ": init");
    init.value = need("value");
  } else if (init.kind == "iota") {
    r.allow_keys(t, {"kind", "start", "step"}, where + ": init");
    init.start = r.number(t, "start", where).value_or(0);
    init.step = r.number(t, "step", where).value_or(1);
  } else if (init.kind == "npy") {
    r.allow_keys(t, {"kind", "file"}, where + ": init");
    init.file = r.existing_file(r.text(t, "file", where + ": init"), where + ": init");
  } else {
    r.fail(node, where + ": unknown init kind '" + init.kind + "' (uniform, integers, sorted, constant, iota, npy)");
  }
  return init;
}

std::vector<SpecBuffer> read_buffers(const SpecReader& r, const toml::table& top, const Names& problem_names,
                                     const Names& all_names) {
  std::vector<SpecBuffer> buffers;
  for (const toml::table* b : r.tables(top, "buffer")) {
    SpecBuffer buffer;
    buffer.name = r.text(*b, "name", "a [[buffer]]");
    buffer.where = "buffer '" + buffer.name + "'";
    const std::string& where = buffer.where;
    r.allow_keys(*b, {"name", "type", "length", "role", "init", "tolerance"}, where);
    if (!is_identifier(buffer.name)) r.fail(where + ": the name is not an identifier");
    for (const auto& other : buffers)
      if (other.name == buffer.name) r.fail(where + ": declared twice");
    const std::string role = r.text(*b, "role", where);
    if (role == "input")
      buffer.role = BufferRole::input;
    else if (role == "output")
      buffer.role = BufferRole::output;
    else if (role == "scratch")
      buffer.role = BufferRole::scratch;
    else
      r.fail(where + ": unknown role '" + role + "' (input, output, scratch)");
    const std::string type = r.text(*b, "type", where);
    if (const ProblemField* f = problem_names.schema->field(type)) {
      if (f->kind != FieldKind::element_type)
        r.fail(where + ": type '" + type + "' is a field that is no element_type");
      buffer.type_field = type;
    } else {
      if (std::find(kElementTypes.begin(), kElementTypes.end(), type) == kElementTypes.end())
        r.fail(where + ": type '" + type +
               "' is neither an element_type field nor one of int32, uint32, int64, float32, float64");
      buffer.fixed_type = type;
    }
    // Scratch is per config; inputs and outputs exist once per problem.
    buffer.length =
        expression_at(r, *b, "length", buffer.role == BufferRole::scratch ? all_names : problem_names, where);
    if (const toml::node* init = b->get("init")) {
      if (buffer.role == BufferRole::scratch) r.fail(*init, where + ": scratch has no init (it is poisoned)");
      buffer.init = read_init(r, *init, where);
    } else if (buffer.role == BufferRole::input) {
      r.fail(where + ": an input needs an 'init'");
    }
    if (const toml::node* tolerance = b->get("tolerance")) {
      if (buffer.role != BufferRole::output) r.fail(*tolerance, where + ": only outputs have a tolerance");
      const toml::table& t = r.table_at(*tolerance, where + ": 'tolerance'");
      r.allow_keys(t, {"rtol", "atol"}, where + ": tolerance");
      buffer.rtol = r.number(t, "rtol", where).value_or(0);
      buffer.atol = r.number(t, "atol", where).value_or(0);
      if (*buffer.rtol < 0 || *buffer.atol < 0) r.fail(*tolerance, where + ": tolerances must not be negative");
    }
    buffers.push_back(std::move(buffer));
  }
  if (buffers.empty()) r.fail("needs at least one [[buffer]]");
  return buffers;
}

const SpecBuffer* find_buffer(const std::vector<SpecBuffer>& buffers, std::string_view name) {
  for (const auto& b : buffers)
    if (b.name == name) return &b;
  return nullptr;
}

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t");
  return std::string(text.substr(first, last - first + 1));
}

SpecArgument read_argument(const SpecReader& r, const std::string& text, const std::vector<SpecBuffer>& buffers,
                           const Names& names, const std::string& where) {
  SpecArgument argument;
  argument.text = text;
  const std::string t = trim(text);
  // "x" or "x[expression]": a buffer, or a pointer into it.
  const auto bracket = t.find('[');
  const std::string head = trim(t.substr(0, bracket));
  if (find_buffer(buffers, head)) {
    argument.buffer = head;
    if (bracket != std::string::npos) {
      if (t.back() != ']') r.fail(where + ": '" + text + "' must be buffer[elements]");
      argument.element_offset = parse_expression(r, t.substr(bracket + 1, t.size() - bracket - 2), names, where);
    }
    return argument;
  }
  const auto space = t.find_first_of(" \t");
  const std::string type = t.substr(0, space);
  if (space == std::string::npos || std::find(kScalarTypes.begin(), kScalarTypes.end(), type) == kScalarTypes.end())
    r.fail(where + ": '" + text +
           "' is no buffer and no typed scalar (\"int32 n\", \"float32 2.5\"; types: int32, uint32, "
           "int64, uint64, float32, float64)");
  argument.scalar_type = type;
  const std::string value = trim(t.substr(space));
  if (type == "float32" || type == "float64") {
    char* end = nullptr;
    const double literal = std::strtod(value.c_str(), &end);
    const bool integer_text = value.find_first_not_of("0123456789") == std::string::npos;
    if (end && *end == '\0' && !value.empty() && !integer_text) {
      argument.float_literal = literal;
      return argument;
    }
  }
  // A uint64 literal beyond int64 is kept exactly: no expression can hold it.
  if (type == "uint64" && !value.empty() && value.find_first_not_of("0123456789") == std::string::npos) {
    errno = 0;
    const unsigned long long big = std::strtoull(value.c_str(), nullptr, 10);
    if (errno == 0 && big > static_cast<unsigned long long>(INT64_MAX)) {
      argument.big_unsigned = big;
      return argument;
    }
  }
  argument.value = parse_expression(r, value, names, where);
  return argument;
}

std::vector<SpecStep> read_steps(const SpecReader& r, const toml::table& container,
                                 const std::vector<SpecBuffer>& buffers, const Names& names,
                                 const std::string& prefix) {
  std::vector<SpecStep> steps;
  const auto list = r.tables(container, "step");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const toml::table& s = *list[i];
    const std::string number = prefix + "step " + std::to_string(i + 1);
    if (s.get("launch")) {
      SpecLaunch launch;
      launch.kernel = r.text(s, "launch", number);
      launch.where = number + " (launch '" + launch.kernel + "')";
      r.allow_keys(s, {"launch", "grid", "block", "shared", "args"}, launch.where);
      if (!is_identifier(launch.kernel)) r.fail(launch.where + ": the kernel name is not an identifier");
      launch.grid = dimensions(r, s, "grid", names, launch.where);
      launch.block = dimensions(r, s, "block", names, launch.where);
      launch.shared = expression_at(r, s, "shared", names, launch.where, "0");
      const auto args = r.texts(s, "args", launch.where);
      for (std::size_t a = 0; a < args.size(); ++a)
        launch.arguments.push_back(
            read_argument(r, args[a], buffers, names, launch.where + ": args[" + std::to_string(a) + "]"));
      steps.push_back(std::move(launch));
    } else if (s.get("memset")) {
      SpecMemset memset;
      memset.buffer = r.text(s, "memset", number);
      memset.where = number + " (memset '" + memset.buffer + "')";
      r.allow_keys(s, {"memset", "value", "count", "offset"}, memset.where);
      const SpecBuffer* b = find_buffer(buffers, memset.buffer);
      if (!b) r.fail(memset.where + ": no buffer '" + memset.buffer + "'");
      memset.value = r.number(s, "value", memset.where).value_or(0);
      if (s.get("count")) memset.count = expression_at(r, s, "count", names, memset.where);
      if (s.get("offset")) memset.offset = expression_at(r, s, "offset", names, memset.where);
      steps.push_back(std::move(memset));
    } else {
      r.fail(number + ": a step is a 'launch' or a 'memset'");
    }
  }
  return steps;
}

// ---- whole spec -----------------------------------------------------------------------------------

std::set<std::string> read_allowed_configs(const SpecReader& r, const fs::path& path,
                                           const std::vector<SpecAxis>& axes) {
  Space space;
  for (const SpecAxis& a : axes) {
    if (a.axis.labels.empty())
      space.axis(a.axis.name, a.axis.values);
    else
      space.labelled_axis(a.axis.name, a.axis.labels);
  }
  std::ifstream in(path);
  if (!in) r.fail("allowed_configs: cannot read '" + path.string() + "'");
  std::set<std::string> keys;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    try {
      keys.insert(space.key(space.parse(line)));
    } catch (const UsageError& e) {
      r.fail("allowed_configs: " + path.string() + " line " + std::to_string(number) + ": " + e.what());
    }
  }
  if (keys.empty()) r.fail("allowed_configs: '" + path.string() + "' lists no config");
  return keys;
}

}  // namespace

SpecDefinition read_spec(const fs::path& given) {
  const fs::path file = fs::absolute(given).lexically_normal();
  SpecReader r(file);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) throw UsageError(file.string() + ": no such kernel spec file");
  toml::table top;
  try {
    top = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    const auto& at = e.source().begin;
    throw UsageError(file.string() + ": line " + std::to_string(at.line) + ": " + std::string(e.description()));
  }
  r.allow_keys(top,
               {"name", "summary", "source", "kernels", "nvrtc_options", "include_paths", "defines", "problems",
                "constraints", "allowed_configs", "defines_from_problem", "field", "axis", "let", "buffer", "step",
                "reference", "expected", "work"},
               "");
  SpecDefinition spec;
  spec.file = file;
  spec.name = r.text(top, "name", "the spec");
  if (!is_identifier(spec.name)) r.fail("name: '" + spec.name + "' is not an identifier");
  if (const auto* builtin = [&]() -> const Family* {
        for (const auto& f : families())
          if (f->name() == spec.name) return f.get();
        return nullptr;
      }())
    r.fail("name: '" + builtin->name() + "' is a built-in family's name; choose another");
  spec.summary = r.text(top, "summary", "the spec", false, "kernel spec " + file.filename().string());
  spec.source_path = r.existing_file(r.text(top, "source", "the spec"), "source");
  spec.source_text = read_text(r, spec.source_path, "source");
  spec.kernels = r.texts(top, "kernels", "kernels");
  spec.nvrtc_options = r.texts(top, "nvrtc_options", "nvrtc_options");
  for (const auto& folder : r.texts(top, "include_paths", "include_paths")) {
    const fs::path path = fs::absolute(r.folder() / folder).lexically_normal();
    if (!fs::is_directory(path, ec)) r.fail("include_paths: no folder '" + path.string() + "'");
    spec.include_paths.push_back(path);
  }
  const std::string defines = r.text(top, "defines", "the spec", false, "kernel_tuner");
  if (defines != "kernel_tuner" && defines != "cutune")
    r.fail("defines: '" + defines + "' (kernel_tuner: -D<axis>=<value>; cutune: -DCUTUNE_<AXIS>=<value>)");
  spec.cutune_defines = defines == "cutune";

  spec.schema = read_fields(r, top);
  spec.axes = read_axes(r, top, spec.schema);
  Names problem_names{nullptr, &spec.schema, spec.axes.size(), &spec.lets};
  Names all_names{&spec.axes, &spec.schema, spec.axes.size(), &spec.lets};
  for (const toml::table* l : r.tables(top, "let")) {
    SpecLet let;
    let.name = r.text(*l, "name", "a [[let]]");
    const std::string where = "let '" + let.name + "'";
    r.allow_keys(*l, {"name", "value"}, where);
    if (!is_identifier(let.name)) r.fail(where + ": the name is not an identifier");
    if (all_names.slot(let.name) || spec.schema.field(let.name)) r.fail(where + ": the name is taken");
    let.value = expression_at(r, *l, "value", all_names, where);
    for (const std::size_t slot : let.value.expression.slots()) {
      const std::size_t first_let = spec.axes.size() + 2 * spec.schema.fields().size();
      let.reads_axes |= slot < spec.axes.size() || (slot >= first_let && spec.lets[slot - first_let].reads_axes);
    }
    spec.lets.push_back(std::move(let));
  }

  spec.problem_texts = r.texts(top, "problems", "problems");
  for (const auto& text : spec.problem_texts) {
    try {
      spec.schema.parse(text);
    } catch (const UsageError& e) {
      r.fail("problems: '" + text + "': " + e.what());
    }
  }
  if (spec.problem_texts.empty()) {
    try {
      spec.schema.make({});
    } catch (const UsageError& e) {
      r.fail(std::string("problems: none listed, and the defaults make no problem: ") + e.what());
    }
  }

  if (const toml::node* node = top.get("defines_from_problem")) {
    const toml::table& t = r.table_at(*node, "defines_from_problem");
    for (const auto& [key, value] : t) {
      const std::string name(key.str());
      if (!is_identifier(name)) r.fail(value, "defines_from_problem: '" + name + "' is not an identifier");
      if (const toml::table* entry = value.as_table()) {
        r.allow_keys(*entry, {"expression"}, "defines_from_problem: " + name);
        spec.defines_from_problem.push_back(
            {name, "", expression_at(r, *entry, "expression", problem_names, "defines_from_problem: " + name)});
        continue;
      }
      if (!value.is_string())
        r.fail(value,
               "defines_from_problem: " + name + " must be a text such as \"{type.cuda}\" or { expression = \"…\" }");
      const std::string text = *value.value<std::string>();
      // Check the placeholders now: {field}, {field.cuda}, {field.index}.
      for (std::size_t at = text.find('{'); at != std::string::npos; at = text.find('{', at + 1)) {
        const auto close = text.find('}', at);
        if (close == std::string::npos) r.fail(value, "defines_from_problem: " + name + ": an unclosed '{'");
        std::string inside = text.substr(at + 1, close - at - 1);
        const auto dot = inside.find('.');
        const std::string field = inside.substr(0, dot), part = dot == std::string::npos ? "" : inside.substr(dot + 1);
        const ProblemField* f = spec.schema.field(field);
        if (!f) r.fail(value, "defines_from_problem: " + name + ": no problem field '" + field + "'");
        if (!part.empty() && part != "index" && !(part == "cuda" && f->kind == FieldKind::element_type))
          r.fail(value, "defines_from_problem: " + name + ": '{" + inside +
                            "}' (use {field}, {field.index}, or {field.cuda} for element types)");
      }
      spec.defines_from_problem.push_back({name, text, std::nullopt});
    }
  }

  spec.constraints = r.texts(top, "constraints", "constraints");
  if (const toml::node* allowed = top.get("allowed_configs")) {
    if (!allowed->is_string()) r.fail(*allowed, "allowed_configs must be a file name");
    spec.allowed_configs_file = r.existing_file(*allowed->value<std::string>(), "allowed_configs");
    spec.allowed_configs = read_allowed_configs(r, spec.allowed_configs_file, spec.axes);
  }

  spec.buffers = read_buffers(r, top, problem_names, all_names);
  spec.steps = read_steps(r, top, spec.buffers, all_names, "");
  if (spec.steps.empty()) r.fail("needs at least one [[step]] (a launch)");
  for (const auto& step : spec.steps)
    if (const auto* launch = std::get_if<SpecLaunch>(&step))
      if (!spec.kernels.empty() &&
          std::find(spec.kernels.begin(), spec.kernels.end(), launch->kernel) == spec.kernels.end())
        r.fail(launch->where + ": kernel '" + launch->kernel + "' is not among 'kernels'");

  if (const toml::node* node = top.get("reference")) {
    const toml::table& t = r.table_at(*node, "reference");
    r.allow_keys(t, {"source", "nvrtc_options", "step"}, "reference");
    SpecReference reference;
    reference.source =
        t.get("source") ? r.existing_file(r.text(t, "source", "reference"), "reference: source") : spec.source_path;
    reference.source_text = read_text(r, reference.source, "reference: source");
    reference.nvrtc_options = r.texts(t, "nvrtc_options", "reference");
    reference.steps = read_steps(r, t, spec.buffers, problem_names, "reference ");
    if (reference.steps.empty()) r.fail("reference: needs at least one [[reference.step]]");
    spec.reference = std::move(reference);
  }
  if (const toml::node* node = top.get("expected")) {
    const toml::table& t = r.table_at(*node, "expected");
    for (const auto& [key, value] : t) {
      const std::string name(key.str());
      const SpecBuffer* b = find_buffer(spec.buffers, name);
      if (!b || b->role != BufferRole::output) r.fail(value, "expected: '" + name + "' is no output buffer");
      if (!value.is_string()) r.fail(value, "expected: " + name + " must be a .npy file name");
      spec.expected[name] = r.existing_file(*value.value<std::string>(), "expected: " + name);
    }
  }
  if (spec.reference && !spec.expected.empty()) r.fail("give either [reference] or [expected], not both");
  bool any_output = false;
  for (const auto& b : spec.buffers) any_output |= b.role == BufferRole::output;
  if (spec.reference && !any_output) r.fail("reference: no buffer has role \"output\": what would it check?");

  if (const toml::node* node = top.get("work")) {
    const toml::table& t = r.table_at(*node, "work");
    r.allow_keys(t, {"bytes", "flops"}, "work");
    if (t.get("bytes")) spec.work_bytes = expression_at(r, t, "bytes", problem_names, "work");
    if (t.get("flops")) spec.work_flops = expression_at(r, t, "flops", problem_names, "work");
  }

  // Constraints are checked now against a generic device, so that a typo fails at load.
  try {
    SpecFamily(spec).space(limits_for_arch("sm_90"));
  } catch (const UsageError& e) {
    r.fail(std::string("constraints: ") + e.what());
  }
  return spec;
}

}  // namespace cutune
