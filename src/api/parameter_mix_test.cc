// ParameterMix: DynamoDB's rules on legacy and expression parameters, with the parameters named
// in the order the operation lists them.
#include "api/parameter_mix.h"

#include <gtest/gtest.h>

namespace fdyno::api {
namespace {

std::string Message(const Status& s) { return s.ok() ? "ok" : s.error().message; }

TEST(ParameterMixTest, LegacyAndExpressionParametersNeverMix) {
  ParameterMix mix;
  mix.Legacy("AttributesToGet", true)
      .Legacy("QueryFilter", false)
      .Legacy("ConditionalOperator", true)
      .Expression("ProjectionExpression", true)
      .Expression("FilterExpression", false)
      .Expression("KeyConditionExpression", true);
  EXPECT_TRUE(mix.mixed());
  EXPECT_EQ(Message(mix.Check(false, false)),
            "Can not use both expression and non-expression parameters in the same request: "
            "Non-expression parameters: {AttributesToGet, ConditionalOperator} Expression "
            "parameters: {ProjectionExpression, KeyConditionExpression}");
  // A mixed request has an expression, so its maps are never the error.
  EXPECT_EQ(Message(mix.Check(true, true)).substr(0, 16), "Can not use both");
}

TEST(ParameterMixTest, AttributeMapsNeedAnExpression) {
  ParameterMix none;
  none.Expression("UpdateExpression", false).Expression("ConditionExpression", false);
  EXPECT_EQ(Message(none.Check(false, false)), "ok");
  EXPECT_EQ(Message(none.Check(true, true)),
            "ExpressionAttributeNames can only be specified when using expressions: "
            "UpdateExpression and ConditionExpression are null");
  EXPECT_EQ(Message(none.Check(false, true)),
            "ExpressionAttributeValues can only be specified when using expressions: "
            "UpdateExpression and ConditionExpression are null");
  ParameterMix one;
  one.Expression("ProjectionExpression", false);
  EXPECT_EQ(Message(one.CheckAttributeMaps(true, false)),
            "ExpressionAttributeNames can only be specified when using expressions: "
            "ProjectionExpression is null");
  ParameterMix used;
  used.Expression("ProjectionExpression", false).Expression("FilterExpression", true);
  EXPECT_EQ(Message(used.Check(true, true)), "ok");
  EXPECT_FALSE(used.mixed());
}

}  // namespace
}  // namespace fdyno::api
