// ferry::ipc::Segment across processes: tests/ipc/segment_helper.cpp is the other process.
#include "support.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ferry/ipc/segment.hpp>
#include <optional>
#include <string>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>

using Catch::Contains;
using ferry::Status;
using ferry::ipc::Segment;
using ipc_test::Child;
using ipc_test::k_tag;
using ipc_test::unique_name;
namespace detail = ferry::ipc::detail;

namespace {

bool exists(const std::string& name) {
    return ::access(ipc_test::shm_path(name).c_str(), F_OK) == 0;
}

// Overwrites bytes of a segment's file, bypassing Segment: how tests forge a header.
void poke(const std::string& name, std::size_t offset, const void* data, std::size_t bytes) {
    const int fd = ::open(ipc_test::shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    REQUIRE(::pwrite(fd, data, bytes, static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes));
    ::close(fd);
}

// A segment file written by hand: `header` at offset 0, total_bytes long, with `mode`.
void forge(const std::string& name, mode_t mode, const detail::SegmentHeader& header) {
    const int fd =
        ::open(ipc_test::shm_path(name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    REQUIRE(fd >= 0);
    REQUIRE(::fchmod(fd, mode) == 0);
    REQUIRE(::ftruncate(fd, static_cast<off_t>(header.total_bytes)) == 0);
    REQUIRE(::pwrite(fd, &header, sizeof header, 0) == static_cast<ssize_t>(sizeof header));
    ::close(fd);
}

detail::SegmentHeader header_for(std::int32_t creator_pid, std::uint64_t start_time,
                                 std::uint32_t ready) {
    auto h = detail::make_header(k_tag, 4096, {creator_pid, start_time}, *detail::read_boot_id());
    h.ready = ready;
    return h;
}

// Registered participants (live or not) of the segment named `name`.
std::size_t participants(const std::string& name) {
    const int fd = ::open(ipc_test::shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(fd >= 0);
    void* p =
        ::mmap(nullptr, sizeof(detail::SegmentHeader), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ::close(fd);
    REQUIRE(p != MAP_FAILED);
    auto& h = *static_cast<detail::SegmentHeader*>(p);
    const auto n = static_cast<std::size_t>(
        std::count_if(std::begin(h.participants), std::end(h.participants),
                      [](auto& slot) { return detail::read_slot(slot).pid != 0; }));
    ::munmap(p, sizeof(detail::SegmentHeader));
    return n;
}

// Removes whatever a failed test left under `name`, so one failure does not leave /dev/shm
// littered; the tests' own checks run before it (they are what would see a leftover).
struct Scrub {
    std::string name;
    ~Scrub() { ::unlink(ipc_test::shm_path(name).c_str()); }
};

// Nothing named `name`, or beginning with it, is left in /dev/shm.
void require_no_leftovers(const std::string& name) {
    CHECK(ipc_test::leftovers(name).empty());
}

} // namespace

TEST_CASE("a segment created here is written by another process and seen here", "[ipc]") {
    const auto name = unique_name("round-trip");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 8192, k_tag);
    REQUIRE(segment);
    auto bytes = segment->payload();
    REQUIRE(bytes.size() == 8192);
    CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }));
    CHECK(segment->creator_pid() == ::getpid());

    Child writer{"open-write", name, "171"};
    REQUIRE(writer.wait_exit() == 0);
    CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{171}; }));
    CHECK(participants(name) == 1); // the writer deregistered on close

    REQUIRE(segment->close());
    CHECK(segment->payload().empty());
    CHECK(participants(name) == 0);
    REQUIRE(Segment::unlink(name));
    const auto gone = Segment::open(name, k_tag);
    REQUIRE(gone.status() == Status::not_found);
    CHECK_THAT(gone.error().message, Contains("no segment"));
    require_no_leftovers(name);
}

