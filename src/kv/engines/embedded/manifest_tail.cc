#include "kv/engines/embedded/manifest_tail.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <boost/crc.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace fdyno::kv::embedded {
namespace {

constexpr uint64_t kBlockBytes = 32768;
constexpr uint64_t kHeaderBytes = 7;
constexpr uint32_t kMaskDelta = 0xa282ead8u;
enum FragmentType : uint8_t { kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4 };

uint32_t Crc32c(std::string_view bytes) {
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

uint32_t Unmask(uint32_t masked) {
  const uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

// The type of the valid fragment at `pos`, or 0.
uint8_t FragmentAt(std::string_view bytes, uint64_t pos) {
  const uint64_t block_left = kBlockBytes - pos % kBlockBytes;
  if (block_left < kHeaderBytes || pos + kHeaderBytes > bytes.size()) return 0;
  const auto* h = reinterpret_cast<const unsigned char*>(bytes.data() + pos);
  const uint32_t masked = h[0] | (h[1] << 8) | (h[2] << 16) | (uint32_t{h[3]} << 24);
  const uint64_t length = h[4] | (h[5] << 8);
  const uint8_t type = h[6];
  if (type < kFull || type > kLast || kHeaderBytes + length > block_left ||
      pos + kHeaderBytes + length > bytes.size()) {
    return 0;
  }
  return Unmask(masked) == Crc32c(bytes.substr(pos + 6, 1 + length)) ? type : 0;
}

uint64_t PayloadLength(std::string_view bytes, uint64_t pos) {
  return static_cast<unsigned char>(bytes[pos + 4]) |
         (static_cast<unsigned char>(bytes[pos + 5]) << 8);
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::Kv(kIoError, "io_error: cannot read '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

Result<bool> Cut(const std::string& manifest, uint64_t at) {
  const int fd = ::open(manifest.c_str(), O_WRONLY | O_CLOEXEC);
  const bool ok = fd >= 0 && ::ftruncate(fd, static_cast<off_t>(at)) == 0 && ::fsync(fd) == 0;
  const int err = errno;
  if (fd >= 0) ::close(fd);
  if (!ok) {
    return Error::Kv(kIoError, "io_error: cannot cut the damaged tail of '" + manifest +
                                   "': " + std::strerror(err));
  }
  return true;
}

}  // namespace

ManifestScan ScanManifest(std::string_view bytes) {
  ManifestScan scan;
  scan.size = bytes.size();
  uint64_t pos = 0;
  bool in_record = false;
  while (pos < bytes.size()) {
    const uint64_t block_left = kBlockBytes - pos % kBlockBytes;
    if (block_left < kHeaderBytes) {  // the block's padding
      if (bytes.substr(pos, block_left).find_first_not_of('\0') != std::string_view::npos) break;
      pos = std::min<uint64_t>(pos + block_left, bytes.size());
      if (!in_record) scan.whole_end = pos;
      continue;
    }
    const uint8_t type = FragmentAt(bytes, pos);
    const bool fits = type == kFull || type == kFirst ? !in_record : in_record;
    if (type == 0 || !fits) break;
    pos += kHeaderBytes + PayloadLength(bytes, pos);
    in_record = type == kFirst || type == kMiddle;
    if (!in_record) scan.whole_end = pos;
  }
  if (pos < bytes.size()) {
    for (uint64_t block = (pos / kBlockBytes + 1) * kBlockBytes; block < bytes.size();
         block += kBlockBytes) {
      if (FragmentAt(bytes, block) != 0) scan.records_after_damage = true;
    }
  }
  return scan;
}

Result<bool> CutDamagedManifestTail(const std::string& rocks_dir, const std::string& keep_dir) {
  FDYNO_ASSIGN_OR_RETURN(std::string current, ReadFile(rocks_dir + "/CURRENT"));
  while (!current.empty() && current.back() == '\n') current.pop_back();
  if (!current.starts_with("MANIFEST-") || current.find('/') != std::string::npos) return false;
  const std::string manifest = rocks_dir + "/" + current;
  FDYNO_ASSIGN_OR_RETURN(std::string bytes, ReadFile(manifest));
  const ManifestScan scan = ScanManifest(bytes);
  if (scan.whole_end == scan.size) return false;
  if (scan.records_after_damage) {
    return Error::Kv(kIoError, "io_error: '" + manifest + "' is damaged at byte " +
                                   std::to_string(scan.whole_end) +
                                   " and holds valid records after the damage: not a power "
                                   "cut's unsynced tail, so it is left as it is");
  }
  std::error_code ec;
  const std::filesystem::path kept_dir = std::filesystem::path(keep_dir) / "damaged-manifest-tails";
  std::filesystem::create_directories(kept_dir, ec);
  const std::string kept = (kept_dir / (current + "." + std::to_string(scan.whole_end))).string();
  std::ofstream out(kept, std::ios::binary | std::ios::trunc);
  out.write(bytes.data() + scan.whole_end,
            static_cast<std::streamsize>(scan.size - scan.whole_end));
  out.close();
  if (ec || !out) return Error::Kv(kIoError, "io_error: cannot keep the damaged tail in " + kept);
  FDYNO_ASSIGN_OR_RETURN(bool cut, Cut(manifest, scan.whole_end));
  spdlog::warn(
      "embedded engine: {} had {} damaged bytes after its last whole record at byte {} (a power "
      "cut during a MANIFEST write); cut them off, kept in {}",
      manifest, scan.size - scan.whole_end, scan.whole_end, kept);
  return cut;
}

}  // namespace fdyno::kv::embedded
