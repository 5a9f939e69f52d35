// The memory tier: an LRU map bounded in bytes.
#include "cache/memory_cache.h"

#include <utility>

namespace tessera::cache {

uint64_t MemoryCache::SizeOf(const jit::CompiledModule& module) {
  uint64_t bytes = module.host_llvm_ir.size() + 1024;  // plus the JIT's own code and tables
  for (const jit::DeviceImage& image : module.device_images) {
    bytes += image.ptx.size() + image.cubin.size();
  }
  return bytes;
}

std::shared_ptr<const jit::CompiledModule> MemoryCache::Get(const std::string& digest) {
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(digest);
  if (it == entries_.end()) return nullptr;
  recency_.splice(recency_.begin(), recency_, it->second.position);
  return it->second.module;
}

void MemoryCache::Put(const std::string& digest,
                      std::shared_ptr<const jit::CompiledModule> module) {
  const uint64_t size = SizeOf(*module);
  absl::MutexLock lock(&mu_);
  if (auto it = entries_.find(digest); it != entries_.end()) {
    bytes_ -= it->second.bytes;
    recency_.erase(it->second.position);
    entries_.erase(it);
  }
  recency_.push_front(digest);
  entries_[digest] = Entry{std::move(module), size, recency_.begin()};
  bytes_ += size;
  while (bytes_ > max_bytes_ && recency_.size() > 1) {
    const std::string& oldest = recency_.back();
    auto it = entries_.find(oldest);
    bytes_ -= it->second.bytes;
    entries_.erase(it);
    recency_.pop_back();
  }
}

uint64_t MemoryCache::bytes() const {
  absl::MutexLock lock(&mu_);
  return bytes_;
}

size_t MemoryCache::entries() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace tessera::cache
