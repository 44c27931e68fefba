// Every family has a built-in default for the lookup library, and its own space accepts it.
#include <gtest/gtest.h>

#include "builtin_defaults.hpp"
#include "family.hpp"

using namespace cutune;

TEST(BuiltinDefaults, EveryFamilyHasOneItsSpaceAccepts) {
  for (const auto& family : families()) {
    const auto* fallback = db::builtin_default(family->name());
    ASSERT_NE(fallback, nullptr) << family->name() << " needs an entry in db/builtin_defaults.hpp";
    for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
      const Space space = family->space(limits_for_arch(arch));
      const Config config = space.parse(std::string(fallback->config));
      EXPECT_FALSE(space.violation(config)) << family->name() << " on " << arch << ": " << *space.violation(config);
      EXPECT_EQ(space.key(config), fallback->config) << "the default must be written canonically";
    }
  }
}
