// <ferry/ferry.hpp> brings every module in together (no clashing names, no missing includes).
#include <ferry/ferry.hpp>

#include <catch2/catch.hpp>

#include <vector>

TEST_CASE("the umbrella header exposes every module", "[ferry]") {
    ferry::Channel<ferry::Dataset, 2> channel;
    const std::vector<float> values{1.0F, 2.0F, 3.0F, 4.0F};
    auto tensor = ferry::Tensor<float>::from(values, {1, 4});
    REQUIRE(tensor);
    ferry::Dataset batch;
    REQUIRE(batch.add(std::move(*tensor).into_item()) == ferry::Status::ok);
    REQUIRE(channel.try_send(std::move(batch)) == ferry::Status::ok);
    auto received = channel.try_receive();
    REQUIRE(received);
    CHECK(received->size() == 1);
    CHECK((*received)[0].dtype() == ferry::DType::float32);
    CHECK(channel.try_receive().status() == ferry::Status::empty);
}
