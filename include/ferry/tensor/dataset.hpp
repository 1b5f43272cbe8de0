#pragma once
// ferry::Dataset — the ordered items one send carries (acltdtDataset,
// docs/cann-contract/tdt.md#datasets): items, a name, the memory kind all its payloads live in, and
// whether a receive filled it.
//
// Items are stored by value. Adding a borrowing item copies its descriptor (dims, pointer), not
// its payload; adding an owning item by move is O(1). A dataset filled by a receive (or a parse)
// may keep the whole message buffer and let its items borrow from it: that is how a receive gets
// its payloads with no copy (at most one payload copy from send to receive,
// docs/cann-contract/tdt.md#send).

#include <cstddef>
#include <ferry/core/contract.hpp>
#include <ferry/core/memory_kind.hpp>
#include <ferry/core/status.hpp>
#include <ferry/tensor/data_item.hpp>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry {

class Dataset;
namespace detail {
struct DatasetAccess; // the wire format's in-place refill, see wire_format.hpp
}

class Dataset {
public:
    using value_type = DataItem;
    using iterator = std::vector<DataItem>::iterator;
    using const_iterator = std::vector<DataItem>::const_iterator;
    using size_type = std::size_t;

    Dataset() noexcept = default;
    Dataset(const Dataset& other)
        : items_(other.items_), name_(other.name_), memory_kind_(other.memory_kind_),
          filled_by_receive_(other.filled_by_receive_), message_(other.message_) {
        // Items that borrowed from other's message buffer must borrow from our copy of it.
        for (DataItem& item : items_) {
            detail::ItemAccess::rebase(item, other.message_.data(), other.message_.size(),
                                       message_.data());
        }
    }
    // O(1): the item vector and the message buffer change hands with their heap storage, so
    // every item's payload pointer stays valid.
    Dataset(Dataset&&) noexcept = default;
    Dataset& operator=(const Dataset& other) {
        if (this != &other) {
            Dataset copy(other);
            *this = std::move(copy);
        }
        return *this;
    }
    Dataset& operator=(Dataset&&) noexcept = default;
    ~Dataset() = default;

    // acltdtAddDataItem's rules after its null checks, in CANN's order
    // (docs/cann-contract/tdt.md#datasets): a dataset filled by a receive takes no items
    // (feature_unsupported); a failing pointer query is passed through; the first item with data
    // fixes the memory kind, and an item in the other kind is invalid_param. Items without data are
    // always accepted. The same item may be added twice. On failure nothing changes (and an rvalue
    // item is not moved from).
    [[nodiscard]] Status add(DataItem&& item) noexcept { return add_impl(std::move(item)); }
    [[nodiscard]] Status add(const DataItem& item) noexcept {
        try {
            return add_impl(DataItem(item));
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    [[nodiscard]] size_type size() const noexcept { return items_.size(); }
    [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
    [[nodiscard]] const DataItem& operator[](size_type i) const noexcept {
        FERRY_EXPECTS(i < items_.size());
        return items_[i];
    }
    [[nodiscard]] DataItem& operator[](size_type i) noexcept {
        FERRY_EXPECTS(i < items_.size());
        return items_[i];
    }
    // acltdtGetDataItem: nullptr when the index is out of range.
    [[nodiscard]] const DataItem* at(size_type i) const noexcept {
        return i < items_.size() ? &items_[i] : nullptr;
    }
    [[nodiscard]] DataItem* at(size_type i) noexcept {
        return i < items_.size() ? &items_[i] : nullptr;
    }
    [[nodiscard]] iterator begin() noexcept { return items_.begin(); }
    [[nodiscard]] iterator end() noexcept { return items_.end(); }
    [[nodiscard]] const_iterator begin() const noexcept { return items_.begin(); }
    [[nodiscard]] const_iterator end() const noexcept { return items_.end(); }

    // "" by default (acltdtGetDatasetName never returns NULL for a live dataset). A receive sets
    // it from the message's name item; a sender may set it to have one sent.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] Status set_name(std::string_view name) noexcept {
        try {
            name_.assign(name);
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
        return Status::ok;
    }

    [[nodiscard]] MemoryKind memory_kind() const noexcept { return memory_kind_; }
    // CANN's freeSelf: set by a receive/parse, after which add() is feature_unsupported.
    [[nodiscard]] bool filled_by_receive() const noexcept { return filled_by_receive_; }
    // Whether a receive may (re)fill this dataset: CANN (docs/cann-contract/tdt.md#receive) refuses
    // one holding items the user added (invalid_param); ferry checks this before dequeuing.
    [[nodiscard]] bool accepts_receive() const noexcept {
        return items_.empty() || filled_by_receive_;
    }

    // Back to a fresh dataset: no items, no name, unknown memory kind, not filled by a receive.
    void clear() noexcept {
        items_.clear();
        name_.clear();
        memory_kind_ = MemoryKind::unknown;
        filled_by_receive_ = false;
        message_.clear();
    }

    // Equal content: the same name and equal items in the same order.
    friend bool operator==(const Dataset& a, const Dataset& b) noexcept {
        return a.name_ == b.name_ && a.items_ == b.items_;
    }

private:
    friend struct detail::DatasetAccess;

    Status add_impl(DataItem&& item) noexcept {
        if (filled_by_receive_) {
            return Status::feature_unsupported;
        }
        const PointerLocation where = locate(item.data());
        if (failed(where.status)) {
            return where.status;
        }
        const bool fixes_kind = where.kind != MemoryKind::unknown;
        if (fixes_kind && memory_kind_ != MemoryKind::unknown && where.kind != memory_kind_) {
            return Status::invalid_param; // host and device payloads in one dataset
        }
        try {
            items_.push_back(std::move(item));
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc; // push_back's strong guarantee: item was not moved from
        }
        if (fixes_kind) {
            memory_kind_ = where.kind;
        }
        return Status::ok;
    }

    std::vector<DataItem> items_;
    std::string name_;
    MemoryKind memory_kind_ = MemoryKind::unknown;
    bool filled_by_receive_ = false;
    std::vector<std::byte> message_; // a received message the items may borrow from
};

namespace detail {
struct DatasetAccess {
    static std::vector<DataItem>& items(Dataset& d) noexcept { return d.items_; }
    static std::string& name(Dataset& d) noexcept { return d.name_; }
    static std::vector<std::byte>& message(Dataset& d) noexcept { return d.message_; }
    static void mark_received(Dataset& d, MemoryKind kind) noexcept {
        d.filled_by_receive_ = true;
        d.memory_kind_ = kind;
    }
};
} // namespace detail

} // namespace ferry
