#include "http/config.h"

#include <gtest/gtest.h>

namespace fdyno::http {
namespace {

TEST(ConfigTest, ParsesEndpoints) {
  auto e = ParseEndpoint("127.0.0.1:8000");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "127.0.0.1");
  EXPECT_EQ(e->port, 8000);
  e = ParseEndpoint("[::1]:9000");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "::1");
  EXPECT_EQ(e->port, 9000);
  EXPECT_EQ(e->ToString(), "[::1]:9000");
  e = ParseEndpoint(":8080");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->host, "0.0.0.0");
  e = ParseEndpoint("localhost:0");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->port, 0);
  for (const char* bad :
       {"", "8000", "host:", "host:65536", "host:80x", "::1:80", "[::1]80", "[::1"}) {
    EXPECT_FALSE(ParseEndpoint(bad).ok()) << bad;
  }
}

TEST(ConfigTest, Loopback) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.1.2.3"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("example.com"));
}

}  // namespace
}  // namespace fdyno::http
