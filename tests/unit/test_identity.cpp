// Problem identity and the name=value codec: the one owner of what names a problem and a config.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "family.hpp"
#include "field_text.hpp"
#include "problem.hpp"
#include "schema.hpp"

using namespace cutune;

namespace {

ProblemSchema reduce_like() {
  return ProblemSchema()
      .extent("n", "elements")
      .enumeration("op", {"sum", "min", "max"}, "sum")
      .element_type("type", {"float32", "float64"}, "float32")
      .integer("offset", 0)
      .range(0, std::nullopt)
      .unkeyed_at_default();
}

std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

}  // namespace

TEST(NamedValues, RoundTripInOrder) {
  const std::vector<NamedValue> items{{"algo", "lookback"}, {"block", "256"}, {"empty", ""}};
  const std::string text = format_named_values(items);
  EXPECT_EQ(text, "algo=lookback,block=256,empty=");
  EXPECT_EQ(parse_named_values(text), items);
}

TEST(NamedValues, RefusesWhatWouldNotReadBack) {
  EXPECT_NE(usage_error_of([] { parse_named_values("block=256,ept"); }).find("'ept'"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_named_values("=3"); }).find("no name"), std::string::npos);
  EXPECT_NE(usage_error_of([] { parse_named_values("a=1,a=2"); }).find("twice"), std::string::npos);
  EXPECT_THROW(parse_named_values(""), UsageError);
  EXPECT_THROW(format_named_values({{"a", "1,2"}}), Error);
  EXPECT_THROW(format_named_values({{"a=b", "1"}}), Error);
}

TEST(ProblemSchema, DerivesKeySizeTypeAndMatchKey) {
  const ProblemSchema schema = reduce_like();
  const Problem p = schema.make({{"n", 1 << 20}, {"op", "min"}});
  EXPECT_EQ(p.key(), "n=1048576,op=min,type=float32");  // offset at its default: left out
  EXPECT_EQ(p.size(), 1 << 20);
  EXPECT_EQ(p.dtype(), "float32");
  EXPECT_EQ(p.match_key(), "offset=0,op=min,type=float32");  // every field but the extents, sorted
  EXPECT_EQ(p.integer("n"), 1 << 20);
  EXPECT_EQ(p.text("op"), "min");
  EXPECT_THROW(p.integer("op"), Error);
  EXPECT_THROW(p.text("nope"), Error);

  const Problem shifted = schema.make({{"n", 10}, {"offset", 3}});
  EXPECT_EQ(shifted.key(), "n=10,op=sum,type=float32,offset=3");
  EXPECT_EQ(shifted.match_key(), "offset=3,op=sum,type=float32");
}

TEST(ProblemSchema, ProductOfExtentsIsTheSize) {
  const ProblemSchema schema =
      ProblemSchema().extent("m").extent("n").extent("k").element_type("type", {"float32"}, "float32");
  const Problem p = schema.make({{"m", 3000}, {"n", 1500}, {"k", 2500}});
  EXPECT_EQ(p.size(), std::int64_t{3000} * 1500 * 2500);
  EXPECT_EQ(p.match_key(), "type=float32");
  EXPECT_THROW(schema.make({{"m", std::int64_t{1} << 40}, {"n", std::int64_t{1} << 40}, {"k", 2}}), UsageError);
}

TEST(ProblemSchema, TextDescriptorAndJsonRoundTrip) {
  const ProblemSchema schema = reduce_like();
  const Problem p = schema.make({{"n", 4096}, {"op", "max"}, {"offset", 7}});
  EXPECT_EQ(schema.parse(p.key()), p);
  EXPECT_EQ(schema.parse("offset=7,type=float32,op=max,n=4096"), p);  // any order
  EXPECT_EQ(schema.from_descriptor(p.descriptor()), p);
  EXPECT_EQ(p.descriptor().dump(), R"({"n":4096,"op":"max","type":"float32","offset":7})");
  const ProblemSchema again = ProblemSchema::from_json(schema.to_json());
  EXPECT_EQ(again, schema);
  EXPECT_EQ(again.parse(p.key()).key(), p.key());
}

