#pragma once
// Integer expressions over parameter names, for constraints a family writes as text:
// "block * ept * vec <= 8192", "fold_stop < block / 2", "!(pad && vec == 1)", and for the sizes,
// grids and arguments of kernel spec files: "ceil_div(n, block * ept)", "stage ? block * 4 : 0".
//
// Grammar, loosest binding first (C precedence and integer semantics; truth is non-zero):
//   ?:   ||   &&   == !=   < <= > >=   + -   * / %   unary ! - +   literals, names, ( … ),
//   functions ceil_div(a, b), min(a, …), max(a, …), and sizeof(name), which the resolver
//   answers for the name "sizeof(name)" (a spec's element-type fields).
// Comparisons do not chain: "a < b < c" is rejected rather than given C's surprising meaning.
// Division and remainder truncate toward zero; dividing by zero makes the value undefined, and
// a constraint with an undefined value rejects the config instead of ending the enumeration.
// ceil_div(a, b) rounds up and is undefined for b <= 0. The conditional evaluates only the branch
// it takes, so "t != 0 ? n / t : 0" is defined when t == 0.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cutune {

class Expression {
 public:
  // Maps a name in the text to the slot it reads in evaluate()'s values, or nullopt when unknown.
  using Resolver = std::function<std::optional<std::size_t>(std::string_view name)>;
  // Maps a name that is no parameter to a constant (a labelled axis's value, say "regtile"), or
  // nullopt when it is none either.
  using ConstantResolver = std::function<std::optional<std::int64_t>(std::string_view name)>;

  // Throws UsageError quoting the text and the column of the first problem; `what` names the
  // kind of text in the message ("constraint 'a < b': unknown parameter 'b' at column 5").
  static Expression parse(std::string_view text, const Resolver& resolve, const ConstantResolver& constant = {},
                          std::string_view what = "constraint");

  // The expression that is just this number.
  static Expression constant(std::int64_t value);

  // nullopt where a division or remainder by zero was needed.
  std::optional<std::int64_t> evaluate(std::span<const std::int64_t> values) const;
  const std::string& text() const { return text_; }
  // The distinct slots it reads, ascending.
  const std::vector<std::size_t>& slots() const { return slots_; }

  struct Node;  // the syntax tree; defined in expression.cpp

 private:
  Expression() = default;
  std::string text_;
  std::shared_ptr<const Node> root_;  // immutable, so copies of an Expression share it
  std::vector<std::size_t> slots_;
};

}  // namespace cutune
