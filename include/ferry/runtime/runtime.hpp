#pragma once
// ferry::Runtime — the process-wide emulated CANN runtime
// (docs/cann-contract/runtime.md#singleton-and-boot).
//
// Runtime::instance() boots lazily and thread-safely through the stages BOOT_INIT → BOOT_ON →
// BOOT_DONE: one caller wins the boot; the others *wait* for it (CANN busy-spins; ferry blocks on
// the atomic) and see its outcome. A failed boot rolls back everything it made, returns to
// BOOT_INIT and reports its error; the next call tries again.
// Runtime::shutdown() (reached from aclFinalize) releases everything and returns to BOOT_INIT.
//
// Exit without finalize is clean: the Runtime object and the keeper are deliberately never
// destroyed (CANN's RuntimeKeeper does the same), so there is no static destruction order to get
// wrong, and an atexit handler stops and joins the runtime's threads, so none is left joinable
// (one still inside a task after k_exit_grace is detached instead: exit never hangs on a task).
//
// The C shim maps aclrt* calls one to one onto these members; every Status is the aclError CANN
// returns in that situation (docs/cann-contract/runtime.md#error-codes). Streams, events and
// contexts are opaque handles validated on every use.

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <cstdlib>
#include <ferry/channel/message_channels.hpp>
#include <ferry/core/memory_kind.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <ferry/runtime/config.hpp>
#include <ferry/runtime/detail/block_pool.hpp>
#include <ferry/runtime/detail/keeper.hpp>
#include <ferry/runtime/detail/stream_reaper.hpp>
#include <ferry/runtime/device.hpp>
#include <ferry/runtime/event.hpp>
#include <ferry/runtime/kernel_table.hpp>
#include <ferry/runtime/launch.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/memory.hpp>
#include <ferry/runtime/notify.hpp>
#include <ferry/runtime/profiler.hpp>
#include <ferry/runtime/stream.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferry {

// Process exit without finalize: how long the tasks still running may take to finish before their
// threads are abandoned to the exit (docs/runtime.md, Exit without finalize).
inline constexpr std::chrono::milliseconds k_exit_grace{1000};

// Called on the failing stream's thread (docs/cann-contract/runtime.md#profiling-and-callbacks).
using TaskFailureCallback = std::function<void(const TaskFailure&)>;

// A host task: returns void or a Status; may throw.
template <typename F>
concept HostTask = std::invocable<F&> &&(std::same_as<std::invoke_result_t<F&>, void> ||
                                         std::same_as<std::invoke_result_t<F&>, Status>);

class Runtime {
public:
    // The booted runtime, booting it on first use; the boot's failure otherwise
    // (rt_internal_error, as CANN's C API returns for a null Runtime; boot_error() says why).
    [[nodiscard]] static Result<Runtime*> instance();
    [[nodiscard]] static BootStage boot_stage() noexcept {
        return static_cast<BootStage>(detail::keeper().stage.load(std::memory_order_acquire));
    }
    // The message of the last failed boot (empty after a successful one).
    [[nodiscard]] static std::string boot_error() { return detail::keeper().last_error(); }
    // Releases every device, stream, event, allocation, program and thread and returns to
    // BOOT_INIT (aclFinalize). A no-op when not booted. Must not race with other calls.
    static void shutdown();

    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    [[nodiscard]] const RuntimeConfig& config() const noexcept { return config_; }
    // The visible devices (ASCEND_RT_VISIBLE_DEVICES, else all FERRY_DEVICE_COUNT of them). Every
    // member taking a device id takes a user id 0..device_count()-1.
    [[nodiscard]] std::uint32_t device_count() const noexcept { return devices_.device_count(); }
    // The physical device behind user device `device`; rt_invalid_device_id outside the visible
    // set.
    [[nodiscard]] Result<std::uint32_t> physical_device(std::int32_t device) const {
        if (const Status s = devices_.check_device(device); failed(s)) {
            return s;
        }
        return config_.physical_device(static_cast<std::uint32_t>(device));
    }