TEST(ProblemSchema, BadValuesAreOneClearLine) {
  const ProblemSchema schema = reduce_like();
  EXPECT_EQ(usage_error_of([&] { schema.parse("n=10,opp=sum"); }),
            "unknown problem field 'opp' (fields: n, op, type, offset)");
  EXPECT_EQ(usage_error_of([&] { schema.parse("n=10,op=mean"); }),
            "problem field 'op' takes one of sum, min, max (got 'mean')");
  EXPECT_EQ(usage_error_of([&] { schema.parse("n=ten"); }), "problem field 'n' takes an integer (got 'ten')");
  EXPECT_EQ(usage_error_of([&] { schema.parse("n=0"); }), "problem field 'n' must be at least 1 (got 0)");
  EXPECT_EQ(usage_error_of([&] { schema.parse("n=5,offset=-1"); }),
            "problem field 'offset' must be at least 0 (got -1)");
  EXPECT_EQ(usage_error_of([&] { schema.parse("op=sum"); }), "problem field 'n' needs a value (it has no default)");
  EXPECT_THROW(schema.from_descriptor(nlohmann::json{{"n", 1.5}}), UsageError);
  EXPECT_THROW(ProblemSchema::from_json(nlohmann::json{{"fields", {{{"name", "n"}, {"kind", "size"}}}}}), UsageError);
  EXPECT_THROW(ProblemSchema().extent("n").extent("n"), Error);
  EXPECT_THROW(ProblemSchema().extent("2n"), Error);
}

TEST(ProblemSchema, QueryMatchKeysFillDefaultsAndNeedTheRest) {
  const ProblemSchema schema = reduce_like();
  EXPECT_EQ(schema.match_key({}), "offset=0,op=sum,type=float32");
  EXPECT_EQ(schema.match_key({{"op", "min"}, {"n", "100"}}), "offset=0,op=min,type=float32");
  EXPECT_EQ(schema.match_key({{"offset", "007"}}), "offset=7,op=sum,type=float32");  // canonical numbers
  const ProblemSchema no_default = ProblemSchema().extent("n").integer("window");
  EXPECT_EQ(usage_error_of([&] { no_default.match_key({}); }), "the problem must say its 'window': it has no default");
  EXPECT_THROW(schema.match_key({{"nope", "1"}}), UsageError);
}

// The migration to schema version 4 stores these frozen declarations for databases that already
// hold problems of the built-in families; they must be what the families declare. A family that
// changes its problem fields needs a new migration, not an edit of the frozen text.
TEST(ProblemSchema, BuiltinFamiliesMatchTheFrozenVersion3Schemas) {
  for (const auto& family : families()) {
    SCOPED_TRACE(family->name());
    const char* frozen = db::frozen_v3_problem_schema(family->name());
    ASSERT_NE(frozen, nullptr);
    EXPECT_EQ(ProblemSchema::from_json(nlohmann::json::parse(frozen)), family->problem_schema());
  }
}

// Every default problem of every family reads back from its key and from its descriptor, and its
// derived identity is the same either way.
TEST(ProblemSchema, EveryDefaultProblemRoundTripsThroughItsKeyAndDescriptor) {
  for (const auto& family : families()) {
    for (const Problem& p : family->problems({})) {
      SCOPED_TRACE(family->name() + " " + p.key());
      EXPECT_EQ(family->parse_problem(p.key()), p);
      EXPECT_EQ(family->problem_from_descriptor(p.descriptor()), p);
      EXPECT_FALSE(p.match_key().empty());
    }
  }
}

TEST(FamilyProblems, FamilyChecksApplyToParsedProblems) {
  const Family& reduce = family_named("reduce");
  EXPECT_EQ(reduce.parse_problem("n=10,op=min").key(), "n=10,op=min,type=float32");
  EXPECT_EQ(usage_error_of([&] { reduce.parse_problem("n=10,op=min,type=float64"); }),
            "reduce problem 'n=10,op=min,type=float64': float64 takes only sum");
  const Family& copy = family_named("copy");
  EXPECT_EQ(copy.parse_problem("n=1000,stride=2").key(), "n=1000,type=float32,stride=2");
  EXPECT_NE(copy.parse_problem("n=1000").match_key(), copy.parse_problem("n=1000,stride=2").match_key());
  const Family& resample = family_named("resample");
  const Problem six = resample.parse_problem("series=10,points=86400,window=6,op=sum");
  const Problem sixty = resample.parse_problem("series=10,points=86400,window=60,op=sum");
  EXPECT_EQ(six.size(), sixty.size());
  EXPECT_NE(six.match_key(), sixty.match_key());
  EXPECT_THROW(resample.parse_problem("series=1,points=86400,op=sum"), UsageError);  // window has no default
}
