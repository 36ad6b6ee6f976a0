#include "api/batch_receipt.h"

#include <gtest/gtest.h>

namespace fdyno::api {
namespace {

TEST(BatchReceiptTest, UnitsRoundTrip) {
  const std::vector<double> units = {0, 1.5, 25, 0.5};
  auto decoded = DecodeUnits(EncodeUnits(units), units.size());
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, units);
  auto none = DecodeUnits("", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(BatchReceiptTest, AnythingElseIsACorruptReceipt) {
  for (const char* bad : {"", "1.000000\n", "1.000000\n2.000000\n3.000000\n", "1.0\n2.0",
                          "1.0\nx\n", "1.0\n-2.0\n", "1.0\ninf\n", "1.0\nnan\n", "1.0\n 2.0\n",
                          "1.0\n2.0x\n", "1.0\n\n", "1.0\n2.0\ntrailing"}) {
    auto r = DecodeUnits(bad, 2);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().type, ErrorType::kInternalServerError) << bad;
  }
}

}  // namespace
}  // namespace fdyno::api
