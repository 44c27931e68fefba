#include "expression.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "error.hpp"

namespace cutune {

enum class Op {
  literal,
  slot,
  negate,
  logical_not,
  add,
  subtract,
  multiply,
  divide,
  remainder,
  less,
  less_equal,
  greater,
  greater_equal,
  equal,
  not_equal,
  logical_and,
  logical_or,
  conditional,
  ceil_div,
  min,
  max
};

struct Expression::Node {
  Op op = Op::literal;
  std::int64_t number = 0;  // the literal, or the slot
  bool parenthesised = false;
  std::unique_ptr<const Node> left, right;
  std::unique_ptr<const Node> otherwise;              // the conditional's else branch
  std::vector<std::unique_ptr<const Node>> operands;  // a function's arguments
};

namespace {

using Node = Expression::Node;
using Value = std::optional<std::int64_t>;

bool is_comparison(Op op) {
  return op == Op::less || op == Op::less_equal || op == Op::greater || op == Op::greater_equal || op == Op::equal ||
         op == Op::not_equal;
}

// Recursive descent, one function per precedence level. `pos_` always indexes the next
// unread character; errors quote the whole text and a 1-based column.
class Parser {
 public:
  Parser(std::string_view text, const Expression::Resolver& resolve, const Expression::ConstantResolver& constant,
         std::string_view what)
      : text_(text), resolve_(resolve), constant_(constant), what_(what) {}

  std::unique_ptr<Node> parse_all(std::vector<std::size_t>& slots) {
    auto root = parse_conditional();
    skip_space();
    if (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      // A byte that is no printable character is named by its code (one line, readable whatever it was).
      char code[8];
      std::snprintf(code, sizeof code, "0x%02X", c);
      fail("unexpected " + (std::isprint(c) ? "'" + std::string(1, text_[pos_]) + "'" : "byte " + std::string(code)) +
           (c == '=' ? " (did you mean '=='?)" : ""));
    }
    slots = std::move(slots_);
    std::sort(slots.begin(), slots.end());
    slots.erase(std::unique(slots.begin(), slots.end()), slots.end());
    return root;
  }

 private:
  // One line however long the text: it is quoted up to kQuoted characters.
  [[noreturn]] void fail(const std::string& what) const {
    constexpr std::size_t kQuoted = 100;
    const std::string where = pos_ < text_.size() ? "at column " + std::to_string(pos_ + 1) : "at the end";
    const std::string quoted = shortened(text_, kQuoted);  // its head and tail, whole characters, no control bytes
    throw UsageError(std::string(what_) + " '" + quoted + "': " + what + " " + where);
  }

  // Each nesting (parentheses, unary operators, ?: chains) takes a few stack frames: past
  // kMaxDepth levels an expression is refused instead of overflowing the stack.
  static constexpr int kMaxDepth = 256;
  class Nested {
   public:
    explicit Nested(Parser& parser) : parser_(parser) {
      if (++parser_.depth_ > kMaxDepth) parser_.fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    }
    ~Nested() { --parser_.depth_; }
    Nested(const Nested&) = delete;
    Nested& operator=(const Nested&) = delete;

   private:
    Parser& parser_;
  };
  int depth_ = 0;

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }

  // Consumes `token` when it comes next (and, for one-character tokens, is not the start of a
  // longer one listed in `unless_followed_by`).
  bool accept(std::string_view token, char unless_followed_by = '\0') {
    skip_space();
    if (text_.substr(pos_, token.size()) != token) return false;
    const std::size_t after = pos_ + token.size();
    if (unless_followed_by && after < text_.size() && text_[after] == unless_followed_by) return false;
    pos_ = after;
    return true;
  }

  static std::unique_ptr<Node> make(Op op, std::unique_ptr<const Node> left, std::unique_ptr<const Node> right = {}) {
    auto node = std::make_unique<Node>();
    node->op = op;
    node->left = std::move(left);
    node->right = std::move(right);
    return node;
  }

  // One left-associative level of binary operators over the next tighter level. Tokens sharing
  // a prefix are listed longest first ("<=" before "<").
  using Level = std::unique_ptr<Node> (Parser::*)();
  std::unique_ptr<Node> parse_level(Level operand, std::initializer_list<std::pair<std::string_view, Op>> ops) {
    auto left = (this->*operand)();
    while (true) {
      const std::size_t at = pos_;
      std::optional<Op> found;
      for (const auto& [token, op] : ops)
        if (accept(token)) {
          found = op;
          break;
        }
      if (!found) return left;
      if (is_comparison(*found) && is_comparison(left->op) && !left->parenthesised) {
        pos_ = at;
        skip_space();
        fail("comparisons do not chain; join them with && or add parentheses");
      }
      left = make(*found, std::move(left), (this->*operand)());
    }
  }

