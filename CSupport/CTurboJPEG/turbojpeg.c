// libturbojpeg, loaded on first use (see CTurboJPEG.h).
#include "CTurboJPEG.h"

PROOFKIT_LIBRARY_DEFINE(turbojpeg, "libturbojpeg.so.0", "libturbojpeg0", PROOFKIT_TURBOJPEG_FUNCTIONS,
                        NULL)
