// libswscale, loaded on first use (see CSwScale.h).
#include "CSwScale.h"

PROOFKIT_LIBRARY_DEFINE(swscale, "libswscale.so.6", "libswscale6", PROOFKIT_SWSCALE_FUNCTIONS, NULL)
