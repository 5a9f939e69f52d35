// Streams and events (API 0.9), over the GPU runtime (runtime/gpu_runtime.h). Streams are
// the driver's CUstream, so that a framework's streams and ours are interchangeable; events are
// handles of their own, which remember their device and whether they were recorded.
#include <atomic>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "capi/handles.h"
#include "runtime/gpu_runtime.h"

using tessera::capi::InvalidArgument;
using tessera::capi::MakeError;
using tessera::runtime::GpuRuntime;
using tessera::runtime::ScopedCurrentContext;

struct tessera_jit_event {
  int device = 0;
  CUevent event = nullptr;
  bool timing = true;
  std::atomic<bool> recorded{false};
};

namespace {

/// The runtime, or UNAVAILABLE saying what `what` needed it for.
absl::StatusOr<GpuRuntime*> Runtime(const char* what) {
  auto runtime = GpuRuntime::Get();
  if (!runtime.ok()) {
    return absl::UnavailableError(
        absl::StrCat(what, " needs a GPU, which is not available: ", runtime.status().message()));
  }
  return runtime;
}

tessera_jit_error_t* UnknownFlags(const char* function, uint32_t flags, uint32_t known) {
  return InvalidArgument(absl::StrCat(function, ": unknown flags 0x", absl::Hex(flags & ~known),
                                      " (known: 0x", absl::Hex(known), ")"));
}

}  // namespace

extern "C" {

tessera_jit_error_t* tessera_jit_stream_create(tessera_jit_context_t* context, uint32_t flags,
                                               void** out_stream) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_stream == nullptr) return InvalidArgument("out_stream is NULL");
  *out_stream = nullptr;
  if ((flags & ~TESSERA_JIT_STREAM_NON_BLOCKING) != 0) {
    return UnknownFlags("tessera_jit_stream_create", flags, TESSERA_JIT_STREAM_NON_BLOCKING);
  }
  auto runtime = Runtime("a stream");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  auto stream =
      (*runtime)->CreateStream(context->device, (flags & TESSERA_JIT_STREAM_NON_BLOCKING) != 0);
  if (!stream.ok()) return MakeError(stream.status());
  *out_stream = *stream;
  return nullptr;
}

tessera_jit_error_t* tessera_jit_stream_destroy(tessera_jit_context_t* context, void* stream) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (stream == nullptr) return nullptr;
  auto runtime = Runtime("a stream");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  return MakeError((*runtime)->DestroyStream(context->device, static_cast<CUstream>(stream)));
}

tessera_jit_error_t* tessera_jit_stream_synchronize(tessera_jit_context_t* context, void* stream) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  auto runtime = Runtime("a stream");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  return MakeError((*runtime)->Synchronize(context->device, static_cast<CUstream>(stream)));
}

tessera_jit_error_t* tessera_jit_stream_query(tessera_jit_context_t* context, void* stream,
                                              int32_t* out_done) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_done == nullptr) return InvalidArgument("out_done is NULL");
  *out_done = 0;
  auto runtime = Runtime("a stream");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  auto done = (*runtime)->StreamDone(context->device, static_cast<CUstream>(stream));
  if (!done.ok()) return MakeError(done.status());
  *out_done = *done ? 1 : 0;
  return nullptr;
}

tessera_jit_error_t* tessera_jit_stream_wait_event(tessera_jit_context_t* context, void* stream,
                                                   tessera_jit_event_t* event) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (event == nullptr) return InvalidArgument("event is NULL");
  auto runtime = Runtime("a stream");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  return MakeError(
      (*runtime)->WaitEvent(context->device, static_cast<CUstream>(stream), event->event));
}

