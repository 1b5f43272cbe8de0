// The report-callback family (docs/c-api.md, Callbacks): aclrtSubscribeReport /
// aclrtLaunchCallback / aclrtProcessReport / aclrtUnSubscribeReport.
//
// A thread subscribes to streams; a callback launched on a subscribed stream is a stream task
// that, when the stream reaches it, posts a report to the subscribed thread's mailbox. The thread
// runs it inside aclrtProcessReport. With ACL_CALLBACK_BLOCK the stream task waits until the
// callback has run, so the stream's later tasks run after it; with ACL_CALLBACK_NO_BLOCK the
// stream goes on at once. Reports of one stream are delivered in stream order.
//
// Invariants (one registry mutex, taken before any mailbox's): a thread has a mailbox exactly
// while it has a subscribed stream, and a mailbox holds reports only of streams routed to it.
// Unsubscribing a stream therefore takes its undelivered reports back: a blocked stream task is
// released with ACL_ERROR_RT_STREAM_NO_CB_REG (reported by the next synchronize) instead of
// waiting for a thread that will never process it.

#include "../c_enum.hpp"
#include "acl/acl_rt.h"
#include "boundary.hpp"
#include "runtime_handles.hpp"

#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/runtime.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <pthread.h>
#include <unordered_map>
#include <utility>
#include <vector>

namespace acl = ferry::acl;
using ferry::Runtime;
using ferry::Status;

namespace {

using ThreadKey = std::uint64_t;
using StreamKey = std::uint64_t; // Stream::id(): unique for the process's lifetime

// The thread identity CANN callers pass: the pthread_t of the processing thread (what
// pthread_create returns, std::thread::native_handle(), or pthread_self() on that thread).
ThreadKey this_thread_key() noexcept {
    static_assert(sizeof(pthread_t) <= sizeof(ThreadKey));
    const pthread_t self = pthread_self();
    ThreadKey key = 0;
    std::memcpy(&key, &self, sizeof self);
    return key;
}

// A blocking callback's handshake between the processing thread and the waiting stream task.
class Completion {
public:
    void finish(Status outcome) {
        {
            std::lock_guard lock(mutex_);
            outcome_ = outcome;
        }
        done_.notify_all();
    }
    [[nodiscard]] Status wait() {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return outcome_.has_value(); });
        return *outcome_;
    }

private:
    std::mutex mutex_;
    std::condition_variable done_;
    std::optional<Status> outcome_;
};

struct Report {
    StreamKey stream = 0;
    aclrtCallback fn = nullptr;
    void* user_data = nullptr;
    std::shared_ptr<Completion> done; // null for ACL_CALLBACK_NO_BLOCK
};

// One subscribed thread's undelivered reports.
struct Mailbox {
    std::mutex mutex;
    std::condition_variable arrived;
    std::deque<Report> reports;
    bool closed = false; // its last stream was unsubscribed: waiting is over
};

class Registry {
public:
    [[nodiscard]] Status subscribe(ThreadKey thread, StreamKey stream) {
        std::lock_guard lock(mutex_);
        if (routes_.contains(stream)) {
            return Status::rt_stream_subscribe; // one thread per stream, as in CANN
        }
        const auto found = boxes_.find(thread);
        auto mailbox = found != boxes_.end() ? found->second.mailbox : std::make_shared<Mailbox>();
        routes_.emplace(stream, thread);
        try {
            ++boxes_.try_emplace(thread, Box{std::move(mailbox), 0}).first->second.streams;
        } catch (...) { // out of memory: leave no route without a mailbox behind
            routes_.erase(stream);
            throw;
        }
        return Status::ok;
    }

    [[nodiscard]] Status unsubscribe(ThreadKey thread, StreamKey stream) {
        std::vector<Report> dropped;
        {
            std::lock_guard lock(mutex_);
            const auto route = routes_.find(stream);
            if (route == routes_.end() || route->second != thread) {
                return Status::rt_stream_subscribe;
            }
            routes_.erase(route);
            const auto box = boxes_.find(thread);
            Mailbox& mailbox = *box->second.mailbox;
            {
                std::lock_guard box_lock(mailbox.mutex);
                take_reports_of(stream, mailbox.reports, dropped);
                mailbox.closed = --box->second.streams == 0;
            }
            mailbox.arrived.notify_all();
            if (box->second.streams == 0) {
                boxes_.erase(box);
            }
        }
        for (Report& report : dropped) {
            if (report.done) {
                report.done->finish(Status::rt_stream_no_cb_reg);
            }
        }
        return Status::ok;
    }

    [[nodiscard]] bool routed(StreamKey stream) {
        std::lock_guard lock(mutex_);
        return routes_.contains(stream);
    }

    // From the stream task: hands the report to the stream's current subscriber.
    [[nodiscard]] Status post(Report report) {
        std::shared_ptr<Mailbox> mailbox;
        {
            std::lock_guard lock(mutex_);
            const auto route = routes_.find(report.stream);
            if (route == routes_.end()) {
                return Status::rt_stream_no_cb_reg; // unsubscribed since the launch
            }
            mailbox = boxes_.at(route->second).mailbox;
            std::lock_guard box_lock(mailbox->mutex);
            mailbox->reports.push_back(std::move(report));
        }
        mailbox->arrived.notify_one();
        return Status::ok;
    }

