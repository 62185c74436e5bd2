#include "COnnxRuntime.h"
