// The network threads never wait and never escape load shedding. A request run on a network
// thread (GetItem; Query and Scan pages) shares that thread with every other connection on it,
// so an attempt that would back off and retry must give up there and run again on a worker,
// and work run there takes a place under the worker pool's bound, so that a full pool answers
// ThrottlingException on those paths too. The real server over the fault-injecting engine, one
// network thread, plain sockets as clients.
#include <gtest/gtest.h>
#include <poll.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "api/api.h"
#include "base/metrics.h"
#include "http/server.h"
#include "http/sigv4.h"
#include "kv/engines/faulty/faulty.h"
#include "kv/testing/memory_engine.h"
#include "store/catalog.h"

namespace fdyno::http {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;
using namespace std::chrono_literals;

// Bounds that only keep a broken server from hanging the run.
constexpr auto kPatience = 20s;

// Holds every injected engine latency until opened: a read that meets it waits here, the
// way a read waits for a slow disk.
class Gate {
 public:
  void Wait() {
    std::unique_lock lock(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return open_; });
    --waiting_;
  }
  void Close() {
    std::lock_guard lock(mu_);
    open_ = false;
  }
  void Open() {
    std::lock_guard lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  // Waits until n reads are held.
  bool AwaitWaiting(int n) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, kPatience, [&] { return waiting_ >= n; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = true;
  int waiting_ = 0;
};

struct Answer {
  unsigned status = 0;  // 0: none within the bound
  std::string body;
};

// One client connection speaking HTTP/1.1 with blocking reads.
class Client {
 public:
  explicit Client(const Endpoint& server) : socket_(ioc_) {
    tcp::resolver resolver(ioc_);
    net::connect(socket_, resolver.resolve(server.host, std::to_string(server.port)));
  }

  void SendApi(const std::string& operation, const std::string& body) {
    bhttp::request<bhttp::string_body> r{bhttp::verb::post, "/", 11};
    r.set(bhttp::field::host, "localhost");
    r.set(bhttp::field::content_type, "application/x-amz-json-1.0");
    r.set("X-Amz-Target", "DynamoDB_20120810." + operation);
    r.body() = body;
    SignedRequest s;
    s.method = "POST";
    s.target = "/";
    for (const auto& f : r) {
      s.headers.emplace_back(std::string_view(f.name_string().data(), f.name_string().size()),
                             std::string_view(f.value().data(), f.value().size()));
    }
    s.body = r.body();
    auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
    for (auto& [k, v] : SignHeaders(s, {"AKIDTEST", "secret", "us-east-1", "dynamodb", now_ms})) {
      r.set(k, v);
    }
    r.prepare_payload();
    bhttp::write(socket_, r);
  }

  void SendHealthCheck() {
    bhttp::request<bhttp::empty_body> r{bhttp::verb::get, "/", 11};
    r.set(bhttp::field::host, "localhost");
    bhttp::write(socket_, r);
  }

  // Whether an answer has begun to arrive, waiting at most `wait`.
  bool Answered(std::chrono::milliseconds wait = 0ms) {
    pollfd p{socket_.native_handle(), POLLIN, 0};
    return ::poll(&p, 1, static_cast<int>(wait.count())) == 1;
  }

  Answer Receive() {
    if (!Answered(std::chrono::duration_cast<std::chrono::milliseconds>(kPatience))) return {};
    bhttp::response<bhttp::string_body> response;
    bhttp::read(socket_, buffer_, response);
    return {response.result_int(), response.body()};
  }

  Answer Call(const std::string& operation, const std::string& body) {
    SendApi(operation, body);
    return Receive();
  }

 private:
  net::io_context ioc_;
  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

constexpr const char* kGetItem = R"({"TableName":"tbl","Key":{"pk":{"S":"a"}}})";
constexpr const char* kQuery = R"({"TableName":"tbl","KeyConditionExpression":"pk = :a",)"
                               R"("ExpressionAttributeValues":{":a":{"S":"a"}}})";
constexpr const char* kBatchGet = R"({"RequestItems":{"tbl":{"Keys":[{"pk":{"S":"a"}}]}}})";
constexpr const char* kPutItem = R"({"TableName":"tbl","Item":{"pk":{"S":"a"},"w":{"S":"x"}}})";
constexpr const char* kUpdateItem = R"({"TableName":"tbl","Key":{"pk":{"S":"a"}},)"
                                    R"("UpdateExpression":"ADD n :one",)"
                                    R"("ExpressionAttributeValues":{":one":{"N":"1"}}})";
constexpr const char* kDeleteItem = R"({"TableName":"tbl","Key":{"pk":{"S":"a"}}})";

class NetworkThreadTest : public ::testing::Test {
 protected:
  NetworkThreadTest() : inner_(kv::OpenMemoryEngine()) {
    faulty_ = kv::WrapFaulty(inner_.get(), kv::FaultOptions{});
    api::ApiDeps deps;
    deps.db = faulty_.get();
    deps.catalog = &catalog_;
    registry_ = api::BuildOperationRegistry(deps);
  }

  ~NetworkThreadTest() override {
    gate_.Open();
    if (server_) server_->Shutdown();
    if (runner_.joinable()) runner_.join();
  }

  // One network thread, so that every connection shares it.
  void Start(size_t workers, size_t queue_bound, std::chrono::milliseconds operation_timeout = 2s) {
    ServerConfig config = config_;
    config.listen = {"127.0.0.1", 0};
    config.io_threads = 1;
    config.workers = workers;
    config.queue_bound = queue_bound;
    // As fdyno serve sets it for an engine that commits in place, unless a test asks for it.
    config.inline_writes = inline_writes_;
    RouterOptions options;
    options.metrics = &metrics_;
    options.operation_timeout = operation_timeout;
    auto server = Server::Create(config, registry_, options, /*handle_signals=*/false);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(server).value();
    runner_ = std::thread([this] { server_->Run(); });
    Client client(server_->data_endpoint());
    Answer created = client.Call(
        "CreateTable", R"({"TableName":"tbl",)"
                       R"("AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],)"
                       R"("KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],)"
                       R"("BillingMode":"PAY_PER_REQUEST"})");
    ASSERT_EQ(created.status, 200u) << created.body;
    Answer put = client.Call("PutItem", R"({"TableName":"tbl","Item":{"pk":{"S":"a"}}})");
    ASSERT_EQ(put.status, 200u) << put.body;
  }

  // Every read from now on waits at the gate until it opens.
  void HoldReads() {
    gate_.Close();
    kv::FaultOptions faults;
    faults.latency = 1;
    faults.sleep = [this](std::chrono::microseconds) { gate_.Wait(); };
    faulty_->SetOptions(faults);
  }

  int64_t InFlight() { return metrics_.GetGauge("fdyno_in_flight_requests").value(); }

  // Holds reads, then occupies the only worker (`busy`) and the only queue place (`queued`)
  // with a BatchGetItem each, so the pool is at its bound. REQUIRES: Start(1, 1).
  void FillThePool(Client& busy, Client& queued) {
    HoldReads();
    busy.SendApi("BatchGetItem", kBatchGet);  // runs on the worker and waits at the gate
    ASSERT_TRUE(gate_.AwaitWaiting(1));
    queued.SendApi("BatchGetItem", kBatchGet);  // waits for the worker: the bound is reached
    const auto until = std::chrono::steady_clock::now() + kPatience;
    while (InFlight() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    ASSERT_EQ(InFlight(), 2);
  }

  // `operation` is answered ThrottlingException at once, not run on the network thread.
  void ExpectShed(const char* operation, const std::string& body) {
    Client shed(endpoint());
    shed.SendApi(operation, body);
    ASSERT_TRUE(shed.Answered(5000ms)) << operation << " ran on the network thread";
    Answer answer = shed.Receive();
    EXPECT_EQ(answer.status, 400u) << operation << ": " << answer.body;
    EXPECT_EQ(answer.body, R"({"__type":"com.amazon.coral.availability#ThrottlingException",)"
                           R"("message":"Rate of requests exceeds the allowed throughput."})")
        << operation;
  }

  Endpoint endpoint() const { return server_->data_endpoint(); }

  ServerConfig config_;         // what Start() does not set
  bool inline_writes_ = false;  // PutItem, UpdateItem, DeleteItem up to their commit inline
  std::unique_ptr<kv::Database> inner_;
  std::unique_ptr<kv::FaultyDatabase> faulty_;
  store::Catalog catalog_;
  api::OperationRegistry registry_;
  Metrics metrics_;
  Gate gate_;
  std::unique_ptr<Server> server_;
  std::thread runner_;
};

