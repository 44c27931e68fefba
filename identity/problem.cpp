#include "problem.hpp"

#include <algorithm>
#include <charconv>
#include <limits>

#include "core/error.hpp"

namespace cutune {
namespace {

std::string choices_text(const std::vector<std::string>& choices) {
  std::string text;
  for (const auto& c : choices) text += (text.empty() ? "" : ", ") + c;
  return text;
}

std::optional<std::int64_t> parse_int64(std::string_view text) {
  std::int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

FieldKind kind_named(const std::string& name) {
  for (FieldKind k : {FieldKind::extent, FieldKind::integer, FieldKind::element_type, FieldKind::enumeration})
    if (name == to_string(k)) return k;
  throw UsageError("unknown problem field kind '" + name + "' (known: extent, integer, element_type, enumeration)");
}

}  // namespace

const char* to_string(FieldKind kind) {
  switch (kind) {
    case FieldKind::extent:
      return "extent";
    case FieldKind::integer:
      return "integer";
    case FieldKind::element_type:
      return "element_type";
    case FieldKind::enumeration:
      return "enumeration";
  }
  return "unknown";
}

std::string text_of(const FieldValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  return std::get<std::string>(value);
}

// ---- fields ------------------------------------------------------------------------------------

void ProblemField::check(const FieldValue& value) const {
  if (is_integer()) {
    const auto* i = std::get_if<std::int64_t>(&value);
    if (!i) throw UsageError("problem field '" + name + "' takes an integer (got '" + text_of(value) + "')");
    if (min && *i < *min)
      throw UsageError("problem field '" + name + "' must be at least " + std::to_string(*min) + " (got " +
                       std::to_string(*i) + ")");
    if (max && *i > *max)
      throw UsageError("problem field '" + name + "' must be at most " + std::to_string(*max) + " (got " +
                       std::to_string(*i) + ")");
    return;
  }
  const auto* s = std::get_if<std::string>(&value);
  if (!s || std::find(choices.begin(), choices.end(), *s) == choices.end())
    throw UsageError("problem field '" + name + "' takes one of " + choices_text(choices) + " (got '" + text_of(value) +
                     "')");
}

FieldValue ProblemField::parse(const std::string& text) const {
  if (!is_integer()) {
    check(FieldValue{text});
    return text;
  }
  const auto number = parse_int64(text);
  if (!number) throw UsageError("problem field '" + name + "' takes an integer (got '" + text + "')");
  check(FieldValue{*number});
  return *number;
}

// ---- schema declarations -----------------------------------------------------------------------

ProblemSchema& ProblemSchema::add(ProblemField field) {
  if (!is_identifier(field.name)) throw Error("problem field name '" + field.name + "' is not an identifier");
  if (this->field(field.name)) throw Error("problem field '" + field.name + "' is declared twice");
  if (!field.is_integer()) {
    if (field.choices.empty()) throw Error("problem field '" + field.name + "' has no choices");
    for (const auto& c : field.choices)
      if (c.empty() || c.find_first_of(",=") != std::string::npos)
        throw Error("choice '" + c + "' of problem field '" + field.name + "' cannot appear in a key");
  }
  if (field.default_value) field.check(*field.default_value);
  fields_.push_back(std::move(field));
  return *this;
}

ProblemSchema& ProblemSchema::extent(std::string name, std::string help, std::optional<std::int64_t> default_value) {
  ProblemField f;
  f.name = std::move(name);
  f.kind = FieldKind::extent;
  f.min = 1;
  if (default_value) f.default_value = *default_value;
  f.help = std::move(help);
  return add(std::move(f));
}

ProblemSchema& ProblemSchema::integer(std::string name, std::optional<std::int64_t> default_value, std::string help) {
  ProblemField f;
  f.name = std::move(name);
  f.kind = FieldKind::integer;
  if (default_value) f.default_value = *default_value;
  f.help = std::move(help);
  return add(std::move(f));
}

ProblemSchema& ProblemSchema::element_type(std::string name, std::vector<std::string> types,
                                           std::optional<std::string> default_value, std::string help) {
  ProblemField f;
  f.name = std::move(name);
  f.kind = FieldKind::element_type;
  f.choices = std::move(types);
  if (default_value) f.default_value = *default_value;
  f.help = std::move(help);
  return add(std::move(f));
}

ProblemSchema& ProblemSchema::enumeration(std::string name, std::vector<std::string> labels,
                                          std::optional<std::string> default_value, std::string help) {
  ProblemField f;
  f.name = std::move(name);
  f.kind = FieldKind::enumeration;
  f.choices = std::move(labels);
  if (default_value) f.default_value = *default_value;
  f.help = std::move(help);
  return add(std::move(f));
}

ProblemField& ProblemSchema::last(const char* modifier) {
  if (fields_.empty()) throw Error(std::string(modifier) + "() before any problem field");
  return fields_.back();
}

ProblemSchema& ProblemSchema::unkeyed_at_default() {
  ProblemField& f = last("unkeyed_at_default");
  if (!f.default_value) throw Error("problem field '" + f.name + "' has no default to leave out of keys");
  f.keyed_at_default = false;
  return *this;
}

ProblemSchema& ProblemSchema::range(std::optional<std::int64_t> min, std::optional<std::int64_t> max) {
  ProblemField& f = last("range");
  if (!f.is_integer()) throw Error("problem field '" + f.name + "' is no integer; it has no range");
  if (f.kind == FieldKind::extent && (!min || *min < 1)) min = 1;  // an extent is a positive size
  f.min = min;
  f.max = max;
  if (f.default_value) f.check(*f.default_value);
  return *this;
}

const ProblemField* ProblemSchema::field(std::string_view name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

std::optional<std::size_t> ProblemSchema::index_of(std::string_view name) const {
  for (std::size_t i = 0; i < fields_.size(); ++i)
    if (fields_[i].name == name) return i;
  return std::nullopt;
}

const ProblemField* ProblemSchema::element_type_field() const {
  for (const auto& f : fields_)
    if (f.kind == FieldKind::element_type) return &f;
  return nullptr;
}

// ---- problems ----------------------------------------------------------------------------------

namespace {

std::string unknown_field_message(const ProblemSchema& schema, const std::string& name) {
  std::string known;
  for (const auto& f : schema.fields()) known += (known.empty() ? "" : ", ") + f.name;
  return "unknown problem field '" + name + "' (fields: " + (known.empty() ? "none" : known) + ")";
}

}  // namespace

Problem ProblemSchema::make(const std::vector<std::pair<std::string, FieldValue>>& given) const {
  std::vector<std::optional<FieldValue>> values(fields_.size());
  for (const auto& [name, value] : given) {
    const auto index = index_of(name);
    if (!index) throw UsageError(unknown_field_message(*this, name));
    if (values[*index]) throw UsageError("problem field '" + name + "' is given twice");
    fields_[*index].check(value);
    values[*index] = value;
  }
  Problem p;
  p.schema_ = std::make_shared<const ProblemSchema>(*this);
  std::vector<NamedValue> key_items, match_items;
  std::int64_t size = 1;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const ProblemField& f = fields_[i];
    if (!values[i]) {
      if (!f.default_value) throw UsageError("problem field '" + f.name + "' needs a value (it has no default)");
      values[i] = f.default_value;
    }
    const FieldValue& v = *values[i];
    p.values_.push_back(v);
    if (f.keyed_at_default || v != f.default_value) key_items.push_back({f.name, text_of(v)});
    if (f.kind == FieldKind::extent) {
      const std::int64_t extent = std::get<std::int64_t>(v);
      if (size > std::numeric_limits<std::int64_t>::max() / extent)
        throw UsageError("the problem's size (the product of its extents) overflows 64 bits");
      size *= extent;
    } else {
      match_items.push_back({f.name, text_of(v)});
    }
    if (f.kind == FieldKind::element_type && p.dtype_.empty()) p.dtype_ = std::get<std::string>(v);
  }
  std::sort(match_items.begin(), match_items.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  p.key_ = key_items.empty() ? std::string() : format_named_values(key_items);
  p.match_key_ = match_items.empty() ? std::string() : format_named_values(match_items);
  p.size_ = size;
  return p;
}

Problem ProblemSchema::parse(std::string_view text) const {
  std::vector<std::pair<std::string, FieldValue>> values;
  if (!text.empty())
    for (const NamedValue& item : parse_named_values(text)) {
      const ProblemField* f = field(item.name);
      if (!f) throw UsageError(unknown_field_message(*this, item.name));
      values.emplace_back(item.name, f->parse(item.value));
    }
  return make(values);
}

Problem ProblemSchema::from_descriptor(const nlohmann::json& descriptor) const {
  if (!descriptor.is_object()) throw UsageError("a problem descriptor must be a JSON object");
  std::vector<std::pair<std::string, FieldValue>> values;
  for (const auto& [name, value] : descriptor.items()) {
    if (value.is_number_integer())
      values.emplace_back(name, value.get<std::int64_t>());
    else if (value.is_string())
      values.emplace_back(name, value.get<std::string>());
    else
      throw UsageError("problem field '" + name + "' holds " + value.dump() + ", neither an integer nor a string");
  }
  return make(values);
}

std::string ProblemSchema::match_key(const std::vector<NamedValue>& given) const {
  std::vector<std::optional<std::string>> texts(fields_.size());
  for (const NamedValue& item : given) {
    const auto index = index_of(item.name);
    if (!index) throw UsageError(unknown_field_message(*this, item.name));
    if (texts[*index]) throw UsageError("problem field '" + item.name + "' is given twice");
    texts[*index] = text_of(fields_[*index].parse(item.value));  // canonical: "08" reads as 8
  }
  std::vector<NamedValue> items;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const ProblemField& f = fields_[i];
    if (f.kind == FieldKind::extent) continue;
    if (!texts[i]) {
      if (!f.default_value) {
        std::string hint = f.choices.empty() ? std::string() : " (one of " + choices_text(f.choices) + ")";
        throw UsageError("the problem must say its '" + f.name + "'" + hint + ": it has no default");
      }
      texts[i] = text_of(*f.default_value);
    }
    items.push_back({f.name, *texts[i]});
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return items.empty() ? std::string() : format_named_values(items);
}

nlohmann::json ProblemSchema::to_json() const {
  nlohmann::json list = nlohmann::json::array();
  for (const ProblemField& f : fields_) {
    nlohmann::json j{{"name", f.name}, {"kind", to_string(f.kind)}};
    if (!f.choices.empty()) j["choices"] = f.choices;
    if (f.default_value) {
      if (const auto* i = std::get_if<std::int64_t>(&*f.default_value))
        j["default"] = *i;
      else
        j["default"] = std::get<std::string>(*f.default_value);
    }
    if (!f.keyed_at_default) j["keyed_at_default"] = false;
    if (f.min) j["min"] = *f.min;
    if (f.max) j["max"] = *f.max;
    if (!f.help.empty()) j["help"] = f.help;
    list.push_back(std::move(j));
  }
  return {{"fields", std::move(list)}};
}

ProblemSchema ProblemSchema::from_json(const nlohmann::json& json) {
  ProblemSchema schema;
  try {
    for (const auto& j : json.at("fields")) {
      ProblemField f;
      f.name = j.at("name").get<std::string>();
      f.kind = kind_named(j.at("kind").get<std::string>());
      if (j.contains("choices")) f.choices = j.at("choices").get<std::vector<std::string>>();
      if (j.contains("default")) {
        const auto& d = j.at("default");
        if (d.is_number_integer())
          f.default_value = d.get<std::int64_t>();
        else
          f.default_value = d.get<std::string>();
      }
      f.keyed_at_default = j.value("keyed_at_default", true);
      if (j.contains("min")) f.min = j.at("min").get<std::int64_t>();
      if (j.contains("max")) f.max = j.at("max").get<std::int64_t>();
      f.help = j.value("help", "");
      schema.add(std::move(f));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(std::string("malformed problem schema: ") + e.what());
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("malformed problem schema: ") + e.what());
  }
  return schema;
}

// ---- problem accessors -------------------------------------------------------------------------

const ProblemSchema& Problem::schema() const {
  static const ProblemSchema empty;
  return schema_ ? *schema_ : empty;
}

std::int64_t Problem::integer(std::string_view name) const {
  const auto index = schema().index_of(name);
  if (!index) throw Error("problem " + key_ + " has no field '" + std::string(name) + "'");
  if (const auto* i = std::get_if<std::int64_t>(&values_[*index])) return *i;
  throw Error("problem field '" + std::string(name) + "' of " + key_ + " is no integer");
}

const std::string& Problem::text(std::string_view name) const {
  const auto index = schema().index_of(name);
  if (!index) throw Error("problem " + key_ + " has no field '" + std::string(name) + "'");
  if (const auto* s = std::get_if<std::string>(&values_[*index])) return *s;
  throw Error("problem field '" + std::string(name) + "' of " + key_ + " is no label");
}

nlohmann::ordered_json Problem::descriptor() const {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < values_.size(); ++i) {
    const std::string& name = schema().fields()[i].name;
    if (const auto* v = std::get_if<std::int64_t>(&values_[i]))
      j[name] = *v;
    else
      j[name] = std::get<std::string>(values_[i]);
  }
  return j;
}

}  // namespace cutune
