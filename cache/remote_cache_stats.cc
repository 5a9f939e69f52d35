// RemoteCache's statistics (cache/remote_cache_stats.h): this process's counters and GET
// latencies, flushed about once a second into the fleet's counters on the server (:stats, with a
// √2-bucket latency histogram), and the fleet's statistics read back.
#include "cache/remote_cache_stats.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cache/miss.h"
#include "cache/redis_client.h"
#include "cache/remote_cache.h"

namespace tessera::cache {
namespace {

constexpr size_t kLatencyRing = 4096;
/// Fleet latency histogram: bucket i holds samples up to kFirstBucketUs · √2^i.
constexpr double kFirstBucketUs = 8.0;
constexpr int kBuckets = 48;

int Bucket(double us) {
  if (us <= kFirstBucketUs) return 0;
  const int i = static_cast<int>(std::ceil(2.0 * std::log2(us / kFirstBucketUs)));
  return std::min(i, kBuckets - 1);
}
double BucketBound(int i) { return kFirstBucketUs * std::pow(2.0, i / 2.0); }

double Percentile(std::vector<double> samples, double fraction) {
  if (samples.empty()) return 0;
  const size_t k = std::min(samples.size() - 1,
                            static_cast<size_t>(fraction * static_cast<double>(samples.size())));
  std::nth_element(samples.begin(), samples.begin() + k, samples.end());
  return samples[k];
}

}  // namespace

void RemoteCache::Bump(const std::string& field, int64_t by) { unflushed_[field] += by; }

void RemoteCache::CountMiss(const Miss& miss) {
  const std::string reason = miss.reason == MissReason::kTierOff
                                 ? "unavailable"
                                 : std::string(MissReasonName(miss.reason));
  absl::MutexLock lock(&mu_);
  ++counters_.misses;
  ++counters_.misses_by_reason[reason];
  Bump("misses." + reason);
}

void RemoteCache::RecordLatency(absl::Duration latency) {
  const double us = absl::ToDoubleMicroseconds(latency);
  absl::MutexLock lock(&mu_);
  if (latencies_us_.size() < kLatencyRing) {
    latencies_us_.push_back(us);
  } else {
    latencies_us_[next_latency_] = us;
  }
  next_latency_ = (next_latency_ + 1) % kLatencyRing;
  ++counters_.latency_samples;
  Bump("latency_us_sum", static_cast<int64_t>(us));
  Bump("latency_count");
  Bump(absl::StrCat("latency_bucket.", Bucket(us)));
}

RemoteCounters RemoteCache::counters() const {
  const uint64_t connects = client_.connects();
  absl::MutexLock lock(&mu_);
  RemoteCounters counters = counters_;
  counters.reconnects = connects > 1 ? connects - 1 : 0;
  counters.latency_p50_us = Percentile(latencies_us_, 0.5);
  counters.latency_p99_us = Percentile(latencies_us_, 0.99);
  return counters;
}

void RemoteCache::MaybeFlush() {
  {
    absl::MutexLock lock(&mu_);
    if (unflushed_.empty() || absl::Now() - last_flush_ < absl::Seconds(1)) return;
  }
  FlushCounters();
}

void RemoteCache::FlushCounters() {
  std::map<std::string, int64_t> pending;
  {
    absl::MutexLock lock(&mu_);
    pending.swap(unflushed_);
    last_flush_ = absl::Now();
  }
  if (pending.empty() || !enabled()) return;
  const std::string stats = prefix_ + "stats";
  std::vector<std::string> amounts;
  amounts.reserve(pending.size());
  std::vector<std::vector<absl::string_view>> commands;
  for (const auto& [field, by] : pending) {
    amounts.push_back(absl::StrCat(by));
    commands.push_back({"HINCRBY", stats, field, amounts.back()});
  }
  const std::string ttl = absl::StrCat(Ms(options_.ttl));
  commands.push_back({"PEXPIRE", stats, ttl});
  // Counters of a moment the server was away are lost, not retried: they are statistics.
  client_.Pipeline(commands).IgnoreError();
}

absl::StatusOr<RemoteFleetStats> RemoteCache::FleetStats() {
  FlushCounters();
  RemoteFleetStats stats;
  const std::string stats_key = prefix_ + "stats";
  absl::StatusOr<RedisReply> all = client_.Command({"HGETALL", stats_key});
  if (absl::IsFailedPrecondition(all.status())) {  // not a hash: no fleet counters to show
    stats.damaged_keys.emplace_back(stats_key, std::string(all.status().message()));
    all = RedisReply{};
  }
  if (!all.ok()) return all.status();
  std::vector<std::pair<double, int64_t>> histogram;
  int64_t samples = 0;
  for (size_t i = 0; i + 1 < all->elements.size(); i += 2) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(all->elements[i + 1].text, &value)) continue;
    const std::string& field = all->elements[i].text;
    absl::string_view bucket = field;
    int index = 0;
    if (absl::ConsumePrefix(&bucket, "latency_bucket.") && absl::SimpleAtoi(bucket, &index)) {
      histogram.emplace_back(BucketBound(index), value);
      samples += value;
    } else {
      stats.counters[field] = value;
    }
  }
  std::sort(histogram.begin(), histogram.end());
  auto percentile = [&](double fraction) {
    int64_t seen = 0;
    for (const auto& [bound, count] : histogram) {
      seen += count;
      if (static_cast<double>(seen) >= fraction * static_cast<double>(samples)) return bound;
    }
    return 0.0;
  };
  stats.latency_p50_us = percentile(0.5);
  stats.latency_p99_us = percentile(0.99);
  absl::Status scanned = ForEachKeyBatch([&](const std::vector<RedisReply>& names) {
    std::vector<std::vector<absl::string_view>> lengths;
    std::vector<absl::string_view> measured;
    for (const RedisReply& name : names) {
      absl::string_view rest = name.text;
      rest.remove_prefix(std::min(rest.size(), prefix_.size()));
      if (absl::StartsWith(rest, "a:")) {
        ++stats.artifacts;
        lengths.push_back({"STRLEN", name.text});
        measured.push_back(name.text);
      } else if (absl::StartsWith(rest, "d:")) {
        ++stats.decisions;
      } else if (absl::StartsWith(rest, "lease:")) {
        ++stats.leases;
      }
    }
    if (lengths.empty()) return absl::OkStatus();
    auto replies = client_.Pipeline(lengths);
    if (!replies.ok()) return replies.status();
    for (size_t i = 0; i < replies->size(); ++i) {
      const absl::StatusOr<RedisReply>& length = (*replies)[i];
      if (length.ok()) {
        stats.artifact_bytes += static_cast<uint64_t>(length->integer);
      } else if (absl::IsFailedPrecondition(length.status())) {
        stats.damaged_keys.emplace_back(std::string(measured[i]),
                                        std::string(length.status().message()));
      }
    }
    return absl::OkStatus();
  });
  if (!scanned.ok()) return scanned;
  if (auto info = client_.Command({"INFO", "memory"}); info.ok()) {
    for (absl::string_view line : absl::StrSplit(info->text, absl::ByAnyChar("\r\n"))) {
      if (absl::ConsumePrefix(&line, "used_memory_human:")) stats.used_memory = std::string(line);
      if (absl::ConsumePrefix(&line, "maxmemory_human:")) stats.max_memory = std::string(line);
      if (absl::ConsumePrefix(&line, "maxmemory_policy:")) {
        stats.eviction_policy = std::string(line);
      }
    }
  }
  return stats;
}

}  // namespace tessera::cache
