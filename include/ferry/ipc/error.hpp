#pragma once
// ferry::ipc::Error and Expected<T>: the names ferry/ipc has always used for ferry::Error and
// ferry::Expected<T> (core/expected.hpp), which every module now shares.

#include <ferry/core/expected.hpp>

namespace ferry::ipc {

using ferry::Error;
using ferry::Expected;

} // namespace ferry::ipc
