// libswscale (FFmpeg 5.1): its header for types and constants, and the table of the functions
// proofkit calls, loaded from libswscale.so.6 on first use (not linked: see proofkit_library).
#ifndef PROOFKIT_CSWSCALE_H
#define PROOFKIT_CSWSCALE_H

#include <libswscale/swscale.h>

#include "CProofkitShims.h"

/// Every libswscale function proofkit calls (Sources/Adapters/VideoIO/FFmpeg+Calls.swift), one
/// slot each.
#define PROOFKIT_SWSCALE_FUNCTIONS(X)                                                              \
    X(sws_getCachedContext)                                                                        \
    X(sws_scale)                                                                                   \
    X(sws_freeContext)

/// `proofkit_swscale_api` and `proofkit_swscale_library()`: libswscale.so.6 (Debian: libswscale6).
PROOFKIT_LIBRARY_DECLARE(swscale, PROOFKIT_SWSCALE_FUNCTIONS)

#endif