    // ---- devices and contexts (device.hpp) ----
    [[nodiscard]] Status set_device(std::int32_t device) { return devices_.set_device(device); }
    [[nodiscard]] Status reset_device(std::int32_t device) { return reset(device, false); }
    [[nodiscard]] Status reset_device_force(std::int32_t device) { return reset(device, true); }
    [[nodiscard]] Result<std::int32_t> current_device() const { return devices_.current_device(); }
    [[nodiscard]] Status synchronize_device(Timeout timeout = forever);
    [[nodiscard]] Result<const Context*> create_context(std::int32_t device) {
        return devices_.create_context(device);
    }
    [[nodiscard]] Status destroy_context(const Context* context);
    [[nodiscard]] Status set_current_context(const Context* context) {
        return devices_.set_current_context(context);
    }
    [[nodiscard]] Result<const Context*> current_context() const {
        return devices_.current_context();
    }
    // The _ref forms hand out the object itself, shared: ferry-acl keeps a weak reference per C
    // handle, so that a handle stays tied to its object and never to a later one at its address.
    [[nodiscard]] Result<std::shared_ptr<const Context>> create_context_ref(std::int32_t device) {
        return devices_.create_context_ref(device);
    }
    [[nodiscard]] Result<std::shared_ptr<const Context>> current_context_ref() const {
        return devices_.current_context_ref();
    }
    [[nodiscard]] Result<const Context*> primary_context(std::int32_t device,
                                                         std::uint32_t ts = 0) const {
        return devices_.primary_context(device, ts);
    }
    [[nodiscard]] std::uint32_t primary_refs(std::int32_t device) const {
        return devices_.primary_refs(device);
    }

    // ---- memory (memory.hpp) ----
    // aclrtMalloc on the current device: rt_context_null without one.
    [[nodiscard]] Result<void*>
    malloc(std::size_t size, std::uint32_t policy = std::uint32_t(MallocPolicy::huge_first));
    [[nodiscard]] Status free(void* p) { return memory_.free(p, AllocationKind::device); }
    [[nodiscard]] Result<void*> malloc_host(std::size_t size) {
        return memory_.allocate_host(size);
    }
    [[nodiscard]] Status free_host(void* p) { return memory_.free(p, AllocationKind::host); }
    [[nodiscard]] Status memcpy(void* dst, std::size_t dest_max, const void* src, std::size_t count,
                                MemcpyKind kind) {
        if (!profiler().enabled()) {
            return memory_.copy(dst, dest_max, src, count, kind);
        }
        ProfileScope scope("memcpy", "memcpy", current_device().value_or(k_host_trace_device));
        return memory_.copy(dst, dest_max, src, count, kind);
    }
    [[nodiscard]] Status memcpy_async(void* dst, std::size_t dest_max, const void* src,
                                      std::size_t count, MemcpyKind kind, Stream* stream);
    [[nodiscard]] Status memset(void* dst, std::size_t max_count, int value, std::size_t count) {
        return memory_.set(dst, max_count, value, count);
    }
    [[nodiscard]] Status memset_async(void* dst, std::size_t max_count, int value,
                                      std::size_t count, Stream* stream);
    [[nodiscard]] const AllocationRegistry& registry() const noexcept { return memory_.registry(); }
    // Memory the runtime did not allocate (a shared window, docs/runtime.md, External memory),
    // recorded as device memory of `device` so that pointer checks and the RegistryResolver accept
    // it. The runtime never frees it, and neither aclrtFree, a device reset nor shutdown removes
    // the record: destroying the handle does. invalid_param for a null base, 0 bytes or an unknown
    // device; rt_param_invalid when the range overlaps a recorded one.
    [[nodiscard]] Result<ExternalRecord> register_external(const void* base, std::size_t bytes,
                                                           std::int32_t device = 0) {
        if (base == nullptr || bytes == 0 || device < 0 ||
            static_cast<std::uint32_t>(device) >= device_count()) {
            return Status::invalid_param;
        }
        return memory_.register_external(base, bytes, device);
    }
    [[nodiscard]] PointerAttributes pointer_attributes(const void* p) const {
        return ferry::pointer_attributes(memory_.registry(), p);
    }
    [[nodiscard]] std::uint64_t memory_used(std::int32_t device) const {
        return memory_.used(device);
    }

