// Contexts: creation from options (the compile service and the decision cache behind it),
// reference counting, and the cache statistics.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "capi/handles.h"
#include "service/build_info.h"

namespace tessera::capi {

void ReleaseContext(tessera_jit_context* context) {
  if (context->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete context;
}

}  // namespace tessera::capi

using tessera::capi::CheckStructSize;
using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::Target;

extern "C" {

tessera_jit_error_t* tessera_jit_context_create(const tessera_jit_context_options_t* options,
                                                tessera_jit_context_t** out_context) {
  if (out_context == nullptr) return InvalidArgument("out_context is NULL");
  tessera_jit_context_options_t defaults;
  tessera_jit_context_options_init(&defaults);
  if (options == nullptr) options = &defaults;
  // API 0.1's struct ends with log_level; later fields take their defaults when absent.
  if (absl::Status status = CheckStructSize(
          options->struct_size, TESSERA_JIT_STRUCT_SIZE(tessera_jit_context_options_t, log_level),
          "tessera_jit_context_options_t");
      !status.ok()) {
    return MakeError(status);
  }
  using Options = tessera_jit_context_options_t;
  auto context = std::make_unique<tessera_jit_context>();
  context->device = options->device_ordinal;
  context->logger = tessera::Logger(static_cast<tessera::LogLevel>(options->log_level));
  if (context->logger.threshold() >= tessera::LogLevel::kDebug) {
    // Where NVRTC, nvJitLink and libdevice come from (searched once per process).
    for (const std::string& line : tessera::service::CudaComponentSearch()) {
      context->logger.Debug(line);
    }
  }
  tessera::service::CompileServiceOptions service;
  service.logger = context->logger;
  if (TESSERA_JIT_HOLDS(options, Options, cache_dir) && options->cache_dir != nullptr) {
    service.disk_root = options->cache_dir;
  }
  if (TESSERA_JIT_HOLDS(options, Options, cache_memory_bytes) && options->cache_memory_bytes != 0) {
    service.memory_max_bytes = options->cache_memory_bytes;
  }
  if (TESSERA_JIT_HOLDS(options, Options, cache_disk_bytes) && options->cache_disk_bytes != 0) {
    service.disk_max_bytes = options->cache_disk_bytes;
  }
  if (TESSERA_JIT_HOLDS(options, Options, cache_read_only)) {
    service.disk_read_only = options->cache_read_only != 0;
  }
  if (TESSERA_JIT_HOLDS(options, Options, cache_lock_timeout_ms)) {
    if (options->cache_lock_timeout_ms < 0) {
      return InvalidArgument(
          absl::StrCat("tessera_jit_context_options_t.cache_lock_timeout_ms is negative (",
                       options->cache_lock_timeout_ms, ")"));
    }
    if (options->cache_lock_timeout_ms > 0) {
      service.disk_lock_timeout = absl::Milliseconds(options->cache_lock_timeout_ms);
    }
  }
  if (TESSERA_JIT_HOLDS(options, Options, remote_cache) && options->remote_cache != nullptr) {
    service.remote_url = options->remote_cache;
    if (!service.remote_url.empty()) {
      if (auto remote = tessera::cache::RemoteCacheOptions::FromUrl(service.remote_url);
          !remote.ok()) {
        return InvalidArgument(absl::StrCat("tessera_jit_context_options_t.remote_cache: ",
                                            remote.status().message()));
      }
    }
  }
  if (TESSERA_JIT_HOLDS(options, Options, num_threads) && options->num_threads != 0) {
    if (options->num_threads < 1 || options->num_threads > 1024) {
      return InvalidArgument(absl::StrCat(
          "tessera_jit_context_options_t.num_threads must be 0 (the default) or in [1, 1024], "
          "found ",
          options->num_threads));
    }
    context->own_threads = std::make_unique<tessera::runtime::ThreadPool>(options->num_threads);
    context->threads = context->own_threads.get();
  } else {
    context->threads = &tessera::runtime::DefaultThreadPool();
  }
  if (TESSERA_JIT_HOLDS(options, Options, plan_path) && options->plan_path != nullptr &&
      options->plan_path[0] != '\0') {
    auto plan = tessera::arbiter::Plan::Load(options->plan_path);
    if (!plan.ok()) {
      return MakeError(absl::Status(
          plan.status().code(),
          absl::StrCat("tessera_jit_context_options_t.plan_path: ", plan.status().message())));
    }
    context->plan = *std::move(plan);
  }
  if (TESSERA_JIT_HOLDS(options, Options, plan_strict)) {
    context->plan_strict = options->plan_strict != 0;
    if (context->plan_strict && context->plan == nullptr) {
      return InvalidArgument(
          "tessera_jit_context_options_t.plan_strict is set without a plan_path");
    }
  }
  if (TESSERA_JIT_HOLDS(options, Options, arbitration_budget_ms) &&
      options->arbitration_budget_ms != 0) {
    if (options->arbitration_budget_ms < 1 || options->arbitration_budget_ms > 3600000) {
      return InvalidArgument(absl::StrCat(
          "tessera_jit_context_options_t.arbitration_budget_ms must be 0 (the default, 300) or "
          "in [1, 3600000], found ",
          options->arbitration_budget_ms));
    }
    context->arbitration_budget_ms = options->arbitration_budget_ms;
  }
  context->service = std::make_unique<tessera::service::CompileService>(std::move(service));
  context->decisions = context->service->MakeDecisionCache();
  if (options->default_target != nullptr) {
    auto target = tessera::runtime::ParseTarget(options->default_target);
    if (!target.ok()) {
      return MakeError(absl::InvalidArgumentError(absl::StrCat(
          "tessera_jit_context_options_t.default_target: ", target.status().message())));
    }
    context->default_target = *target;
  } else {
    context->default_target = tessera::capi::GpuAvailable() ? Target::kNvptx : Target::kHost;
    if (context->default_target == Target::kHost) {
      context->logger.Info("no GPU available; the default target is host");
    }
  }
  *out_context = context.release();
  return nullptr;
}

void tessera_jit_context_destroy(tessera_jit_context_t* context) {
  if (context != nullptr) tessera::capi::ReleaseContext(context);
}

tessera_jit_error_t* tessera_jit_context_get_cache_stats(tessera_jit_context_t* context,
                                                         tessera_jit_cache_stats_t* out_stats) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_stats == nullptr) return InvalidArgument("out_stats is NULL");
  using Stats = tessera_jit_cache_stats_t;
  // API 0.2's struct ends with last_miss_reason; later fields are written when they fit.
  if (absl::Status status =
          CheckStructSize(out_stats->struct_size, TESSERA_JIT_STRUCT_SIZE(Stats, last_miss_reason),
                          "tessera_jit_cache_stats_t");
      !status.ok()) {
    return MakeError(status);
  }
  tessera::service::ServiceStats stats = context->service->stats();
  out_stats->memory_hits = stats.memory_hits;
  out_stats->disk_hits = stats.disk_hits;
  out_stats->compiles = stats.compiles;
  out_stats->misses_not_cached = 0;
  out_stats->misses_stale = 0;
  out_stats->misses_damaged = 0;
  for (const auto& [reason, count] : stats.misses_by_reason) {
    switch (reason) {
      case tessera::cache::MissReason::kNotCached:
      case tessera::cache::MissReason::kTierOff:
        out_stats->misses_not_cached += count;
        break;
      case tessera::cache::MissReason::kStale:
        out_stats->misses_stale += count;
        break;
      case tessera::cache::MissReason::kFormat:
      case tessera::cache::MissReason::kDamaged:
      case tessera::cache::MissReason::kUnloadable:
        out_stats->misses_damaged += count;
        break;
    }
  }
  out_stats->memory_entries = stats.memory_entries;
  out_stats->memory_bytes = stats.memory_bytes;
  out_stats->disk_enabled = stats.disk_enabled ? 1 : 0;
  out_stats->disk_entries = 0;
  out_stats->disk_bytes = 0;
  if (stats.disk_enabled) {
    for (const auto& entry : context->service->disk()->List()) {
      ++out_stats->disk_entries;
      out_stats->disk_bytes += entry.bytes;
    }
  }
  {
    absl::MutexLock lock(&context->mu);
    std::snprintf(out_stats->last_miss_reason, sizeof(out_stats->last_miss_reason), "%s",
                  context->last_miss_reason.c_str());
  }
  if (TESSERA_JIT_HOLDS(out_stats, Stats, disk_read_only)) {
    out_stats->disk_read_only = stats.disk_read_only ? 1 : 0;
  }
  if (TESSERA_JIT_HOLDS(out_stats, Stats, disk_lock_timeouts)) {
    out_stats->disk_lock_timeouts = stats.disk.lock_timeouts;
  }
  if (TESSERA_JIT_HOLDS(out_stats, Stats, disk_lock_failures)) {
    out_stats->disk_lock_failures = stats.disk.lock_failures;
  }
  if (TESSERA_JIT_HOLDS(out_stats, Stats, remote_latency_p99_us)) {
    const tessera::cache::RemoteCounters& remote = stats.remote;
    auto reason = [&](const char* name) -> uint64_t {
      auto it = remote.misses_by_reason.find(name);
      return it == remote.misses_by_reason.end() ? 0 : it->second;
    };
    out_stats->remote_enabled = stats.remote_enabled ? 1 : 0;
    out_stats->remote_hits = stats.remote_hits;
    out_stats->remote_misses = remote.misses;
    out_stats->remote_misses_damaged =
        reason("damaged") + reason("stale") + reason("artifact format");
    out_stats->remote_misses_unavailable = reason("unavailable");
    out_stats->remote_stores = remote.stores;
    out_stats->remote_store_failures = remote.store_failures;
    out_stats->remote_lease_waits = remote.lease_waits;
    out_stats->remote_lease_takeovers = remote.lease_takeovers;
    out_stats->remote_lease_timeouts = remote.lease_timeouts;
    out_stats->remote_errors = remote.errors;
    out_stats->remote_reconnects = remote.reconnects;
    out_stats->remote_latency_p50_us = remote.latency_p50_us;
    out_stats->remote_latency_p99_us = remote.latency_p99_us;
  }
  return nullptr;
}

}  // extern "C"
