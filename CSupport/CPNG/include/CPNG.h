// libpng (the simplified `png_image` API, and the classic row-by-row API for the shrunk decode of
// large images, called from C only): its header for types and constants, and the table of the
// functions proofkit calls, loaded from libpng16.so.16 on first use (not linked: see
// proofkit_library).
#ifndef PROOFKIT_CPNG_H
#define PROOFKIT_CPNG_H

#include <png.h>

#include "CProofkitShims.h"

/// Every libpng function proofkit calls, one table slot each: the simplified API from
/// Sources/Adapters/ImageIO/PNG+Calls.swift, the classic API from `proofkit_png_read_shrunk`.
#define PROOFKIT_PNG_FUNCTIONS(X)                                                                  \
    X(png_image_begin_read_from_memory)                                                            \
    X(png_image_finish_read)                                                                       \
    X(png_image_free)                                                                              \
    X(png_create_read_struct)                                                                      \
    X(png_create_info_struct)                                                                      \
    X(png_destroy_read_struct)                                                                     \
    X(png_set_read_fn)                                                                             \
    X(png_error)                                                                                   \
    X(png_read_info)                                                                               \
    X(png_get_IHDR)                                                                                \
    X(png_set_expand)                                                                              \
    X(png_set_scale_16)                                                                            \
    X(png_set_gray_to_rgb)                                                                         \
    X(png_set_strip_alpha)                                                                         \
    X(png_read_update_info)                                                                        \
    X(png_get_rowbytes)                                                                            \
    X(png_read_row)

/// `proofkit_png_api` and `proofkit_png_library()`: libpng16.so.16 (Debian: libpng16-16).
PROOFKIT_LIBRARY_DECLARE(png, PROOFKIT_PNG_FUNCTIONS)

/// The text of `image->message` (libpng's last error or warning), or NULL when `image` is NULL.
/// The string lives inside `*image`. Calls nothing in libpng.
///
/// Why C: `message` is a `char[64]` field, which Swift imports as a 64-element tuple; reading it
/// here avoids tuple and pointer-binding tricks in Swift.
const char *proofkit_png_image_message(const png_image *image);

/// Decodes a non-interlaced PNG held in memory to 8-bit RGB shrunk `factor` times in each
/// direction, reading one row at a time: memory is one row of the file plus the output, whatever
/// the image's size. Each output pixel is the rounded mean of the `factor` x `factor` block of
/// the file it covers (fewer at the right and bottom edges). Palette, grayscale and 16-bit files
/// are expanded to 8-bit RGB (16-bit scaled, as libpng's png_set_scale_16 does), alpha dropped;
/// no gamma correction (as Pillow does).
///
/// Why C: the classic libpng API reports errors by calling an error function that must not
/// return; this one longjmps back here, which Swift frames could not survive.
///
/// - `output` holds `out_width * out_height * 3` bytes, with `out_width = ceil(width / factor)`
///   and `out_height = ceil(height / factor)` of the file's header (the caller read it).
/// - Returns 1 when done, 0 on failure with libpng's (or our) reason in `message` (NUL-ended).
int proofkit_png_read_shrunk(const proofkit_png_api *api, const unsigned char *data, size_t size,
                             unsigned factor, unsigned char *output, size_t out_width,
                             size_t out_height, char *message, size_t message_size);

#endif
