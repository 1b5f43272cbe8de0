#pragma once
// ferry/core: status codes, dtypes, timeouts, contracts.
#include <ferry/core/contract.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/core/dtype.hpp>
#include <ferry/core/expected.hpp>
#include <ferry/core/float16.hpp>
#include <ferry/core/memory_kind.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
