#include "base/result.h"

#include <gtest/gtest.h>

namespace fdyno {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Error::Validation("odd");
  return x / 2;
}

Result<int> Quarter(int x) {
  FDYNO_ASSIGN_OR_RETURN(int h, Half(x));
  FDYNO_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

TEST(ResultTest, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().type, ErrorType::kValidation);
  EXPECT_EQ(r.error().message, "odd");
}

TEST(ErrorTest, TableIsConsistent) {
  EXPECT_EQ(WireType(ErrorType::kValidation), "ValidationException");
  EXPECT_EQ(HttpStatus(ErrorType::kInternalServerError), 500);
  EXPECT_EQ(HttpStatus(ErrorType::kConditionalCheckFailed), 400);
  EXPECT_TRUE(ClientRetryable(ErrorType::kThrottling));
  Error kv = Error::Kv(1020);
  EXPECT_TRUE(kv.is_kv());
  EXPECT_EQ(kv.kv_code, 1020);
}

}  // namespace
}  // namespace fdyno
