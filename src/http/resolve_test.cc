#include "http/resolve.h"

#include <gtest/gtest.h>

namespace fdyno::http {
namespace {

TEST(ResolveEndpointTest, AddressesAreTakenAsGivenAndLocalhostIsIpv4Loopback) {
  boost::asio::io_context io;
  for (auto [host, expected] :
       {std::pair{"localhost", "127.0.0.1"}, std::pair{"127.0.0.2", "127.0.0.2"},
        std::pair{"::1", "::1"}, std::pair{"0.0.0.0", "0.0.0.0"}}) {
    auto resolved = ResolveEndpoint(io, Endpoint{host, 8000}, /*passive=*/true);
    ASSERT_TRUE(resolved.ok()) << host << ": " << resolved.error().message;
    EXPECT_EQ(resolved->address().to_string(), expected) << host;
    EXPECT_EQ(resolved->port(), 8000);
  }
}

TEST(ResolveEndpointTest, AnUnknownNameIsAValidationError) {
  boost::asio::io_context io;
  auto resolved = ResolveEndpoint(io, Endpoint{"no-such-host.invalid", 8000}, /*passive=*/false);
  ASSERT_FALSE(resolved.ok());
  EXPECT_NE(resolved.error().message.find("cannot resolve no-such-host.invalid:8000"),
            std::string::npos)
      << resolved.error().message;
}

}  // namespace
}  // namespace fdyno::http
