// libFuzzer target: random sequences of acltdt* calls on live and dead handles
// (docs/cann-contract/quality.md#fuzzing). Each input is a little program: every byte pair picks an
// operation and its argument — create/destroy items, datasets and channels (queue and legacy), add,
// send, receive, query, clean, stop, accessors — on handles that may be live, destroyed (stale), of
// the wrong kind, or wild. The property: no crash, no sanitizer report, no hang, and a few
// invariants below.
//
// Calls never block forever: queue channels get timeouts 0 or 1 ms; a legacy channel (which only
// takes -1) gets -1 only when a model of its queue says the call cannot block (or it is stopped),
// and otherwise a wrong timeout, which must be refused at once.

#include "acl/acl_tdt.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

constexpr std::size_t k_slots = 4;
constexpr int k_legacy_depth = 128; // ferry::k_process_channel_capacity
std::array<std::byte, 4096> payload{};

struct Legacy { // the model of one legacy channel name
    int handles = 0;
    int queued = 0;
    bool stopped = false;
};

struct Channel {
    acltdtChannelHandle* handle = nullptr;
    bool live = false;
    bool legacy = false;
    bool receive_side = false;
    int base = 0; // legacy: which model
};

struct World {
    std::array<acltdtDataItem*, k_slots * 2> items{};
    std::array<bool, k_slots * 2> item_owned{}; // created here (not a received view), still live
    std::array<acltdtDataset*, k_slots> datasets{};
    std::array<bool, k_slots> dataset_live{};
    std::array<Channel, k_slots> channels{};
    std::array<Legacy, 2> legacy{};
    int wild = 0; // a pointer that never was a handle

    void create_item(std::uint8_t arg) {
        const std::size_t slot = arg % items.size();
        if (item_owned[slot]) {
            return;
        }
        static const std::int64_t dims[129] = {2, 3, 4};
        const auto kind = static_cast<acltdtTensorType>(static_cast<int>(arg >> 5) - 1);
        const std::size_t dim_num = (arg & 0x10) != 0 ? (arg & 1 ? 129 : 128) : (arg >> 2) & 3;
        const int64_t* d = (arg & 2) != 0 ? nullptr : dims;
        void* data = (arg & 8) != 0 ? nullptr : payload.data();
        items[slot] = acltdtCreateDataItem(kind, d, dim_num, ACL_FLOAT, data, (arg * 37u) % 4096);
        item_owned[slot] = items[slot] != nullptr;
    }
    void destroy_item(std::uint8_t arg) {
        const std::size_t slot = arg % items.size();
        acltdtDataItem* item = items[slot];
        const aclError e = acltdtDestroyDataItem(item);
        if (item_owned[slot] && e != ACL_SUCCESS) {
            std::abort(); // a live item the caller created must be destroyable
        }
        // The pointer stays (a stale handle from now on), in every slot that holds it: a slot
        // filled by acltdtGetDataItem may hold the very pointer that was added.
        for (std::size_t i = 0; i < items.size(); ++i) {
            item_owned[i] = item_owned[i] && !(e == ACL_SUCCESS && items[i] == item);
        }
    }
    void dataset_op(std::uint8_t arg) {
        const std::size_t slot = arg % datasets.size();
        switch ((arg >> 2) % 4) {
        case 0:
            if (!dataset_live[slot]) {
                datasets[slot] = acltdtCreateDataset();
                dataset_live[slot] = datasets[slot] != nullptr;
            }
            break;
        case 1:
            if (acltdtDestroyDataset(datasets[slot]) == ACL_SUCCESS) {
                dataset_live[slot] = false;
            }
            break;
        case 2:
            (void)acltdtAddDataItem(datasets[slot], items[(arg >> 4) % items.size()]);
            break;
        default: { // keep a (possibly received) item pointer: views get exercised too
            const std::size_t into = (arg >> 4) % items.size();
            if (!item_owned[into]) {
                items[into] = acltdtGetDataItem(datasets[slot], (arg >> 6) % 3);
            }
            (void)acltdtGetDatasetSize(datasets[slot]);
            (void)acltdtGetDatasetName(datasets[slot]);
        }
        }
    }
    void accessors(std::uint8_t arg) {
        const acltdtDataItem* item = (arg & 1) != 0
                                         ? items[(arg >> 1) % items.size()]
                                         : reinterpret_cast<acltdtDataItem*>(pick_other(arg));
        std::int64_t dims[130];
        std::size_t n = 0, id = 0;
        (void)acltdtGetTensorTypeFromItem(item);
        (void)acltdtGetDataTypeFromItem(item);
        (void)acltdtGetDataSizeFromItem(item);
        const std::size_t dim_num = acltdtGetDimNumFromItem(item);
        if (dim_num > 128) {
            std::abort();
        }
        (void)acltdtGetDimsFromItem(item, (arg & 0x40) != 0 ? nullptr : dims, (arg >> 4) % 3 * 65);
        (void)acltdtGetSliceInfoFromItem(item, &n, (arg & 0x80) != 0 ? nullptr : &id);
        if (const auto* p = static_cast<const unsigned char*>(acltdtGetDataAddrFromItem(item))) {
            volatile unsigned char sink = 0;
            for (std::size_t i = 0; i < acltdtGetDataSizeFromItem(item); i += 512) {
                sink = sink + p[i]; // a received payload must be readable in full
            }
        }
    }
    // A pointer of the wrong kind, or one that never was a handle.
    void* pick_other(std::uint8_t arg) {
        switch ((arg >> 1) % 3) {
        case 0:
            return datasets[(arg >> 3) % datasets.size()];
        case 1:
            return channels[(arg >> 3) % channels.size()].handle;
        default:
            return &wild;
        }
    }

