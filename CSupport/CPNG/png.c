// libpng, loaded on first use (see CPNG.h), and a shim for its error text.
#include "CPNG.h"

PROOFKIT_LIBRARY_DEFINE(png, "libpng16.so.16", "libpng16-16", PROOFKIT_PNG_FUNCTIONS, NULL)

const char *proofkit_png_image_message(const png_image *image) {
    if (image == NULL) return NULL;
    return image->message;
}
