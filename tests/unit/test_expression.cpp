#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/expression.hpp"
#include "core/space.hpp"

using namespace cutune;

namespace {

// Names a, b, c, block, ept read slots 0..4.
std::optional<std::size_t> slot_of(std::string_view name) {
  const std::vector<std::string_view> names{"a", "b", "c", "block", "ept"};
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return i;
  return std::nullopt;
}

std::optional<std::int64_t> eval(const std::string& text, std::vector<std::int64_t> values = {2, 3, 5, 256, 4}) {
  return Expression::parse(text, slot_of).evaluate(values);
}

std::string error_of(const std::string& text) {
  try {
    Expression::parse(text, slot_of);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST(Expression, ArithmeticFollowsCPrecedence) {
  EXPECT_EQ(eval("a + b * c"), 17);
  EXPECT_EQ(eval("(a + b) * c"), 25);
  EXPECT_EQ(eval("c - b - a"), 0);  // left associative
  EXPECT_EQ(eval("block / ept / a"), 32);
  EXPECT_EQ(eval("c % b * a"), 4);
  EXPECT_EQ(eval("-a * b"), -6);
  EXPECT_EQ(eval("- -a + +b"), 5);
  EXPECT_EQ(eval("7 / -2"), -3);  // truncates toward zero, like C
  EXPECT_EQ(eval("-7 % 3"), -1);
  EXPECT_EQ(eval("  block*ept*2  "), 2048);
}

TEST(Expression, ComparisonsAndLogicBindLooserThanArithmetic) {
  EXPECT_EQ(eval("block * ept <= 1024"), 1);
  EXPECT_EQ(eval("block * ept < 1024"), 0);
  EXPECT_EQ(eval("a + 1 == b"), 1);
  EXPECT_EQ(eval("(a < b) == 1"), 1);
  EXPECT_EQ(eval("a == b - 1"), 1);
  EXPECT_EQ(eval("a > b || c >= 5 && b != 3"), 0);  // && before ||
  EXPECT_EQ(eval("(a > b || c >= 5) && b == 3"), 1);
  EXPECT_EQ(eval("!a"), 0);
  EXPECT_EQ(eval("!(a > b)"), 1);
  EXPECT_EQ(eval("!a == 0"), 1);  // unary ! binds tightest
  EXPECT_EQ(eval("a != 0 && b"), 1);
}

TEST(Expression, DivisionByZeroIsUndefinedUnlessShortCircuited) {
  EXPECT_EQ(eval("a / (b - 3)"), std::nullopt);
  EXPECT_EQ(eval("a % 0 == 0"), std::nullopt);
  EXPECT_EQ(eval("b == 3 || a / 0"), 1);
  EXPECT_EQ(eval("b != 3 && a / 0"), 0);
  EXPECT_EQ(eval("9223372036854775807 + a"), std::nullopt);  // overflow
}

TEST(Expression, ReportsItsSlotsOnce) {
  EXPECT_EQ(Expression::parse("ept * block <= block * 2 + a", slot_of).slots(), (std::vector<std::size_t>{0, 3, 4}));
  EXPECT_TRUE(Expression::parse("1 < 2", slot_of).slots().empty());
}

TEST(Expression, ErrorsQuoteTheTextAndColumn) {
  EXPECT_EQ(error_of("a +* b"), "constraint 'a +* b': expected a number, a parameter name or '(' at column 4");
  EXPECT_EQ(error_of("a + "), "constraint 'a + ': expected a number, a parameter name or '(' at the end");
  EXPECT_EQ(error_of("(a + b"), "constraint '(a + b': expected ')' at the end");
  EXPECT_EQ(error_of("a + b)"), "constraint 'a + b)': unexpected ')' at column 6");
  EXPECT_EQ(error_of("blok * 2"), "constraint 'blok * 2': unknown parameter 'blok' at column 1");
  EXPECT_EQ(error_of("a = b"), "constraint 'a = b': unexpected '=' (did you mean '=='?) at column 3");
  EXPECT_EQ(error_of("a < b < c"),
            "constraint 'a < b < c': comparisons do not chain; join them with && or add "
            "parentheses at column 7");
  // C reads this as (a < b) == 1, Python as a < b and b == 1: neither is assumed.
  EXPECT_NE(error_of("a < b == 1").find("comparisons do not chain"), std::string::npos);
  EXPECT_EQ(error_of("a * 1.5"), "constraint 'a * 1.5': only integer literals are allowed at column 6");
  EXPECT_EQ(error_of("a & b"), "constraint 'a & b': unexpected '&' at column 3");
  EXPECT_EQ(error_of("99999999999999999999"), "constraint '99999999999999999999': number too large at column 1");
  EXPECT_EQ(error_of(""), "constraint '': expected a number, a parameter name or '(' at the end");
}

// Deep nesting is refused in one short line, never a stack overflow (issue 17: 6,800 parentheses
// or 50,000 '!' crashed the parser); 256 levels still parse.
// Fuzzed text (tests/fuzz): a byte that is no printable character is named by its code, and a
// long text is quoted by whole characters, so the message stays one readable line.
TEST(Expression, OddBytesAreNamedAndLongTextsQuotedByWholeCharacters) {
  EXPECT_EQ(error_of("a \x01 b"), "constraint 'a   b': unexpected byte 0x01 at column 3");
  EXPECT_EQ(error_of("a\xC3\xA9"), "constraint 'a\xC3\xA9': unexpected byte 0xC3 at column 2");
  std::string long_text = "a";
  for (int i = 0; i < 100; ++i) long_text += " + \xC3\xA9";  // 'é' is two bytes: cuts must fall between characters
  const std::string error = error_of(long_text);
  EXPECT_LT(error.size(), 300u) << error;
  EXPECT_NE(error.find(" … "), std::string::npos) << error;
  for (std::size_t i = 0; i + 1 < error.size(); ++i) {
    if (static_cast<unsigned char>(error[i]) == 0xC3) {
      EXPECT_EQ(static_cast<unsigned char>(error[i + 1]), 0xA9) << error;
    }
  }
  EXPECT_NE(static_cast<unsigned char>(error.back()) & 0xC0, 0xC0) << "ends inside a character";
}

TEST(Expression, DeepNestingIsRefusedInOneShortLine) {
  const std::string deep_parentheses = std::string(6800, '(') + "a" + std::string(6800, ')');
  const std::string many_nots = std::string(50'000, '!') + "a";
  const std::string deep_conditional = [] {
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "a ? b : ";
    return text + "c";
  }();
  for (const std::string& text : {deep_parentheses, many_nots, deep_conditional}) {
    const std::string error = error_of(text);
    EXPECT_NE(error.find("nested deeper than 256 levels"), std::string::npos) << error.substr(0, 300);
    EXPECT_LT(error.size(), 300u);
  }
  EXPECT_EQ(eval(std::string(100, '(') + "a + 1" + std::string(100, ')')), 3);
  EXPECT_EQ(eval(std::string(200, '!') + "a"), 1);  // !!2 is 1
  // Long but flat expressions are not nesting: a thousand terms parse and evaluate.
  std::string sum = "a";
  for (int i = 0; i < 1000; ++i) sum += " + 1";
  EXPECT_EQ(eval(sum), 1002);
}

TEST(SpaceRequire, ExpressionConstraintsFilterAndDescribeThemselves) {
  Space s;
  s.axis("block", {64, 128, 256, 512}).axis("ept", {1, 2, 4, 8}).axis("vec", {1, 2, 4});
  s.require("block * ept * vec <= 2048").require("ept % vec == 0");
  std::size_t expected = 0;
  for (std::int64_t block : {64, 128, 256, 512})
    for (std::int64_t ept : {1, 2, 4, 8})
      for (std::int64_t vec : {1, 2, 4}) expected += block * ept * vec <= 2048 && ept % vec == 0;
  const auto configs = s.enumerate();
  EXPECT_EQ(configs.size(), expected);
  EXPECT_EQ(s.violation(Config{{512, 8, 1}}), "block * ept * vec <= 2048");
  EXPECT_EQ(s.violation(Config{{64, 2, 4}}), "ept % vec == 0");
  EXPECT_EQ(s.constraints()[0].axes, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(s.constraints()[1].axes, (std::vector<std::size_t>{1, 2}));
}

TEST(SpaceRequire, BadExpressionIsAUsageErrorNamingTheParameter) {
  Space s;
  s.axis("block", {64, 128});
  EXPECT_THROW(s.require("block < ept"), UsageError);  // ept is not declared (yet)
  try {
    s.require("block <");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'block <'"), std::string::npos);
  }
}

TEST(SpaceRequire, LabelledAxesReadAsTheirValueNumbers) {
  Space s;
  s.labelled_axis("algo", {"tree", "warp", "lookback"}).axis("pad", {0, 1});
  s.require("pad == 0 || algo == 0");  // padding only for the tree
  EXPECT_EQ(s.enumerate().size(), 4u);
}

TEST(Expression, ConditionalAndFunctions) {
  EXPECT_EQ(eval("a > b ? a : b"), 3);
  EXPECT_EQ(eval("a < b ? a : b"), 2);
  EXPECT_EQ(eval("a ? b ? 1 : 2 : 3"), 1);  // right associative
  EXPECT_EQ(eval("(a == 2 ? block : ept) * 2"), 512);
  EXPECT_EQ(eval("c - c ? block / (c - c) : 7"), 7);  // only the branch taken is evaluated
  EXPECT_EQ(eval("ceil_div(block, 100)"), 3);
  EXPECT_EQ(eval("ceil_div(200, 100)"), 2);
  EXPECT_EQ(eval("ceil_div(0, 7)"), 0);
  EXPECT_EQ(eval("ceil_div(-5, 2)"), -2);
  EXPECT_EQ(eval("ceil_div(5, 0)"), std::nullopt);
  EXPECT_EQ(eval("min(c, b, a * 4)"), 3);
  EXPECT_EQ(eval("max(c, b, a * 4)"), 8);
  EXPECT_EQ(eval("max(a, block / (b - 3))"), std::nullopt);
}

TEST(Expression, FunctionErrorsAndSizeof) {
  EXPECT_NE(error_of("ceil_div(a)").find("ceil_div takes two arguments"), std::string::npos);
  EXPECT_NE(error_of("pow(a, b)").find("unknown function 'pow'"), std::string::npos);
  EXPECT_NE(error_of("a ? b").find("expected ':'"), std::string::npos);
  EXPECT_NE(error_of("sizeof(a)").find("sizeof takes the name of an element-type field"), std::string::npos);
  const auto with_sizeof = [](std::string_view name) -> std::optional<std::size_t> {
    if (name == "n") return 0;
    if (name == "sizeof(type)") return 1;
    return std::nullopt;
  };
  const std::vector<std::int64_t> values{10, 8};
  EXPECT_EQ(Expression::parse("2 * n * sizeof(type)", with_sizeof).evaluate(values), 160);
  try {
    Expression::parse("n * m", with_sizeof, {}, "buffer 'x' length");
    ADD_FAILURE() << "parsed";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "buffer 'x' length 'n * m': unknown name 'm' at column 5");
  }
}
