#include "config/merge.h"

#include <gtest/gtest.h>

#include <ctime>
#include <nlohmann/json.hpp>

namespace primus::config {
namespace {

Value Map(std::initializer_list<std::pair<std::string, Value>> entries, Origin origin = {}) {
  Value map = Value::EmptyMap(std::move(origin));
  for (const auto& [key, value] : entries) map.Put(key, value);
  return map;
}

TEST(MergeTest, MapsMergeKeyByKeyAndLeavesKeepTheirOrigins) {
  Origin base_file = Origin::File("base.yaml", 1, 1);
  Origin exp_file = Origin::File("exp.yaml", 1, 1);
  Value base = Map({{"model", Map({{"layers", Value::Int(24, Origin::File("base.yaml", 3, 11))},
                                   {"hidden", Value::Int(1024, Origin::File("base.yaml", 4, 11))}})},
                    {"seed", Value::Int(1, base_file)}},
                   base_file);
  Value over = Map({{"model", Map({{"hidden", Value::Int(2048, Origin::File("exp.yaml", 2, 11))}})},
                    {"name", Value::String("exp", exp_file)}},
                   exp_file);
  Value merged = Merge(base, over);
  EXPECT_EQ(merged.Find("model.layers")->AsInt(), 24);
  EXPECT_EQ(merged.Find("model.layers")->origin().Describe(), "base.yaml:3:11");
  EXPECT_EQ(merged.Find("model.hidden")->AsInt(), 2048);
  EXPECT_EQ(merged.Find("model.hidden")->origin().Describe(), "exp.yaml:2:11");
  EXPECT_EQ(merged.Find("seed")->AsInt(), 1);
  // Base keys keep their order; new keys follow.
  ASSERT_EQ(merged.AsMap().size(), 3u);
  EXPECT_EQ(merged.AsMap()[0].first, "model");
  EXPECT_EQ(merged.AsMap()[1].first, "seed");
  EXPECT_EQ(merged.AsMap()[2].first, "name");
}

TEST(MergeTest, ListsAndScalarsReplaceInsteadOfMerging) {
  Value base = Map({{"mounts", Value::EmptyList()}, {"x", Map({{"y", Value::Int(1)}})}});
  base.Find("mounts")->Append(Value::String("/a"));
  base.Find("mounts")->Append(Value::String("/b"));
  Value over = Map({{"mounts", Value::EmptyList()}, {"x", Value::String("flat")}});
  over.Find("mounts")->Append(Value::String("/c"));
  Value merged = Merge(base, over);
  ASSERT_EQ(merged.Find("mounts")->AsList().size(), 1u);
  EXPECT_EQ(merged.Find("mounts")->AsList()[0].AsString(), "/c");
  EXPECT_EQ(merged.Find("x")->AsString(), "flat");
}

TEST(MergeTest, ExplicitNullReplaces) {
  Value merged = Merge(Map({{"a", Value::Int(1)}}), Map({{"a", Value::Null()}}));
  ASSERT_NE(merged.Find("a"), nullptr);
  EXPECT_TRUE(merged.Find("a")->IsNull());
}

TEST(MergeTest, AMapWithoutAnOriginKeepsTheBaseOrigin) {
  Value base = Map({{"a", Value::Int(1)}}, Origin::File("base.yaml", 1, 1));
  Value merged = Merge(base, Map({{"b", Value::Int(2)}}));
  EXPECT_EQ(merged.origin().Describe(), "base.yaml:1:1");
}


TEST(MergeTest, LargeMapsMergeInLinearTime) {
  Value base = Value::EmptyMap(), over = Value::EmptyMap();
  for (int i = 0; i < 100000; ++i) {
    base.AsMap().emplace_back("k" + std::to_string(i), Value::Int(i));
    over.AsMap().emplace_back("k" + std::to_string(i + 50000), Value::Int(-i));
  }
  std::clock_t start = std::clock();  // CPU time: what the merge costs, whatever else runs
  Value merged = Merge(base, over);
  EXPECT_LT(std::clock() - start, CLOCKS_PER_SEC);
  ASSERT_EQ(merged.AsMap().size(), 150000u);
  EXPECT_EQ(merged.AsMap()[0].first, "k0") << "base keys keep their order";
  EXPECT_EQ(*merged.Get("k50000"), Value::Int(0)) << "over wins";
  EXPECT_EQ(merged.AsMap().back().first, "k149999") << "new keys follow";
  std::clock_t json_start = std::clock();
  EXPECT_EQ(merged.ToJson().size(), 150000u);
  EXPECT_LT(std::clock() - json_start, CLOCKS_PER_SEC);
}

}  // namespace
}  // namespace primus::config
