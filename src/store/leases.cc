#include "store/leases.h"

#include <unistd.h>

#include <cstdio>
#include <random>

#include "store/layout.h"

namespace fdyno::store {
namespace {

// Lease record format version. Persisted.
constexpr char kLeaseVersion = 1;

std::string EncodeLease(const Lease& lease) {
  return std::string(1, kLeaseVersion) + kv::Tuple{lease.owner, lease.expiry_ms}.Pack();
}

Result<Lease> DecodeLease(std::string_view value) {
  if (value.empty() || value[0] != kLeaseVersion) {
    return Error::Internal("lease record: unknown format version");
  }
  FDYNO_ASSIGN_OR_RETURN(kv::Tuple t, kv::Tuple::Unpack(value.substr(1)));
  Lease lease;
  FDYNO_ASSIGN_OR_RETURN(lease.owner, t.GetString(0));
  FDYNO_ASSIGN_OR_RETURN(lease.expiry_ms, t.GetInt(1));
  return lease;
}

const std::string& OwnerOf(const LeaseOptions& options) {
  return options.owner.empty() ? ProcessLeaseOwner() : options.owner;
}

}  // namespace

const std::string& ProcessLeaseOwner() {
  static const std::string* owner = [] {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
    char random[9];
    std::snprintf(random, sizeof(random), "%08x", std::random_device{}());
    return new std::string(std::string(host) + "-" + std::to_string(getpid()) + "-" + random);
  }();
  return *owner;
}

std::string LeaseKey(const kv::Tuple& unit) {
  return layout::Leases().Pack(kv::Tuple{"lease"}.Append(unit));
}

Result<std::optional<Lease>> ReadLease(kv::Transaction& tx, std::string_view key) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<std::string> value, tx.Get(key));
  if (!value) return std::optional<Lease>();
  FDYNO_ASSIGN_OR_RETURN(Lease lease, DecodeLease(*value));
  return std::optional<Lease>(std::move(lease));
}

Result<bool> TakeLease(kv::Transaction& tx, std::string_view key, const LeaseOptions& options) {
  const std::string& owner = OwnerOf(options);
  const int64_t now_ms = (options.clock != nullptr ? options.clock : Clock::Real())->WallMillis();
  FDYNO_ASSIGN_OR_RETURN(std::optional<Lease> held, ReadLease(tx, key));
  const bool mine = held && held->owner == owner;
  if (held && !mine && !options.sole && now_ms < held->expiry_ms) return false;
  // A lease of ours written less than `renew` ago is left as it is: the read above is the fence.
  const int64_t written_ms = mine ? held->expiry_ms - options.duration.count() : 0;
  if (mine && now_ms < written_ms + options.renew.count()) return true;
  tx.Set(key, EncodeLease({owner, now_ms + options.duration.count()}));
  return true;
}

Status ReleaseLease(kv::Transaction& tx, std::string_view key, const LeaseOptions& options) {
  FDYNO_ASSIGN_OR_RETURN(std::optional<Lease> held, ReadLease(tx, key));
  if (held && held->owner == OwnerOf(options)) tx.Clear(key);
  return Status::Ok();
}

}  // namespace fdyno::store
