// libpng, loaded on first use (see CPNG.h), and a shim for its error text.
#include "CPNG.h"

PROOFKIT_LIBRARY_DEFINE(png, "libpng16.so.16", "libpng16-16", PROOFKIT_PNG_FUNCTIONS, NULL)

const char *proofkit_png_image_message(const png_image *image) {
    if (image == NULL) return NULL;
    return image->message;
}

// MARK: The shrunk row-by-row decode (see CPNG.h)

#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/// One decode's state. libpng's callbacks reach it through `proofkit_png_current` (set for the
/// length of one call on this thread) because reading the error pointer back needs the table.
typedef struct {
    const proofkit_png_api *api;
    const unsigned char *data;
    size_t size;
    size_t offset;
    jmp_buf failed;
    char *message;
    size_t message_size;
} proofkit_png_reading;

static _Thread_local proofkit_png_reading *proofkit_png_current;

static void proofkit_png_set_message(proofkit_png_reading *reading, const char *text) {
    if (reading->message_size == 0) return;
    strncpy(reading->message, text ? text : "unknown libpng error", reading->message_size - 1);
    reading->message[reading->message_size - 1] = 0;
}

/// libpng's error function: keep the reason and jump back to `proofkit_png_read_shrunk` (it
/// must not return).
static void proofkit_png_error(png_structp png, png_const_charp text) {
    (void)png;
    proofkit_png_set_message(proofkit_png_current, text);
    longjmp(proofkit_png_current->failed, 1);
}

/// libpng's warning function: warnings are dropped (the simplified API drops them too).
static void proofkit_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

/// libpng's read function, over the bytes in memory.
static void proofkit_png_read(png_structp png, png_bytep into, size_t count) {
    proofkit_png_reading *reading = proofkit_png_current;
    if (count > reading->size - reading->offset) {
        reading->api->png_error(png, "the file is cut short (truncated)");
        return;
    }
    memcpy(into, reading->data + reading->offset, count);
    reading->offset += count;
}

int proofkit_png_read_shrunk(const proofkit_png_api *api, const unsigned char *data, size_t size,
                             unsigned factor, unsigned char *output, size_t out_width,
                             size_t out_height, char *message, size_t message_size) {
    proofkit_png_reading reading = {api, data, size, 0, {{0}}, message, message_size};
    proofkit_png_current = &reading;
    // Everything a longjmp must still see or free is volatile (C11 7.13.2.1).
    png_structp volatile png = NULL;
    png_infop volatile info = NULL;
    png_bytep volatile row = NULL;
    uint32_t *volatile sums = NULL;
    int volatile done = 0;
    if (setjmp(reading.failed) == 0) {
        png = api->png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, proofkit_png_error,
                                          proofkit_png_warning);
        if (png == NULL) {
            proofkit_png_set_message(&reading, "libpng could not allocate a reader");
            goto end;
        }
        info = api->png_create_info_struct(png);
        if (info == NULL) {
            proofkit_png_set_message(&reading, "libpng could not allocate a reader");
            goto end;
        }
        api->png_set_read_fn(png, NULL, proofkit_png_read);
        api->png_read_info(png, info);
        png_uint_32 width = 0, height = 0;
        int depth = 0, color = 0, interlace = 0;
        api->png_get_IHDR(png, info, &width, &height, &depth, &color, &interlace, NULL, NULL);
        if (interlace != PNG_INTERLACE_NONE || factor == 0 ||
            out_width != (width + factor - 1) / factor || out_height != (height + factor - 1) / factor) {
            proofkit_png_set_message(&reading, "not a non-interlaced PNG of the size given");
            goto end;
        }
        api->png_set_expand(png);
        api->png_set_scale_16(png);
        api->png_set_gray_to_rgb(png);
        api->png_set_strip_alpha(png);
        api->png_read_update_info(png, info);
        if (api->png_get_rowbytes(png, info) != (size_t)width * 3) {
            proofkit_png_set_message(&reading, "libpng did not give 8-bit RGB rows");
            goto end;
        }
        row = malloc((size_t)width * 3);
        sums = calloc(out_width * 3, sizeof(uint32_t));
        if (row == NULL || sums == NULL) {
            proofkit_png_set_message(&reading, "out of memory for one row");
            goto end;
        }
        for (png_uint_32 y = 0; y < height; y++) {
            api->png_read_row(png, row, NULL);
            for (png_uint_32 x = 0; x < width; x++) {
                uint32_t *sum = sums + (x / factor) * 3;
                sum[0] += row[x * 3];
                sum[1] += row[x * 3 + 1];
                sum[2] += row[x * 3 + 2];
            }
            png_uint_32 band_end = y + 1;
            if (band_end % factor != 0 && band_end != height) continue;
            // One band of `rows` file rows is complete: write its output row, means rounded.
            uint32_t rows = band_end % factor == 0 ? factor : band_end % factor;
            unsigned char *out = output + (size_t)(y / factor) * out_width * 3;
            for (size_t ox = 0; ox < out_width; ox++) {
                uint32_t columns = (ox + 1) * factor <= width ? factor : width - (uint32_t)ox * factor;
                uint32_t count = rows * columns;
                for (int channel = 0; channel < 3; channel++) {
                    out[ox * 3 + channel] = (unsigned char)((sums[ox * 3 + channel] + count / 2) / count);
                }
            }
            memset(sums, 0, out_width * 3 * sizeof(uint32_t));
        }
        done = 1;
    }
end:
    if (png != NULL) {
        png_structp p = png;
        png_infop i = info;
        api->png_destroy_read_struct(&p, i ? &i : NULL, NULL);
    }
    free(row);
    free(sums);
    proofkit_png_current = NULL;
    return done;
}
