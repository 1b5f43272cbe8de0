#pragma once
// ferry::ChannelRegistry<T> — the named channels of every device, for the runtime and the C API.
//
// docs/cann-contract/tdt.md#channel-kinds describes two kinds of named channel, and this registry
// owns both:
// - queue channels (acltdtCreateChannelWithCapacity): every create makes a new channel with its
//   own id; the name is only a label that lookups may use (several queues may share it).
// - "TDT process" channels (acltdtCreateChannel): a named rendezvous. Every open on the same
//   device with the same base name shares one channel (and one id); a name that starts with
//   "TF_RECEIVE_" is the receive side of the channel named without the prefix
//   (docs/cann-contract/tdt.md#channel-creation). Their capacity is k_process_channel_capacity; the
//   channel lives until its last handle closes.
// Channels are Channel<T, dynamic_capacity, mpmc>: the C API lets any thread use any handle.
// Registry operations take a mutex (they are not on the data path); the channels themselves are
// shared_ptrs, so a lookup stays valid while the caller uses it.

#include <cstddef>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry {

using ChannelId = std::uint32_t; // 0 is never a valid id

enum class ChannelKind : unsigned char { queue, process };

// RT_MQ_MAX_NAME_LEN is 128 including the terminating NUL
// (docs/cann-contract/tdt.md#channel-creation): 127 characters.
inline constexpr std::size_t k_max_channel_name_length = 127;
inline constexpr std::string_view k_receive_prefix = "TF_RECEIVE_";
// The depth of a "TDT process" channel. CANN's legacy path takes no capacity; 128 is the depth
// MindSpore's MbufDataHandler uses by default (docs/cann-contract/tdt.md#channel-kinds), documented
// in docs/channel.md.
inline constexpr std::size_t k_process_channel_capacity = 128;

template <Sendable T>
class ChannelRegistry {
public:
    using channel_type = Channel<T, dynamic_capacity, mpmc>;

    struct Entry {
        ChannelId id = 0;
        std::uint32_t device = 0;
        std::string name; // queue: the label as given; process: the base name (prefix removed)
        ChannelKind kind = ChannelKind::queue;
        bool receive_side = false; // process channels opened through a "TF_RECEIVE_" name
        std::shared_ptr<channel_type> channel;
    };

    // A new queue channel. invalid_param: name longer than 127 characters or capacity outside
    // [2, 8192]; bad_alloc. Nothing is registered on failure.
    [[nodiscard]] Result<Entry> create_queue(std::uint32_t device, std::string_view name,
                                             std::size_t capacity) noexcept {
        if (name.size() > k_max_channel_name_length || !is_valid_channel_capacity(capacity)) {
            return Status::invalid_param;
        }
        try {
            Entry entry{.device = device,
                        .name = std::string(name),
                        .kind = ChannelKind::queue,
                        .channel = std::make_shared<channel_type>(capacity)};
            const std::scoped_lock lock(mutex_);
            entry.id = next_id();
            records_.emplace(entry.id, Record{entry, 1});
            return entry;
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    // Opens a handle on the process channel named `name` on `device`, creating it on first use.
    // invalid_param: name longer than 127 characters; bad_alloc.
    [[nodiscard]] Result<Entry> open_process(std::uint32_t device, std::string_view name) noexcept {
        if (name.size() > k_max_channel_name_length) {
            return Status::invalid_param;
        }
        const bool receive_side = name.starts_with(k_receive_prefix);
        const std::string_view base = receive_side ? name.substr(k_receive_prefix.size()) : name;
        try {
            const std::scoped_lock lock(mutex_);
            std::pair<std::uint32_t, std::string> key{device, std::string(base)};
            if (const auto found = process_ids_.find(key); found != process_ids_.end()) {
                Record& record = records_.at(found->second);
                Entry entry = record.entry; // may throw: count the handle only once it exists
                ++record.handles;
                entry.receive_side = receive_side;
                return entry;
            }
            Entry entry{.device = device,
                        .name = key.second,
                        .kind = ChannelKind::process,
                        .channel = std::make_shared<channel_type>(k_process_channel_capacity)};
            entry.id = next_id();
            const auto record = records_.emplace(entry.id, Record{entry, 1}).first;
            try {
                process_ids_.emplace(std::move(key), entry.id);
            } catch (...) {
                records_.erase(record); // all or nothing: no record without its name
                throw;
            }
            entry.receive_side = receive_side;
            return entry;
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    // Closes one handle: a queue channel leaves the registry; a process channel leaves it with
    // its last handle. The channel object itself lives on while someone holds its shared_ptr.
    // invalid_param for an id that is not registered (a double close included).
    Status close(ChannelId id) noexcept {
        const std::scoped_lock lock(mutex_);
        const auto found = records_.find(id);
        if (found == records_.end()) {
            return Status::invalid_param;
        }
        if (--found->second.handles == 0) {
            const Entry& entry = found->second.entry;
            if (entry.kind == ChannelKind::process) {
                process_ids_.erase(std::pair<std::uint32_t, std::string>{entry.device, entry.name});
            }
            records_.erase(found);
        }
        return Status::ok;
    }

    // The channel with this id, or nullptr.
    [[nodiscard]] std::shared_ptr<channel_type> find(ChannelId id) const noexcept {
        const std::scoped_lock lock(mutex_);
        const auto found = records_.find(id);
        return found == records_.end() ? nullptr : found->second.entry.channel;
    }

    // Every channel of `device` that `name` designates, oldest first: queue channels labelled
    // `name`, and the process channel whose base name `name` has (with or without the prefix).
    [[nodiscard]] std::vector<Entry> find(std::uint32_t device, std::string_view name) const {
        const std::string_view base =
            name.starts_with(k_receive_prefix) ? name.substr(k_receive_prefix.size()) : name;
        std::vector<Entry> matches;
        const std::scoped_lock lock(mutex_);
        for (const auto& [id, record] : records_) {
            const Entry& e = record.entry;
            const bool queue_match = e.kind == ChannelKind::queue && e.name == name;
            const bool process_match = e.kind == ChannelKind::process && e.name == base;
            if (e.device == device && (queue_match || process_match)) {
                matches.push_back(e);
            }
        }
        return matches;
    }

    // Stops every channel of `device` (a device reset): blocked callers wake, see docs/channel.md.
    void stop_device(std::uint32_t device) noexcept {
        const std::scoped_lock lock(mutex_);
        for (auto& [id, record] : records_) {
            if (record.entry.device == device) {
                record.entry.channel->stop();
            }
        }
    }

    [[nodiscard]] std::size_t size() const noexcept {
        const std::scoped_lock lock(mutex_);
        return records_.size();
    }

private:
    struct Record {
        Entry entry;
        std::size_t handles = 0;
    };

    // Caller holds mutex_. Ids count up from 1 and skip 0 and live ids when they wrap.
    ChannelId next_id() noexcept {
        do {
            ++last_id_;
        } while (last_id_ == 0 || records_.contains(last_id_));
        return last_id_;
    }

    mutable std::mutex mutex_;
    ChannelId last_id_ = 0;
    std::map<ChannelId, Record> records_;
    std::map<std::pair<std::uint32_t, std::string>, ChannelId> process_ids_;
};

} // namespace ferry
