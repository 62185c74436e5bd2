// libavformat (FFmpeg 5.1): its headers for types and constants, and the table of the functions
// proofkit calls, loaded from libavformat.so.59 on first use (not linked: see proofkit_library).
#ifndef PROOFKIT_CAVFORMAT_H
#define PROOFKIT_CAVFORMAT_H

#include <libavformat/avformat.h>

#include "CProofkitShims.h"

/// Every libavformat function proofkit calls (Sources/Adapters/VideoIO/FFmpeg+Calls.swift), one
/// slot each.
#define PROOFKIT_AVFORMAT_FUNCTIONS(X)                                                             \
    X(avformat_open_input)                                                                         \
    X(avformat_find_stream_info)                                                                   \
    X(av_find_best_stream)                                                                         \
    X(av_read_frame)                                                                               \
    X(av_stream_get_side_data)                                                                     \
    X(avformat_close_input)

/// `proofkit_avformat_api` and `proofkit_avformat_library()`: libavformat.so.59 (Debian:
/// libavformat59).
PROOFKIT_LIBRARY_DECLARE(avformat, PROOFKIT_AVFORMAT_FUNCTIONS)

#endif
