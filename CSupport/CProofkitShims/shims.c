#include "CProofkitShims.h"

// MARK: libpng

#include <png.h>

const char *proofkit_png_image_message(const void *image) {
    if (image == NULL) return NULL;
    return ((const png_image *)image)->message;
}
