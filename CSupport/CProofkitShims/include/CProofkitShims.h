// The only hand-written C in proofkit: helpers for what Swift cannot express directly.
// Every symbol is prefixed proofkit_<lib>_ and says why it exists.
#ifndef PROOFKIT_SHIMS_H
#define PROOFKIT_SHIMS_H

// MARK: ALSA (libasound)

/// Installs a do-nothing libasound error handler, so that libasound stops printing its own
/// "ALSA lib pcm.c:...: Unknown PCM ..." lines on stderr; proofkit reports errors itself.
///
/// Why C: `snd_lib_error_set_handler` takes a *variadic* function pointer
/// (`void (*)(const char *file, int line, const char *function, int err, const char *fmt, ...)`),
/// which Swift can neither declare nor implement. Idempotent and thread-safe to call more than once.
void proofkit_alsa_silence_errors(void);

#endif