tessera_jit_error_t* tessera_jit_event_create(tessera_jit_context_t* context, uint32_t flags,
                                              tessera_jit_event_t** out_event) {
  if (context == nullptr) return InvalidArgument("context is NULL");
  if (out_event == nullptr) return InvalidArgument("out_event is NULL");
  *out_event = nullptr;
  if ((flags & ~TESSERA_JIT_EVENT_DISABLE_TIMING) != 0) {
    return UnknownFlags("tessera_jit_event_create", flags, TESSERA_JIT_EVENT_DISABLE_TIMING);
  }
  auto runtime = Runtime("an event");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  const bool timing = (flags & TESSERA_JIT_EVENT_DISABLE_TIMING) == 0;
  auto event = (*runtime)->CreateEvent(context->device, timing);
  if (!event.ok()) return MakeError(event.status());
  auto* handle = new tessera_jit_event;
  handle->device = context->device;
  handle->event = *event;
  handle->timing = timing;
  *out_event = handle;
  return nullptr;
}

void tessera_jit_event_destroy(tessera_jit_event_t* event) {
  if (event == nullptr) return;
  auto runtime = GpuRuntime::Get();
  if (runtime.ok()) {
    ScopedCurrentContext keep_callers_context;
    (*runtime)->DestroyEvent(event->device, event->event).IgnoreError();  // nothing to report to
  }
  delete event;
}

tessera_jit_error_t* tessera_jit_event_record(tessera_jit_event_t* event, void* stream) {
  if (event == nullptr) return InvalidArgument("event is NULL");
  auto runtime = Runtime("an event");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  if (absl::Status active = (*runtime)->Activate(event->device); !active.ok()) {
    return MakeError(active);
  }
  if (absl::Status status = (*runtime)->RecordEvent(event->event, static_cast<CUstream>(stream));
      !status.ok()) {
    return MakeError(status);
  }
  event->recorded.store(true, std::memory_order_release);
  return nullptr;
}

tessera_jit_error_t* tessera_jit_event_query(tessera_jit_event_t* event, int32_t* out_done) {
  if (event == nullptr) return InvalidArgument("event is NULL");
  if (out_done == nullptr) return InvalidArgument("out_done is NULL");
  *out_done = 0;
  auto runtime = Runtime("an event");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  auto done = (*runtime)->EventDone(event->device, event->event);
  if (!done.ok()) return MakeError(done.status());
  *out_done = *done ? 1 : 0;
  return nullptr;
}

tessera_jit_error_t* tessera_jit_event_synchronize(tessera_jit_event_t* event) {
  if (event == nullptr) return InvalidArgument("event is NULL");
  auto runtime = Runtime("an event");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  return MakeError((*runtime)->SynchronizeEvent(event->device, event->event));
}

tessera_jit_error_t* tessera_jit_event_elapsed_time(tessera_jit_event_t* start,
                                                    tessera_jit_event_t* stop, float* out_ms) {
  if (start == nullptr || stop == nullptr) return InvalidArgument("start or stop is NULL");
  if (out_ms == nullptr) return InvalidArgument("out_ms is NULL");
  *out_ms = 0.0f;
  if (start->device != stop->device) {
    return InvalidArgument(absl::StrCat("start is an event of device ", start->device,
                                        ", stop of device ", stop->device));
  }
  if (!start->timing || !stop->timing) {
    return MakeError(absl::FailedPreconditionError(
        "an event created with TESSERA_JIT_EVENT_DISABLE_TIMING has no time"));
  }
  if (!start->recorded.load(std::memory_order_acquire) ||
      !stop->recorded.load(std::memory_order_acquire)) {
    return MakeError(absl::FailedPreconditionError(
        absl::StrCat(start->recorded.load() ? "stop" : "start", " was never recorded")));
  }
  auto runtime = Runtime("an event");
  if (!runtime.ok()) return MakeError(runtime.status());
  ScopedCurrentContext keep_callers_context;
  if (absl::Status active = (*runtime)->Activate(stop->device); !active.ok()) {
    return MakeError(active);
  }
  // Both waited for: `start` may be on another stream than `stop` and still be running.
  if (absl::Status status = (*runtime)->SynchronizeEvent(start->device, start->event);
      !status.ok()) {
    return MakeError(status);
  }
  auto ms = (*runtime)->ElapsedMs(start->event, stop->event);
  if (!ms.ok()) return MakeError(ms.status());
  *out_ms = *ms;
  return nullptr;
}

}  // extern "C"