// A GetItem whose reads keep failing with a retryable error (1007) retries with backoff until
// its deadline. On the network thread that backoff would hold every other connection of
// the thread; instead the read gives up there and runs again on a worker, and a health check on
// another connection is answered while it still retries.
TEST_F(NetworkThreadTest, ARetryingInlineReadDoesNotHoldOtherConnections) {
  // A deadline of 8 s, not the usual 2 s: on a loaded machine a slow health check could be
  // answered after the read had already given up, and prove nothing.
  Start(/*workers=*/2, /*queue_bound=*/16, /*operation_timeout=*/8s);
  kv::FaultOptions faults;
  faults.read_too_old = 1;
  faulty_->SetOptions(faults);
  Client reader(endpoint());
  reader.SendApi("GetItem", kGetItem);
  const auto until = std::chrono::steady_clock::now() + kPatience;
  while (faulty_->counts().too_old == 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  ASSERT_GT(faulty_->counts().too_old, 0);

  Client other(endpoint());
  other.SendHealthCheck();
  Answer health = other.Receive();
  EXPECT_EQ(health.status, 200u);
  // Retried (on the worker) and still unanswered: the retries did not hold the network thread.
  while (faulty_->counts().too_old < 2 && std::chrono::steady_clock::now() < until) {
    std::this_thread::yield();
  }
  EXPECT_GE(faulty_->counts().too_old, 2);
  EXPECT_FALSE(reader.Answered()) << "the retrying read held the network thread until it ended";

  // The faults stay on until the read has answered, so it fails at its deadline (cleared
  // earlier, a retry could succeed first, depending on the machine's load).
  Answer read = reader.Receive();
  EXPECT_EQ(read.status, 500u) << read.body;
  faulty_->SetOptions(kv::FaultOptions{});
  EXPECT_EQ(reader.Call("GetItem", kGetItem).status, 200u);
}

// With the only worker busy and the queue at its bound, a GetItem and a Query, which would run
// on the network thread, are shed like any other request: ThrottlingException at once, not a
// read that waits for the slow engine on the network thread.
TEST_F(NetworkThreadTest, InlineReadsAreShedWhenThePoolIsFull) {
  Start(/*workers=*/1, /*queue_bound=*/1);
  Client busy(endpoint());
  Client queued(endpoint());
  ASSERT_NO_FATAL_FAILURE(FillThePool(busy, queued));
  for (const auto& [operation, body] : {std::pair{"GetItem", kGetItem}, {"Query", kQuery}}) {
    ExpectShed(operation, body);
  }

  gate_.Open();
  EXPECT_EQ(busy.Receive().status, 200u);
  EXPECT_EQ(queued.Receive().status, 200u);
  Client after(endpoint());
  EXPECT_EQ(after.Call("GetItem", kGetItem).status, 200u);
  EXPECT_EQ(after.Call("Query", kQuery).status, 200u);
}

// Writes run on the network thread up to their commit (inline_writes, as fdyno serve runs them
// over the embedded engine) take a place under the pool's bound too: with the only worker busy
// and the queue at its bound, PutItem, UpdateItem and DeleteItem are answered
// ThrottlingException at once instead of running on the network thread.
TEST_F(NetworkThreadTest, InlineWritesAreShedWhenThePoolIsFull) {
  inline_writes_ = true;
  Start(/*workers=*/1, /*queue_bound=*/1);
  Client busy(endpoint());
  Client queued(endpoint());
  ASSERT_NO_FATAL_FAILURE(FillThePool(busy, queued));
  for (const auto& [operation, body] :
       {std::pair{"PutItem", kPutItem}, {"UpdateItem", kUpdateItem}, {"DeleteItem", kDeleteItem}}) {
    ExpectShed(operation, body);
  }

  gate_.Open();
  EXPECT_EQ(busy.Receive().status, 200u);
  EXPECT_EQ(queued.Receive().status, 200u);
  // Nothing shed was applied; with room in the pool the same writes run and apply.
  Client after(endpoint());
  Answer read = after.Call("GetItem", kGetItem);
  EXPECT_EQ(read.body, R"({"Item":{"pk":{"S":"a"}}})");
  EXPECT_EQ(after.Call("PutItem", kPutItem).status, 200u);
  EXPECT_EQ(after.Call("UpdateItem", kUpdateItem).status, 200u);
  read = after.Call("GetItem", kGetItem);
  EXPECT_NE(read.body.find(R"("n":{"N":"1"})"), std::string::npos) << read.body;
  EXPECT_EQ(after.Call("DeleteItem", kDeleteItem).status, 200u);
  EXPECT_EQ(after.Call("GetItem", kGetItem).body, "{}");
}

// A GetItem that meets a slow engine (every read 20 ms late) holds the network thread once;
// the thread then sends its next reads to the workers, so the next slow one (held at the gate)
// leaves a health check on another connection answered at once.
TEST_F(NetworkThreadTest, AfterASlowInlineReadTheThreadSendsReadsToTheWorkers) {
  config_.inline_pause = std::chrono::minutes(10);  // outlasts the test on a loaded machine
  Start(/*workers=*/2, /*queue_bound=*/16);
  kv::FaultOptions slow;
  slow.latency = 1;
  slow.sleep = [](std::chrono::microseconds) { std::this_thread::sleep_for(20ms); };
  faulty_->SetOptions(slow);
  Client reader(endpoint());
  ASSERT_EQ(reader.Call("GetItem", kGetItem).status, 200u);  // slow, on the network thread

  HoldReads();
  reader.SendApi("GetItem", kGetItem);
  ASSERT_TRUE(gate_.AwaitWaiting(1));
  Client other(endpoint());
  other.SendHealthCheck();
  ASSERT_TRUE(other.Answered(5000ms)) << "the held read holds the network thread";
  EXPECT_EQ(other.Receive().status, 200u);
  EXPECT_FALSE(reader.Answered());
  gate_.Open();
  EXPECT_EQ(reader.Receive().status, 200u);
}

}  // namespace
}  // namespace fdyno::http
