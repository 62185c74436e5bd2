#include "CProofkitShims.h"
