// libpng (simplified `png_image` API): its header for types and constants, and the table of the
// functions proofkit calls, loaded from libpng16.so.16 on first use (not linked: see
// proofkit_library).
#ifndef PROOFKIT_CPNG_H
#define PROOFKIT_CPNG_H

#include <png.h>

#include "CProofkitShims.h"

/// Every libpng function proofkit calls (Sources/ImageIO/PNG+Calls.swift), one table slot each.
#define PROOFKIT_PNG_FUNCTIONS(X)                                                                  \
    X(png_image_begin_read_from_memory)                                                            \
    X(png_image_finish_read)                                                                       \
    X(png_image_free)

/// `proofkit_png_api` and `proofkit_png_library()`: libpng16.so.16 (Debian: libpng16-16).
PROOFKIT_LIBRARY_DECLARE(png, PROOFKIT_PNG_FUNCTIONS)

/// The text of `image->message` (libpng's last error or warning), or NULL when `image` is NULL.
/// The string lives inside `*image`. Calls nothing in libpng.
///
/// Why C: `message` is a `char[64]` field, which Swift imports as a 64-element tuple; reading it
/// here avoids tuple and pointer-binding tricks in Swift.
const char *proofkit_png_image_message(const png_image *image);

#endif
