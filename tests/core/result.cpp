#include <ferry/core/result.hpp>

#include <catch2/catch.hpp>

#include <memory>
#include <string>

TEST_CASE("Result holds a value or a failing status", "[core][result]") {
    ferry::Result<int> good = 7;
    REQUIRE(good);
    CHECK(*good == 7);
    CHECK(good.status() == ferry::Status::ok);

    ferry::Result<int> bad = ferry::Status::invalid_param;
    CHECK_FALSE(bad);
    CHECK(bad.status() == ferry::Status::invalid_param);
    CHECK(bad.value_or(-1) == -1);
}

TEST_CASE("Result carries move-only values", "[core][result]") {
    ferry::Result<std::unique_ptr<std::string>> r = std::make_unique<std::string>("ferry");
    REQUIRE(r.has_value());
    CHECK((*r)->size() == 5);
    auto owned = std::move(r).value();
    CHECK(*owned == "ferry");
}
