#include "util/pickle_reader.h"

#include <gtest/gtest.h>

#include <string>

namespace primus {
namespace {

using namespace std::string_literals;

// pickle.dumps({'a': [1, 2, (3, 'x')], 'b': None, 'c': True, 'big': 1724779239936775119,
//               'neg': -5, 'f': 1.5, 'by': b'\xff'}, protocol=P) by CPython 3.11.
const std::string kProtocol2 =
    "\x80\x02}q\x00(X\x01\x00\x00\x00"
    "aq\x01]q\x02(K\x01K\x02K\x03X\x01\x00\x00\x00xq\x03\x86q\x04"
    "eX\x01\x00\x00\x00"
    "bq\x05NX\x01\x00\x00\x00"
    "cq\x06\x88X\x03\x00\x00\x00"
    "bigq\x07\x8a\x08\xcfSf\x98\x94\xa5\xef\x17X\x03\x00\x00\x00negq\x08J\xfb\xff\xff\xffX\x01\x00"
    "\x00\x00"
    "fq\tG?\xf8\x00\x00\x00\x00\x00\x00X\x02\x00\x00\x00"
    "byq\nc_codecs\nencode\nq\x0bX\x02\x00\x00\x00\xc3\xbfq\x0cX\x06\x00\x00\x00latin1q\x0d\x86q"
    "\x0eRq\x0fu."s;
const std::string kProtocol4 =
    "\x80\x04\x95T\x00\x00\x00\x00\x00\x00\x00}\x94(\x8c\x01"
    "a\x94]\x94(K\x01K\x02K\x03\x8c\x01x\x94\x86\x94"
    "e\x8c\x01"
    "b\x94N\x8c\x01"
    "c\x94\x88\x8c\x03"
    "big\x94\x8a\x08\xcfSf\x98\x94\xa5\xef\x17\x8c\x03neg\x94J\xfb\xff\xff\xff\x8c\x01"
    "f\x94G?\xf8\x00\x00\x00\x00\x00\x00\x8c\x02"
    "by\x94"
    "C\x01\xff\x94u."s;

void ExpectTheSample(const nlohmann::json& value) {
  EXPECT_EQ(value["a"], nlohmann::json::parse(R"([1, 2, [3, "x"]])"));
  EXPECT_TRUE(value["b"].is_null());
  EXPECT_EQ(value["c"], true);
  EXPECT_EQ(value["big"].get<int64_t>(), 1724779239936775119);
  EXPECT_EQ(value["neg"], -5);
  EXPECT_EQ(value["f"], 1.5);
  EXPECT_EQ(value["by"], "\xc3\xbf");  // the byte 0xff, as U+00FF
}

TEST(PickleReaderTest, ReadsPythonsProtocols) {
  for (const std::string& bytes : {kProtocol2, kProtocol4}) {
    auto value = ReadPickle(bytes, "sample");
    ASSERT_TRUE(value.ok()) << value.error().message;
    ExpectTheSample(*value);
  }
}

TEST(PickleReaderTest, ReadsTorchScriptsTypeTagsAsTheirData) {
  // What TorchScript's pickler writes for a Dict[str, List[int]]: the dict
  // and the int list each wrapped in a call of torch.jit._pickle.
  std::string bytes =
    "\x80\x02"
    "ctorch.jit._pickle\nrestore_type_tag\nq\x00}q\x01(X\x01\x00\x00\x00kctorch.jit._pickle\nbui"
    "ld_intlist\nq\x02]q\x03(K\x03K\x04"
    "e\x85RuX\x14\x00\x00\x00"
    "Dict[str, List[int]]\x86R."s;
  auto value = ReadPickle(bytes, "sample");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(*value, nlohmann::json::parse(R"({"k": [3, 4]})"));
}

TEST(PickleReaderTest, NeverLoadsAClassOrFunction) {
  // pickle's classic exploit: os.system("echo hi").
  auto value = ReadPickle("cos\nsystem\n(S'echo hi'\ntR."s, "planted.pkl");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.error().message.find("os.system"), std::string::npos) << value.error().message;
  EXPECT_NE(value.error().message.find("planted.pkl"), std::string::npos);
  auto stack_global = ReadPickle("\x80\x04\x8c\x08" "builtins\x8c\x04" "eval\x93."s, "planted.pkl");
  ASSERT_FALSE(stack_global.ok());
  EXPECT_NE(stack_global.error().message.find("builtins.eval"), std::string::npos);
}

TEST(PickleReaderTest, MalformedInputIsAnErrorWithItsOffset) {
  for (size_t cut = 0; cut < kProtocol4.size(); ++cut) {  // every truncation
    auto value = ReadPickle(kProtocol4.substr(0, cut), "dump");
    ASSERT_FALSE(value.ok()) << "cut at " << cut;
    EXPECT_NE(value.error().message.find("at byte"), std::string::npos);
  }
  EXPECT_FALSE(ReadPickle("\x80\x02X\xff\xff\xff\x7f" "abc."s, "dump").ok());  // length past the end
  EXPECT_FALSE(ReadPickle("\x80\x02" "e."s, "dump").ok());                    // APPENDS with no mark
  EXPECT_FALSE(ReadPickle("\x80\x02h\x05."s, "dump").ok());                   // memo never stored
  EXPECT_FALSE(ReadPickle("\x80\x02K\x01K\x02."s, "dump").ok());              // two values left
  EXPECT_FALSE(ReadPickle("\x80\x02\x8a\x09\x01\x01\x01\x01\x01\x01\x01\x01\x01."s, "dump").ok());  // > 64 bits
}

TEST(PickleReaderTest, ACycleOrDeepNestingIsRefusedNotFollowed) {
  // l = [1]; l.append(l)
  auto cycle = ReadPickle("\x80\x02]q\x00(K\x01h\x00" "e."s, "dump");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.error().message.find("nested"), std::string::npos) << cycle.error().message;
  std::string deep = "\x80\x02"s;
  for (int i = 0; i < 1000; ++i) deep += "]";
  for (int i = 0; i < 999; ++i) deep += "a";
  deep += ".";
  EXPECT_FALSE(ReadPickle(deep, "dump").ok());
  // Shared lists are expanded: [[0, 0], [0, 0]] from one memo entry.
  auto shared = ReadPickle("\x80\x02]q\x00(]q\x01(K\x00K\x00" "eh\x01" "e."s, "dump");
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(*shared, nlohmann::json::parse("[[0, 0], [0, 0]]"));
}

}  // namespace
}  // namespace primus
