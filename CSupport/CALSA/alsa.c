// libasound, loaded on first use (see CALSA.h).
#include "CALSA.h"

// A handler that ignores everything libasound wants to print.
//
// Why C: `snd_lib_error_set_handler` takes a *variadic* function pointer, which Swift can
// neither declare nor implement.
static void proofkit_alsa_ignore_error(const char *file, int line, const char *function, int err,
                                       const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

// Runs once, right after libasound is loaded and before any other call into it.
static void proofkit_alsa_loaded(const void *table) {
    ((const proofkit_alsa_api *)table)->snd_lib_error_set_handler(proofkit_alsa_ignore_error);
}

PROOFKIT_LIBRARY_DEFINE(alsa, "libasound.so.2", "libasound2", PROOFKIT_ALSA_FUNCTIONS,
                        proofkit_alsa_loaded)
