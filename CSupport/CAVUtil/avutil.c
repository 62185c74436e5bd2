// libavutil, loaded on first use (see CAVUtil.h).
#include "CAVUtil.h"

PROOFKIT_LIBRARY_DEFINE(avutil, "libavutil.so.57", "libavutil57", PROOFKIT_AVUTIL_FUNCTIONS, NULL)
