#pragma once
// ferry::KernelTable — programs and the kernels registered on them.
//
// docs/cann-contract/runtime.md#programs-and-kernels: a program is a binary blob with a magic (ELF
// or PLAIN variants; any other magic is invalid), reference counted; kernels are registered on a
// program by stub pointer, name and (optionally) tiling key; a duplicate stub is
// RT_ERROR_KERNEL_DUPLICATE (507028); lookups go by stub, by (stub, tiling key) and by name;
// unregistering a program removes all of its kernels. CANN keeps a sorted stub array searched by
// binary search; ferry uses an ordered map for the same O(log n) lookups. A looked-up Kernel holds
// its Program alive (CANN's GetProgram/PutProgram pair), so a launch in flight survives the
// program's unregistration.
//
// The binary's magic decides the program's kind, as CANN's ProgramRegister does: the ELF magics
// (RT_DEV_BINARY_MAGIC_ELF*) make an ELF program, the PLAIN magics a plain one; the kind is kept
// (Program::kind). Kernels are registered on ELF programs only (CANN's KernelRegister: a plain
// program → invalid value), with the extended kernel info (kernelInfoExt, the kernel's name inside
// the ELF) kept with the kernel.
//
// Differences from CANN (docs/runtime.md#differences-from-cann): host kernels have no ELF to
// parse, so the image is not parsed (its own 0x7F 'E' 'L' 'F' header is neither required nor
// read) and the kernel name is given explicitly instead of read from the ELF; CANN's RemoveAll
// quirk (erasing the name map by Kernel::Name_ instead of StubName_) is not reproduced.

#include <cstdint>
#include <cstring>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/runtime/launch.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ferry {

// rtDevBinary_t.
struct DevBinary {
    std::uint32_t magic = 0;
    std::uint32_t version = 0;
    const void* data = nullptr;
    std::uint64_t length = 0;
};

// Binary magics (CANN's RT_DEV_BINARY_MAGIC_*).
inline constexpr std::uint32_t k_magic_elf = 0x43554245;
inline constexpr std::uint32_t k_magic_elf_aicpu = 0x41415243;
inline constexpr std::uint32_t k_magic_elf_aivec = 0x41415246;
inline constexpr std::uint32_t k_magic_elf_aicube = 0x41494343;
inline constexpr std::uint32_t k_magic_plain = 0xabceed50;
inline constexpr std::uint32_t k_magic_plain_aicpu = 0xabceed51;
inline constexpr std::uint32_t k_magic_plain_aivec = 0xabceed52;

// CANN's program classes: ElfProgram and PlainProgram.
enum class ProgramKind : std::uint8_t { elf, plain };

// The kind a binary magic makes (CANN's MallocProgramAndReg); nullopt for any other magic.
[[nodiscard]] constexpr std::optional<ProgramKind> program_kind(std::uint32_t magic) noexcept {
    switch (magic) {
    case k_magic_elf:
    case k_magic_elf_aicpu:
    case k_magic_elf_aivec:
    case k_magic_elf_aicube:
        return ProgramKind::elf;
    case k_magic_plain:
    case k_magic_plain_aicpu:
    case k_magic_plain_aivec:
        return ProgramKind::plain;
    default:
        return std::nullopt;
    }
}

[[nodiscard]] constexpr bool is_known_magic(std::uint32_t magic) noexcept {
    return program_kind(magic).has_value();
}

// The most programs registered at once (CANN: ObjAllocator slots; full → PROGRAM_USE_OUT).
inline constexpr std::size_t k_max_programs = 65536;

class Program {
public:
    // `binary.magic` must be a known magic (KernelTable::register_program checks it).
    Program(std::uint64_t id, const DevBinary& binary)
        : id_(id), magic_(binary.magic), version_(binary.version),
          kind_(program_kind(binary.magic).value_or(ProgramKind::plain)),
          image_(static_cast<const std::byte*>(binary.data),
                 static_cast<const std::byte*>(binary.data) + binary.length) {}
    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    [[nodiscard]] std::uint32_t magic() const noexcept { return magic_; }
    [[nodiscard]] std::uint32_t version() const noexcept { return version_; }
    [[nodiscard]] ProgramKind kind() const noexcept { return kind_; }
    [[nodiscard]] const std::vector<std::byte>& image() const noexcept { return image_; }

private:
    std::uint64_t id_;
    std::uint32_t magic_;
    std::uint32_t version_;
    ProgramKind kind_;
    std::vector<std::byte> image_; // a private copy: the caller may free its buffer
};

// What is registered: the stub is the host-side identity of the kernel (any unique address).
struct KernelSpec {
    const void* stub = nullptr;
    std::string name;
    std::optional<std::uint64_t> tiling_key;
    HostKernel body;
};

struct Kernel {
    const void* stub = nullptr;
    std::string name;
    std::optional<std::uint64_t> tiling_key;
    HostKernel body;
    std::shared_ptr<const Program> program; // keeps the program alive while the kernel is used
    std::string kernel_info_ext;            // KernelRegister's kernelInfoExt ("" when none)
};

