#include "config/scalar_types.h"

#include <gtest/gtest.h>

#include <cmath>

namespace primus::config {
namespace {

TEST(InferScalarTest, NullForms) {
  for (const char* text : {"", "~", "null", "Null", "NULL"}) {
    EXPECT_TRUE(InferScalar(text).IsNull()) << text;
  }
  EXPECT_TRUE(InferScalar("nULL").IsString());
}

TEST(InferScalarTest, OnlyYaml12BooleansAreBooleans) {
  EXPECT_EQ(InferScalar("true"), Value::Bool(true));
  EXPECT_EQ(InferScalar("True"), Value::Bool(true));
  EXPECT_EQ(InferScalar("FALSE"), Value::Bool(false));
  // YAML 1.1 booleans are strings in 1.2: "no" must not turn into false.
  EXPECT_EQ(InferScalar("no"), Value::String("no"));
  EXPECT_EQ(InferScalar("on"), Value::String("on"));
  EXPECT_EQ(InferScalar("tRUE"), Value::String("tRUE"));
}

TEST(InferScalarTest, Integers) {
  EXPECT_EQ(InferScalar("42"), Value::Int(42));
  EXPECT_EQ(InferScalar("-7"), Value::Int(-7));
  EXPECT_EQ(InferScalar("+3"), Value::Int(3));
  EXPECT_EQ(InferScalar("0x1F"), Value::Int(31));
  EXPECT_EQ(InferScalar("0o17"), Value::Int(15));
  EXPECT_EQ(InferScalar("0x"), Value::String("0x"));
  EXPECT_EQ(InferScalar("0o8"), Value::String("0o8"));
  EXPECT_EQ(InferScalar("1_000"), Value::String("1_000"));
  EXPECT_TRUE(InferScalar("123456789012345678901234567890").IsDouble());
}

TEST(InferScalarTest, Floats) {
  EXPECT_EQ(InferScalar("0.5"), Value::Double(0.5));
  EXPECT_EQ(InferScalar("1e-3"), Value::Double(0.001));
  EXPECT_EQ(InferScalar("-2.5E+2"), Value::Double(-250));
  EXPECT_EQ(InferScalar(".5"), Value::Double(0.5));
  EXPECT_EQ(InferScalar("5."), Value::Double(5));
  EXPECT_EQ(InferScalar(".inf"), Value::Double(INFINITY));
  EXPECT_EQ(InferScalar("-.Inf"), Value::Double(-INFINITY));
  EXPECT_TRUE(std::isnan(InferScalar(".nan").AsDouble()));
  for (const char* text : {"1.2.3", "1e", "e5", ".", "inf", "nan", "0x1p3", "1e5x", "4:00:00"}) {
    EXPECT_TRUE(InferScalar(text).IsString()) << text;
  }
}

TEST(FormatDoubleTest, ReadsBackAsTheSameFloat) {
  EXPECT_EQ(FormatDouble(1.0), "1.0");
  EXPECT_EQ(FormatDouble(0.001), "0.001");
  EXPECT_EQ(FormatDouble(-INFINITY), "-.inf");
  EXPECT_EQ(FormatDouble(NAN), ".nan");
  for (double value : {1.0, 0.1, 1e-3, 1e20, 123456.789, -0.25, 1e-300}) {
    Value back = InferScalar(FormatDouble(value));
    ASSERT_TRUE(back.IsDouble()) << FormatDouble(value);
    EXPECT_EQ(back.AsDouble(), value);
  }
}

TEST(QuoteForYamlTest, QuotesOnlyWhatWouldReadBackDifferently) {
  EXPECT_EQ(QuoteForYaml("plain text"), "plain text");
  EXPECT_EQ(QuoteForYaml("/data:/data"), "/data:/data");
  EXPECT_EQ(QuoteForYaml(""), "\"\"");
  EXPECT_EQ(QuoteForYaml("true"), "\"true\"");
  EXPECT_EQ(QuoteForYaml("42"), "\"42\"");
  EXPECT_EQ(QuoteForYaml("~"), "\"~\"");
  EXPECT_EQ(QuoteForYaml("a: b"), "\"a: b\"");
  EXPECT_EQ(QuoteForYaml("a #b"), "\"a #b\"");
  EXPECT_EQ(QuoteForYaml("[{host}:{rank}] "), "\"[{host}:{rank}] \"");
  EXPECT_EQ(QuoteForYaml("- item"), "\"- item\"");
  EXPECT_EQ(QuoteForYaml("<<"), "\"<<\"");
  // YAML 1.1 readers (PyYAML) would turn these into booleans or numbers.
  EXPECT_EQ(QuoteForYaml("yes"), "\"yes\"");
  EXPECT_EQ(QuoteForYaml("Off"), "\"Off\"");
  EXPECT_EQ(QuoteForYaml("1:00:00"), "\"1:00:00\"");
  EXPECT_EQ(QuoteForYaml("10.0.0.1"), "\"10.0.0.1\"");
  EXPECT_EQ(QuoteForYaml("yesterday"), "yesterday");
  EXPECT_EQ(QuoteForYaml("say \"hi\"\n\tnow\\"), "\"say \\\"hi\\\"\\n\\tnow\\\\\"");
}

}  // namespace
}  // namespace primus::config
