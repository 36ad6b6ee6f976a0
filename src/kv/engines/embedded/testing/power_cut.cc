// SimulatePowerLoss (power_loss.h): reads the journal into what the disk holds durably, then
// cuts the files back to it, dropping or tearing what was never synced.
#include <array>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <utility>

#include "kv/engines/embedded/testing/power_loss.h"

namespace fdyno::kv::testing {
namespace {

// A file as the journal describes it.
struct FileState {
  uint64_t synced = 0;         // length at its last sync
  bool entry_durable = false;  // its directory entry survives a power cut
};

// The disk as the journal describes it, and where the cut landed.
struct DurableState {
  std::map<std::string, FileState> files;
  std::map<std::string, std::set<std::string>> pending;  // directory -> entries not yet durable
  std::optional<Stage> last_stage, cut_stage;
  bool opened = false;

  // A metadata operation taken as durable at once (a rename onto a durable name, a delete)
  // makes every earlier one durable: ext4's and XFS's journals commit metadata in the order it
  // was made, so a disk never holds a later rename without the creations before it.
  void MakeAllEntriesDurable() {
    for (auto& [dir, entries] : pending) {
      for (const std::string& f : entries) files[f].entry_durable = true;
      entries.clear();
    }
  }

  void Apply(std::istringstream& ls, const std::string& op, const std::string& a) {
    const std::string dir = std::filesystem::path(a).parent_path().string();
    if (op == "create") {
      files[a] = FileState{};
      pending[dir].insert(a);
    } else if (op == "sync") {
      uint64_t len = 0;
      ls >> len;
      files[a].synced = len;  // a file from before the journal began is durable anyway
      if (!pending[dir].contains(a)) files[a].entry_durable = true;
    } else if (op == "dirsync") {
      for (const std::string& f : pending[a]) files[f].entry_durable = true;
      pending[a].clear();
    } else if (op == "rename") {
      std::string b;
      ls >> b;
      Rename(a, b);
    } else if (op == "delete") {
      files.erase(a);
      pending[dir].erase(a);
      MakeAllEntriesDurable();  // the delete is durable, so is all before it
    } else if (op == "stage") {
      last_stage = StageNamed(a);
    } else if (op == "cut") {
      cut_stage = StageNamed(a);
    } else if (op == "opened") {
      opened = true;
    }
  }

  void Rename(const std::string& a, const std::string& b) {
    FileState moved = files.contains(a) ? files[a] : FileState{0, true};
    const bool replaces_durable =
        files.contains(b) ? files[b].entry_durable : std::filesystem::exists(b);
    files.erase(a);
    pending[std::filesystem::path(a).parent_path().string()].erase(a);
    // Onto a durable name: atomic and durable at once (see the header); else durable once
    // its directory is fsynced, unless the file's own entry already was.
    moved.entry_durable = moved.entry_durable || replaces_durable;
    if (replaces_durable) MakeAllEntriesDurable();  // metadata reaches disk in order
    if (!moved.entry_durable) pending[std::filesystem::path(b).parent_path().string()].insert(b);
    files[b] = moved;
  }
};

// Tears the unsynced bytes [synced, size) of `path`: keeps a prefix of them that ends on a
// 512-byte or 4 KiB boundary of the file, and drops the rest or overwrites it in place.
Result<uint64_t> Tear(const std::string& path, uint64_t synced, uint64_t size, Tail tail,
                      std::mt19937_64& rng) {
  const uint64_t block = rng() % 2 == 0 ? 512 : 4096;
  const uint64_t reach = synced + rng() % (size - synced + 1);
  const uint64_t keep = std::max(synced, reach / block * block);
  std::error_code ec;
  if (tail == Tail::kTorn) {
    std::filesystem::resize_file(path, keep, ec);
    if (ec) return Error::Internal("cannot tear " + path + ": " + ec.message());
    return size - keep;
  }
  std::string fill(size - keep, '\0');
  if (tail == Tail::kTornGarbage) {
    for (char& c : fill) c = static_cast<char>(rng());
  }
  std::fstream out(path, std::ios::in | std::ios::out | std::ios::binary);
  out.seekp(static_cast<std::streamoff>(keep));
  out.write(fill.data(), static_cast<std::streamsize>(fill.size()));
  if (!out) return Error::Internal("cannot tear " + path);
  return size - keep;
}

constexpr std::array<std::string_view, 4> kTailNames = {"drop", "torn", "zeros", "garbage"};

}  // namespace

std::string_view TailName(Tail tail) { return kTailNames[static_cast<int>(tail)]; }

std::optional<Tail> TailNamed(std::string_view name) {
  for (int i = 0; i < static_cast<int>(kTailNames.size()); ++i) {
    if (kTailNames[i] == name) return static_cast<Tail>(i);
  }
  return std::nullopt;
}

Result<PowerLossEffect> SimulatePowerLoss(const std::string& journal_path,
                                          const PowerCutOptions& options) {
  std::ifstream in(journal_path);
  if (!in) return Error::Internal("cannot read journal " + journal_path);
  DurableState disk;
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof() && !line.empty()) break;  // a line cut short: never happens with write(2)
    std::istringstream ls(line);
    std::string op, a;
    ls >> op >> a;
    disk.Apply(ls, op, a);
  }
  PowerLossEffect effect;
  effect.self_cut = disk.cut_stage.has_value();
  effect.stage = disk.cut_stage    ? *disk.cut_stage
                 : !disk.opened    ? Stage::kRecovery
                 : disk.last_stage ? *disk.last_stage
                                   : Stage::kOther;
  std::mt19937_64 rng(options.seed);
  for (const auto& [path, state] : disk.files) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) continue;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (!state.entry_durable) {
      std::filesystem::remove(path, ec);
      ++effect.files_removed;
      effect.bytes_dropped += size;
    } else if (size > state.synced && options.tail != Tail::kDrop) {
      FDYNO_ASSIGN_OR_RETURN(uint64_t dropped, Tear(path, state.synced, size, options.tail, rng));
      ++effect.files_torn;
      effect.bytes_dropped += dropped;
    } else if (size > state.synced) {
      std::filesystem::resize_file(path, state.synced, ec);
      ++effect.files_truncated;
      effect.bytes_dropped += size - state.synced;
    }
    if (ec) return Error::Internal("cannot apply power loss to " + path + ": " + ec.message());
  }
  return effect;
}

}  // namespace fdyno::kv::testing
