// libavcodec (FFmpeg 5.1): its headers for types and constants, and the table of the functions
// proofkit calls, loaded from libavcodec.so.59 on first use (not linked: see proofkit_library).
#ifndef PROOFKIT_CAVCODEC_H
#define PROOFKIT_CAVCODEC_H

#include <libavcodec/avcodec.h>

#include "CProofkitShims.h"

/// Every libavcodec function proofkit calls (Sources/Adapters/VideoIO/FFmpeg+Calls.swift), one
/// slot each.
#define PROOFKIT_AVCODEC_FUNCTIONS(X)                                                              \
    X(avcodec_find_decoder)                                                                        \
    X(avcodec_alloc_context3)                                                                      \
    X(avcodec_parameters_to_context)                                                               \
    X(avcodec_open2)                                                                               \
    X(avcodec_send_packet)                                                                         \
    X(avcodec_receive_frame)                                                                       \
    X(avcodec_free_context)                                                                        \
    X(av_packet_alloc)                                                                             \
    X(av_packet_free)                                                                              \
    X(av_packet_unref)

/// `proofkit_avcodec_api` and `proofkit_avcodec_library()`: libavcodec.so.59 (Debian: libavcodec59).
PROOFKIT_LIBRARY_DECLARE(avcodec, PROOFKIT_AVCODEC_FUNCTIONS)

#endif
