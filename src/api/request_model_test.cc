// The declarative request tables: phase 1 follows the read rows' order, phase 2 the check
// rows' order, paths and prefixes as DynamoDB prints them, closed schemas.
#include "api/request_model.h"

#include <gtest/gtest.h>

#include <array>

namespace fdyno::api::request {
namespace {

struct Sample {
  const Value* name = nullptr;
  const Value* count = nullptr;
  const Value* mode = nullptr;
  const Value* tags = nullptr;
  const Value* item = nullptr;
};
using M = Sample;

constexpr std::string_view kModes[] = {"FAST", "SLOW"};
constexpr Read<M> kReads[] = {
    {"Name", &M::name, JsonShape::kString},
    {"Count", &M::count, JsonShape::kInteger},
    {"Mode", &M::mode, JsonShape::kString},
    {"Tags", &M::tags, JsonShape::kList, {}, StringElements},
    {"Item", &M::item, JsonShape::kMap, "AttributeValue", AttributeValues},
};
constexpr Check<M> kChecks[] = {
    NotNull(&M::name, "name"),
    Bound(&M::name, "name", Rule::kMinLength, 3),
    Bound(&M::count, "count", Rule::kMaxValue, 10),
    Enum(&M::mode, "mode", kModes),
    NotEmptyList(&M::tags, "tags"),
};

rapidjson::Document Parse(const char* json) {
  rapidjson::Document doc;
  doc.Parse(json);
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

std::string Outcome(const Status& s) {
  return s.ok() ? "ok" : std::string(WireType(s.error().type)) + ": " + s.error().message;
}

std::string Decode(const char* json) {
  rapidjson::Document doc = Parse(json);
  Sample m;
  Status read = ReadMembers<M>(doc, kReads, m);
  if (!read.ok()) return Outcome(read);
  return Outcome(CheckMembers<M>(kChecks, m));
}

TEST(RequestModelTest, TheFirstWrongTypeInReadOrderWins) {
  // Mode comes before Tags in the read rows, whatever the order in the document.
  EXPECT_EQ(Decode(R"({"Tags":"x","Mode":5})"),
            "SerializationException: NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(Decode(R"({"Tags":[1]})"),
            "SerializationException: NUMBER_VALUE cannot be converted to String");
  // A member's contents are checked with the member.
  EXPECT_EQ(Decode(R"({"Item":{"a":5}})").substr(0, 22), "SerializationException");
  EXPECT_EQ(Decode("[]"),
            "SerializationException: Start of structure or map found where not "
            "expected");
}

TEST(RequestModelTest, ViolationsAreListedInCheckOrder) {
  EXPECT_EQ(Decode(R"({"Tags":[],"Mode":"X","Count":11})"),
            "ValidationException: 4 validation errors detected: "
            "Value null at 'name' failed to satisfy constraint: Member must not be null; "
            "Value '11' at 'count' failed to satisfy constraint: Member must have value less "
            "than or equal to 10; "
            "Value 'X' at 'mode' failed to satisfy constraint: Member must satisfy enum value "
            "set: [FAST, SLOW]; "
            "Value at 'tags' failed to satisfy constraint: Member must have length greater "
            "than or equal to 1");
  EXPECT_EQ(Decode(R"({"Name":"abc","Count":10,"Mode":"SLOW","Tags":["t"]})"), "ok");
  // JSON null is an absent member.
  EXPECT_EQ(Decode(R"({"Name":"abc","Count":null,"Mode":null})"), "ok");
}

TEST(RequestModelTest, APrefixPutsTheChecksUnderAListElement) {
  rapidjson::Document doc = Parse(R"({"Name":"ab"})");
  Sample m;
  ASSERT_TRUE(ReadRows<M>(doc, kReads, m).ok());
  ConstraintErrors errors;
  CheckMembers<M>(errors, kChecks, m, MemberPath("things", 1));
  EXPECT_EQ(Outcome(errors.ToStatus()),
            "ValidationException: 1 validation error detected: Value 'ab' at "
            "'things.2.member.name' failed to satisfy constraint: Member must have length "
            "greater than or equal to 3");
}

TEST(RequestModelTest, AClosedSchemaNamesTheFirstUnknownMember) {
  rapidjson::Document doc = Parse(R"({"Name":"abc","Extra":1,"Other":2})");
  EXPECT_EQ(Outcome(CheckKnownMembers<M>(doc, "Sample", kReads)),
            "ValidationException: The request contains the member 'Extra' in Sample, which "
            "this request contract does not define; unknown members are rejected, not ignored");
  EXPECT_TRUE(CheckKnownNames(doc, "Sample", {"Other", "Extra", "Name"}).ok());
}

TEST(RequestModelTest, EntryEnumsLookInsideEachEntry) {
  rapidjson::Document doc =
      Parse(R"({"a":{"ComparisonOperator":"EQ"},"b":{"ComparisonOperator":"ZZ"},"c":{}})");
  ConstraintErrors errors;
  ConditionOperators(errors, "keyConditions", &doc);
  EXPECT_EQ(Outcome(errors.ToStatus()),
            "ValidationException: 2 validation errors detected: Value 'ZZ' at "
            "'keyConditions.b.member.comparisonOperator' failed to satisfy constraint: Member "
            "must satisfy enum value set: [EQ, NE, IN, LE, LT, GE, GT, BETWEEN, NOT_NULL, NULL, "
            "CONTAINS, NOT_CONTAINS, BEGINS_WITH]; Value null at "
            "'keyConditions.c.member.comparisonOperator' failed to satisfy constraint: Member "
            "must not be null");
  ConstraintErrors optional;
  OptionalOperators(optional, "expected", &doc);
  EXPECT_EQ(optional.size(), 1u);  // an entry without an operator passes
}

struct Outer {
  const Value* spec = nullptr;
  const Value* on = nullptr;
  const Value* after = nullptr;
};
constexpr Read<Outer> kSpecReads[] = {{"On", &Outer::on, JsonShape::kBoolean}};
constexpr Read<Outer> kOuterReads[] = {
    Nested("Spec", &Outer::spec, "Spec", kSpecReads),
    {"After", &Outer::after, JsonShape::kString},
};
constexpr Check<Outer> kOuterChecks[] = {In(&Outer::spec, NotNull(&Outer::on, "spec.on"))};

std::string DecodeOuter(const char* json) {
  rapidjson::Document doc = Parse(json);
  Outer m;
  Status read = ReadMembers<Outer>(doc, kOuterReads, m);
  if (!read.ok()) return Outcome(read);
  return Outcome(CheckMembers<Outer>(kOuterChecks, m));
}

TEST(RequestModelTest, NestedMembersAreReadWithTheirStructureAndCheckedWhereItIsGiven) {
  // The structure's members are read right after it, before the next member.
  EXPECT_EQ(DecodeOuter(R"({"After":5,"Spec":{"On":[]}})"),
            "SerializationException: Unrecognized collection type class java.lang.Boolean");
  EXPECT_EQ(DecodeOuter(R"({"After":5,"Spec":{"On":true}})"),
            "SerializationException: NUMBER_VALUE cannot be converted to String");
  EXPECT_EQ(DecodeOuter(R"({"Spec":{}})"),
            "ValidationException: 1 validation error detected: Value null at 'spec.on' failed to "
            "satisfy constraint: Member must not be null");
  EXPECT_EQ(DecodeOuter(R"({})"), "ok");  // no structure, nothing required in it
}

TEST(RequestModelTest, JoinKeepsBothRunsInOrder) {
  constexpr auto joined = Join(std::array{1, 2}, std::array{3});
  static_assert(joined.size() == 3);
  EXPECT_EQ(joined[0], 1);
  EXPECT_EQ(joined[2], 3);
}

TEST(RequestModelTest, TypedViewsReadWhatPhaseOneAccepted) {
  rapidjson::Document doc = Parse(R"({"s":"x","n":7.9,"b":"yes","f":false})");
  EXPECT_EQ(Text(Member(doc, "s")), "x");
  EXPECT_EQ(Number(Member(doc, "n")), 7);
  EXPECT_EQ(Flag(Member(doc, "b")), true);
  EXPECT_EQ(Flag(Member(doc, "f")), false);
  EXPECT_EQ(Text(nullptr), std::nullopt);
}

}  // namespace
}  // namespace fdyno::api::request
