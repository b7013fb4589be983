// Typed wrappers for the Linux and glibc calls Swift cannot make itself: variadic calls
// (`ioctl`, `prctl`), packed structs (`struct epoll_event`) and headers Swift's Glibc module
// leaves out (<sys/xattr.h>), and the agent's process plumbing (SO_PEERCRED, PR_SET_PDEATHSIG, malloc_trim). One header per concern; every function is prefixed `CLinuxShims_`.
#pragma once
#include "hardening_shim.h"
#include "fsflags_shim.h"
#include "spawn_shim.h"
#include "hangup_shim.h"
#include "agent_shim.h"
#include "tmpfile_shim.h"