    // ---- streams (stream.hpp); a null Stream* is the current context's default stream ----
    [[nodiscard]] Result<Stream*> create_stream() { return devices_.create_stream(); }
    [[nodiscard]] Result<std::shared_ptr<Stream>> create_stream_ref() {
        return devices_.create_stream_ref();
    }
    [[nodiscard]] Status destroy_stream(Stream* stream);
    [[nodiscard]] Status synchronize_stream(Stream* stream, Timeout timeout = forever);
    // True when every task queued on the stream has finished (aclrtStreamQuery).
    [[nodiscard]] Result<bool> query_stream(Stream* stream);
    // The stream's unique id (resolving nullptr to the current context's default stream).
    [[nodiscard]] Result<std::uint64_t> stream_id(Stream* stream);
    // Queues a host callable (aclrtLaunchCallback / aclrtLaunchHostFunc).
    template <HostTask F>
    [[nodiscard]] Status launch_host_task(Stream* stream, F task, std::string name = "host_task");

    // ---- events (event.hpp) ----
    [[nodiscard]] Result<Event*> create_event() { return devices_.create_event(); }
    [[nodiscard]] Result<std::shared_ptr<Event>> create_event_ref() {
        return devices_.create_event_ref();
    }
    [[nodiscard]] Status destroy_event(Event* event) { return devices_.destroy_event(event); }
    [[nodiscard]] Status record_event(Event* event, Stream* stream);
    // aclrtResetEvent: when the stream reaches it, the event's records so far are forgotten.
    [[nodiscard]] Status reset_event(Event* event, Stream* stream);
    [[nodiscard]] Result<EventStatus> query_event(Event* event) const;
    [[nodiscard]] Status synchronize_event(Event* event, Timeout timeout = forever);
    [[nodiscard]] Result<float> event_elapsed_time(Event* start, Event* end) const;
    // Later tasks of `stream` wait until the event's latest record completes.
    [[nodiscard]] Status stream_wait_event(Stream* stream, Event* event);

    // ---- notifies (notify.hpp) ----
    // aclrtCreateNotify on the current context's device (rt_context_null without one).
    [[nodiscard]] Result<std::shared_ptr<Notify>> create_notify_ref() {
        return devices_.create_notify_ref();
    }
    [[nodiscard]] Result<Notify*> create_notify() {
        auto created = devices_.create_notify_ref();
        return created ? Result<Notify*>(created->get()) : Result<Notify*>(created.status());
    }
    [[nodiscard]] Status destroy_notify(Notify* notify) { return devices_.destroy_notify(notify); }
    // Queues the record: the notify is set when the stream reaches it.
    [[nodiscard]] Status record_notify(Notify* notify, Stream* stream);
    // Queues the wait: the stream blocks there until the notify is set, then clears it; the task
    // fails (reported by synchronize) on timeout or when the notify is destroyed.
    [[nodiscard]] Status wait_and_reset_notify(Notify* notify, Stream* stream,
                                               Timeout timeout = forever);
    [[nodiscard]] Result<std::uint32_t> notify_id(Notify* notify) const {
        const auto found = devices_.notify(notify);
        return found ? Result<std::uint32_t>((*found)->id())
                     : Result<std::uint32_t>(found.status());
    }

