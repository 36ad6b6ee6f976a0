#include "store/vector_graph.h"

#include <hnswlib/hnswlib.h>

#include <cmath>
#include <mutex>
#include <stdexcept>

namespace fdyno::store {
namespace {

std::unique_ptr<hnswlib::SpaceInterface<float>> SpaceFor(DistanceFunction f, size_t dims) {
  if (f == DistanceFunction::kEuclidean) return std::make_unique<hnswlib::L2Space>(dims);
  return std::make_unique<hnswlib::InnerProductSpace>(dims);
}

}  // namespace

VectorGraph::VectorGraph(DistanceFunction distance, size_t dimensions, int64_t position,
                         size_t capacity, const VectorGraphOptions& options)
    : distance_(distance),
      dimensions_(dimensions),
      options_(options),
      space_(SpaceFor(distance, dimensions)),
      hnsw_(std::make_unique<hnswlib::HierarchicalNSW<float>>(
          space_.get(), std::max<size_t>(capacity, 16), options.m, options.ef_construction)),
      position_(position) {
  hnsw_->setEf(options.ef_search);
}

VectorGraph::~VectorGraph() = default;

std::vector<float> VectorGraph::Prepared(const float* v) const {
  std::vector<float> out(v, v + dimensions_);
  if (distance_ != DistanceFunction::kCosine) return out;
  double norm = 0;
  for (float x : out) norm += static_cast<double>(x) * x;
  if (norm == 0) return out;
  const double scale = 1 / std::sqrt(norm);
  for (float& x : out) x = static_cast<float>(x * scale);
  return out;
}

void VectorGraph::Set(const std::string& key, const std::vector<float>& vector) {
  std::vector<float> v = Prepared(vector.data());
  auto it = labels_.find(key);
  if (it != labels_.end()) {
    // Unchanged (a replay of a change the graph already holds): nothing to do.
    if (present_[it->second] && hnsw_->getDataByLabel<float>(it->second) == v) return;
    // A changed or re-added entry takes a new label; its old node stays deleted. hnswlib's
    // update in place (addPoint of a known label) refills the neighbours' link lists from a
    // small local candidate set and can leave a node with no incoming link: no search reaches
    // it again, even one asking for more than the graph holds. A fresh insert links the node
    // both ways; the dead node counts toward NeedsRebuild like a removed one.
    Remove(key);
    labels_.erase(it);
  }
  const size_t label = keys_.size();
  labels_.emplace(key, label);
  keys_.push_back(key);
  present_.push_back(false);
  // hnswlib 0.6.2 has no accessors: its counters are public members.
  if (hnsw_->cur_element_count >= hnsw_->max_elements_) {
    hnsw_->resizeIndex(hnsw_->max_elements_ * 2);
  }
  hnsw_->addPoint(v.data(), label);
  present_[label] = true;
  ++size_;
}

void VectorGraph::Remove(const std::string& key) {
  auto it = labels_.find(key);
  if (it == labels_.end() || !present_[it->second]) return;
  hnsw_->markDelete(it->second);
  present_[it->second] = false;
  --size_;
}

Result<bool> VectorGraph::Apply(const std::vector<Change>& changes, int64_t through,
                                int64_t read_version) {
  std::unique_lock lock(mu_);
  if (position_ > read_version) return false;
  try {
    for (const Change& c : changes) {
      if (c.vector) {
        Set(c.key, *c.vector);
      } else {
        Remove(c.key);
      }
    }
  } catch (const std::exception& e) {  // hnswlib reports allocation failures by throwing
    return Error::Internal(std::string("vector graph: ") + e.what());
  }
  position_ = std::max(position_, through);
  return true;
}

std::vector<std::string> VectorGraph::Nearest(const float* query, size_t k) const {
  std::vector<float> q = Prepared(query);
  std::shared_lock lock(mu_);
  if (size_ == 0 || k == 0) return {};
  std::priority_queue<std::pair<float, hnswlib::labeltype>> found = hnsw_->searchKnn(q.data(), k);
  std::vector<std::string> out(found.size());
  for (size_t i = found.size(); i-- > 0; found.pop()) out[i] = keys_[found.top().second];
  return out;
}

std::optional<std::vector<float>> VectorGraph::Get(const std::string& key) const {
  std::shared_lock lock(mu_);
  auto it = labels_.find(key);
  if (it == labels_.end() || !present_[it->second]) return std::nullopt;
  return hnsw_->getDataByLabel<float>(it->second);
}

void VectorGraph::SetSearchBreadth(size_t ef_search) {
  std::unique_lock lock(mu_);
  hnsw_->setEf(ef_search);
}

int64_t VectorGraph::position() const {
  std::shared_lock lock(mu_);
  return position_;
}

size_t VectorGraph::size() const {
  std::shared_lock lock(mu_);
  return size_;
}

size_t VectorGraph::labels() const {
  std::shared_lock lock(mu_);
  return keys_.size();
}

bool VectorGraph::NeedsRebuild() const {
  std::shared_lock lock(mu_);
  return keys_.size() - size_ > size_;
}

}  // namespace fdyno::store