    // The calling thread's next report, waiting up to `timeout`.
    [[nodiscard]] ferry::Result<Report> next(ThreadKey thread, ferry::Timeout timeout) {
        std::shared_ptr<Mailbox> mailbox;
        {
            std::lock_guard lock(mutex_);
            const auto box = boxes_.find(thread);
            if (box == boxes_.end()) {
                return Status::rt_thread_subscribe;
            }
            mailbox = box->second.mailbox;
        }
        std::unique_lock lock(mailbox->mutex);
        const auto ready = [&] { return !mailbox->reports.empty() || mailbox->closed; };
        if (timeout.is_forever()) {
            mailbox->arrived.wait(lock, ready);
        } else {
            mailbox->arrived.wait_until(lock, timeout.deadline_from(ferry::Timeout::clock::now()),
                                        ready);
        }
        if (mailbox->reports.empty()) {
            return mailbox->closed ? Status::rt_thread_subscribe : Status::rt_report_timeout;
        }
        Report report = std::move(mailbox->reports.front());
        mailbox->reports.pop_front();
        return report;
    }

private:
    struct Box {
        std::shared_ptr<Mailbox> mailbox;
        std::size_t streams = 0;
    };

    static void take_reports_of(StreamKey stream, std::deque<Report>& from,
                                std::vector<Report>& to) {
        for (auto it = from.begin(); it != from.end();) {
            if (it->stream == stream) {
                to.push_back(std::move(*it));
                it = from.erase(it);
            } else {
                ++it;
            }
        }
    }

    std::mutex mutex_;
    std::unordered_map<StreamKey, ThreadKey> routes_;
    std::unordered_map<ThreadKey, Box> boxes_;
};

// Never destroyed: stream threads (stopped by the runtime's exit handler) may still post to it.
Registry& registry() {
    static Registry* const instance = new Registry;
    return *instance;
}

// The stream task of one callback.
Status deliver(StreamKey stream, aclrtCallback fn, void* user_data, bool block) {
    Report report{stream, fn, user_data, block ? std::make_shared<Completion>() : nullptr};
    const std::shared_ptr<Completion> done = report.done;
    const Status posted = registry().post(std::move(report));
    if (ferry::failed(posted) || done == nullptr) {
        return posted;
    }
    return done->wait();
}

} // namespace

extern "C" {

// threadId: the processing thread's pthread_t. A stream has at most one subscribed thread
// (ACL_ERROR_RT_STREAM_SUBSCRIBE otherwise); a thread may serve several streams.
ACL_FUNC_VISIBILITY aclError aclrtSubscribeReport(uint64_t threadId, aclrtStream stream) {
    return acl::guarded("aclrtSubscribeReport", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                const auto id = rt.stream_id(s);
                return id ? registry().subscribe(threadId, *id) : id.status();
            });
        });
    });
}

// blockType must be ACL_CALLBACK_BLOCK or ACL_CALLBACK_NO_BLOCK and fn non-null
// (ACL_ERROR_INVALID_PARAM); a stream with no subscribed thread is ACL_ERROR_RT_STREAM_NO_CB_REG.
ACL_FUNC_VISIBILITY aclError aclrtLaunchCallback(aclrtCallback fn, void* userData,
                                                 aclrtCallbackBlockType blockType,
                                                 aclrtStream stream) {
    return acl::guarded("aclrtLaunchCallback", [&] {
        const auto kind = acl::raw_value(blockType);
        if (fn == nullptr || (kind != ACL_CALLBACK_BLOCK && kind != ACL_CALLBACK_NO_BLOCK)) {
            return Status::invalid_param;
        }
        const bool block = kind == ACL_CALLBACK_BLOCK;
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                const auto id = rt.stream_id(s);
                if (!id) {
                    return id.status();
                }
                if (!registry().routed(*id)) {
                    return Status::rt_stream_no_cb_reg;
                }
                return rt.launch_host_task(
                    s,
                    [key = *id, fn, userData, block] { return deliver(key, fn, userData, block); },
                    "callback");
            });
        });
    });
}

// Runs the next callback report of the streams the calling thread serves. timeout: -1 waits
// forever, > 0 milliseconds, anything else ACL_ERROR_INVALID_PARAM. No report in time:
// ACL_ERROR_RT_REPORT_TIMEOUT; the thread serves no stream: ACL_ERROR_RT_THREAD_SUBSCRIBE.
ACL_FUNC_VISIBILITY aclError aclrtProcessReport(int32_t timeout) {
    return acl::guarded("aclrtProcessReport", [&] {
        const auto wait = ferry::Timeout::from_milliseconds(timeout);
        if (!wait || timeout == 0) {
            return Status::invalid_param;
        }
        auto report = registry().next(this_thread_key(), *wait);
        if (!report) {
            return report.status();
        }
        try {
            report->fn(report->user_data);
        } catch (...) { // a C++ callback threw: release its stream, then let guarded report it
            if (report->done) {
                report->done->finish(Status::rt_internal_error);
            }
            throw;
        }
        if (report->done) {
            report->done->finish(Status::ok);
        }
        return Status::ok;
    });
}

ACL_FUNC_VISIBILITY aclError aclrtUnSubscribeReport(uint64_t threadId, aclrtStream stream) {
    return acl::guarded("aclrtUnSubscribeReport", [&] {
        return acl::with_runtime([&](Runtime& rt) {
            return acl::with_stream(stream, [&](ferry::Stream* s) {
                const auto id = rt.stream_id(s);
                return id ? registry().unsubscribe(threadId, *id) : id.status();
            });
        });
    });
}

} // extern "C"
