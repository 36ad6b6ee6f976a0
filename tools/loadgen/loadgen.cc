// fdyno-loadgen: drives a DynamoDB endpoint (fdyno, DynamoDB, or anything speaking its
// protocol) with SigV4-signed requests at a fixed concurrency for a fixed time, then prints
// throughput, p50, p99 and the error count.
//
//   fdyno-loadgen --endpoint http://127.0.0.1:8000 --workload get --concurrency 64
//       --duration 10 --create-table --preload 10000
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/basic_waitable_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <thread>
#include <vector>

#include "http/sigv4.h"
#include "loadgen/workload.h"

namespace fdyno::loadgen {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;

struct Config {
  std::string endpoint = "http://127.0.0.1:8000";
  std::string workload_name = "describe-endpoints";
  Workload workload = Workload::kDescribeEndpoints;
  int concurrency = 64;
  double duration_s = 10;
  int threads = 1;
  std::string access_key = "fdyno";
  std::string secret_key = "fdyno";
  std::string region = "us-east-1";
  bool create_table = false;
  int64_t preload = 0;
  bool json = false;
  WorkloadOptions options;
  // Parsed endpoint.
  bool tls = false;
  std::string host;
  std::string port;
  std::string host_header;
};

struct Stats {
  std::vector<uint32_t> latencies_us;
  int64_t errors = 0;
  std::map<std::string, int64_t> error_types;

  void Merge(Stats&& o) {
    latencies_us.insert(latencies_us.end(), o.latencies_us.begin(), o.latencies_us.end());
    errors += o.errors;
    for (auto& [k, v] : o.error_types) error_types[k] += v;
  }
};

// Where calls come from: the workload, or a finite preload sequence.
struct Source {
  const Config* config = nullptr;
  bool preload = false;
  std::atomic<int64_t> next{0};
  int64_t total = 0;
  Clock::time_point deadline;

