// libFuzzer target for the expression pipeline. The first input byte picks the expression
// kind (condition, filter, projection, update, key condition); the rest is the expression text.
// Whatever parses is resolved against a fixed set of placeholders and evaluated against a fixed
// item, so the resolver and the evaluator are fuzzed too. Invariants: no crash, no sanitizer
// report, every error is a ValidationException (a parse or resolve error names the expression:
// "Invalid <Kind>Expression: ...").
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "expr/evaluate.h"
#include "expr/key_condition.h"
#include "expr/parser.h"
#include "expr/resolver.h"

namespace {

using fdyno::expr::ExpressionKind;
using fdyno::model::AttributeValue;

void Require(bool ok) {
  if (!ok) std::abort();
}

void RequireValidation(const fdyno::Error& e, bool named) {
  Require(e.type == fdyno::ErrorType::kValidation);
  if (named) Require(e.message.rfind("Invalid ", 0) == 0);
}

AttributeValue Num(const char* text) {
  return AttributeValue::N(*fdyno::model::Number::Parse(text));
}

struct Fixture {
  fdyno::expr::AttributeNames names;
  fdyno::expr::AttributeValues values;
  fdyno::model::Item item;

  Fixture() {
    names = {{"#a", "a"}, {"#b", "b"}, {"#l", "l"}, {"#m", "m"}, {"#s", "s"}};
    fdyno::model::StringSet ss;
    ss.members = {"x", "y"};
    fdyno::model::NumberSet ns;
    ns.members.push_back(*fdyno::model::Number::Parse("1"));
    ns.members.push_back(*fdyno::model::Number::Parse("2"));
    AttributeValue ssv;
    ssv.v = ss;
    AttributeValue nsv;
    nsv.v = ns;
    values = {{":n", Num("7")},
              {":s", AttributeValue::S("x")},
              {":b", AttributeValue::B("\x01\x02")},
              {":l", AttributeValue::L({Num("1"), AttributeValue::S("z")})},
              {":m", AttributeValue::M({{"k", AttributeValue::Bool(true)}})},
              {":ss", ssv},
              {":ns", nsv},
              {":null", AttributeValue::MakeNull()},
              {":big", Num("9.9999999999999999999999999999999999999E+125")}};
    item = {{"a", Num("1")},
            {"b", AttributeValue::S("bee")},
            {"l", AttributeValue::L({Num("0"), AttributeValue::M({{"x", Num("1")}})})},
            {"m", AttributeValue::M({{"k", AttributeValue::L({})}, {"n", Num("2")}})},
            {"s", ssv},
            {"ns", nsv}};
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Fixture fx;
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  fdyno::expr::ResolveContext ctx(&fx.names, &fx.values);
  switch (data[0] % 5) {
    case 0:
    case 1: {
      ExpressionKind kind = data[0] % 4 == 0 ? ExpressionKind::kCondition : ExpressionKind::kFilter;
      auto parsed = fdyno::expr::ParseCondition(text, kind);
      if (!parsed.ok()) return RequireValidation(parsed.error(), true), 0;
      auto resolved = ctx.ResolveCondition(*parsed, kind);
      if (!resolved.ok()) return RequireValidation(resolved.error(), true), 0;
      bool on_item = fdyno::expr::EvaluateCondition(*resolved, fx.item);
      bool on_empty = fdyno::expr::EvaluateCondition(*resolved, {});
      (void)on_item;
      (void)on_empty;
      break;
    }
    case 2: {
      auto parsed = fdyno::expr::ParseProjection(text);
      if (!parsed.ok()) return RequireValidation(parsed.error(), true), 0;
      auto resolved = ctx.ResolveProjection(*parsed);
      if (!resolved.ok()) return RequireValidation(resolved.error(), true), 0;
      fdyno::model::Item projected = fdyno::expr::Project(fx.item, *resolved);
      // Only attributes named by a path's root survive.
      for (const auto& [name, value] : projected) {
        bool named = false;
        for (const auto& path : *resolved) named = named || path.root() == name;
        Require(named);
      }
      break;
    }
    case 3: {
      auto parsed = fdyno::expr::ParseUpdate(text);
      if (!parsed.ok()) return RequireValidation(parsed.error(), true), 0;
      auto resolved = ctx.ResolveUpdate(*parsed);
      if (!resolved.ok()) return RequireValidation(resolved.error(), true), 0;
      auto updated = fdyno::expr::ApplyUpdate(*resolved, fx.item);
      if (!updated.ok()) RequireValidation(updated.error(), false);
      auto from_empty = fdyno::expr::ApplyUpdate(*resolved, {});
      if (!from_empty.ok()) RequireValidation(from_empty.error(), false);
      break;
    }
    case 4: {
      auto parsed = fdyno::expr::ParseCondition(text, ExpressionKind::kKeyCondition);
      if (!parsed.ok()) return RequireValidation(parsed.error(), true), 0;
      auto resolved = ctx.ResolveCondition(*parsed, ExpressionKind::kKeyCondition);
      if (!resolved.ok()) return RequireValidation(resolved.error(), true), 0;
      fdyno::Status shape = fdyno::expr::CheckKeyConditionShape(*resolved);
      if (!shape.ok()) return RequireValidation(shape.error(), false), 0;
      fdyno::expr::KeySchema schema{"a", fdyno::model::Type::kN, "b", fdyno::model::Type::kS};
      auto key = fdyno::expr::ExtractKeyCondition(*resolved, schema);
      if (!key.ok()) RequireValidation(key.error(), false);
      schema.range_name.reset();
      auto hash_only = fdyno::expr::ExtractKeyCondition(*resolved, schema);
      if (!hash_only.ok()) RequireValidation(hash_only.error(), false);
      break;
    }
  }
  fdyno::Status unused = ctx.CheckUnused();
  if (!unused.ok()) RequireValidation(unused.error(), false);
  return 0;
}
