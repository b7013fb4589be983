#pragma once

/// Disables core dumps and ptrace attachment by other same-user processes (PR_SET_DUMPABLE 0),
/// so key material in memory is not written to a core file. Returns 0 on success.
int CLinuxShims_disable_core_dumps(void);
