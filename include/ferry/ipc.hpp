#pragma once
// ferry/ipc: shared memory between processes of one user on one host (POSIX only). Guide:
// docs/processes.md.
#include <ferry/ipc/channel.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/ipc/window.hpp>
