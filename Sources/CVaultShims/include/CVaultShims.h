// Typed wrappers for the variadic C calls Swift cannot import. One header per library.
#pragma once
#include "secret_shim.h"
#include "curl_shim.h"
#include "mhd_shim.h"
#include "hardening_shim.h"
#include "network_shim.h"
#include "fsflags_shim.h"
#include "spawn_shim.h"
#include "hangup_shim.h"
#include "bus_shim.h"
#include "agent_shim.h"