    void create_channel(std::uint8_t arg) {
        Channel& c = channels[arg % channels.size()];
        if (c.live) {
            return;
        }
        if ((arg & 4) != 0) { // legacy: "a", "TF_RECEIVE_a", "b", "TF_RECEIVE_b"
            c.base = (arg >> 3) & 1;
            c.receive_side = ((arg >> 4) & 1) != 0;
            const std::string name =
                std::string(c.receive_side ? "TF_RECEIVE_" : "") + (c.base ? "b" : "a");
            c.handle = acltdtCreateChannel(0, name.c_str());
            c.legacy = true;
            if (c.handle != nullptr) {
                ++legacy[c.base].handles;
            }
        } else {
            const std::size_t capacities[] = {0, 1, 2, 3, 8192, 8193};
            c.handle = acltdtCreateChannelWithCapacity((arg & 0x80) != 0 ? 1000 : 0, "q",
                                                       capacities[(arg >> 3) % 6]);
            c.legacy = false;
        }
        c.live = c.handle != nullptr;
    }
    void destroy_channel(Channel& c) {
        const aclError e = acltdtDestroyChannel(c.handle);
        if (c.live != (e == ACL_SUCCESS)) {
            std::abort(); // live handles destroy once; stale ones are refused
        }
        if (c.live && c.legacy && --legacy[c.base].handles == 0) {
            legacy[c.base] = Legacy{}; // the last handle: the name starts afresh
        }
        c.live = false;
    }
    void channel_op(std::uint8_t op, std::uint8_t arg) {
        Channel& c = channels[arg % channels.size()];
        acltdtDataset* d = datasets[(arg >> 2) % datasets.size()];
        switch (op % 5) {
        case 0:
            destroy_channel(c);
            break;
        case 1:
            send(c, d, arg);
            break;
        case 2:
            receive(c, d, arg);
            break;
        case 3: {
            std::size_t size = 0;
            if (acltdtQueryChannelSize(c.handle, &size) == ACL_SUCCESS && size > 8192) {
                std::abort();
            }
            (void)acltdtCleanChannel(c.handle);
            break;
        }
        default:
            if (acltdtStopChannel(c.handle) == ACL_SUCCESS && c.live && c.legacy) {
                legacy[c.base].stopped = true;
            }
        }
    }
    void send(Channel& c, acltdtDataset* d, std::uint8_t arg) {
        if (!c.live || !c.legacy) {
            (void)acltdtSendTensor(c.handle, d, (arg & 0x40) != 0 ? 1 : 0);
            return;
        }
        Legacy& m = legacy[c.base];
        const bool may_block = !m.stopped && m.queued >= k_legacy_depth;
        const aclError e = acltdtSendTensor(c.handle, d, may_block ? 0 : -1);
        if (may_block && e != ACL_ERROR_INVALID_PARAM) {
            std::abort(); // a legacy channel only takes -1
        }
        m.queued += e == ACL_SUCCESS ? 1 : 0;
    }
    void receive(Channel& c, acltdtDataset* d, std::uint8_t arg) {
        if (!c.live || !c.legacy) {
            (void)acltdtReceiveTensor(c.handle, d, (arg & 0x40) != 0 ? 1 : 0);
            return;
        }
        Legacy& m = legacy[c.base];
        const bool may_block = !m.stopped && m.queued == 0;
        const aclError e = acltdtReceiveTensor(c.handle, d, may_block ? 5 : -1);
        if (may_block && e != ACL_ERROR_INVALID_PARAM) {
            std::abort();
        }
        m.queued -= e == ACL_SUCCESS ? 1 : 0;
    }

    ~World() { // leave nothing behind for the next input (LeakSanitizer runs at exit)
        for (Channel& c : channels) {
            if (c.live) {
                destroy_channel(c);
            }
        }
        for (std::size_t i = 0; i < datasets.size(); ++i) {
            if (dataset_live[i]) {
                (void)acltdtDestroyDataset(datasets[i]);
            }
        }
        for (std::size_t i = 0; i < items.size(); ++i) {
            if (item_owned[i]) {
                (void)acltdtDestroyDataItem(items[i]);
            }
        }
    }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    World world;
    for (std::size_t i = 0; i + 1 < size; i += 2) {
        const std::uint8_t op = data[i];
        const std::uint8_t arg = data[i + 1];
        switch (op % 6) {
        case 0:
            world.create_item(arg);
            break;
        case 1:
            world.destroy_item(arg);
            break;
        case 2:
            world.dataset_op(arg);
            break;
        case 3:
            world.accessors(arg);
            break;
        case 4:
            world.create_channel(arg);
            break;
        default:
            world.channel_op(op / 6, arg);
            break;
        }
    }
    return 0;
}
