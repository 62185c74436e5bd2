// libavutil (FFmpeg 5.1): its headers for types and constants, and the table of the functions
// proofkit calls, loaded from libavutil.so.57 on first use (not linked: see proofkit_library).
#ifndef PROOFKIT_CAVUTIL_H
#define PROOFKIT_CAVUTIL_H

#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/frame.h>
#include <libavutil/log.h>

#include "CProofkitShims.h"

/// Every libavutil function proofkit calls (Sources/Adapters/VideoIO/FFmpeg+Calls.swift), one
/// slot each.
#define PROOFKIT_AVUTIL_FUNCTIONS(X)                                                               \
    X(av_frame_alloc)                                                                              \
    X(av_frame_free)                                                                               \
    X(av_frame_unref)                                                                              \
    X(av_strerror)                                                                                 \
    X(av_dict_set)                                                                                 \
    X(av_dict_free)                                                                                \
    X(av_display_rotation_get)                                                                     \
    X(av_log_set_level)

/// `proofkit_avutil_api` and `proofkit_avutil_library()`: libavutil.so.57 (Debian: libavutil57).
PROOFKIT_LIBRARY_DECLARE(avutil, PROOFKIT_AVUTIL_FUNCTIONS)

/// FFmpeg's error codes that proofkit tells apart. Why C: `AVERROR_EOF` and `AVERROR(EAGAIN)` are
/// function-like macros, which Swift does not import.
static const int proofkit_averror_eof = AVERROR_EOF;
static const int proofkit_averror_again = AVERROR(EAGAIN);
static const int proofkit_averror_stream_not_found = AVERROR_STREAM_NOT_FOUND;
static const int proofkit_averror_decoder_not_found = AVERROR_DECODER_NOT_FOUND;
static const int proofkit_averror_invalid_data = AVERROR_INVALIDDATA;
static const int proofkit_averror_enomem = AVERROR(ENOMEM);
/// `AV_NOPTS_VALUE`: a timestamp that is not known.
static const int64_t proofkit_av_nopts_value = AV_NOPTS_VALUE;

#endif
