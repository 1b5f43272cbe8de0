// Named TDT channels shared between processes: the setting, the segment names, this process's
// table of participations, and the send / receive steps on a shared cell (shared.hpp).

#include "shared.hpp"

#include <charconv>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>

namespace ferry::acl {

namespace {

constexpr char k_hex[] = "0123456789ABCDEF";

bool plain_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// ".XX" for every character outside [A-Za-z0-9-]: '.' is the escape, so it is escaped too.
std::string escaped(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (const char c : name) {
        if (plain_char(c)) {
            out += c;
        } else {
            const auto byte = static_cast<unsigned char>(c);
            out += '.';
            out += k_hex[byte >> 4];
            out += k_hex[byte & 0xF];
        }
    }
    return out;
}

// RFC 4648 base64url without padding: 127 bytes become 170 characters of [A-Za-z0-9_-].
std::string base64url(std::string_view name) {
    constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    std::string out;
    std::uint32_t bits = 0;
    int pending = 0;
    for (const char c : name) {
        bits = (bits << 8) | static_cast<unsigned char>(c);
        pending += 8;
        while (pending >= 6) {
            pending -= 6;
            out += alphabet[(bits >> pending) & 0x3F];
        }
    }
    if (pending > 0) {
        out += alphabet[(bits << (6 - pending)) & 0x3F];
    }
    return out;
}

// FERRY_TDT_SHARED lists `base` (or is "*"). Entries are compared as names, so an entry
// "TF_RECEIVE_x" selects the process channel x as well.
bool listed(std::string_view list, ChannelKind kind, std::string_view base) {
    if (list == "*") {
        return true;
    }
    while (true) {
        const std::size_t comma = list.find(',');
        std::string_view entry = list.substr(0, comma);
        if (kind == ChannelKind::process && entry.starts_with(k_receive_prefix)) {
            entry.remove_prefix(k_receive_prefix.size());
        }
        if (entry == base) {
            return true;
        }
        if (comma == std::string_view::npos) {
            return false;
        }
        list.remove_prefix(comma + 1);
    }
}

// FERRY_TDT_SHARED_MESSAGE_BYTES, or nullopt when it is set but not a number in range.
std::optional<std::size_t> message_bytes_setting() {
    const char* text = std::getenv(k_shared_bytes_variable);
    if (text == nullptr || *text == '\0') {
        return k_default_shared_message_bytes;
    }
    const std::string_view s(text);
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (error != std::errc() || end != s.data() + s.size() || value == 0 ||
        value > ipc::k_max_message_bytes) {
        return std::nullopt;
    }
    return value;
}

using Key = std::tuple<std::uint32_t, ChannelKind, std::string>;

// This process's participations, one per (device, kind, name); leaked like the Shim, for handles
// destroyed during exit.
struct Table {
    std::mutex mutex;
    std::map<Key, std::shared_ptr<SharedChannel>> channels;