  bool Next(std::mt19937_64& rng, Call& call) {
    if (preload) {
      int64_t i = next.fetch_add(1);
      if (i >= total) return false;
      call = PreloadCall(config->options, i);
      return true;
    }
    if (Clock::now() >= deadline) return false;
    call = NextCall(config->workload, config->options, rng);
    return true;
  }
};

bool ParseEndpoint(Config& c) {
  std::string rest = c.endpoint;
  if (rest.rfind("https://", 0) == 0) {
    c.tls = true;
    rest = rest.substr(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest = rest.substr(7);
  } else {
    return false;
  }
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  if (rest.empty() || rest.find('/') != std::string::npos) return false;
  c.host_header = rest;
  size_t colon = rest.rfind(':');
  if (!rest.empty() && rest.front() == '[') {
    size_t close = rest.find(']');
    if (close == std::string::npos) return false;
    c.host = rest.substr(1, close - 1);
    c.port = close + 1 < rest.size() && rest[close + 1] == ':' ? rest.substr(close + 2) : "";
  } else if (colon != std::string::npos) {
    c.host = rest.substr(0, colon);
    c.port = rest.substr(colon + 1);
  } else {
    c.host = rest;
  }
  if (c.port.empty()) c.port = c.tls ? "443" : "80";
  return true;
}

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// One io_context per run: binding every operation to its concrete executor type instead of
// any_io_executor saves a type-erased executor copy per handler (a few % of the client).
using Executor = net::io_context::executor_type;
using PlainStream = beast::basic_stream<tcp, Executor>;
using Timer = net::basic_waitable_timer<Clock, net::wait_traits<Clock>, Executor>;
using TlsStream = beast::ssl_stream<PlainStream>;
constexpr net::use_awaitable_t<Executor> kAwait;
template <typename T = void>
using Awaitable = net::awaitable<T, Executor>;

// Signs a request; reuses the last signature while the operation, body and second are the
// same (DescribeEndpoints bodies never change), so the client measures the server.
class Signer {
 public:
  explicit Signer(const Config& c) : c_(c) {}

  // The headers to add: X-Amz-Date and Authorization.
  const std::vector<std::pair<std::string, std::string>>& Sign(std::string_view operation,
                                                               const std::string& body) {
    int64_t now_ms = WallMillis();
    if (!(now_ms / 1000 == cached_second_ && operation == cached_operation_ &&
          body == cached_body_)) {
      std::string target = "DynamoDB_20120810." + std::string(operation);
      http::SignedRequest s;
      s.method = "POST";
      s.target = "/";
      s.headers = {{"host", c_.host_header},
                   {"content-type", "application/x-amz-json-1.0"},
                   {"x-amz-target", target}};
      s.body = body;
      http::SigningParams params{c_.access_key, c_.secret_key, c_.region, "dynamodb", now_ms};
      cached_headers_ = http::SignHeaders(s, params);
      cached_second_ = now_ms / 1000;
      cached_operation_ = std::string(operation);
      cached_body_ = body;
    }
    return cached_headers_;
  }

 private:
  const Config& c_;
  int64_t cached_second_ = -1;
  std::string cached_operation_;
  std::string cached_body_;
  std::vector<std::pair<std::string, std::string>> cached_headers_;
};

// The request as it goes on the wire, written into `wire` (its capacity is reused): the
// client formats it once instead of running Beast's serializer per request.
void FormatRequest(const Config& c, const Call& call, Signer& signer, std::string& wire) {
  wire.clear();
  wire += "POST / HTTP/1.1\r\nHost: ";
  wire += c.host_header;
  wire += "\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.";
  wire += call.operation;
  for (const auto& [name, value] : signer.Sign(call.operation, call.body)) {
    wire += "\r\n";
    wire += name;
    wire += ": ";
    wire += value;
  }
  wire += "\r\nContent-Length: ";
  wire += std::to_string(call.body.size());
  wire += "\r\n\r\n";
  wire += call.body;
}

std::string ErrorType(const std::string& body) {
  size_t t = body.find("\"__type\"");
  if (t == std::string::npos) return "unknown";
  size_t hash = body.find('#', t);
  size_t quote = body.find('"', hash == std::string::npos ? t + 9 : hash);
  if (hash == std::string::npos || quote == std::string::npos) return "unknown";
  return body.substr(hash + 1, quote - hash - 1);
}

template <typename Stream>
Awaitable<> RequestLoop(Stream& stream, const Config& c, Source& source, Stats& stats,
                        std::mt19937_64& rng, Signer& signer) {
  beast::flat_buffer buffer;
  std::string wire;
  Call call;
  while (source.Next(rng, call)) {
    FormatRequest(c, call, signer, wire);
    auto start = Clock::now();
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    co_await net::async_write(stream, net::buffer(wire), kAwait);
    bhttp::response<bhttp::string_body> res;
    co_await bhttp::async_read(stream, buffer, res, kAwait);
    auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count();
    stats.latencies_us.push_back(static_cast<uint32_t>(std::min<int64_t>(us, UINT32_MAX)));
    if (res.result() != bhttp::status::ok) {
      stats.errors++;
      stats.error_types[ErrorType(res.body())]++;
    }
    if (!res.keep_alive()) co_return;
  }
}

Awaitable<> Connection(const Config& c, Source& source, Stats& stats,
                       tcp::resolver::results_type endpoints, net::ssl::context* tls,
                       uint64_t seed, std::atomic<int>& running) {
  Executor executor = co_await net::this_coro::executor;
  std::mt19937_64 rng(seed);
  Signer signer(c);
  bool done = false;
  while (!done) {
    std::string failure;
    try {
      if (tls) {
        TlsStream stream(executor, *tls);
        SSL_set_tlsext_host_name(stream.native_handle(), c.host.c_str());
        beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
        co_await beast::get_lowest_layer(stream).async_connect(endpoints, kAwait);
        co_await stream.async_handshake(net::ssl::stream_base::client, kAwait);
        co_await RequestLoop(stream, c, source, stats, rng, signer);
      } else {
        PlainStream stream(executor);
        stream.expires_after(std::chrono::seconds(10));
        co_await stream.async_connect(endpoints, kAwait);
        stream.socket().set_option(tcp::no_delay(true));
        co_await RequestLoop(stream, c, source, stats, rng, signer);
      }
      done = source.preload ? source.next.load() >= source.total : Clock::now() >= source.deadline;
    } catch (const std::exception& e) {
      failure = e.what();
    }
    if (!failure.empty()) {
      done = !source.preload && Clock::now() >= source.deadline;
      if (!done) {
        stats.errors++;
        stats.error_types["connection: " + failure]++;
        Timer timer(executor, std::chrono::milliseconds(10));
        co_await timer.async_wait(kAwait);
      }
    }
  }
  running--;
}

struct RunResult {
  Stats stats;
  double seconds = 0;
};

RunResult Drive(const Config& c, Source& source, int concurrency) {
  net::io_context ioc(c.threads);
  std::unique_ptr<net::ssl::context> tls;
  if (c.tls) {
    tls = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    tls->set_verify_mode(net::ssl::verify_none);  // benchmarking, often self-signed
  }
  tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(c.host, c.port);
  std::vector<Stats> stats(concurrency);
  std::atomic<int> running{concurrency};
  auto start = Clock::now();
  for (int i = 0; i < concurrency; ++i) {
    net::co_spawn(ioc.get_executor(),
                  Connection(c, source, stats[i], endpoints, tls.get(),
                             0x9E3779B97F4A7C15ull * (i + 1), running),
                  net::detached);
  }
  std::vector<std::thread> threads;
  for (int t = 1; t < c.threads; ++t) threads.emplace_back([&] { ioc.run(); });
  ioc.run();
  for (auto& t : threads) t.join();
  RunResult result;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (auto& s : stats) result.stats.Merge(std::move(s));
  return result;
}

// One call outside the measured run (table creation and its polling).
std::pair<unsigned, std::string> CallOnce(const Config& c, const Call& call) {
  net::io_context ioc;
  tcp::resolver resolver(ioc);
  beast::tcp_stream stream(ioc);
  std::unique_ptr<net::ssl::context> tls_ctx;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream&>> tls;
  stream.connect(resolver.resolve(c.host, c.port));
  bhttp::request<bhttp::string_body> req{bhttp::verb::post, "/", 11};
  req.set(bhttp::field::host, c.host_header);
  req.set(bhttp::field::content_type, "application/x-amz-json-1.0");
  req.set("x-amz-target", "DynamoDB_20120810." + std::string(call.operation));
  req.body() = call.body;
  Signer signer(c);
  for (const auto& [name, value] : signer.Sign(call.operation, call.body)) req.set(name, value);
  req.prepare_payload();
  beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  if (c.tls) {
    tls_ctx = std::make_unique<net::ssl::context>(net::ssl::context::tls_client);
    tls_ctx->set_verify_mode(net::ssl::verify_none);
    tls = std::make_unique<beast::ssl_stream<beast::tcp_stream&>>(stream, *tls_ctx);
    SSL_set_tlsext_host_name(tls->native_handle(), c.host.c_str());
    tls->handshake(net::ssl::stream_base::client);
    bhttp::write(*tls, req);
    bhttp::read(*tls, buffer, res);
  } else {
    bhttp::write(stream, req);
    bhttp::read(stream, buffer, res);
  }
  return {res.result_int(), res.body()};
}

bool CreateTable(const Config& c) {
  auto [status, body] = CallOnce(c, CreateTableCall(c.options));
  if (status != 200 && ErrorType(body) != "ResourceInUseException") {
    std::cerr << "CreateTable failed: " << status << " " << body << "\n";
    return false;
  }
  for (int i = 0; i < 600; ++i) {
    auto [s, b] = CallOnce(c, DescribeTableCall(c.options));
    if (s == 200 && b.find("\"TableStatus\":\"ACTIVE\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::cerr << "table " << c.options.table << " did not become ACTIVE\n";
  return false;
}

double Percentile(const std::vector<uint32_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  size_t i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return sorted[std::min(i, sorted.size() - 1)] / 1000.0;
}

int Main(int argc, char** argv) {
  Config c;
  CLI::App app{"fdyno-loadgen: fixed-concurrency, fixed-duration DynamoDB load"};
  app.add_option("--endpoint", c.endpoint, "http(s)://HOST:PORT")->capture_default_str();
  app.add_option("--workload", c.workload_name,
                 "describe-endpoints, get, put, query, update, transact (two Puts), "
                 "execute-statement (get's read as PartiQL) or mix (50% get, 20% put, 15% "
                 "update, 15% query)")
      ->capture_default_str();
  app.add_option("--concurrency", c.concurrency, "Connections, one request in flight each")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--duration", c.duration_s, "Seconds to run")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--threads", c.threads, "Client IO threads")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--access-key", c.access_key, "AWS access key id")
      ->envname("AWS_ACCESS_KEY_ID")
      ->capture_default_str();
  app.add_option("--secret-key", c.secret_key, "AWS secret access key")
      ->envname("AWS_SECRET_ACCESS_KEY");
  app.add_option("--region", c.region, "Signing region")->capture_default_str();
  app.add_option("--table", c.options.table, "Table name")->capture_default_str();
  app.add_option("--keys", c.options.keys, "Partition keys")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--rows-per-key", c.options.rows_per_key, "Items per partition key")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--value-size", c.options.value_bytes, "Bytes of payload per put item")
      ->capture_default_str();
  app.add_flag("--create-table", c.create_table,
               "Create the table (pk S, sk N, on demand) and wait until ACTIVE");
  app.add_option("--preload", c.preload, "Put this many items before the run");
  app.add_flag("--json", c.json, "Print the result as one JSON line");
  CLI11_PARSE(app, argc, argv);

  auto workload = ParseWorkload(c.workload_name);
  if (!workload) {
    std::cerr << "unknown workload " << c.workload_name << "\n";
    return 2;
  }
  c.workload = *workload;
  if (!ParseEndpoint(c)) {
    std::cerr << "bad endpoint " << c.endpoint << " (want http://HOST:PORT or https://...)\n";
    return 2;
  }
  try {
    if (c.create_table && !CreateTable(c)) return 1;
    if (c.preload > 0) {
      Source preload;
      preload.config = &c;
      preload.preload = true;
      preload.total = c.preload;
      RunResult r = Drive(c, preload, c.concurrency);
      std::cerr << "preloaded " << c.preload << " items in " << r.seconds << " s ("
                << r.stats.errors << " errors)\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "setup failed: " << e.what() << "\n";
    return 1;
  }

  Source source;
  source.config = &c;
  source.deadline =
      Clock::now() + std::chrono::microseconds(static_cast<int64_t>(c.duration_s * 1e6));
  RunResult r = Drive(c, source, c.concurrency);
  std::sort(r.stats.latencies_us.begin(), r.stats.latencies_us.end());
  double throughput = static_cast<double>(r.stats.latencies_us.size()) / r.seconds;
  double p50 = Percentile(r.stats.latencies_us, 0.50);
  double p99 = Percentile(r.stats.latencies_us, 0.99);
  if (c.json) {
    std::printf(
        "{\"workload\":\"%s\",\"concurrency\":%d,\"seconds\":%.3f,\"requests\":%zu,"
        "\"errors\":%lld,\"throughput\":%.1f,\"p50_ms\":%.3f,\"p99_ms\":%.3f}\n",
        std::string(WorkloadName(c.workload)).c_str(), c.concurrency, r.seconds,
        r.stats.latencies_us.size(), static_cast<long long>(r.stats.errors), throughput, p50, p99);
  } else {
    std::printf("workload=%s endpoint=%s concurrency=%d duration=%.2fs\n",
                std::string(WorkloadName(c.workload)).c_str(), c.endpoint.c_str(), c.concurrency,
                r.seconds);
    std::printf("requests=%zu errors=%lld throughput=%.1f req/s p50=%.3f ms p99=%.3f ms\n",
                r.stats.latencies_us.size(), static_cast<long long>(r.stats.errors), throughput,
                p50, p99);
    for (auto& [type, n] : r.stats.error_types) {
      std::printf("  error %s: %lld\n", type.c_str(), static_cast<long long>(n));
    }
  }
  return 0;
}

}  // namespace
}  // namespace fdyno::loadgen

int main(int argc, char** argv) { return fdyno::loadgen::Main(argc, argv); }