  // c ? a : b, right associative, looser than ||.
  std::unique_ptr<Node> parse_conditional() {
    const Nested nested(*this);
    auto condition = parse_or();
    if (!accept("?")) return condition;
    auto node = make(Op::conditional, std::move(condition), parse_conditional());
    if (!accept(":")) fail("expected ':' of '?:'");
    node->otherwise = parse_conditional();
    return node;
  }

  std::unique_ptr<Node> parse_or() { return parse_level(&Parser::parse_and, {{"||", Op::logical_or}}); }
  std::unique_ptr<Node> parse_and() { return parse_level(&Parser::parse_equality, {{"&&", Op::logical_and}}); }
  std::unique_ptr<Node> parse_equality() {
    return parse_level(&Parser::parse_relational, {{"==", Op::equal}, {"!=", Op::not_equal}});
  }
  std::unique_ptr<Node> parse_relational() {
    return parse_level(&Parser::parse_additive,
                       {{"<=", Op::less_equal}, {">=", Op::greater_equal}, {"<", Op::less}, {">", Op::greater}});
  }
  std::unique_ptr<Node> parse_additive() {
    return parse_level(&Parser::parse_multiplicative, {{"+", Op::add}, {"-", Op::subtract}});
  }
  std::unique_ptr<Node> parse_multiplicative() {
    return parse_level(&Parser::parse_unary, {{"*", Op::multiply}, {"/", Op::divide}, {"%", Op::remainder}});
  }

  std::unique_ptr<Node> parse_unary() {
    const Nested nested(*this);
    if (accept("!", '=')) return make(Op::logical_not, parse_unary());
    if (accept("-")) return make(Op::negate, parse_unary());
    if (accept("+")) return parse_unary();
    return parse_primary();
  }

  std::unique_ptr<Node> parse_primary() {
    skip_space();
    if (accept("(")) {
      auto inner = parse_conditional();
      if (!accept(")")) fail("expected ')'");
      inner->parenthesised = true;
      return inner;
    }
    if (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) return parse_number();
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      return parse_name();
    fail("expected a number, a parameter name or '('");
  }

  std::unique_ptr<Node> parse_number() {
    const std::size_t start = pos_;
    std::int64_t number = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (__builtin_mul_overflow(number, 10, &number) || __builtin_add_overflow(number, text_[pos_] - '0', &number)) {
        pos_ = start;
        fail("number too large");
      }
      ++pos_;
    }
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.'))
      fail("only integer literals are allowed");
    auto node = std::make_unique<Node>();
    node->number = number;
    return node;
  }

  std::unique_ptr<Node> parse_name() {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    const std::string_view name = text_.substr(start, pos_ - start);
    if (accept("(")) return parse_call(name, start);
    const auto slot = resolve_(name);
    if (!slot) {
      if (constant_) {
        if (const auto value = constant_(name)) {
          auto node = std::make_unique<Node>();
          node->number = *value;
          return node;
        }
      }
      pos_ = start;
      fail(std::string(what_ == "constraint" ? "unknown parameter '" : "unknown name '") + shortened(name, 40) + "'");
    }
    slots_.push_back(*slot);
    auto node = std::make_unique<Node>();
    node->op = Op::slot;
    node->number = static_cast<std::int64_t>(*slot);
    return node;
  }

  // name( has been read: a function call, or sizeof(name).
  std::unique_ptr<Node> parse_call(std::string_view name, std::size_t start) {
    if (name == "sizeof") {
      skip_space();
      const std::size_t at = pos_;
      while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
        ++pos_;
      const std::string field(text_.substr(at, pos_ - at));
      const auto slot = field.empty() ? std::nullopt : resolve_("sizeof(" + field + ")");
      if (!slot) {
        pos_ = at;
        fail("sizeof takes the name of an element-type field");
      }
      if (!accept(")")) fail("expected ')'");
      slots_.push_back(*slot);
      auto node = std::make_unique<Node>();
      node->op = Op::slot;
      node->number = static_cast<std::int64_t>(*slot);
      return node;
    }
    Op op = Op::ceil_div;
    std::size_t min_arguments = 2, max_arguments = 2;
    if (name == "min" || name == "max") {
      op = name == "min" ? Op::min : Op::max;
      max_arguments = SIZE_MAX;
    } else if (name != "ceil_div") {
      pos_ = start;
      fail("unknown function '" + shortened(name, 40) + "' (functions: ceil_div, min, max, sizeof)");
    }
    auto node = std::make_unique<Node>();
    node->op = op;
    do node->operands.push_back(parse_conditional());
    while (accept(","));
    if (!accept(")")) fail("expected ')' or ','");
    if (node->operands.size() < min_arguments || node->operands.size() > max_arguments) {
      pos_ = start;
      fail(std::string(name) + " takes " + (max_arguments == 2 ? "two arguments" : "two or more arguments"));
    }
    return node;
  }

