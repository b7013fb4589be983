#pragma once
#include <sys/types.h>

/// Starts `path` with `argv`/`envp` (NULL-terminated) as a detached process: its own session
/// (setsid), stdin/stdout/stderr on /dev/null, and no other inherited descriptor. Stores the pid
/// in `*pid`; returns 0 or an errno value.
int CLinuxShims_spawn_detached(const char *path, char *const argv[], char *const envp[], pid_t *pid);

/// Starts `path` with `argv` (NULL-terminated) and this process's environment, reading its
/// standard output: stdin on /dev/null, stdout on a new pipe whose read end (close-on-exec) is
/// stored in `*out_fd`, stderr inherited, no other descriptor, in a process group of its own
/// (so the whole group can be ended) and with SIGPIPE at its default. Returns 0 or an errno value.
int CLinuxShims_spawn_reader(const char *path, char *const argv[], pid_t *pid, int *out_fd);
