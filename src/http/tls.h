// TLS for the listeners (OpenSSL through Boost.Asio): a server context from a PEM
// certificate chain and private key. TLS 1.2 and newer only.
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <memory>
#include <string>

#include "base/result.h"

namespace fdyno::http {

// Errors name the file and OpenSSL's reason.
Result<std::unique_ptr<boost::asio::ssl::context>> MakeServerTlsContext(
    const std::string& cert_file, const std::string& key_file);

}  // namespace fdyno::http