  std::string_view text_;
  const Expression::Resolver& resolve_;
  const Expression::ConstantResolver& constant_;
  std::string_view what_;
  std::size_t pos_ = 0;
  std::vector<std::size_t> slots_;
};

// Overflow, like division by zero, leaves the value undefined rather than wrapping silently.
Value arithmetic(Op op, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  switch (op) {
    case Op::add:
      return __builtin_add_overflow(a, b, &r) ? Value() : r;
    case Op::subtract:
      return __builtin_sub_overflow(a, b, &r) ? Value() : r;
    case Op::multiply:
      return __builtin_mul_overflow(a, b, &r) ? Value() : r;
    case Op::divide:
      return b == 0 || (b == -1 && a == INT64_MIN) ? Value() : a / b;
    case Op::remainder:
      return b == 0 || (b == -1 && a == INT64_MIN) ? Value() : a % b;
    case Op::less:
      return a < b;
    case Op::less_equal:
      return a <= b;
    case Op::greater:
      return a > b;
    case Op::greater_equal:
      return a >= b;
    case Op::equal:
      return a == b;
    case Op::not_equal:
      return a != b;
    default:
      return std::nullopt;
  }
}

Value evaluate_node(const Node& node, std::span<const std::int64_t> values) {
  switch (node.op) {
    case Op::literal:
      return node.number;
    case Op::slot:
      return values[static_cast<std::size_t>(node.number)];
    case Op::negate: {
      const Value v = evaluate_node(*node.left, values);
      return v && *v != INT64_MIN ? Value(-*v) : Value();
    }
    case Op::logical_not: {
      const Value v = evaluate_node(*node.left, values);
      return v ? Value(*v == 0) : Value();
    }
    case Op::logical_and: {  // short-circuit, so "t != 0 && n / t > 2" is defined when t == 0
      const Value a = evaluate_node(*node.left, values);
      if (a && *a == 0) return 0;
      const Value b = evaluate_node(*node.right, values);
      if (!a || !b) return std::nullopt;
      return *b != 0;
    }
    case Op::logical_or: {
      const Value a = evaluate_node(*node.left, values);
      if (a && *a != 0) return 1;
      const Value b = evaluate_node(*node.right, values);
      if (!a || !b) return std::nullopt;
      return *b != 0;
    }
    case Op::conditional: {
      const Value condition = evaluate_node(*node.left, values);
      if (!condition) return std::nullopt;
      return evaluate_node(*condition ? *node.right : *node.otherwise, values);
    }
    case Op::ceil_div: {
      const Value a = evaluate_node(*node.operands[0], values), b = evaluate_node(*node.operands[1], values);
      if (!a || !b || *b <= 0) return std::nullopt;
      // Rounds toward +inf for either sign of a, without overflowing a + b - 1.
      return *a / *b + ((*a % *b) > 0 ? 1 : 0);
    }
    case Op::min:
    case Op::max: {
      Value best;
      for (const auto& operand : node.operands) {
        const Value v = evaluate_node(*operand, values);
        if (!v) return std::nullopt;
        if (!best || (node.op == Op::min ? *v < *best : *v > *best)) best = v;
      }
      return best;
    }
    default: {
      const Value a = evaluate_node(*node.left, values), b = evaluate_node(*node.right, values);
      if (!a || !b) return std::nullopt;
      return arithmetic(node.op, *a, *b);
    }
  }
}

}  // namespace

Expression Expression::parse(std::string_view text, const Resolver& resolve, const ConstantResolver& constant,
                             std::string_view what) {
  Expression expression;
  expression.text_ = std::string(text);
  Parser parser(expression.text_, resolve, constant, what);
  expression.root_ = parser.parse_all(expression.slots_);
  return expression;
}

Expression Expression::constant(std::int64_t value) {
  Expression expression;
  expression.text_ = std::to_string(value);
  auto node = std::make_shared<Node>();
  node->number = value;
  expression.root_ = std::move(node);
  return expression;
}

std::optional<std::int64_t> Expression::evaluate(std::span<const std::int64_t> values) const {
  return evaluate_node(*root_, values);
}

}  // namespace cutune
