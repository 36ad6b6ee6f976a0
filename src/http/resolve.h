// The address of an Endpoint, for a listener and for `fdyno health`'s connection.
//
// Thread-safety: thread-compatible.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "base/result.h"
#include "http/config.h"

namespace fdyno::http {

// An IP address, or "localhost" (127.0.0.1), without a name lookup: a statically linked
// server has no name service modules, and an empty root or a FROM-scratch container has no
// /etc/hosts. Other names go through the system resolver (passive: for a listener).
Result<boost::asio::ip::tcp::endpoint> ResolveEndpoint(boost::asio::io_context& io,
                                                       const Endpoint& endpoint, bool passive);

}  // namespace fdyno::http