    static Table& get() {
        static Table* const table = new Table;
        return *table;
    }
};

// Creates the segment, or opens it when a live process has it (create answers failure, "in
// use"): of several creating at once, one creates and the others open. An open that finds the
// segment gone or going (invalid_file: its last process left between the two steps, removed it
// while this one attached, or died creating it) starts over, a few times; after that the open's
// error stands — a layout mismatch, too, ends there.
ipc::Expected<SharedChannel::Queue> create_or_open(const std::string& name, std::size_t capacity,
                                                   std::size_t bytes) {
    for (int attempt = 0;; ++attempt) {
        auto made = SharedChannel::Queue::create(name, capacity, bytes);
        if (made || made.status() != Status::failure) {
            return made;
        }
        auto opened = SharedChannel::Queue::open(name, capacity, bytes);
        if (opened || opened.status() != Status::invalid_file || attempt == 3) {
            return opened;
        }
    }
}

SharedOpened failed_open(Status s, std::string why) {
    return SharedOpened{nullptr, s, std::move(why)};
}

} // namespace

SharedChannel::SharedChannel(Queue q, std::size_t capacity)
    : queue(std::move(q)),
      spares(std::make_shared<ChannelSpares>(
          capacity + 2 < k_max_channel_capacity ? capacity + 2 : k_max_channel_capacity)) {}

std::string segment_name(std::uint32_t device, ChannelKind kind, std::string_view base) {
    const bool queue = kind == ChannelKind::queue;
    const std::string prefix = "tdt." + std::to_string(device) + '.';
    std::string name = prefix + (queue ? "q." : "p.") + escaped(base);
    if (name.size() <= ipc::k_max_segment_name) {
        return name;
    }
    return prefix + (queue ? "Q." : "P.") + base64url(base);
}

bool shared_requested(ChannelKind kind, std::string_view base) {
    const char* list = std::getenv(k_shared_variable);
    return list != nullptr && *list != '\0' && listed(list, kind, base);
}

SharedOpened open_shared(std::uint32_t device, ChannelKind kind, std::string_view base,
                         std::size_t capacity) {
    const std::optional<std::size_t> bytes = message_bytes_setting();
    if (!bytes) {
        return failed_open(Status::invalid_param,
                           std::string(k_shared_bytes_variable) + " is not a number in [1, " +
                               std::to_string(ipc::k_max_message_bytes) + "]");
    }
    Table& table = Table::get();
    const std::lock_guard lock(table.mutex);
    Key key{device, kind, std::string(base)};
    if (const auto found = table.channels.find(key); found != table.channels.end()) {
        SharedChannel& open = *found->second;
        if (open.queue.capacity() != capacity || open.queue.max_message_bytes() != *bytes) {
            return failed_open(Status::invalid_param,
                               "shared channel already open in this process with capacity " +
                                   std::to_string(open.queue.capacity()) + " and messages up to " +
                                   std::to_string(open.queue.max_message_bytes()) + " bytes");
        }
        ++open.handles;
        return SharedOpened{found->second, Status::ok, {}};
    }
    const std::string name = segment_name(device, kind, base);
    auto queue = create_or_open(name, capacity, *bytes);
    if (!queue) {
        return failed_open(queue.status(), "shared channel " + name + ": " + queue.error().message);
    }
    auto channel = std::make_shared<SharedChannel>(std::move(*queue), capacity);
    channel->device = device;
    channel->kind = kind;
    channel->base = std::get<2>(key);
    channel->handles = 1;
    table.channels.emplace(std::move(key), channel);
    return SharedOpened{std::move(channel), Status::ok, {}};
}

bool close_shared(SharedChannel& channel) noexcept {
    Table& table = Table::get();
    const std::lock_guard lock(table.mutex);
    if (--channel.handles != 0) {
        return false;
    }
    // Found by address: building a key would copy the name, which may throw.
    for (auto it = table.channels.begin(); it != table.channels.end(); ++it) {
        if (it->second.get() == &channel) {
            table.channels.erase(it);
            break;
        }
    }
    return true;
}

Status send_shared(SharedChannel& channel, const Dataset& data, Timeout timeout,
                   std::size_t& message_bytes) noexcept {
    const Result<std::size_t> size = serialized_size(data);
    if (!size) {
        return size.status();
    }
    message_bytes = *size;
    if (*size > channel.queue.max_message_bytes()) {
        return Status::invalid_param; // checked before claiming a cell: nothing is sent
    }
    return channel.queue.send(data, timeout); // serializes straight into the loaned cell
}

Status receive_shared(SharedChannel& channel, MessageBuffer& out, Timeout timeout) {
    MessageBuffer buffer;
    (void)channel.spares->pool.receive(buffer, no_wait); // a spare one, if any
    buffer.reserve(channel.queue.max_message_bytes());   // may throw: nothing was dequeued yet
    auto view = channel.queue.receive_view(timeout);
    if (!view) {
        if (buffer.capacity() != 0) {
            (void)channel.spares->pool.try_send(std::move(buffer));
        }
        return view.status();
    }
    const auto bytes = view->bytes();
    buffer.assign(bytes.begin(), bytes.end()); // within the reserved capacity: no allocation
    view->release();
    out = std::move(buffer);
    return Status::ok;
}

} // namespace ferry::acl
