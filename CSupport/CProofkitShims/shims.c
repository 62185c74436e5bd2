#include "CProofkitShims.h"

#include <alsa/asoundlib.h>
#include <png.h>

// MARK: ALSA

// A variadic handler that ignores everything libasound wants to print (see the header).
static void proofkit_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

void proofkit_alsa_silence_errors(void) {
    snd_lib_error_set_handler(proofkit_alsa_ignore_error);
}

// MARK: libpng

const char *proofkit_png_image_message(const void *image) {
    if (image == NULL) return NULL;
    return ((const png_image *)image)->message;
}