class KernelTable {
public:
    // Registers a copy of the binary. Unknown magic, null data or zero length → rt_param_invalid;
    // a full table → rt_program_use_out.
    [[nodiscard]] Result<const Program*> register_program(const DevBinary& binary) {
        if (!is_known_magic(binary.magic) || binary.data == nullptr || binary.length == 0) {
            return Status::rt_param_invalid;
        }
        std::lock_guard lock(mutex_);
        if (programs_.size() >= k_max_programs) {
            return Status::rt_program_use_out;
        }
        auto program = std::make_shared<const Program>(++next_program_id_, binary);
        const Program* handle = program.get();
        programs_.emplace(handle, std::move(program));
        return handle;
    }

    // Removes the program and every kernel registered on it. A program not in the table (never
    // registered or already removed) → rt_param_invalid.
    [[nodiscard]] Status unregister_program(const Program* program) {
        std::lock_guard lock(mutex_);
        if (programs_.erase(program) == 0) {
            return Status::rt_param_invalid;
        }
        std::erase_if(kernels_, [&](const auto& entry) {
            if (entry.second->program.get() != program) {
                return false;
            }
            names_.erase(entry.second->name);
            return true;
        });
        return Status::ok;
    }

    // Registers a kernel on a live ELF program, keeping `kernel_info_ext` (CANN's kernelInfoExt:
    // the kernel's name inside the ELF; empty means "the first kernel") with it. A null stub,
    // empty name or empty body, an unknown program or a plain one → rt_param_invalid; a stub
    // (with the same tiling key) or a name already registered for another stub →
    // rt_kernel_duplicate. Failures change nothing.
    [[nodiscard]] Status register_kernel(const Program* program, KernelSpec spec,
                                         std::string kernel_info_ext = {}) {
        if (spec.stub == nullptr || spec.name.empty() || !spec.body) {
            return Status::rt_param_invalid;
        }
        std::lock_guard lock(mutex_);
        const auto owner = programs_.find(program);
        if (owner == programs_.end() || owner->second->kind() != ProgramKind::elf) {
            return Status::rt_param_invalid;
        }
        const Key key{spec.stub, spec.tiling_key};
        const auto named = names_.find(spec.name);
        if (kernels_.contains(key) || (named != names_.end() && named->second != spec.stub)) {
            return Status::rt_kernel_duplicate;
        }
        names_.emplace(spec.name, spec.stub);
        kernels_.emplace(key, std::make_shared<const Kernel>(
                                  Kernel{spec.stub, std::move(spec.name), spec.tiling_key,
                                         std::move(spec.body), owner->second,
                                         std::move(kernel_info_ext)}));
        return Status::ok;
    }

    // By stub: the kernel registered without a tiling key, else the one with the lowest key.
    [[nodiscard]] Result<std::shared_ptr<const Kernel>> lookup(const void* stub) const {
        std::lock_guard lock(mutex_);
        const auto it = kernels_.lower_bound(Key{stub, std::nullopt});
        if (it == kernels_.end() || it->first.stub != stub) {
            return Status::rt_kernel_lookup;
        }
        return it->second;
    }

    [[nodiscard]] Result<std::shared_ptr<const Kernel>> lookup(const void* stub,
                                                               std::uint64_t tiling_key) const {
        std::lock_guard lock(mutex_);
        const auto it = kernels_.find(Key{stub, tiling_key});
        if (it == kernels_.end()) {
            return Status::rt_kernel_lookup;
        }
        return it->second;
    }

    // The stub registered under `name` (CANN's StubFuncLookup / InvLookup).
    [[nodiscard]] Result<const void*> stub_of(const std::string& name) const {
        std::lock_guard lock(mutex_);
        const auto it = names_.find(name);
        if (it == names_.end()) {
            return Status::rt_kernel_lookup;
        }
        return it->second;
    }

    [[nodiscard]] Result<std::shared_ptr<const Kernel>> lookup(const std::string& name) const {
        const auto stub = stub_of(name);
        return stub ? lookup(*stub) : Result<std::shared_ptr<const Kernel>>(stub.status());
    }

    [[nodiscard]] std::size_t program_count() const {
        std::lock_guard lock(mutex_);
        return programs_.size();
    }
    [[nodiscard]] std::size_t kernel_count() const {
        std::lock_guard lock(mutex_);
        return kernels_.size();
    }

    // Drops everything (runtime teardown).
    void clear() {
        std::lock_guard lock(mutex_);
        kernels_.clear();
        names_.clear();
        programs_.clear();
    }

private:
    struct Key {
        const void* stub;
        std::optional<std::uint64_t> tiling_key; // nullopt orders first
        friend bool operator<(const Key& a, const Key& b) noexcept {
            if (a.stub != b.stub) {
                return std::less<const void*>{}(a.stub, b.stub);
            }
            return a.tiling_key < b.tiling_key;
        }
    };

    mutable std::mutex mutex_;
    std::uint64_t next_program_id_ = 0;
    std::map<const Program*, std::shared_ptr<const Program>> programs_;
    std::map<Key, std::shared_ptr<const Kernel>> kernels_;
    std::map<std::string, const void*> names_;
};

} // namespace ferry
