// The remote tier's options: the default URL ($TESSERA_JIT_REMOTE_CACHE) and its parsing.
#include "cache/remote_cache_options.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tessera::cache {

std::string RemoteCacheOptions::DefaultUrl() {
  const char* url = std::getenv("TESSERA_JIT_REMOTE_CACHE");
  return url != nullptr ? url : "";
}

absl::StatusOr<RemoteCacheOptions> RemoteCacheOptions::FromUrl(absl::string_view url) {
  absl::StatusOr<RedisEndpoint> endpoint = ParseRedisUrl(url);
  if (!endpoint.ok()) return endpoint.status();
  RemoteCacheOptions options;
  bool lease_set = false;
  for (const auto& [name, value] : endpoint->options) {
    int64_t number = 0;
    const bool parsed =
        !value.empty() && value.size() <= 12 &&
        std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        absl::SimpleAtoi(value, &number) && number > 0;
    if (name == "ttl_s" && parsed && number <= int64_t{365} * 24 * 3600) {
      options.ttl = absl::Seconds(number);
    } else if (name == "lease_ms" && parsed && number >= 100 && number <= 3600 * 1000) {
      options.lease = absl::Milliseconds(number);
      lease_set = true;
    } else if (name == "lease_wait_ms" && parsed && number <= 24 * 3600 * 1000) {
      options.lease_wait = absl::Milliseconds(number);
      options.lease_wait_set = true;
    } else {
      // The name only: a value may be a secret put in the wrong place (?password=…).
      return absl::InvalidArgumentError(absl::StrCat(
          "remote cache URL: the parameter '", name,
          "' (or its value) is not one of connect_timeout_ms, timeout_ms, ttl_s (1 s … 1 year), "
          "lease_ms (100 ms … 1 h), lease_wait_ms (1 ms … 24 h), each a whole number"));
    }
  }
  // A renewal every third of the lease must fit a command's timeout with room to spare.
  const absl::Duration least = 3 * endpoint->command_timeout;
  if (options.lease < least) {
    if (lease_set) {
      return absl::InvalidArgumentError(absl::StrCat(
          "remote cache URL: lease_ms (", absl::ToInt64Milliseconds(options.lease),
          ") must be at least 3 x timeout_ms (", absl::ToInt64Milliseconds(least), ")"));
    }
    options.lease = least;
  }
  endpoint->options.clear();
  options.endpoint = *std::move(endpoint);
  return options;
}

}  // namespace tessera::cache