TEST_CASE("create of a name in use names the live process using it", "[ipc]") {
    const auto name = unique_name("in-use");
    const Scrub scrub{name};
    Child creator{"create-hold", name, "4096"};
    REQUIRE(creator.read_line() == "ready");
    Child opener{"open-hold", name};
    REQUIRE(opener.read_line() == "ready");

    auto taken = Segment::create(name, 4096, k_tag);
    REQUIRE(taken.status() == Status::failure);
    CHECK_THAT(taken.error().message, Contains("in use by pid "));

    // With the creator gone the opener still counts: participants, not just the creator.
    creator.release();
    REQUIRE(creator.wait_exit() == 0);
    taken = Segment::create(name, 4096, k_tag);
    REQUIRE(taken.status() == Status::failure);
    CHECK_THAT(taken.error().message, Contains("in use by pid " + std::to_string(opener.pid())));

    opener.release();
    REQUIRE(opener.wait_exit() == 0);
    auto again = Segment::create(name, 4096, k_tag); // everyone closed: a restart reclaims it
    REQUIRE(again);
    REQUIRE(again->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("a segment whose creator was killed is reclaimed by the next create", "[ipc]") {
    const auto name = unique_name("killed");
    const Scrub scrub{name};
    Child creator{"create-hold", name, "4096"};
    REQUIRE(creator.read_line() == "ready");
    Child writer{"open-write", name, "7"};
    REQUIRE(writer.wait_exit() == 0);
    creator.kill(); // SIGKILL: no close, its participant slot stays taken

    auto restarted = Segment::create(name, 4096, k_tag);
    REQUIRE(restarted);
    CHECK(restarted->creator_pid() == ::getpid());
    const auto bytes = restarted->payload(); // a new segment, not the dead one's
    CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }));
    REQUIRE(restarted->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("a participant that is a zombie counts as dead", "[ipc]") {
    const auto name = unique_name("zombie");
    const Scrub scrub{name};
    Child creator{"create-hold", name, "4096"};
    REQUIRE(creator.read_line() == "ready");
    creator.kill_leaving_zombie(); // its /proc/<pid>/stat remains, with state Z
    auto restarted = Segment::create(name, 4096, k_tag);
    REQUIRE(restarted);
    REQUIRE(restarted->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("lost_participant names a participant that died, not one that closed", "[ipc]") {
    const auto name = unique_name("lost");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    Child closer{"open-write", name, "1"}; // opens and closes normally
    REQUIRE(closer.wait_exit() == 0);
    Child holder{"open-hold", name};
    REQUIRE(holder.read_line() == "ready");
    CHECK_FALSE(segment->lost_participant()); // alive, or closed
    holder.kill_leaving_zombie();
    CHECK(segment->lost_participant() == holder.pid());
    REQUIRE(segment->close());
    CHECK_FALSE(segment->lost_participant()); // closed: nothing to watch
    REQUIRE(Segment::unlink(name));
}

TEST_CASE("close_and_remove_if_last removes the name only when no live participant is left",
          "[ipc]") {
    const auto name = unique_name("remove-last");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    Child holder{"open-hold", name};
    REQUIRE(holder.read_line() == "ready");
    auto second = Segment::open(name, k_tag);
    REQUIRE(second);
    REQUIRE(segment->close_and_remove_if_last());
    CHECK_FALSE(segment->is_open());
    CHECK(exists(name)); // `second` and the holder are live
    holder.kill_leaving_zombie();
    REQUIRE(second->close_and_remove_if_last()); // the dead holder does not count
    CHECK_FALSE(exists(name));
    require_no_leftovers(name);
}

TEST_CASE("a file whose creator never wrote its header is reclaimed after the wait", "[ipc]") {
    const auto name = unique_name("headerless");
    const Scrub scrub{name};
    const int fd =
        ::open(ipc_test::shm_path(name).c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    REQUIRE(fd >= 0);
    ::close(fd);
    REQUIRE(Segment::open(name, k_tag, std::chrono::milliseconds(50)).status() ==
            Status::timed_out);
    auto restarted = Segment::create(name, 4096, k_tag, std::chrono::milliseconds(50));
    REQUIRE(restarted);
    REQUIRE(restarted->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("a segment from another boot is refused by open and reclaimed by create", "[ipc]") {
    const auto name = unique_name("other-boot");
    const Scrub scrub{name};
    auto old = Segment::create(name, 4096, k_tag);
    REQUIRE(old);
    const char other_boot[] = "00000000-0000-0000-0000-000000000000";
    poke(name, offsetof(detail::SegmentHeader, boot_id), other_boot, detail::k_boot_id_size);

    const auto opened = Segment::open(name, k_tag);
    REQUIRE(opened.status() == Status::invalid_file);
    CHECK_THAT(opened.error().message, Contains("earlier boot"));
    // This process is still registered in it, but registrations of another boot are all dead.
    auto fresh = Segment::create(name, 4096, k_tag);
    REQUIRE(fresh);
    REQUIRE(old->close());
    REQUIRE(fresh->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("a layout or header format from another build is refused", "[ipc]") {
    const auto name = unique_name("layout");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);

    const auto newer = ferry::ipc::layout_tag_of<std::uint64_t>("ferry.test", 2);
    auto refused = Segment::open(name, newer);
    REQUIRE(refused.status() == Status::mismatch);
    CHECK_THAT(refused.error().message, Contains("'ferry.test' v1") && Contains("'ferry.test' v2"));

    const auto resized = ferry::ipc::layout_tag_of<std::uint32_t>("ferry.test", 1); // same version
    REQUIRE(Segment::open(name, resized).status() == Status::mismatch);
    REQUIRE(Segment::open(name, k_tag)); // the right tag still opens it

    const std::uint32_t future_format = 99;
    poke(name, offsetof(detail::SegmentHeader, header_format), &future_format,
         sizeof future_format);
    refused = Segment::open(name, k_tag);
    REQUIRE(refused.status() == Status::invalid_file);
    CHECK_THAT(refused.error().message, Contains("header format 99"));
    REQUIRE(segment->close()); // nobody alive, but an unreadable header is not reclaimed: it is reported
    const auto taken = Segment::create(name, 4096, k_tag);
    REQUIRE(taken.status() == Status::invalid_file);
    CHECK_THAT(taken.error().message, Contains("not reclaiming"));
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("a header whose sizes disagree with each other or with the file is refused", "[ipc]") {
    const auto name = unique_name("sizes");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    const std::uint64_t huge = std::uint64_t{1} << 40;
    poke(name, offsetof(detail::SegmentHeader, payload_bytes), &huge, sizeof huge);
    auto refused = Segment::open(name, k_tag);
    REQUIRE(refused.status() == Status::invalid_file);
    CHECK_THAT(refused.error().message, Contains("inconsistent sizes"));

    const std::uint64_t total = detail::k_payload_offset + huge; // consistent, but no such file
    poke(name, offsetof(detail::SegmentHeader, total_bytes), &total, sizeof total);
    refused = Segment::open(name, k_tag);
    REQUIRE(refused.status() == Status::invalid_file);
    CHECK_THAT(refused.error().message, Contains("shorter than its header says"));
    CHECK(segment->payload().size() == 4096); // this process's view was fixed at create
    REQUIRE(segment->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

// open checks the header, then registers, then takes the shared lock: held here exclusively,
// the lock stops an open right after its checks, and the header is rewritten under it. The
// opened segment's payload must be the one that was checked (docs/processes.md, Reading shared
// memory), not a span read again from the rewritten header.
TEST_CASE("a header rewritten after open checked it does not move the payload", "[ipc]") {
    const auto name = unique_name("recheck");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 8192, k_tag);
    REQUIRE(segment);
    const int locker = ::open(ipc_test::shm_path(name).c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(locker >= 0);
    REQUIRE(::flock(locker, LOCK_EX) == 0);
    ferry::ipc::Expected<Segment> opened = ferry::ipc::Error{Status::failure, "not run", 0};
    std::thread opener([&] { opened = Segment::open(name, k_tag); });
    // The opener has passed every check once it is registered (the creator is the first).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(4);
    while (participants(name) < 2 && std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
    }
    CHECK(participants(name) == 2);
    const std::uint64_t huge = std::uint64_t{1} << 40;
    poke(name, offsetof(detail::SegmentHeader, payload_offset), &huge, sizeof huge);
    poke(name, offsetof(detail::SegmentHeader, payload_bytes), &huge, sizeof huge);
    ::close(locker); // releases the lock: the opener goes on
    opener.join();
    REQUIRE(opened);
    CHECK(opened->payload().size() == 8192);
    CHECK(opened->payload().data() != nullptr);
    REQUIRE(opened->close());
    REQUIRE(segment->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("more than /dev/shm can hold fails at create and leaves nothing behind", "[ipc]") {
    struct statvfs fs {};
    REQUIRE(::statvfs("/dev/shm", &fs) == 0);
    const std::size_t too_much = std::size_t{fs.f_bavail} * fs.f_frsize + (std::size_t{1} << 30);
    const auto name = unique_name("too-big");
    const Scrub scrub{name};
    const auto refused = Segment::create(name, too_much, k_tag);
    REQUIRE(refused.status() == Status::bad_alloc);
    CHECK_THAT(refused.error().message, Contains("/dev/shm"));
    CHECK_FALSE(exists(name));

    // A reservation that fails after the header is written (posix_fallocate: EFBIG under a
    // file-size limit) is undone as well.
    Child limited{"create-limited", name, std::to_string(1 << 20)};
    CHECK(limited.read_line() == std::to_string(static_cast<int>(Status::failure)));
    REQUIRE(limited.wait_exit() == 0);
    CHECK_FALSE(exists(name));
    require_no_leftovers(name);
}

TEST_CASE("a segment file of another mode or owner is neither opened nor reclaimed", "[ipc]") {
    const auto name = unique_name("foreign");
    const Scrub scrub{name};
    const auto dead_creator = header_for(0, 0, detail::k_ready); // stale in every other respect
    forge(name, 0644, dead_creator);
    auto refused = Segment::open(name, k_tag);
    REQUIRE(refused.status() == Status::invalid_file);
    CHECK_THAT(refused.error().message, Contains("mode 0644"));
    auto taken = Segment::create(name, 4096, k_tag);
    REQUIRE(taken.status() == Status::invalid_file);
    CHECK_THAT(taken.error().message, Contains("not reclaiming"));
    REQUIRE(Segment::unlink(name).status() == Status::invalid_file);
    REQUIRE(::unlink(ipc_test::shm_path(name).c_str()) == 0);

    if (::geteuid() != 0) {
        WARN("not root: the other-owner case needs fchown and is not run");
        return;
    }
    forge(name, 0600, dead_creator);
    REQUIRE(::chown(ipc_test::shm_path(name).c_str(), 65534, 65534) == 0);
    refused = Segment::open(name, k_tag);
    REQUIRE(refused.status() == Status::invalid_file);
    CHECK_THAT(refused.error().message, Contains("owned by uid 65534"));
    taken = Segment::create(name, 4096, k_tag);
    REQUIRE(taken.status() == Status::invalid_file);
    CHECK(exists(name));
    REQUIRE(::unlink(ipc_test::shm_path(name).c_str()) == 0);
    require_no_leftovers(name);
}

TEST_CASE("invalid names and layout tags are refused and create nothing", "[ipc]") {
    using namespace std::string_literals;
    for (const std::string& bad :
         {""s, "a/b"s, "/abs"s, "."s, ".."s, "sp ace"s, "caf\xc3\xa9"s, "nul\0x"s,
          std::string(ferry::ipc::k_max_segment_name + 1, 'a')}) {
        CAPTURE(bad);
        CHECK(Segment::create(bad, 64, k_tag).status() == Status::invalid_param);
        CHECK(Segment::open(bad, k_tag).status() == Status::invalid_param);
        CHECK(Segment::unlink(bad).status() == Status::invalid_param);
    }
    const auto name = unique_name("tags");
    const Scrub scrub{name};
    const ferry::ipc::LayoutTag unnamed{"", 1, 1};
    CHECK(Segment::create(name, 64, unnamed).status() == Status::invalid_param);
    const ferry::ipc::LayoutTag long_name{
        std::string_view("0123456789012345678901234567890123456789012345678"), 1, 1};
    CHECK(Segment::create(name, 64, long_name).status() == Status::invalid_param);
    CHECK(Segment::create(name, ferry::ipc::k_max_payload_bytes + 1, k_tag).status() ==
          Status::invalid_param);
    CHECK_FALSE(exists(name));

    const std::string longest =
        unique_name(std::string(ferry::ipc::k_max_segment_name - unique_name("").size(), 'x'));
    const Scrub scrub_longest{longest};
    auto segment = Segment::create(longest, 64, k_tag);
    REQUIRE(segment);
    REQUIRE(segment->close());
    REQUIRE(Segment::unlink(longest));
    require_no_leftovers(name);
    require_no_leftovers(longest);
}

TEST_CASE("open waits for its creator, and says so when it never finishes", "[ipc]") {
    const auto self = detail::self_identity();
    REQUIRE(self);
    const auto name = unique_name("not-ready");
    const Scrub scrub{name};
    forge(name, 0600, header_for(self->pid, self->start_time, detail::k_initialising));
    auto late = Segment::open(name, k_tag, std::chrono::milliseconds(100));
    REQUIRE(late.status() == Status::timed_out);
    CHECK_THAT(late.error().message,
               Contains("did not finish") && Contains(std::to_string(self->pid)));

    // A waiting opener proceeds once the creator publishes.
    Child opener{"open-write", name, "9"};
    REQUIRE(opener.wait_blocked_in_futex());
    const std::uint32_t ready = detail::k_ready;
    poke(name, offsetof(detail::SegmentHeader, ready), &ready, sizeof ready);
    REQUIRE(opener.wait_exit() == 0);
    REQUIRE(Segment::unlink(name));

    // A creator that died initialising is reported as such, without waiting for the deadline.
    Child gone{"open-write", "", "0"}; // exits at once (bad name): its pid is then free
    const auto dead_pid = gone.pid();
    REQUIRE(gone.wait_exit() == 2);
    forge(name, 0600, header_for(dead_pid, 1, detail::k_initialising));
    late = Segment::open(name, k_tag, std::chrono::seconds(30));
    REQUIRE(late.status() == Status::invalid_file);
    CHECK_THAT(late.error().message, Contains("died initialising"));
    REQUIRE(Segment::create(name, 4096, k_tag)); // and its segment is stale
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

TEST_CASE("many processes open and close one segment at once", "[ipc]") {
    const auto name = unique_name("crowd");
    const Scrub scrub{name};
    auto segment = Segment::create(name, 64, k_tag);
    REQUIRE(segment);
    std::vector<std::unique_ptr<Child>> crowd;
    for (int i = 0; i < 16; ++i) {
        crowd.push_back(std::make_unique<Child>(
            std::initializer_list<std::string>{"open-mark", name, std::to_string(i)}));
    }
    for (auto& child : crowd) {
        CHECK(child->wait_exit() == 0);
    }
    const auto bytes = segment->payload();
    CHECK(std::all_of(bytes.begin(), bytes.begin() + 16,
                      [](std::byte b) { return b == std::byte{1}; }));
    CHECK(participants(name) == 1);
    REQUIRE(segment->close());
    REQUIRE(Segment::unlink(name));
    require_no_leftovers(name);
}

// Sets FERRY_NAMESPACE for one scope (empty: unset), restoring it after.
class NameDomain {
public:
    explicit NameDomain(const char* domain) {
        if (const char* was = std::getenv("FERRY_NAMESPACE")) {
            saved_ = was;
        }
        set(domain);
    }
    NameDomain(const NameDomain&) = delete;
    NameDomain& operator=(const NameDomain&) = delete;
    ~NameDomain() { set(saved_ ? saved_->c_str() : nullptr); }
    static void set(const char* domain) {
        REQUIRE((domain != nullptr ? ::setenv("FERRY_NAMESPACE", domain, 1)
                                   : ::unsetenv("FERRY_NAMESPACE")) == 0);
    }

private:
    std::optional<std::string> saved_;
};

TEST_CASE("FERRY_NAMESPACE gives each job its own names", "[ipc]") {
    const auto name = unique_name("domain");
    const std::string job_a = "job-a-" + std::to_string(::getpid());
    const std::string job_b = "job-b-" + std::to_string(::getpid());
    std::optional<Segment> in_a, in_b;
    {
        const NameDomain domain(job_a.c_str());
        auto made = Segment::create(name, 64, k_tag);
        REQUIRE(made);
        CHECK(made->shm_name() == "/ferry@" + job_a + "." + name);
        in_a.emplace(std::move(*made));
    }
    {
        const NameDomain domain(job_b.c_str());
        auto made = Segment::create(name, 64, k_tag); // the same name: no collision
        REQUIRE(made);
        in_b.emplace(std::move(*made));
        in_b->payload()[0] = std::byte{0xb};
        auto seen = Segment::open(name, k_tag);
        REQUIRE(seen);
        CHECK(seen->payload()[0] == std::byte{0xb}); // b's own segment, not a's
    }
    CHECK(in_a->payload()[0] == std::byte{0});
    CHECK_FALSE(exists(name)); // nothing in the default domain
    CHECK(Segment::open(name, k_tag).status() == Status::not_found);
    {
        const NameDomain domain("bad.domain");
        const auto refused = Segment::create(name, 64, k_tag);
        REQUIRE(refused.status() == Status::invalid_param);
        CHECK_THAT(refused.error().message, Contains("FERRY_NAMESPACE"));
    }
    // Removal follows the name a segment was made under, whatever the variable says now.
    REQUIRE(in_a->close_and_remove_if_last());
    REQUIRE(in_b->close_and_remove_if_last());
    CHECK(::access(("/dev/shm/ferry@" + job_a + "." + name).c_str(), F_OK) != 0);
    CHECK(::access(("/dev/shm/ferry@" + job_b + "." + name).c_str(), F_OK) != 0);
}

// Last in the file, so it runs last: every test above removed what it made.
TEST_CASE("no segment of this run is left in /dev/shm", "[ipc]") {
    CHECK(ipc_test::leftovers(ipc_test::name_prefix()).empty());
}