    // ---- programs, kernels and launches (kernel_table.hpp, launch.hpp) ----
    [[nodiscard]] KernelTable& kernels() noexcept { return kernels_; }
    [[nodiscard]] Result<const Program*> register_program(const DevBinary& binary) {
        return kernels_.register_program(binary);
    }
    [[nodiscard]] Status unregister_program(const Program* program) {
        return kernels_.unregister_program(program);
    }
    [[nodiscard]] Status register_kernel(const Program* program, KernelSpec spec,
                                         std::string kernel_info_ext = {}) {
        return kernels_.register_kernel(program, std::move(spec), std::move(kernel_info_ext));
    }
    // By stub (rt_kernel_lookup when unknown), by (stub, tiling key), by name, or a callable.
    // block_dim must be in 1..k_max_block_dim (else rt_param_invalid); nothing is queued on error.
    [[nodiscard]] Status launch(const void* stub, std::uint32_t block_dim, ArgsImage args,
                                Stream* stream) {
        return launch_kernel(kernels_.lookup(stub), block_dim, std::move(args), stream);
    }
    [[nodiscard]] Status launch(const void* stub, std::uint64_t tiling_key, std::uint32_t block_dim,
                                ArgsImage args, Stream* stream) {
        return launch_kernel(kernels_.lookup(stub, tiling_key), block_dim, std::move(args), stream);
    }
    [[nodiscard]] Status launch_by_name(const std::string& name, std::uint32_t block_dim,
                                        ArgsImage args, Stream* stream) {
        return launch_kernel(kernels_.lookup(name), block_dim, std::move(args), stream);
    }
    template <HostKernelBody F>
    [[nodiscard]] Status launch(F body, std::uint32_t block_dim, ArgsImage args, Stream* stream,
                                std::string name = "host_kernel") {
        auto kernel = std::make_shared<const Kernel>(
            Kernel{nullptr, std::move(name), std::nullopt, HostKernel(std::move(body)), nullptr,
                   std::string()});
        return enqueue_kernel(std::move(kernel), block_dim, std::move(args), stream);
    }

    // ---- callbacks ----
    void set_exception_callback(TaskFailureCallback callback) {
        std::lock_guard lock(callback_mutex_);
        exception_callback_ = std::move(callback);
    }
    void set_task_abort_callback(TaskFailureCallback callback) {
        std::lock_guard lock(callback_mutex_);
        abort_callback_ = std::move(callback);
    }

private:
    explicit Runtime(const RuntimeConfig& config)
        : config_(config), devices_(config.user_device_count(),
                                    [this](const TaskFailure& f) { on_task_failure(f); }),
          memory_(config.user_device_count(), config.device_memory),
          pool_(config.kernel_threads > 0 ? config.kernel_threads - 1 : 0) {}

    [[nodiscard]] static Status boot(detail::RuntimeKeeper& keeper);
    [[nodiscard]] static Status fail_boot(detail::RuntimeKeeper& keeper, std::string message);
    static void at_exit() noexcept;
    [[nodiscard]] static Timeout remaining(Timeout::clock::time_point deadline);
    void teardown(bool drain);
    [[nodiscard]] Status reset(std::int32_t device, bool force);
    void finish(Released& released, bool drain);
    void on_task_failure(const TaskFailure& failure);
    // Resolves the notify and the stream, then queues make_task(notify, stop token) on the stream
    // as an always-run task.
    template <typename MakeTask>
    [[nodiscard]] Status enqueue_notify_task(Notify* notify, Stream* stream, const char* name,
                                             MakeTask&& make_task);
    [[nodiscard]] Status launch_kernel(Result<std::shared_ptr<const Kernel>> kernel,
                                       std::uint32_t block_dim, ArgsImage args, Stream* stream);
    [[nodiscard]] Status enqueue_kernel(std::shared_ptr<const Kernel> kernel,
                                        std::uint32_t block_dim, ArgsImage args, Stream* stream);

    const RuntimeConfig config_;
    DeviceManager devices_;
    MemoryManager memory_;
    KernelTable kernels_;
    detail::BlockPool pool_;
    detail::StreamReaper reaper_; // streams released from their own thread, not yet joined
    std::mutex callback_mutex_;
    TaskFailureCallback exception_callback_;
    TaskFailureCallback abort_callback_;
};

} // namespace ferry

#include <ferry/runtime/detail/runtime_impl.hpp>
