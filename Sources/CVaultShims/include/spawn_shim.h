#pragma once
#include <sys/types.h>

/// Starts `path` with `argv`/`envp` (NULL-terminated) as a detached process: its own session
/// (setsid), stdin/stdout/stderr on /dev/null, and no other inherited descriptor. Stores the pid
/// in `*pid`; returns 0 or an errno value.
int vault_spawn_detached(const char *path, char *const argv[], char *const envp[], pid_t *pid);
