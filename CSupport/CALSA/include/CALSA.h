// libasound (ALSA): its header for types and constants, and the table of the functions proofkit
// calls, loaded from libasound.so.2 on first use (not linked: see proofkit_library).
#ifndef PROOFKIT_CALSA_H
#define PROOFKIT_CALSA_H

#include <alsa/asoundlib.h>

#include "CProofkitShims.h"

/// Every libasound function proofkit calls (Sources/AudioIO/ALSA+Calls.swift), one table slot each.
#define PROOFKIT_ALSA_FUNCTIONS(X)                                                                 \
    X(snd_strerror)                                                                                \
    X(snd_lib_error_set_handler)                                                                   \
    X(snd_config_top)                                                                              \
    X(snd_config_load)                                                                             \
    X(snd_config_delete)                                                                           \
    X(snd_config_search)                                                                           \
    X(snd_config_get_id)                                                                           \
    X(snd_config_get_string)                                                                       \
    X(snd_config_iterator_first)                                                                   \
    X(snd_config_iterator_next)                                                                    \
    X(snd_config_iterator_end)                                                                     \
    X(snd_config_iterator_entry)                                                                   \
    X(snd_input_buffer_open)                                                                       \
    X(snd_input_close)                                                                             \
    X(snd_pcm_open)                                                                                \
    X(snd_pcm_open_lconf)                                                                          \
    X(snd_pcm_set_params)                                                                          \
    X(snd_pcm_get_params)                                                                          \
    X(snd_pcm_hw_params_malloc)                                                                    \
    X(snd_pcm_hw_params_free)                                                                      \
    X(snd_pcm_hw_params_current)                                                                   \
    X(snd_pcm_hw_params_get_rate)                                                                  \
    X(snd_pcm_readi)                                                                               \
    X(snd_pcm_writei)                                                                              \
    X(snd_pcm_recover)                                                                             \
    X(snd_pcm_delay)                                                                               \
    X(snd_pcm_drain)                                                                               \
    X(snd_pcm_drop)                                                                                \
    X(snd_pcm_close)                                                                               \
    X(snd_device_name_hint)                                                                        \
    X(snd_device_name_get_hint)                                                                    \
    X(snd_device_name_free_hint)

/// `proofkit_alsa_api` and `proofkit_alsa_library()`: libasound.so.2 (Debian: libasound2).
/// Once loaded, libasound's own error printing is off: proofkit reports errors itself, and
/// libasound would otherwise print "ALSA lib pcm.c:...: Unknown PCM ..." lines on stderr.
PROOFKIT_LIBRARY_DECLARE(alsa, PROOFKIT_ALSA_FUNCTIONS)

#endif
