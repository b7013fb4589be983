#pragma once
#include <sys/types.h>

/// The credentials of the process at the other end of a connected Unix socket (`SO_PEERCRED`):
/// 0 and `*uid`, `*pid` set, or -1 with errno.
int CLinuxShims_peer_credentials(int fd, uid_t *uid, pid_t *pid);

/// Asks the kernel to SIGKILL this process when the thread that started it ends
/// (`prctl(PR_SET_PDEATHSIG, SIGKILL)`), then checks that `parent` is still the parent (it may
/// have died before the call). Returns 0, or -1 when the parent is already gone.
int CLinuxShims_die_with_parent(pid_t parent);

/// Returns freed heap memory to the system (`malloc_trim(0)`).
void CLinuxShims_release_free_memory(void);
