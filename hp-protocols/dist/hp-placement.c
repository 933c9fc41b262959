/* placeholder until written */
#include "config.h"
