#pragma once
// Human-readable printing of items and datasets (examples, test failure messages, logs):
//   TENSOR float32 dims=(1, 4) bytes=16 values=[1, 2, 3, 4]
// Values are shown for the dtypes that have a C++ element type, at most `k_print_values`.

#include <complex>
#include <cstddef>
#include <cstdint>
#include <ferry/core/dtype.hpp>
#include <ferry/core/float16.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ostream>
#include <span>

namespace ferry {

inline constexpr std::size_t k_print_values = 8;

namespace detail {
template <typename T>
void print_value(std::ostream& os, const T& v) {
    if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>) {
        os << static_cast<float>(v);
    } else if constexpr (sizeof(T) == 1 && std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        os << static_cast<int>(v); // not as a character
    } else if constexpr (std::is_same_v<T, bool>) {
        os << (v ? "true" : "false");
    } else {
        os << v;
    }
}

template <Element T>
bool print_values_as(std::ostream& os, const DataItem& item) {
    const auto values = item.values<T>();
    if (!values) {
        return false;
    }
    os << " values=[";
    const std::size_t n = std::min(values->size(), k_print_values);
    for (std::size_t i = 0; i < n; ++i) {
        os << (i == 0 ? "" : ", ");
        print_value(os, (*values)[i]);
    }
    os << (values->size() > n ? ", ...]" : "]");
    return true;
}

inline void print_values(std::ostream& os, const DataItem& item) {
    switch (item.dtype()) {
    case DType::float32:
        print_values_as<float>(os, item);
        break;
    case DType::float64:
        print_values_as<double>(os, item);
        break;
    case DType::float16:
        print_values_as<float16>(os, item);
        break;
    case DType::bfloat16:
        print_values_as<bfloat16>(os, item);
        break;
    case DType::int8:
        print_values_as<std::int8_t>(os, item);
        break;
    case DType::uint8:
        print_values_as<std::uint8_t>(os, item);
        break;
    case DType::int16:
        print_values_as<std::int16_t>(os, item);
        break;
    case DType::uint16:
        print_values_as<std::uint16_t>(os, item);
        break;
    case DType::int32:
        print_values_as<std::int32_t>(os, item);
        break;
    case DType::uint32:
        print_values_as<std::uint32_t>(os, item);
        break;
    case DType::int64:
        print_values_as<std::int64_t>(os, item);
        break;
    case DType::uint64:
        print_values_as<std::uint64_t>(os, item);
        break;
    case DType::boolean:
        print_values_as<bool>(os, item);
        break;
    case DType::complex64:
        print_values_as<std::complex<float>>(os, item);
        break;
    case DType::complex128:
        print_values_as<std::complex<double>>(os, item);
        break;
    default:
        break; // no C++ element type: sizes only
    }
}
} // namespace detail

inline std::ostream& operator<<(std::ostream& os, const DataItem& item) {
    os << name_of(item.kind());
    if (!carries_tensor(item.kind())) {
        return item.size() != 0 ? os << " bytes=" << item.size() : os;
    }
    os << ' ' << name_of(item.dtype()) << " dims=(";
    const auto dims = item.dims();
    for (std::size_t i = 0; i < dims.size(); ++i) {
        os << (i == 0 ? "" : ", ") << dims[i];
    }
    os << ") bytes=" << item.size();
    if (item.slice() != SliceInfo{}) {
        os << " slice=" << item.slice().id << '/' << item.slice().num;
    }
    detail::print_values(os, item);
    return os;
}

inline std::ostream& operator<<(std::ostream& os, const Dataset& ds) {
    os << "Dataset \"" << ds.name() << "\" (" << ds.size() << (ds.size() == 1 ? " item" : " items")
       << ')';
    std::size_t i = 0;
    for (const DataItem& item : ds) {
        os << "\n  [" << i++ << "] " << item;
    }
    return os;
}

} // namespace ferry
