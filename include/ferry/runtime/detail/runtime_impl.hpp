#pragma once
// Definitions of ferry::Runtime's members (included at the end of <ferry/runtime/runtime.hpp>).

#include <exception>
#include <ferry/runtime/runtime.hpp>
#include <iterator>
#include <stdexcept>
#include <string>

namespace ferry {

namespace detail {
// Installed as ferry's pointer locator while the runtime is booted (core/memory_kind.hpp):
// device allocations are device memory; everything else, aclrtMallocHost memory included, is
// host (CANN's pointer attributes: HOST or UNREGISTERED → host;
// docs/cann-contract/runtime.md#allocation-registry).
inline PointerLocation runtime_locator(const void* address) noexcept;
} // namespace detail

// ---------------------------------------------------------------- boot and shutdown

inline Result<Runtime*> Runtime::instance() {
    using enum BootStage;
    auto& k = detail::keeper();
    for (;;) {
        const auto stage = static_cast<BootStage>(k.stage.load(std::memory_order_acquire));
        if (stage == done) {
            return k.runtime.load(std::memory_order_acquire);
        }
        if (k.exiting.load(std::memory_order_acquire)) {
            return Status::rt_internal_error; // CANN: RuntimeKeeperGetRuntime is null when exiting
        }
        const std::uint64_t attempts = k.attempts.load(std::memory_order_acquire);
        if (stage == init) {
            auto expected = static_cast<std::uint32_t>(init);
            if (k.stage.compare_exchange_strong(expected, static_cast<std::uint32_t>(on),
                                                std::memory_order_acq_rel)) {
                const Status s = boot(k);
                k.attempts.fetch_add(1, std::memory_order_release);
                k.stage.store(static_cast<std::uint32_t>(succeeded(s) ? done : init),
                              std::memory_order_release);
                k.stage.notify_all();
                if (failed(s)) {
                    return s;
                }
            }
            continue;
        }
        // Another thread is booting (or shutting down): wait for it instead of spinning.
        k.stage.wait(static_cast<std::uint32_t>(on), std::memory_order_acquire);
        if (k.stage.load(std::memory_order_acquire) == static_cast<std::uint32_t>(init) &&
            k.attempts.load(std::memory_order_acquire) != attempts) {
            std::lock_guard lock(k.mutex);
            if (failed(k.last_status)) {
                return k.last_status; // the boot we waited for failed: report it, do not retry
            }
        }
    }
}

inline Status Runtime::fail_boot(detail::RuntimeKeeper& k, std::string message) {
    log(LogLevel::error, "runtime boot failed: " + message);
    std::lock_guard lock(k.mutex);
    k.error = std::move(message);
    k.last_status = Status::rt_internal_error;
    return Status::rt_internal_error;
}

// Runtime::Init's steps, each rolled back on a later failure
// (docs/cann-contract/runtime.md#singleton-and-boot): configuration, the runtime's
// tables and threads (destroyed again by the constructor's unwinding if one throws), the exit
// hook, then publication and the pointer locator.
inline Status Runtime::boot(detail::RuntimeKeeper& k) {
    RuntimeConfig config;
    std::string message;
    if (failed(load_config(config, message))) {
        return fail_boot(k, "configuration: " + message);
    }
    set_log_level(config.log_level);
    std::unique_ptr<Runtime> runtime;
    try {
        runtime.reset(new Runtime(config));
    } catch (const std::exception& e) {
        return fail_boot(k, std::string("initialisation: ") + e.what());
    }
    {
        std::lock_guard lock(k.mutex);
        if (!k.atexit_registered && std::atexit(&Runtime::at_exit) != 0) {
            k.error = "initialisation: cannot register the exit handler";
            k.last_status = Status::rt_internal_error;
            return Status::rt_internal_error; // `runtime` is destroyed: nothing was published
        }
        k.atexit_registered = true;
        k.error.clear();
        k.last_status = Status::ok;
    }
    k.runtime.store(runtime.release(), std::memory_order_release);
    set_pointer_locator(&detail::runtime_locator);
    log(LogLevel::info, "runtime booted: " + std::to_string(config.user_device_count()) + " of " +
                            std::to_string(config.device_count) + " device(s) visible, " +
                            std::to_string(config.device_memory) + " bytes each");
    return Status::ok;
}

inline void Runtime::shutdown() {
    auto& k = detail::keeper();
    for (;;) {
        auto expected = static_cast<std::uint32_t>(BootStage::done);
        if (k.stage.compare_exchange_strong(expected, static_cast<std::uint32_t>(BootStage::on),
                                            std::memory_order_acq_rel)) {
            break;
        }
        if (expected == static_cast<std::uint32_t>(BootStage::init)) {
            return;
        }
        k.stage.wait(expected, std::memory_order_acquire);
    }
    Runtime* runtime = k.runtime.exchange(nullptr, std::memory_order_acq_rel);
    if (set_pointer_locator(nullptr) != &detail::runtime_locator) {
        log(LogLevel::warning, "pointer locator was replaced while the runtime was booted");
    }
    runtime->teardown(true);
    {
        std::lock_guard lock(k.mutex);
        k.retired.push_back(runtime);
    }
    k.stage.store(static_cast<std::uint32_t>(BootStage::init), std::memory_order_release);
    k.stage.notify_all();
}

// Process exit without finalize: stop every thread of the runtime and join it; keep the memory
// (static destructors of the program may still read device buffers). Everything is stopped
// before anything is joined, with queues dropped and event waits ended, so no stream waits for
// a record that another stream's stop dropped. A task still running gets until one shared
// deadline to return; a thread still inside one then is abandoned (detached) and ends with the
// process, so exit never waits for a task that never returns.
inline void Runtime::at_exit() noexcept {
    auto& k = detail::keeper();
    k.exiting.store(true, std::memory_order_release);
    auto expected = static_cast<std::uint32_t>(BootStage::done);
    if (!k.stage.compare_exchange_strong(expected, static_cast<std::uint32_t>(BootStage::on))) {
        return; // not booted, or finalizing right now
    }
    try {
        const auto deadline = Timeout::clock::now() + k_exit_grace;
        Runtime* runtime = k.runtime.load(std::memory_order_acquire);
        Released released;
        runtime->devices_.release_all(released);
        auto streams = runtime->reaper_.take_all();
        streams.insert(streams.end(), std::make_move_iterator(released.streams.begin()),
                       std::make_move_iterator(released.streams.end()));
        for (auto& stream : streams) {
            stream->stop(false);
        }
        runtime->pool_.shutdown(deadline);
        for (auto& stream : streams) {
            (void)stream->join(deadline); // false only when exit runs on this stream's thread
        }
    } catch (...) { // bad_alloc while exiting: the process ends anyway
    }
}

inline void Runtime::teardown(bool drain) {
    Released released;
    devices_.release_all(released);
    finish(released, drain);
    for (auto& stream : reaper_.take_all()) {
        (void)stream->shutdown(drain);
    }
    pool_.shutdown();
    memory_.release_all();
    kernels_.clear();
    std::lock_guard lock(callback_mutex_);
    exception_callback_ = nullptr;
    abort_callback_ = nullptr;
}

// ---------------------------------------------------------------- devices and contexts

// Shuts the released streams down; one released by its own task cannot be joined by its own
// thread and goes to the reaper. Joins the reaped streams that have finished meanwhile.
inline void Runtime::finish(Released& released, bool drain) {
    for (auto& stream : released.streams) {
        if (!stream->shutdown(drain)) {
            reaper_.adopt(std::move(stream));
        }
    }
    released.streams.clear();
    reaper_.reap();
    for (const std::int32_t device : released.idle_devices) {
        memory_.release_device(device); // spec: reset releases the device's memory
    }
}

// A reset that leaves the device without any context releases it: its message channels stop
// (docs/channel.md, Registry) before its streams are drained, so a task blocked on one of them
// wakes instead of holding the reset up forever.
inline Status Runtime::reset(std::int32_t device, bool force) {
    Released released;
    const Status s = devices_.reset_device(device, force, released);
    if (!released.idle_devices.empty()) {
        message_channels().registry.stop_device(static_cast<std::uint32_t>(device));
    }
    finish(released, true);
    return s;
}

inline Status Runtime::destroy_context(const Context* context) {
    Released released;
    const Status s = devices_.destroy_context(context, released);
    finish(released, true);
    return s;
}

inline Timeout Runtime::remaining(Timeout::clock::time_point deadline) {
    if (deadline == Timeout::clock::time_point::max()) {
        return forever;
    }
    const auto now = Timeout::clock::now();
    return deadline > now ? Timeout(deadline - now) : no_wait;
}

inline Status Runtime::synchronize_device(Timeout timeout) {
    const auto device = devices_.current_device();
    if (!device) {
        return device.status();
    }
    const auto deadline = timeout.deadline_from(Timeout::clock::now());
    Status first = Status::ok;
    for (const auto& stream : devices_.streams_on(*device)) {
        const Status s = stream->synchronize(remaining(deadline));
        if (failed(s) && succeeded(first)) {
            first = s;
        }
    }
    return first;
}

// ---------------------------------------------------------------- memory

inline Result<void*> Runtime::malloc(std::size_t size, std::uint32_t policy) {
    const auto device = devices_.current_device();
    if (!device) {
        return device.status();
    }
    return memory_.allocate_device(*device, size, policy);
}

inline Status Runtime::memcpy_async(void* dst, std::size_t dest_max, const void* src,
                                    std::size_t count, MemcpyKind kind, Stream* stream) {
    if (const Status s = check_memcpy(memory_.registry(), dst, dest_max, src, count, kind);
        failed(s)) {
        return s;
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    // Checked again when the stream reaches it: memory freed in between is an error, not a write.
    return (*target)->enqueue("memcpy", "memcpy", [this, dst, dest_max, src, count, kind] {
        return memory_.copy(dst, dest_max, src, count, kind);
    });
}

inline Status Runtime::memset_async(void* dst, std::size_t max_count, int value, std::size_t count,
                                    Stream* stream) {
    if (const Status s = check_memset(memory_.registry(), dst, max_count, count); failed(s)) {
        return s;
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    return (*target)->enqueue("memset", "memcpy", [this, dst, max_count, value, count] {
        return memory_.set(dst, max_count, value, count);
    });
}

// ---------------------------------------------------------------- streams and events

inline Status Runtime::destroy_stream(Stream* stream) {
    auto removed = devices_.remove_stream(stream);
    if (!removed) {
        return removed.status();
    }
    // Queued tasks run first; destroyed by one of its own tasks, it drains after that task.
    Released released;
    released.streams.push_back(std::move(*removed));
    finish(released, true);
    return Status::ok;
}

inline Status Runtime::synchronize_stream(Stream* stream, Timeout timeout) {
    const auto target = devices_.stream(stream);
    return target ? (*target)->synchronize(timeout) : target.status();
}

inline Result<bool> Runtime::query_stream(Stream* stream) {
    const auto target = devices_.stream(stream);
    return target ? Result<bool>((*target)->idle()) : Result<bool>(target.status());
}

inline Result<std::uint64_t> Runtime::stream_id(Stream* stream) {
    const auto target = devices_.stream(stream);
    return target ? Result<std::uint64_t>((*target)->id()) : Result<std::uint64_t>(target.status());
}

template <HostTask F>
inline Status Runtime::launch_host_task(Stream* stream, F task, std::string name) {
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    return (*target)->enqueue(std::move(name), "host_task", [task = std::move(task)]() mutable {
        if constexpr (std::same_as<std::invoke_result_t<F&>, Status>) {
            return task();
        } else {
            task();
            return Status::ok;
        }
    });
}

inline Status Runtime::record_event(Event* event, Stream* stream) {
    const auto recorded = devices_.event(event);
    if (!recorded) {
        return recorded.status();
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    return (*recorded)->record([&, e = *recorded](std::uint64_t generation) {
        return (*target)->enqueue(
            "event_record", "event",
            [e, generation] {
                e->complete(generation);
                return Status::ok;
            },
            true);
    });
}

// Like a record, the reset runs even in the stream's error state: event state follows stream
// order whatever the other tasks did.
inline Status Runtime::reset_event(Event* event, Stream* stream) {
    const auto found = devices_.event(event);
    if (!found) {
        return found.status();
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    return (*target)->enqueue(
        "event_reset", "event",
        [e = *found, generation = (*found)->generation()] {
            e->reset(generation);
            return Status::ok;
        },
        true);
}

inline Result<EventStatus> Runtime::query_event(Event* event) const {
    const auto found = devices_.event(event);
    return found ? Result<EventStatus>((*found)->status()) : Result<EventStatus>(found.status());
}

inline Status Runtime::synchronize_event(Event* event, Timeout timeout) {
    const auto found = devices_.event(event);
    return found ? (*found)->synchronize(timeout) : found.status();
}

inline Result<float> Runtime::event_elapsed_time(Event* start, Event* end) const {
    const auto a = devices_.event(start);
    const auto b = devices_.event(end);
    if (!a || !b) {
        return Status::rt_param_invalid;
    }
    return elapsed_time(**a, **b);
}

inline Status Runtime::stream_wait_event(Stream* stream, Event* event) {
    const auto found = devices_.event(event);
    if (!found) {
        return found.status();
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    const std::uint64_t generation = (*found)->generation();
    if (generation == 0) {
        return Status::ok; // never recorded: nothing to wait for
    }
    // Ends early only when the stream is stopped without draining (process exit), where the
    // record may have been dropped; nobody looks at the result then.
    return (*target)->enqueue(
        "event_wait", "event",
        [e = *found, generation, stop = (*target)->stop_token()] {
            (void)e->wait(generation, stop);
            return Status::ok;
        },
        true);
}

// Like event records and waits, notify tasks run even in the stream's error state: a waiter on
// another stream must not hang because this stream failed earlier.
template <typename MakeTask>
inline Status Runtime::enqueue_notify_task(Notify* notify, Stream* stream, const char* name,
                                           MakeTask&& make_task) {
    const auto found = devices_.notify(notify);
    if (!found) {
        return found.status();
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    return (*target)->enqueue(name, "event", make_task(*found, (*target)->stop_token()), true);
}

inline Status Runtime::record_notify(Notify* notify, Stream* stream) {
    return enqueue_notify_task(notify, stream, "notify_record",
                               [](std::shared_ptr<Notify> n, const std::stop_token&) {
                                   return [n = std::move(n)] {
                                       n->set();
                                       return Status::ok;
                                   };
                               });
}

inline Status Runtime::wait_and_reset_notify(Notify* notify, Stream* stream, Timeout timeout) {
    return enqueue_notify_task(notify, stream, "notify_wait",
                               [timeout](std::shared_ptr<Notify> n, std::stop_token stop) {
                                   return [n = std::move(n), timeout, stop = std::move(stop)] {
                                       return n->wait_and_reset(stop, timeout);
                                   };
                               });
}

// ---------------------------------------------------------------- kernels

inline Status Runtime::launch_kernel(Result<std::shared_ptr<const Kernel>> kernel,
                                     std::uint32_t block_dim, ArgsImage args, Stream* stream) {
    if (!kernel) {
        return kernel.status();
    }
    return enqueue_kernel(std::move(*kernel), block_dim, std::move(args), stream);
}

// The kernel task runs every block on the pool and rethrows the first block's exception, which
// the stream turns into the task's failure (with the block index in the message). The task holds
// the Kernel (and through it the Program), so unregistering the program cannot pull it away.
inline Status Runtime::enqueue_kernel(std::shared_ptr<const Kernel> kernel, std::uint32_t block_dim,
                                      ArgsImage args, Stream* stream) {
    if (block_dim == 0 || block_dim > k_max_block_dim) {
        return Status::rt_param_invalid;
    }
    const auto target = devices_.stream(stream);
    if (!target) {
        return target.status();
    }
    Stream* raw = target->get(); // the task runs on this stream's own thread: it outlives the task
    std::string name = kernel->name;
    auto task = [this, kernel = std::move(kernel), block_dim, args = std::move(args),
                 raw]() -> Status {
        std::mutex mutex;
        std::string first_failure;
        const std::function<void(std::uint32_t)> block = [&](std::uint32_t index) {
            const KernelContext context{index,        block_dim,   raw->device(), raw,
                                        args.slots(), args.data(), args.size(),   kernel->name};
            try {
                kernel->body(context);
            } catch (const std::exception& e) {
                std::lock_guard lock(mutex);
                if (first_failure.empty()) {
                    first_failure = "block " + std::to_string(index) + ": " + e.what();
                }
            } catch (...) {
                std::lock_guard lock(mutex);
                if (first_failure.empty()) {
                    first_failure = "block " + std::to_string(index) + ": unknown exception";
                }
            }
        };
        pool_.run(block_dim, block);
        if (!first_failure.empty()) {
            throw std::runtime_error(first_failure);
        }
        return Status::ok;
    };
    return raw->enqueue(std::move(name), "kernel", std::move(task));
}

inline void Runtime::on_task_failure(const TaskFailure& failure) {
    TaskFailureCallback on_exception;
    TaskFailureCallback on_abort;
    {
        std::lock_guard lock(callback_mutex_);
        on_exception = exception_callback_;
        on_abort = abort_callback_;
    }
    if (on_exception && !failure.aborted) {
        on_exception(failure);
    }
    if (on_abort) {
        on_abort(failure);
    }
}

namespace detail {
inline PointerLocation runtime_locator(const void* address) noexcept {
    if (address == nullptr) {
        return {Status::ok, MemoryKind::unknown};
    }
    Runtime* runtime = keeper().runtime.load(std::memory_order_acquire);
    if (runtime == nullptr) {
        return {Status::ok, MemoryKind::host};
    }
    try {
        return {Status::ok, runtime->pointer_attributes(address).kind};
    } catch (...) {
        return {Status::rt_internal_error, MemoryKind::unknown};
    }
}
} // namespace detail

} // namespace ferry
