#include <ferry/core/status.hpp>

#include <catch2/catch.hpp>

#include <system_error>

TEST_CASE("Status values are CANN's aclError codes", "[core][status]") {
    using ferry::Status;
    CHECK(ferry::to_code(Status::ok) == 0);
    CHECK(ferry::to_code(Status::invalid_param) == 100000);
    CHECK(ferry::to_code(Status::repeat_finalize) == 100037);
    CHECK(ferry::to_code(Status::bad_alloc) == 200000);
    CHECK(ferry::to_code(Status::feature_unsupported) == 200006);
    CHECK(ferry::to_code(Status::failure) == 500001);
    CHECK(ferry::to_code(Status::rt_param_invalid) == 107000);
    CHECK(ferry::to_code(Status::empty) == 207013);
    CHECK(ferry::to_code(Status::full) == 207014);
    CHECK(ferry::to_code(Status::rt_kernel_duplicate) == 507028);
}

TEST_CASE("Status converts to std::error_code in the ferry category", "[core][status]") {
    const std::error_code ok = ferry::Status::ok;
    CHECK_FALSE(ok);
    const std::error_code full = ferry::Status::full;
    CHECK(full);
    CHECK(full.value() == 207014);
    CHECK(std::string(full.category().name()) == "ferry");
    CHECK(full.message() == "queue full");
    CHECK(full == ferry::Status::full);
    CHECK(full != ferry::Status::empty);
    CHECK(std::error_code(ferry::Status::stopped).message() == "stopped");
}

TEST_CASE("every Status has a name and an unknown code says so", "[core][status]") {
    CHECK(std::string(ferry::name_of(ferry::Status::timed_out)) == "timed out");
    CHECK(std::string(ferry::name_of(ferry::Status::peer_lost)) == "peer process lost");
    CHECK(std::string(ferry::name_of(static_cast<ferry::Status>(42))) == "unknown status");
    CHECK(ferry::succeeded(ferry::Status::ok));
    CHECK(ferry::failed(ferry::Status::invalid_param));
}
