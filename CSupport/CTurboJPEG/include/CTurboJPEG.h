// libturbojpeg (TurboJPEG 2.1 API): its header for types and constants, and the table of the
// functions proofkit calls, loaded from libturbojpeg.so.0 on first use (not linked: see
// proofkit_library).
#ifndef PROOFKIT_CTURBOJPEG_H
#define PROOFKIT_CTURBOJPEG_H

#include <turbojpeg.h>

#include "CProofkitShims.h"

/// Every TurboJPEG function proofkit calls (Sources/ImageIO/TurboJPEG+Calls.swift), one slot each.
#define PROOFKIT_TURBOJPEG_FUNCTIONS(X)                                                            \
    X(tjInitDecompress)                                                                            \
    X(tjDecompressHeader3)                                                                         \
    X(tjDecompress2)                                                                               \
    X(tjGetScalingFactors)                                                                         \
    X(tjGetErrorCode)                                                                              \
    X(tjGetErrorStr2)                                                                              \
    X(tjDestroy)

/// `proofkit_turbojpeg_api` and `proofkit_turbojpeg_library()`: libturbojpeg.so.0 (Debian:
/// libturbojpeg0).
PROOFKIT_LIBRARY_DECLARE(turbojpeg, PROOFKIT_TURBOJPEG_FUNCTIONS)

#endif
