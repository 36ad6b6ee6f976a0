// kv_crash_child: the victim of the crash test (crash_test.cc).
//
//   kv_crash_child run <dir> <cycle> <threads>
//     Opens the embedded engine in <dir> with durable commits and runs <threads> writers until
//     killed. Each transaction of writer i writes three keys d/<cycle>/<i>/<seq>/<j>, one
//     versionstamped key vs/<stamp> and adds 1 to the key "counter". After each acknowledged
//     commit it writes one line "ack <cycle> <i> <seq> <stamp hex>\n" to stdout (one write(2)
//     of less than PIPE_BUF bytes, so lines never interleave).
//     --power-journal <path>: RocksDB's files go through the power-loss journaling file system
//     (testing/power_loss.h), so the test can drop what was never synced.
//     --durability none: commits are not fsynced (the test that power loss then loses data).
//   kv_crash_child lock-probe <dir>
//     Tries to open <dir>; exits 3 and prints the error when it is locked, 0 when it opened.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "kv/engines/embedded/embedded.h"
#include "kv/engines/embedded/testing/power_loss.h"

namespace {

using fdyno::kv::Database;

std::string Pad(long v, int width) {
  std::string s = std::to_string(v);
  return std::string(width > static_cast<int>(s.size()) ? width - s.size() : 0, '0') + s;
}

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

std::string Le32(uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

void Writer(Database* db, int cycle, int thread) {
  for (long seq = 0;; ++seq) {
    std::string txn_id = Pad(cycle, 4) + "/" + Pad(thread, 2) + "/" + Pad(seq, 8);
    for (;;) {
      auto txn = db->CreateTransaction();
      for (int j = 0; j < 3; ++j) txn->Set("d/" + txn_id + "/" + std::to_string(j), txn_id);
      txn->AtomicOp(fdyno::kv::MutationType::kSetVersionstampedKey,
                    "vs/" + std::string(10, '\0') + Le32(3), txn_id);
      txn->AtomicOp(fdyno::kv::MutationType::kAdd, "counter", std::string("\x01\0\0\0\0\0\0\0", 8));
      fdyno::Status s = txn->Commit();
      if (!s.ok()) {
        if (fdyno::kv::IsRetryable(s.error().kv_code)) continue;
        std::fprintf(stderr, "commit failed: %s\n", s.error().message.c_str());
        std::_Exit(2);
      }
      auto stamp = txn->GetVersionstamp();
      if (!stamp.ok()) std::_Exit(2);
      std::string line = "ack " + std::to_string(cycle) + " " + std::to_string(thread) + " " +
                         std::to_string(seq) + " " + Hex(*stamp) + "\n";
      if (::write(1, line.data(), line.size()) != static_cast<ssize_t>(line.size())) {
        std::_Exit(2);
      }
      break;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "lock-probe") {
    auto db = fdyno::kv::OpenEmbedded({.path = argv[2]});
    if (!db.ok()) {
      std::printf("%s\n", db.error().message.c_str());
      return 3;
    }
    return 0;
  }
  if (argc < 5 || std::string(argv[1]) != "run") {
    std::fprintf(stderr,
                 "usage: kv_crash_child run <dir> <cycle> <threads> [--power-journal <path>] "
                 "[--durability none] | lock-probe <dir>\n");
    return 1;
  }
  int cycle = std::atoi(argv[3]);
  int threads = std::atoi(argv[4]);
  fdyno::kv::EmbeddedOptions options{.path = argv[2]};
  for (int i = 5; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--power-journal") {
      auto fs = fdyno::kv::testing::NewPowerLossJournalingFileSystem(value);
      if (!fs.ok()) {
        std::fprintf(stderr, "%s\n", fs.error().message.c_str());
        return 2;
      }
      options.file_system = *fs;
    } else if (flag == "--durability" && value == "none") {
      options.durability = fdyno::kv::Durability::kNone;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 1;
    }
  }
  auto db = fdyno::kv::OpenEmbedded(options);
  if (!db.ok()) {
    std::fprintf(stderr, "open failed: %s\n", db.error().message.c_str());
    return 2;
  }
  std::vector<std::thread> writers;
  for (int i = 0; i < threads; ++i) writers.emplace_back(Writer, db->get(), cycle, i);
  for (auto& t : writers) t.join();  // never: writers run until the process is killed
  return 0;
}
