#pragma once
// The identity of a problem: a family declares its problem fields with types, as it declares its
// axes, and everything that names a problem is derived from those declarations — the key the
// database stores, the primary size that lookups compare by nearness, the element type, and the
// match key that says which stored problems a lookup may answer from. Nothing of it is written by
// hand, so a lookup for a sum can never be answered with a min's config, plan or cubin.
//
//   ProblemSchema schema;
//   schema.extent("n", "elements")
//       .enumeration("op", {"sum", "min", "max"}, "sum", "the operator")
//       .element_type("type", {"float32", "float64"}, "float32");
//   Problem p = schema.make({{"n", 1 << 20}, {"op", "min"}});  // type takes its default
//   p.key() == "n=1048576,op=min,type=float32", p.size() == 1 << 20, p.match_key() == "op=min,type=float32"
//
// Compiled into the tuner and into the lookup library (which reads schemas from the database to
// canonicalise an application's query), so it needs only the standard library and nlohmann/json.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "field_text.hpp"

namespace cutune {

// extent:       a positive integer dimension (n, m, series). The problem's primary size is the
//               product of its extents, and lookups match it by nearness, not exactly.
// integer:      any other integer (an offset, a stride, a window); matched exactly.
// element_type: an element type name (int32, float32, …); the first one declared is the
//               problem's element type. Matched exactly.
// enumeration:  one of a fixed set of labels (op = sum); matched exactly.
enum class FieldKind { extent, integer, element_type, enumeration };
const char* to_string(FieldKind kind);

using FieldValue = std::variant<std::int64_t, std::string>;
std::string text_of(const FieldValue& value);

struct ProblemField {
  std::string name;
  FieldKind kind = FieldKind::extent;
  std::vector<std::string> choices;         // element_type and enumeration: the allowed values
  std::optional<FieldValue> default_value;  // taken when a request or a query leaves the field out
  // false: left out of the problem key while it holds its default, so the keys of problems that
  // never use the field stay short ("n=4096,type=float32", not "…,offset=0,stride=1").
  bool keyed_at_default = true;
  std::optional<std::int64_t> min, max;  // integers and extents: inclusive bounds (extents: min ≥ 1)
  std::string help;

  bool is_integer() const { return kind == FieldKind::extent || kind == FieldKind::integer; }
  // Checks and converts one value given as text ("1024", "sum"); UsageError naming the field.
  FieldValue parse(const std::string& text) const;
  // Checks a value's kind, bounds and choice; UsageError naming the field.
  void check(const FieldValue& value) const;
};

class Problem;

class ProblemSchema {
 public:
  // Fluent declarations, in the order fields appear in keys.
  // An extent may have a default (1 for a dimension most problems do not use).
  ProblemSchema& extent(std::string name, std::string help = {},
                        std::optional<std::int64_t> default_value = std::nullopt);
  ProblemSchema& integer(std::string name, std::optional<std::int64_t> default_value = std::nullopt,
                         std::string help = {});
  ProblemSchema& element_type(std::string name, std::vector<std::string> types,
                              std::optional<std::string> default_value = std::nullopt, std::string help = {});
  ProblemSchema& enumeration(std::string name, std::vector<std::string> labels,
                             std::optional<std::string> default_value = std::nullopt, std::string help = {});
  // Modifiers of the field declared last.
  ProblemSchema& unkeyed_at_default();
  ProblemSchema& range(std::optional<std::int64_t> min, std::optional<std::int64_t> max);

  const std::vector<ProblemField>& fields() const { return fields_; }
  const ProblemField* field(std::string_view name) const;  // nullptr when it has none
  std::optional<std::size_t> index_of(std::string_view name) const;
  bool empty() const { return fields_.empty(); }
  // The field that names the problem's element type (the first element_type), if any.
  const ProblemField* element_type_field() const;

  // A problem from values by name, defaults filled in. UsageError for an unknown or missing field,
  // a value of the wrong kind, out of range or not among the choices.
  Problem make(const std::vector<std::pair<std::string, FieldValue>>& values) const;
  // The same from "name=value,…" text (any order; fields with defaults may be left out).
  Problem parse(std::string_view text) const;
  // The same from a stored descriptor (a JSON object of every field).
  Problem from_descriptor(const nlohmann::json& descriptor) const;

  // The match key of a query that names only some fields: the identity fields (every field but
  // the extents), defaults filled in, sorted by name, as name=value text. Extents may be given
  // (they are checked, not matched). UsageError as for make, naming what is missing.
  std::string match_key(const std::vector<NamedValue>& fields) const;

  // The schema as stored in the database (problem_schemas.fields) and back; from_json throws
  // UsageError for a malformed declaration.
  nlohmann::json to_json() const;
  static ProblemSchema from_json(const nlohmann::json& json);

  bool operator==(const ProblemSchema& other) const { return to_json() == other.to_json(); }

 private:
  ProblemSchema& add(ProblemField field);
  ProblemField& last(const char* modifier);
  std::vector<ProblemField> fields_;
};

// One problem: a value for every field of its schema, and what is derived from them.
class Problem {
 public:
  Problem() = default;  // empty: no schema, no fields (a placeholder before assignment)

  const std::string& key() const { return key_; }              // "n=1048576,op=sum,type=float32"
  std::int64_t size() const { return size_; }                  // product of the extents (1 with none)
  const std::string& dtype() const { return dtype_; }          // the element type; "" without one
  const std::string& match_key() const { return match_key_; }  // "op=sum,type=float32"
  const ProblemSchema& schema() const;
  const std::vector<FieldValue>& values() const { return values_; }

  // Typed reads by name; Error for an unknown name or a value of the other kind.
  std::int64_t integer(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  // Every field as a JSON object in declaration order (problems.descriptor).
  nlohmann::ordered_json descriptor() const;

  bool operator==(const Problem& other) const { return key_ == other.key_ && values_ == other.values_; }

 private:
  friend class ProblemSchema;
  std::shared_ptr<const ProblemSchema> schema_;
  std::vector<FieldValue> values_;
  std::string key_, dtype_, match_key_;
  std::int64_t size_ = 0;
};

}  // namespace cutune
