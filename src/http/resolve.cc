#include "http/resolve.h"

namespace fdyno::http {

Result<boost::asio::ip::tcp::endpoint> ResolveEndpoint(boost::asio::io_context& io,
                                                       const Endpoint& endpoint, bool passive) {
  using tcp = boost::asio::ip::tcp;
  boost::system::error_code ec;
  const std::string host = endpoint.host == "localhost" ? "127.0.0.1" : endpoint.host;
  boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  if (!ec) return tcp::endpoint(address, endpoint.port);
  tcp::resolver resolver(io);
  auto flags = tcp::resolver::numeric_service;
  if (passive) flags |= tcp::resolver::passive;
  auto results = resolver.resolve(endpoint.host, std::to_string(endpoint.port), flags, ec);
  if (ec || results.empty()) {
    return Error::Validation("cannot resolve " + endpoint.ToString() + ": " + ec.message());
  }
  return results.begin()->endpoint();
}

}  // namespace fdyno::http
